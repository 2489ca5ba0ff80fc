"""`envfactory plan CONTRACT --goal NAME|EXPR [--max-depth K] -o FILE`: the shortest call sequence
that reaches a goal, found by bounded model checking with Z3.

The plan is written as a trajectory file (concrete inputs and outputs) that ``verify`` finds
valid. Exit 0 with a plan, 1 when there is none up to the depth, 3 when the solver gave up.
"""

from __future__ import annotations

import time
from typing import Any

import click

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_FINDING,
    EXIT_OK,
    EXIT_UNDECIDED,
    console,
    contract_options,
    messages_console,
    output_option,
    plural,
    report_error,
    safe_text,
    timeout_option,
    write_trace,
)
from envfactory.contracts import load


@click.command("plan", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option(
    "--goal", required=True, help="A goal of the contract by name, or an expression over the state."
)
@click.option(
    "--max-depth", type=click.IntRange(min=0, max=64), default=8, show_default=True, help="Longest plan."
)
@output_option("Trajectory file to write the plan to (JSON Lines; '-' for stdout).")
@timeout_option(60.0, "Seconds for the whole search, encoding included: past them, exit 3.")
@contract_options
def command(
    contract: str,
    goal: str,
    max_depth: int,
    out: str | None,
    timeout: float,
    with_state: str | None,
    closed_world: bool,
) -> int:
    """Plan the shortest sequence of calls from the initial state to a state where GOAL holds."""

    from envfactory.solver.bmc import plan, resolve_goal
    from envfactory.solver.deadline import Stopped, bounded, stopped

    deadline = time.monotonic() + timeout
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    clause = resolve_goal(loaded, goal)  # a goal that cannot be read is exit 2, here
    with console(stderr=True).status("planning: depth 0") as status:
        result = bounded(  # Z3's limits are cooperative: a worker killed at the deadline
            lambda report: plan(
                loaded, clause, max_depth=max_depth, timeout=_left(deadline), progress=report
            ),
            _left(deadline),
            progress=lambda depth: status.update(f"planning: depth {depth} of {max_depth}"),
        )
    if isinstance(result, Stopped):
        report_error(f"undecided: {stopped(result, timeout)}")
        return EXIT_UNDECIDED
    stdout = messages_console(out)
    if result.status == "none":
        if result.reason is not None:
            stdout.print(f"no plan for {safe_text(result.goal)}: {safe_text(result.reason)}", markup=False)
            return EXIT_FINDING
        stdout.print(f"no plan up to depth {max_depth} for {safe_text(result.goal)}", markup=False)
        if _unreachable(loaded, goal, min(_left(deadline), 10.0)):
            stdout.print("  nor at any depth: its negation is an inductive invariant", markup=False)
        return EXIT_FINDING
    if result.status != "found" or result.trajectory is None:
        report_error(f"undecided: {result.reason or 'the solver gave up'}")
        return EXIT_UNDECIDED
    traj = result.trajectory
    calls = write_trace(out, traj, "(no calls: the goal holds initially)")
    stdout.print(
        f"plan of {plural(len(traj.steps), 'step')} for {safe_text(result.goal)}: {calls}", markup=False
    )
    if traj.initial:
        stdout.print(
            "  from an assumed starting state (open world; written as the trajectory's initial): "
            "--closed-world plans from an empty one",
            markup=False,
        )
    return EXIT_OK


def _left(deadline: float) -> float:
    """Seconds until ``deadline``; a little at least, so the solver answers ``unknown`` itself."""
    return max(deadline - time.monotonic(), 0.01)


def _unreachable(contract: Any, goal: str, timeout: float) -> bool:
    """Whether no plan exists at all: ``not goal`` proved by k-induction (a short, bounded try)."""
    from envfactory.contracts.ir import Unary
    from envfactory.contracts.model import Clause
    from envfactory.solver.bmc import resolve_goal
    from envfactory.solver.deadline import bounded
    from envfactory.solver.induction import prove

    clause = resolve_goal(contract, goal)
    negation = Clause(Unary("not", clause.expr), f"not ({clause.source})", clause.loc, "invariant")
    proof = bounded(lambda _: prove(contract, negation, depth=2, timeout=timeout).status, timeout)
    return proof == "proved"
