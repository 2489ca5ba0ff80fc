"""Holes filled from values the trajectory or the state shows, before Z3 (issue 17 item 5).

A feasible trajectory with holes whose values appear elsewhere (a ticket's id, an assignee, an
``enum`` member) is decided by concrete runs of candidate completions, without Z3; the witness
is a completion that verifies as valid; a trajectory no candidate completes still goes to Z3 and
gets Z3's verdict."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest

import envfactory
from envfactory import _completion, verification
from envfactory.solver import feasibility as F
from envfactory.trajectory import Hole, Step, Trajectory, fill_holes, read_trajectories_text
from envfactory.verification import Verifier

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_verify_holes import cases  # noqa: E402


@pytest.fixture(scope="module")
def tickets() -> envfactory.Contract:
    return envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")


def _count_solver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the trajectories the verifier asks Z3 about (``Verifier._symbolic``)."""
    asked: list[str] = []
    symbolic = Verifier._symbolic

    def counting(self: Verifier, traj: Trajectory, *args: Any) -> Any:
        asked.append(traj.id)
        return symbolic(self, traj, *args)

    monkeypatch.setattr(Verifier, "_symbolic", counting)
    return asked


def _filled(traj: Trajectory, holes: dict[str, Any]) -> Trajectory:
    steps = tuple(
        attrs.evolve(s, input=fill_holes(s.input, holes), output=fill_holes(s.output, holes))
        for s in traj.steps
    )
    return attrs.evolve(traj, steps=steps)


def test_recorded_values_complete_holes_without_z3(
    tickets: envfactory.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _count_solver(monkeypatch)
    verifier = Verifier(tickets, timeout=30.0)
    work = cases(25, 5)
    for traj, _ in work:
        result = verifier.check(traj)
        assert result.verdict == "feasible", (traj.id, result.message)
        holes = result.witness["holes"]
        assert set(holes) == set(traj.holes())
        assert result.message.startswith("a completion exists: ")
        assert verifier.check(_filled(traj, holes)).verdict == "valid"  # the witness is a completion
    assert not asked  # no trajectory here needed the solver


def test_a_trajectory_no_candidate_completes_gets_z3s_verdict(
    tickets: envfactory.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ticket 1 is started twice: no value of the hole lets step 3 pass."""
    raw = {
        "steps": [
            {"tool": "create_ticket", "input": {"title": "a", "priority": "low"}},
            {"tool": "assign", "input": {"id": {"$var": "who"}, "assignee": "jen"}},
            {"tool": "start", "input": {"id": 1}},
            {"tool": "start", "input": {"id": 1}},  # started twice: fails whatever ``who`` is
        ]
    }
    (traj,) = read_trajectories_text(orjson.dumps(raw), "t.jsonl")
    assert isinstance(traj, Trajectory)
    asked = _count_solver(monkeypatch)
    result = Verifier(tickets, timeout=30.0).check(traj)
    assert asked  # every candidate failed: Z3 decided
    whole = F.decide(tickets, traj, timeout=30.0)
    assert (result.verdict, result.step) == (whole.verdict, whole.step) == ("invalid", 3)


def test_the_search_is_bounded_and_then_z3_decides(
    tickets: envfactory.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[int] = []
    run = Verifier._run

    def counting(self: Verifier, *args: Any) -> Any:
        runs.append(1)
        return run(self, *args)

    monkeypatch.setattr(Verifier, "_run", counting)
    monkeypatch.setattr(verification, "GUESSED_STEPS", 1)
    traj, _ = cases(1, 5)[0]
    result = Verifier(tickets, timeout=30.0).check(traj)
    assert len(runs) == 2  # the concrete run to the first hole, one attempt, then Z3
    assert result.verdict == "feasible"


def test_same_named_holes_take_one_value(tickets: envfactory.Contract) -> None:
    rng = random.Random(3)
    raw = {
        "steps": [
            {"tool": "create_ticket", "input": {"title": "a", "priority": "low"}},
            {"tool": "create_ticket", "input": {"title": "b", "priority": "high"}},
            {"tool": "assign", "input": {"id": {"$var": "t"}, "assignee": "jen"}},
            {"tool": "start", "input": {"id": {"$var": "t"}}},
            {"tool": "assign", "input": {"id": 1, "assignee": rng.choice(["moss", "roy"])}},
            {"tool": "start", "input": {"id": 1}},
        ]
    }
    (traj,) = read_trajectories_text(orjson.dumps(raw), "t.jsonl")
    result = Verifier(tickets, timeout=30.0).check(traj)
    assert result.verdict == "feasible"
    assert result.witness["holes"] == {"t": 2}  # ticket 1 is started later, so t must be 2


def _holed(name: str, rng: random.Random, index: int, holes: int) -> tuple[Trajectory, list[Step], list[int]]:
    """One of bench_verify's trajectories of contract ``name``, its steps with ``holes`` input
    values made holes (``h0``, ``h1``, ...) at drawn steps, and those steps' indexes."""
    import bench_verify

    make = {"bank": bench_verify.bank_trajectory, "petstore": bench_verify.pet_trajectory}.get(
        name, bench_verify.ticket_trajectory
    )
    (traj,) = read_trajectories_text(orjson.dumps(make(rng, index)), "t.jsonl")
    assert isinstance(traj, Trajectory)
    steps = list(traj.steps)
    spots = [i for i, s in enumerate(steps) if isinstance(s.input, dict) and s.input]
    chosen = sorted(rng.sample(spots, min(holes, len(spots))))
    for n, i in enumerate(chosen):
        field = rng.choice(sorted(steps[i].input))
        steps[i] = attrs.evolve(steps[i], input={**steps[i].input, field: Hole(f"h{n}")})
    return traj, steps, chosen


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_the_verdict_is_z3s_with_or_without_the_search(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Holes put into bench_verify's trajectories of three contracts (some broken after the
    holes): the search changes how fast, never what: verdict and step as with Z3 alone."""
    contract = envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
    rng = random.Random(11)
    searched = Verifier(contract, timeout=30.0)
    verdicts = set()
    for index in range(12):
        traj, steps, _ = _holed(name, rng, index, 2)
        holed = attrs.evolve(traj, steps=tuple(steps))
        with monkeypatch.context() as m:
            m.setattr(verification, "GUESSED_STEPS", 0)
            alone = Verifier(contract, timeout=30.0).check(holed)
        result = searched.check(holed)
        assert (result.verdict, result.step) == (alone.verdict, alone.step), (holed.id, result, alone)
        verdicts.add(result.verdict)
    assert "feasible" in verdicts


def test_gathering_candidates_is_bounded_on_long_trajectories(
    tickets: envfactory.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hole whose field appears nowhere else in 3,000 steps: only the steps within
    ``REACH`` of it are read, and at most ``CANDIDATES`` values kept."""
    steps = [Step("create_ticket", {"title": f"t{i}", "priority": "low"}) for i in range(3000)]
    steps[1500] = Step("assign", {"id": 1, "assignee": Hole("who")})
    read: list[int] = []
    values_at = _completion._values_at
    monkeypatch.setattr(
        _completion, "_values_at", lambda v, f: (isinstance(v, dict) and read.append(1)) or values_at(v, f)
    )  # counts the steps' inputs read (the values inside them are strings)
    pools = _completion.candidates(
        tickets, steps, 1500, {"tickets": {i: {"assignee": None} for i in range(999)}}
    )
    assert len(read) == 2 * _completion.REACH + 1
    assert len(pools["who"]) == _completion.CANDIDATES


BREAKS = {
    "bank": Step("balance", {"account": "no-such-account"}),
    "petstore": Step("getPet", {"petId": 10**9}),
    "tickets": Step("close", {"id": 10**6}),
}
"""A step that fails unless a hole happens to make it pass: most holed trajectories it is put in
are infeasible there, or earlier."""


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_bisecting_the_prefixes_finds_the_scan_s_first_failing_step(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Z3 alone (no candidates) on holed trajectories of three contracts, most of them broken at
    the end: the first failing step found by bisecting the prefixes of tracked checks is the one
    the step-by-step scan finds, with the same verdict and kind (issue 17 item 5)."""
    contract = envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
    rng = random.Random(5)
    monkeypatch.setattr(verification, "GUESSED_STEPS", 0)
    # the cores themselves: not the concrete failure a completion's run may show instead
    monkeypatch.setattr(F._Decider, "_proved", lambda *args: None)
    seen = set()
    for index in range(8):
        traj, steps, chosen = _holed(name, rng, index, 3)
        if index % 4:  # after the first hole, anywhere up to the end: steps follow the failing one
            steps.insert(rng.randint(chosen[0] + 1, len(steps)), BREAKS[name])
        holed = attrs.evolve(traj, steps=tuple(steps))
        answers = []
        for mode in ("scan", "bisect"):
            with monkeypatch.context() as m:
                m.setattr(F, "PREFIX_SEARCH", mode)
                r = Verifier(contract, timeout=30.0).check(holed)  # its solver worker forks here
            answers.append((r.verdict, r.step, r.kind))
        assert answers[0] == answers[1], (holed.id, answers)
        seen.add(answers[0][2])
    assert "infeasible" in seen  # the prefixes were searched
