"""Benchmark: Z3 feasibility checks of 10-step trajectories with 2-3 holes on the bundled contracts.

Prints the median and p95 milliseconds per ``decide`` call (targets: median <= 5 ms, p95 <= 20 ms),
and, in the same run, incremental solving (one solver, a push per step, a check after each step)
against a fresh solver per step (every constraint so far re-asserted), as a ratio. Wall-clock and
CPU figures are both printed: on a loaded machine the CPU figure is the one to compare.

The trajectories are random walks of the simulator (all valid), with 2-3 input values replaced by
``{"$var": ...}`` holes; a third of them also drop one recorded output. Seeded: same numbers of
calls and holes on every run. Run: ``.venv/bin/python bench/bench_feasibility.py``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import z3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import envfactory  # noqa: E402
from envfactory.solver import feasibility as F  # noqa: E402
from envfactory.statemachine.simulator import Simulator  # noqa: E402
from envfactory.statemachine.walk import Walker  # noqa: E402
from envfactory.trajectory import Hole, Trajectory  # noqa: E402

SEED = 20261123
PER_CONTRACT = 40
STEPS = 10


def ten_steps(contract: Any, rng: random.Random, index: int) -> Trajectory | None:
    walker = Walker(contract, max_length=STEPS)
    sim = Simulator(contract, seed=rng.randrange(1 << 30))
    used: dict[str, int] = {}
    for _ in range(STEPS):
        moved = walker.step(sim, rng, used)
        if moved is None:
            return None
        sim = moved
    return sim.trajectory(id=f"bench-{index}")


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaves(v, (*path, k))]
    if isinstance(value, int | str) and not isinstance(value, bool):
        return [path]
    return []


def put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value)
    copy[path[0]] = put(value[path[0]], path[1:], new)
    return copy


def with_holes(traj: Trajectory, rng: random.Random) -> Trajectory:
    spots = [(i, p) for i, s in enumerate(traj.steps) for p in leaves(s.input)]
    steps = list(traj.steps)
    for n, (i, p) in enumerate(rng.sample(spots, min(len(spots), rng.choice((2, 3))))):
        steps[i] = attrs.evolve(steps[i], input=put(steps[i].input, p, Hole(f"v{n}")))
    if rng.random() < 1 / 3:
        i = rng.randrange(len(steps))
        steps[i] = attrs.evolve(steps[i], output=None, has_output=False)
    return attrs.evolve(traj, steps=tuple(steps))


def corpus() -> list[tuple[Any, Trajectory]]:
    rng = random.Random(SEED)
    out = []
    for name in ("bank", "petstore", "tickets"):
        contract = envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
        made = 0
        for index in range(PER_CONTRACT * 5):
            traj = ten_steps(contract, rng, index)
            if traj is None:
                continue
            out.append((contract, with_holes(traj, rng)))
            made += 1
            if made == PER_CONTRACT:
                break
    return out


def per_step_checks(contract: Any, traj: Trajectory, incremental: bool) -> float:
    """Seconds to check every prefix: one solver with a scope per step, or a fresh solver per prefix."""
    decider = F._Decider(contract, traj, 5.0, False)
    enc = decider.build()
    steps = sorted({t.step for t in enc.tracked})
    start = time.perf_counter()
    if incremental:
        s = z3.SimpleSolver()
        for h in enc.hard:
            s.add(F.to_z3(h))
        for j in steps:
            s.push()  # a scope per step: a caller can pop back to any prefix
            for item in enc.tracked:
                if item.step == j:
                    s.add(F.to_z3(item.term))
            s.check()
    else:
        for j in steps:
            s = z3.SimpleSolver()
            for h in enc.hard:
                s.add(F.to_z3(h))
            for item in enc.tracked:
                if item.step <= j:
                    s.add(F.to_z3(item.term))
            s.check()
    return time.perf_counter() - start


def main() -> None:
    cases = corpus()
    for contract, traj in cases[:5]:  # warm up Z3 and the caches
        F.decide(contract, traj)
    wall: list[float] = []
    cpu: list[float] = []
    verdicts: dict[str, int] = {}
    for contract, traj in cases:
        start, start_cpu = time.perf_counter(), time.process_time()
        verdict = F.decide(contract, traj)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
    print(f"feasibility: {len(cases)} trajectories of {STEPS} steps, 2-3 holes each; verdicts {verdicts}")
    for label, times in (("wall", wall), ("cpu ", cpu)):
        times.sort()
        median = statistics.median(times)
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"  {label}: median {median:.2f} ms (target <= 5), p95 {p95:.2f} ms (target <= 20), max {times[-1]:.2f} ms"
        )
    inc = sum(per_step_checks(c, t, True) for c, t in cases)
    fresh = sum(per_step_checks(c, t, False) for c, t in cases)
    inc += sum(per_step_checks(c, t, True) for c, t in cases)  # alternate, so that load drifts even out
    fresh += sum(per_step_checks(c, t, False) for c, t in cases)
    print(
        f"per-step solving over the same trajectories: incremental {inc * 1000:.1f} ms, "
        f"fresh solver per step {fresh * 1000:.1f} ms, ratio fresh/incremental {fresh / inc:.2f}x"
    )


if __name__ == "__main__":
    main()
