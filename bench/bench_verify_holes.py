"""Benchmark: `verify` of 50-step tickets trajectories holding 3 unknown values (issue 17 item 5).

Target: a median of 5 ms CPU per trajectory, in a warm process (the contract loaded and, where
the solver is needed, Z3 imported and its first query's set-up paid, as in any run past its
first such trajectory). Figures are CPU seconds of ``Verifier.check`` per trajectory, with the
solver run in this process (``deadline.Worker`` without its fork: the same code, less the
pickling to and from the worker, whose CPU a per-call figure would not see); the mean with the
real forked worker, its CPU read from ``/proc``, is printed as well.

Holes go into input fields of three steps drawn uniformly (seeded). Three sets: the
trajectories as generated (feasible); the same with a last step that fails whatever the holes
are, on a check that reads nothing they decide (infeasible: the target; one failing candidate
completion's run shows it, ``statemachine.taint``); and the same with a last step whose failing
check reads what the holes decide (Z3 needed; for comparison). Each set is verified by default
(values the trajectory or state shows tried first, ``verification.GUESSED_STEPS``) and with Z3
only (from the first step with a hole, from the concrete state); ``z3`` counts the trajectories
the solver was asked about.

Run: ``.venv/bin/python bench/bench_verify_holes.py [--count 60] [--seed 17]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_verify import TICKETS  # noqa: E402

STEPS = 50
HOLES = 3


def fifty_steps(rng: random.Random, index: int) -> dict[str, Any]:
    """A valid tickets trajectory of exactly ``STEPS`` steps: tickets created, assigned, worked
    through their lifecycle, and counted (the moves of bench_verify's ``ticket_trajectory``)."""
    steps: list[dict[str, Any]] = []
    status: dict[int, str] = {}
    assignee: dict[int, str | None] = {}
    while len(steps) < STEPS:
        roll = rng.random()
        live = [t for t, s in status.items() if s != "closed"]
        if roll < 0.25 or not live:
            tid = len(status) + 1
            priority = rng.choice(["low", "normal", "high", "urgent"])
            status[tid], assignee[tid] = "open", None
            ticket = {"id": tid, "title": f"t{index}-{tid}", "priority": priority, "status": "open"}
            out = {**ticket, "assignee": None}
            steps.append(
                {
                    "tool": "create_ticket",
                    "input": {"title": ticket["title"], "priority": priority},
                    "output": out,
                }
            )
        elif roll < 0.9:
            tid = rng.choice(live)
            if status[tid] == "open" and not assignee[tid]:
                assignee[tid] = rng.choice(["moss", "jen", "roy"])
                steps.append({"tool": "assign", "input": {"id": tid, "assignee": assignee[tid]}})
                continue
            tool = {"open": "start", "in_progress": "resolve", "resolved": "close"}[status[tid]]
            status[tid] = {"start": "in_progress", "resolve": "resolved", "close": "closed"}[tool]
            steps.append({"tool": tool, "input": {"id": tid}})
        else:
            count = sum(1 for s in status.values() if s != "closed")
            steps.append({"tool": "list_open", "input": {}, "output": {"count": count}})
    return {"id": f"ticket-{index}", "steps": steps}


def cases(count: int, seed: int) -> list[tuple[Any, int]]:
    """``count`` trajectories, each with ``HOLES`` input values made unknown; (trajectory, first)."""
    import attrs
    import orjson

    from envfactory.trajectory import Hole, Trajectory, read_trajectories_text

    rng = random.Random(seed)
    out: list[tuple[Any, int]] = []
    index = 0
    while len(out) < count:
        index += 1
        raw = fifty_steps(rng, index)
        (traj,) = read_trajectories_text(orjson.dumps(raw), "t.jsonl")
        assert isinstance(traj, Trajectory)
        steps = list(traj.steps)
        spots = [i for i, s in enumerate(steps) if s.input]
        chosen = sorted(rng.sample(spots, HOLES))
        for n, i in enumerate(chosen):
            field = rng.choice(sorted(steps[i].input))
            steps[i] = attrs.evolve(steps[i], input={**steps[i].input, field: Hole(f"h{n}")})
        out.append((attrs.evolve(traj, steps=tuple(steps)), chosen[0]))
    return out


def _worker_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def broken(traj: Any) -> Any:
    """``traj`` with a last step that fails whatever its holes are (closing a ticket that does
    not exist): no completion is feasible, and the failing check reads nothing a hole decides
    (the ticket's key: holes only write fields), so one completion's run shows it
    (``statemachine.taint``) without Z3."""
    import attrs

    from envfactory.trajectory import Step

    return attrs.evolve(traj, steps=(*traj.steps, Step("close", {"id": 10**6})))


def miscounted(traj: Any) -> Any:
    """``traj`` with a last ``list_open`` answered with 100 more open tickets than exist: no
    completion is feasible, but the failing ensures counts statuses, which the holes decide
    wherever one names the ticket a step moves (or its title: a whole new record), so Z3 is
    needed for most (not the target; shown for comparison)."""
    import attrs

    from envfactory.trajectory import Step

    return attrs.evolve(
        traj, steps=(*traj.steps, Step("list_open", {}, output={"count": 100}, has_output=True))
    )


class InProcess:
    """``solver.deadline.Worker`` without its fork, so that a per-trajectory CPU figure holds
    Z3's work too (the same code, less the pickling to and from the worker)."""

    def __init__(self, handler: Any, **_: Any) -> None:
        self.handler = handler

    def call(self, arg: Any, seconds: float) -> Any:
        return self.handler(arg)

    def close(self) -> None:
        pass


def per_trajectory(contract: Any, work: list[tuple[Any, int]]) -> tuple[list[float], dict[str, int]]:
    """CPU seconds of ``Verifier.check`` per trajectory (the solver, when asked, in process),
    and the verdicts, with how many trajectories the solver was asked about (``z3``)."""
    from envfactory.solver import deadline
    from envfactory.verification import Verifier

    forked = deadline.Worker
    deadline.Worker = InProcess  # type: ignore
    try:
        verifier = Verifier(contract, timeout=60.0)
        verifier.check(miscounted(work[0][0]))  # warm: Z3 imported, its first query's set-up paid
        verdicts: dict[str, int] = {"z3": 0}
        symbolic = verifier._symbolic

        def counted(*args: Any) -> Any:
            verdicts["z3"] += 1
            return symbolic(*args)

        verifier._symbolic = counted  # type: ignore[method-assign]
        per: list[float] = []
        for traj, _ in work:
            t = time.process_time()
            result = verifier.check(traj)
            per.append(time.process_time() - t)
            verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
    finally:
        deadline.Worker = forked  # type: ignore[misc]
    return per, verdicts


def _ms(per: list[float]) -> str:
    ranked = sorted(per)
    return (
        f"median {statistics.median(per) * 1000:6.1f} ms, p90 {ranked[int(len(ranked) * 0.9)] * 1000:6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()

    import envfactory
    from envfactory import verification
    from envfactory.verification import Verifier

    contract = envfactory.load(TICKETS)
    work = cases(args.count, args.seed)
    bad = [(broken(traj), first) for traj, first in work]
    miscount = [(miscounted(traj), first) for traj, first in work]
    default = verification.GUESSED_STEPS
    rows = []
    for label, steps in (("default", default), ("Z3 only (no candidates)", 0)):
        verification.GUESSED_STEPS = steps
        sets = (
            ("feasible", work),
            ("infeasible", bad),
            ("infeasible, the failing check reads holes", miscount),
        )
        for kind, items in sets:
            per, verdicts = per_trajectory(contract, items)
            rows.append((label, kind, per, verdicts))
    verification.GUESSED_STEPS = default

    # the default as ``verify`` runs it: the solver, when asked, in its forked worker
    verifier = Verifier(contract, timeout=60.0)
    verifier.check(broken(work[0][0]))

    def worker() -> float:  # the solver worker's CPU so far
        proc = getattr(verifier._solver, "_proc", None)
        return _worker_cpu(proc.pid) if proc is not None else 0.0

    me, before = time.process_time(), worker()
    for traj, _ in work:
        verifier.check(traj)
    total = time.process_time() - me + worker() - before

    print(
        f"load {os.getloadavg()[0]:.1f}; {len(work)} tickets trajectories of {STEPS} steps, {HOLES} holes each"
    )
    print("CPU per trajectory, warm process (target: a median of 5 ms):")
    for label, kind, per, verdicts in rows:
        print(f"  {label:24s} {kind:42s} {_ms(per)}  {verdicts}")
    print(
        f"  default, feasible, the solver in its forked worker (as `verify` runs it): mean {total / len(work) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
