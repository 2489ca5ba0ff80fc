"""`envfactory fuzz CONTRACT --target ...`: property-based fuzzing of an API, a Python object or an agent.

Exit 0 when nothing was found, 1 on a finding, 2 on bad usage or an unreadable contract.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping
from typing import Any

import click

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_FINDING,
    EXIT_OK,
    console,
    contract_options,
    output_option,
    plural,
    safe_text,
)
from envfactory.contracts.errors import UsageError

MODES = ("valid", "adversarial")
ENGINES = ("rules", "fast", "ray")


@click.command("fuzz", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option(
    "--target",
    "-t",
    required=True,
    help="sim | http://HOST:PORT[/base] | python:MODULE:FACTORY | agent:MODULE:CALLABLE",
)
@click.option("--mode", type=click.Choice(MODES), default="adversarial", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same run.")
@click.option(
    "--max-examples",
    type=click.IntRange(min=1),
    default=None,
    help="Test cases to search (same seed, same run): Hypothesis's valid examples, so the cases that "
    "shrink a finding, replay or are cut short come on top (at most 2N + 300 in all). Default: 100, "
    "or, with --time-budget, as many as the budget allows.",
)
@click.option(
    "--steps", type=click.IntRange(min=1), default=20, show_default=True, help="Calls per test case."
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="Wall-clock seconds, spent in full unless --max-examples is also given.",
)
@click.option(
    "--faults",
    is_flag=True,
    help="Inject time-outs, dropped connections, 5xx and malformed responses (agents).",
)
@output_option("Write findings as a trajectory file.", dest="output")
@click.option(
    "--database",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep Hypothesis's example database in this directory (off by default: no surprise writes).",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="rules",
    show_default=True,
    help="rules: the contract's RuleBasedStateMachine; fast: the same steps from one loop, for "
    "throughput; ray: the rules engine, each seed of --jobs on a Ray worker.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Independent seeds (SEED, SEED+1, ...) fuzzed at once; findings merged, shortest kept.",
)
@click.option("--ray-address", default=None, help="A Ray cluster to run --engine ray on (default: local).")
@click.option(
    "--isolate/--no-isolate",
    default=None,
    help="Run a python: target in a worker process with per-call time and memory limits "
    "(default: for bare tool lists); a call past them is a hang or resource finding.",
)
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="CPU seconds an isolated call may take before it is a hang (default 0.25; one that waits: 10 times that).",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--no-graph", is_flag=True, help="Do not build the state graph to report edge coverage.")
@click.option(
    "--only",
    "only",
    multiple=True,
    help="Look only for these finding kinds (repeatable), e.g. --only crash for a tool list without preconditions.",
)
@contract_options
def command(
    contract: str,
    target: str,
    mode: str,
    seed: int,
    max_examples: int | None,
    steps: int,
    time_budget: float | None,
    faults: bool,
    output: str | None,
    database: str | None,
    engine: str,
    fmt: str,
    with_state: str | None,
    closed_world: bool,
    no_graph: bool,
    only: tuple[str, ...],
    jobs: int,
    ray_address: str | None,
    isolate: bool | None,
    call_timeout: float | None,
) -> None:
    """Fuzz TARGET against CONTRACT with Hypothesis; every finding shrunk to a minimal call sequence."""
    import envfactory
    from envfactory.fuzz import findings as F

    loaded = envfactory.load(contract, with_state=with_state, closed_world=closed_world)
    reproduce = _reproduce(click.get_current_context().params)
    if target.startswith("agent:"):
        from envfactory.fuzz.agent import fuzz_agent

        summary: Any = fuzz_agent(
            loaded,
            target,
            seed=seed,
            max_examples=max_examples or 100,
            steps=steps,
            faults=faults,
            time_budget=time_budget,
            database=database,
        )
    else:
        if faults:
            raise UsageError(
                "--faults applies to agent: targets (faults are injected between an agent and its environment)"
            )
        from envfactory.fuzz.parallel import Job, fuzz_jobs, seeds
        from envfactory.fuzz.targets import ensure_reachable, open_target

        probe = open_target(target, loaded, seed=seed)  # a target spec that does not fit: exit 2 here
        try:
            ensure_reachable(probe)
        finally:
            probe.close()

        options = {
            "mode": mode,
            "max_examples": max_examples,
            "steps": steps,
            "time_budget": time_budget,
            "database": database,
            "graph": not no_graph,
            "engine": "rules" if engine == "ray" else engine,
            "kinds": only or None,
        }
        summary = fuzz_jobs(
            [
                Job(contract, with_state, closed_world, target, s, options, isolate, call_timeout)
                for s in seeds(seed, jobs)
            ],
            engine="ray" if engine == "ray" else "local",
            ray_address=ray_address,
            loaded=loaded,
        )
    if output is not None:
        trajs = F.trajectories(
            summary.findings, contract=os.path.basename(contract), seed=seed, command=reproduce
        )
        from envfactory.trajectory import write_trajectories

        write_trajectories(output, trajs)
    if fmt == "json":
        document = summary.to_json()
        document["reproduce"] = reproduce
        document["output"] = output
        click.echo(json.dumps(document, indent=2, ensure_ascii=False, default=str))
    else:
        _print_text(summary, reproduce, output)
    sys.exit(EXIT_FINDING if summary.findings else EXIT_OK)


def _reproduce(params: Mapping[str, Any]) -> str:
    """The command line that repeats this run, from the command's parsed parameters: the options
    that decide what is found (not the budget, the output or the report format)."""
    parts = ["envfactory", "fuzz", params["contract"], "--target", params["target"]]
    parts += ["--mode", params["mode"], "--seed", str(params["seed"])]
    if params["max_examples"] is not None or params["time_budget"] is None:
        parts += ["--max-examples", str(params["max_examples"] or 100)]
    else:  # a run that its budget ended: the same budget searches the same way
        parts += ["--time-budget", f"{params['time_budget']:g}"]
    parts += ["--steps", str(params["steps"])]
    if params["engine"] != "rules":
        parts += ["--engine", params["engine"]]
    if params["jobs"] != 1:
        parts += ["--jobs", str(params["jobs"])]
    if params["faults"]:
        parts.append("--faults")
    if params["with_state"]:
        parts += ["--with", params["with_state"]]
    if params["closed_world"]:
        parts.append("--closed-world")
    for kind in params["only"]:
        parts += ["--only", kind]
    return shlex.join(parts)


def _print_text(summary: Any, reproduce: str, output: str | None) -> None:
    out = console()
    ops = summary.operations
    covered = summary.operations_covered
    edges = f"{summary.edges_covered}" + (
        f" of {summary.edges_total}" if summary.edges_total is not None else ""
    )
    out.print(
        f"fuzzed {safe_text(summary.target)} ({summary.mode}, seed {summary.seed}): "
        f"{plural(summary.test_cases, 'test case')}, {plural(summary.calls, 'call')} in {summary.seconds:.1f}s "
        f"({summary.calls_per_second:.0f}/s)",
        markup=False,
    )
    coverage = f"operations covered: {len(covered)} of {len(ops)}"
    if not summary.mode.startswith("agent"):
        coverage += f"; state-graph edges covered: {edges}"
    out.print(coverage, markup=False)
    missing = [op for op in ops if op not in covered]
    if missing:
        out.print(f"never accepted: {safe_text(', '.join(missing))}", markup=False)
    total = getattr(summary, "outcomes_total", ())
    if total:
        out.print(f"clause outcomes covered: {len(summary.outcomes)} of {len(total)}", markup=False)
    stopped_by = getattr(summary, "stopped_by", None)
    if stopped_by is not None:
        rounds = getattr(summary, "rounds", 1)
        more = f", {rounds} rounds" if rounds > 1 else ""
        jobs = getattr(summary, "jobs", 1)
        more += f", {jobs} seeds in parallel" if jobs > 1 else ""
        out.print(f"stopped by: {stopped_by}{more}", markup=False)
    elif summary.stopped_by_budget:
        out.print("stopped by the time budget", markup=False)
    if not summary.findings:
        out.print("no findings", markup=False)
        return
    out.print(f"{len(summary.findings)} finding(s):", markup=False)
    for i, finding in enumerate(summary.findings, 1):
        out.print(
            f"  {i}. [{finding.kind}] {safe_text(finding.operation)}: {safe_text(finding.message)}",
            markup=False,
        )
        if finding.location:
            out.print(
                f"     clause {safe_text(finding.clause or '')} at {safe_text(finding.location)}",
                markup=False,
            )
        for n, step in enumerate(finding.steps, 1):
            shown = json.dumps(step.input, ensure_ascii=False, default=str)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            fault = f" [fault: {step.meta['fault']}]" if step.meta and "fault" in step.meta else ""
            out.print(
                f"     {n}. {safe_text(step.tool)}({safe_text(shown)}) -> {step.status}{fault}", markup=False
            )
    if output:
        out.print(f"findings written to {safe_text(output)}", markup=False)
    out.print(f"reproduce: {safe_text(reproduce)}", markup=False)
