"""`envfactory generate CONTRACT -n N -o FILE`: valid, diverse trajectories for training data.

Coverage tours first (every operation and abstract transition reached from the initial state),
then random walks of spread-out lengths; each trajectory verifies ``valid``. Trajectory ``i``
depends only on ``--seed`` and ``i``, so ``--jobs`` and ``--engine ray`` write the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import click

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_OK,
    console,
    contract_options,
    output_option,
    output_stream,
    plural,
    safe_text,
)
from envfactory.contracts.errors import UsageError
from envfactory.contracts.loader import load
from envfactory.statemachine.walk import LoadSpec, ProcessWalks, RayWalks, generate
from envfactory.trajectory import Trajectory, dumps_trajectory


@click.command("generate", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False, exists=True))
@click.option("-n", "count", type=click.IntRange(min=0), required=True, help="How many trajectories.")
@output_option("JSON Lines file ('-': stdout).", required=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Every random choice flows from it.")
@click.option("--goal", default=None, help="A goal name from the contract, or an expression over the state.")
@click.option(
    "--max-length",
    type=click.IntRange(min=1, max=1000),
    default=10,
    show_default=True,
    help="Calls per trajectory at most.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where walks run: worker processes on this machine, or a Ray cluster (pip install envfactory[ray]).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1, max=256),
    default=1,
    show_default=True,
    help="Worker processes (local) or Ray tasks; the output is the same for any number.",
)
@contract_options
def command(
    contract: str,
    count: int,
    out: str,
    seed: int,
    goal: str | None,
    max_length: int,
    engine: str,
    jobs: int,
    with_state: str | None,
    closed_world: bool,
) -> int:
    """Generate N valid, diverse trajectories of CONTRACT into a JSON Lines file."""
    if out != "-" and Path(out).exists() and Path(out).resolve() == Path(contract).resolve():
        raise UsageError("the output file is the contract; write to another file")
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    if goal is not None and goal not in loaded.goals and not any(c in goal for c in " <>=()."):
        names = ", ".join(sorted(loaded.goals)) or "none"
        raise UsageError(f"the contract has no goal {goal!r} (goals: {names}); or pass an expression")
    spec = LoadSpec(str(contract), with_state, closed_world, max_length, goal)
    runner: ProcessWalks | RayWalks | None = None
    if engine == "ray":
        runner = RayWalks(spec, jobs)
    elif jobs > 1:
        runner = ProcessWalks(spec, jobs)
    err = console(stderr=True)
    try:
        with output_stream(out) as stream:
            stats = _write(
                stream,
                lambda progress: generate(
                    loaded,
                    count,
                    seed=seed,
                    goal=goal,
                    max_length=max_length,
                    map_walks=runner,
                    progress=progress,
                ),
                count,
                err,
            )
    finally:
        if runner is not None:
            runner.close()
    where = "stdout" if out == "-" else safe_text(out)
    written, tools, steps = stats
    err.print(
        f"wrote {plural(written, 'trajectory', 'trajectories')} ({plural(steps, 'call')}) to {where} (seed {seed}); "
        f"operations used: {len(tools & set(loaded.operations))}/{len(loaded.operations)}",
        markup=False,
    )
    return EXIT_OK


def _write(
    stream: IO[bytes],
    make: Callable[[Callable[[int], None] | None], Iterator[Trajectory]],
    count: int,
    err: Any,
) -> tuple[int, set[str], int]:
    """Stream the trajectories out (with a progress bar on a terminal); return what was written."""
    written = steps = 0
    tools: set[str] = set()

    def emit(traj: Trajectory) -> None:
        nonlocal written, steps
        stream.write(dumps_trajectory(traj) + b"\n")
        written += 1
        steps += len(traj.steps)
        tools.update(step.tool for step in traj.steps)

    if err.is_terminal and count > 0:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task("generating", total=count)
            for traj in make(lambda k: bar.advance(task, k)):
                emit(traj)
        return written, tools, steps
    for traj in make(None):
        emit(traj)
    return written, tools, steps
