"""Symbolic verification starts at the first step with an unknown value, from the state the
concrete run computed through the steps before it (issue 17 item 5): Z3 encodes only the rest,
and the verdict is the one deciding the whole trajectory from step 0 gives."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import envfactory
from envfactory import verification
from envfactory.solver import deadline
from envfactory.solver import feasibility as F
from envfactory.trajectory import Hole, Trajectory, read_trajectories_text
from envfactory.verification import Verifier

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_verify import ticket_trajectory  # noqa: E402
from bench_verify_holes import InProcess  # noqa: E402


def _holed(raw: dict[str, Any], rng: random.Random) -> tuple[Trajectory, int]:
    """The trajectory with one or two input values of its later half made unknown."""
    import orjson

    (traj,) = read_trajectories_text(orjson.dumps(raw), "t.jsonl")
    assert isinstance(traj, Trajectory)
    steps = list(traj.steps)
    spots = [i for i, s in enumerate(steps) if i >= len(steps) // 2 and s.input]
    chosen = sorted(rng.sample(spots, min(2, len(spots))))
    for n, i in enumerate(chosen):
        field = sorted(steps[i].input)[0]
        steps[i] = attrs.evolve(steps[i], input={**steps[i].input, field: Hole(f"h{n}")})
    return attrs.evolve(traj, steps=tuple(steps)), chosen[0]


def _cases() -> list[tuple[Trajectory, int]]:
    rng = random.Random(17)
    cases = []
    for index in range(40):
        raw = ticket_trajectory(rng, index)
        if len(raw["steps"]) >= 6:
            cases.append(_holed(raw, rng))
    return cases


@pytest.fixture(scope="module")
def tickets() -> envfactory.Contract:
    return envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")


def test_the_solver_encodes_from_the_first_unknown_step(
    tickets: envfactory.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[int] = []
    step = F._Decider._step

    def counting(self: Any, i: int, *args: Any) -> Any:
        encoded.append(i)
        return step(self, i, *args)

    monkeypatch.setattr(F._Decider, "_step", counting)
    monkeypatch.setattr(deadline, "Worker", InProcess)  # count in this process, not a fork
    monkeypatch.setattr(verification, "GUESSED_STEPS", 0)  # Z3 for every trajectory with holes
    verifier = Verifier(tickets, timeout=30.0)
    checked = 0
    for traj, first in _cases():
        encoded.clear()
        result = verifier.check(traj)
        if result.verdict == "invalid" and result.step is not None and result.step < first:
            continue  # broken before any unknown: Z3 never asked
        assert encoded, traj.id
        assert min(encoded) == first, (traj.id, encoded[:3], first)
        checked += 1
    assert checked >= 10


def test_the_verdict_is_the_one_from_step_zero(tickets: envfactory.Contract) -> None:
    verifier = Verifier(tickets, timeout=30.0)
    kinds = set()
    for traj, _ in _cases():
        result = verifier.check(traj)
        whole = F.decide(tickets, traj, timeout=30.0)
        assert (result.verdict, result.step, result.kind) == (
            whole.verdict,
            whole.step,
            whole.kind if whole.verdict == "invalid" else None,
        ), traj.id
        kinds.add(result.verdict)
    assert {"feasible", "invalid"} <= kinds
