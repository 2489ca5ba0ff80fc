"""`envfactory prove CONTRACT [--invariant EXPR] [--depth K] [-o FILE]`: k-induction with Z3.

Exit 0 "proved (k = ...)"; 1 with the shortest counterexample (written with ``-o`` as a trajectory
file whose every step is valid but the last state breaks the invariant); 3 "unknown up to depth K".
"""

from __future__ import annotations

import time

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
    safe_text,
    slots_option,
    timeout_option,
    write_trace,
)
from envfactory.contracts import load


@click.command("prove", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option(
    "--invariant", help="An expression over the state to prove (default: the contract's invariants)."
)
@click.option("--depth", type=click.IntRange(min=1, max=32), default=4, show_default=True, help="Largest k.")
@output_option("Trajectory file for the counterexample (JSON Lines; '-' for stdout).")
@slots_option(3, 8, "Entries per collection in the induction step (the small-model bound).")
@timeout_option(60.0, "Seconds for the whole proof, encoding included: past them, exit 3.")
@contract_options
def command(
    contract: str,
    invariant: str | None,
    depth: int,
    out: str | None,
    slots: int,
    timeout: float,
    with_state: str | None,
    closed_world: bool,
) -> int:
    """Prove CONTRACT's invariants (or --invariant) by k-induction, or find the shortest counterexample."""

    from envfactory.solver.deadline import Stopped, bounded, stopped
    from envfactory.solver.induction import prove
    from envfactory.solver.transition import state_predicate

    started = time.monotonic()
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    # an invariant that cannot be read is exit 2, here; the rest in a worker killed at the deadline
    prop = None if invariant is None else state_predicate(loaded, invariant, "invariant")
    left = max(timeout - (time.monotonic() - started), 0.01)
    with console(stderr=True).status("proving: k = 0") as status:
        result = bounded(
            lambda report: prove(loaded, prop, depth=depth, slots=slots, timeout=left, progress=report),
            left,
            progress=lambda k: status.update(f"proving: k = {k} of {depth}"),
        )
    stdout = messages_console(out)
    if isinstance(result, Stopped):
        stdout.print(f"unknown up to depth {depth}: {stopped(result, timeout)}", markup=False)
        return EXIT_UNDECIDED
    if result.status == "proved":
        stdout.print(result.message(), markup=False)
        return EXIT_OK
    if result.status == "violated" and result.counterexample is not None:
        traj = result.counterexample
        calls = write_trace(out, traj, "(the initial state)")
        stdout.print(
            f"violated: {safe_text(result.broken or '')} breaks after {plural(len(traj.steps), 'step')}: {calls}",
            markup=False,
        )
        return EXIT_FINDING
    stdout.print(safe_text(result.message()), markup=False)
    return EXIT_UNDECIDED
