"""Trajectory feasibility with Z3: the bundled examples, brute force as the oracle, minimal cores,
open-world contracts and hostile inputs."""

from __future__ import annotations

import functools
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies as S

import envfactory
from envfactory.contracts.errors import EvaluationError, Location
from envfactory.contracts.model import UNKNOWN, Contract
from envfactory.contracts.semantics import Machine
from envfactory.solver import feasibility as F
from envfactory.trajectory import Hole, Trajectory, parse_trajectory, read_trajectories

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@functools.cache
def example(name: str) -> tuple[Contract, dict[str, Trajectory]]:
    contract = envfactory.load(EXAMPLES / name / f"{name}.yaml")
    trajs = {
        t.id: t
        for t in read_trajectories(EXAMPLES / name / "trajectories.jsonl")
        if isinstance(t, Trajectory)
    }
    return contract, trajs


def fill(value: Any, holes: dict[str, Any]) -> Any:
    if isinstance(value, Hole):
        return holes[value.name]
    if isinstance(value, dict):
        return {k: fill(v, holes) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [fill(v, holes) for v in value]
    return value


def replays_valid(contract: Contract, traj: Trajectory, witness: dict[str, Any]) -> bool:
    """The oracle: the completed trajectory passes every concrete check of the Machine."""
    m = Machine(contract)
    initial = dict(fill(dict(traj.initial or {}), witness["holes"]))
    initial.update(witness["initial"])
    state = m.initial_state(initial)
    for i, step in enumerate(traj.steps):
        op = contract.operations.get(step.tool)
        if op is None:
            return False
        value = fill(step.input, witness["holes"])
        has_output = step.has_output or i in witness["outputs"]
        output = fill(step.output, witness["holes"]) if step.has_output else witness["outputs"].get(i)
        if m.check_input(op, value) or m.check_requires(state, op, value):
            return False
        try:
            post = m.apply(state, op, value, output)
        except EvaluationError:
            return False
        if has_output and m.check_output(op, output):
            return False
        if m.check_ensures(post, op, value, output) or m.check_invariants(post):
            return False
        state = post
    return True


# -- the bundled examples ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "traj_id"),
    [("bank", "transfer-some-amount"), ("petstore", "delete-some-pet"), ("tickets", "assign-some-ticket")],
)
def test_bundled_holes_are_feasible_and_the_witness_verifies(name: str, traj_id: str) -> None:
    contract, trajs = example(name)
    verdict = F.decide(contract, trajs[traj_id])
    assert verdict.verdict == "feasible", verdict.message
    assert verdict.witness is not None
    assert set(verdict.witness["holes"]) == set(trajs[traj_id].holes())
    assert replays_valid(contract, trajs[traj_id], verdict.witness)


def test_bank_transfer_amount_is_pinned_by_the_later_balance() -> None:
    contract, trajs = example("bank")
    verdict = F.decide(contract, trajs["transfer-some-amount"])
    assert verdict.witness is not None and verdict.witness["holes"] == {"x": 60}


def test_impossible_transfer_is_infeasible_with_a_minimal_core() -> None:
    contract, trajs = example("bank")
    verdict = F.decide(contract, trajs["impossible-transfer"])
    assert verdict.verdict == "invalid" and verdict.kind == "infeasible"
    assert verdict.step == 4 and verdict.operation == "balance"
    assert verdict.core is not None
    assert {entry["step"] for entry in verdict.core} == {3, 4}
    assert all(entry["location"].startswith(str(EXAMPLES / "bank" / "bank.yaml")) for entry in verdict.core)
    assert_core_unsat_and_minimal(contract, trajs["impossible-transfer"], verdict.core)


def test_petstore_delete_some_pet_picks_the_only_pet() -> None:
    contract, trajs = example("petstore")
    verdict = F.decide(contract, trajs["delete-some-pet"])
    assert verdict.witness is not None and verdict.witness["holes"] == {"p": 7}


def test_concrete_failures_keep_their_kind() -> None:
    contract, trajs = example("petstore")
    traj = trajs["delete-some-pet"]
    bad = attrs.evolve(traj, steps=(attrs.evolve(traj.steps[0], tool="deletePets"), *traj.steps[1:]))
    verdict = F.decide(contract, bad)
    assert (verdict.verdict, verdict.kind, verdict.step) == ("invalid", "unknown_tool", 0)
    logged_out = attrs.evolve(traj, initial={**dict(traj.initial or {}), "user": None})
    verdict = F.decide(contract, logged_out)
    assert (verdict.verdict, verdict.kind, verdict.step) == ("invalid", "precondition", 0)
    assert verdict.clause == "user != null"


# -- core minimality, by the solver itself -------------------------------------------------------


def assert_core_unsat_and_minimal(contract: Contract, traj: Trajectory, core: list[dict[str, Any]]) -> None:
    enc = F._Decider(contract, traj, 10.0, False).build()

    def solve(entries: list[dict[str, Any]]) -> Any:
        s = z3.Solver()
        for h in enc.hard:
            s.add(F.to_z3(h))
        for entry in entries:
            matches = [t for t in enc.tracked if t.step == entry["step"] and t.to_core() == entry]
            assert matches, entry
            for t in matches:
                s.add(F.to_z3(t.term))
        return s.check()

    assert solve(core) == z3.unsat
    for i in range(len(core)):
        assert solve(core[:i] + core[i + 1 :]) == z3.sat, f"core member {core[i]} is not needed"


# -- brute force over small domains --------------------------------------------------------------


_TMP = tempfile.TemporaryDirectory(prefix="envfactory-solver-tests-")  # removed when the run ends
_DIR = Path(_TMP.name)


@functools.cache
def load_text(text: str) -> Contract:
    path = _DIR / f"c{abs(hash(text))}.yaml"
    path.write_text(text, encoding="utf-8")
    return envfactory.load(path)


def brute_force(contract: Contract, traj: Trajectory) -> bool:
    """Whether some value of every hole and every unrecorded output makes the trajectory valid."""
    names = list(traj.holes())
    domain: dict[str, list[Any]] = {
        n: (["idle", "busy", "other"] if n.endswith("s") else [0, 1, 2, 3]) for n in names
    }
    silent = [i for i, s in enumerate(traj.steps) if s.tool == "peek" and not s.has_output]
    for values in itertools.product(*(domain[n] for n in names)):
        holes = dict(zip(names, values))
        for outs in itertools.product(S.PEEK_DOMAIN, repeat=len(silent)):
            witness = {
                "holes": holes,
                "outputs": {i: {"total": o} for i, o in zip(silent, outs)},
                "initial": {},
            }
            if replays_valid(contract, traj, witness):
                return True
    return False


@given(text=S.small_contracts(), raw=S.trajectories())
@settings(
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_feasible_exactly_when_brute_force_finds_a_completion(text: str, raw: dict[str, Any]) -> None:
    contract = load_text(text)
    traj = parse_trajectory(json.loads(json.dumps(raw)), Location("<test>"))
    verdict = F.decide(contract, traj, timeout=10.0)
    expected = brute_force(contract, traj)
    assert verdict.verdict in ("feasible", "invalid"), verdict.message
    assert (verdict.verdict == "feasible") == expected, (verdict, raw)
    if verdict.verdict == "feasible":
        assert verdict.witness is not None and replays_valid(contract, traj, verdict.witness)
    elif verdict.kind == "infeasible":
        assert verdict.core
        assert_core_unsat_and_minimal(contract, traj, verdict.core)


# -- open world ---------------------------------------------------------------------------------


def open_petstore() -> Contract:
    contract, _ = example("petstore")
    pets = attrs.evolve(contract.state["pets"], initial=UNKNOWN)
    return attrs.evolve(contract, state={**contract.state, "pets": pets}, open_world=True)


def traj_of(steps: list[dict[str, Any]], initial: dict[str, Any] | None = None) -> Trajectory:
    raw: dict[str, Any] = {"id": "t", "steps": steps}
    if initial is not None:
        raw["initial"] = initial
    return parse_trajectory(raw, Location("<test>"))


def test_open_world_assumes_the_pet_existed() -> None:
    contract = open_petstore()
    traj = traj_of(
        [
            {"tool": "login", "input": {"name": "ann"}, "output": {"user": "ann"}},
            {"tool": "getPet", "input": {"petId": 7}},
            {"tool": "deletePet", "input": {"petId": 7}},
        ]
    )
    verdict = F.decide(contract, traj)
    assert verdict.verdict == "feasible", verdict.message
    assert verdict.witness is not None
    assert "pets[7] existed before step 0" in verdict.witness["assumptions"]
    assert replays_valid(contract, traj, verdict.witness)


def test_open_world_still_finds_contradictions() -> None:
    contract = open_petstore()
    login = {"tool": "login", "input": {"name": "ann"}, "output": {"user": "ann"}}
    traj = traj_of(
        [
            login,
            {
                "tool": "getPet",
                "input": {"petId": {"$var": "p"}},
                "output": {"id": 3, "name": "Rex", "price": 1},
            },
            {"tool": "deletePet", "input": {"petId": {"$var": "p"}}},
            {"tool": "getPet", "input": {"petId": 3}},
        ]
    )
    verdict = F.decide(contract, traj)
    assert (verdict.verdict, verdict.kind, verdict.step) == ("invalid", "infeasible", 3), verdict.message
    assert verdict.core is not None and {e["step"] for e in verdict.core} == {1, 3}
    assert_core_unsat_and_minimal(contract, traj, verdict.core)
    # reading a key just deleted fails whatever the key is: that is a plain precondition failure
    again = traj_of(
        [
            login,
            {"tool": "deletePet", "input": {"petId": {"$var": "p"}}},
            {"tool": "getPet", "input": {"petId": {"$var": "p"}}},
        ]
    )
    verdict = F.decide(contract, again)
    assert (verdict.verdict, verdict.kind, verdict.step) == ("invalid", "precondition", 2), verdict.message


def test_holes_in_the_initial_state() -> None:
    contract, _ = example("petstore")
    traj = traj_of(
        [{"tool": "adopt", "input": {"petId": 1}, "output": {"balance": 55}}],
        initial={
            "user": "ann",
            "balance": {"$var": "b"},
            "pets": {"1": {"id": 1, "name": "Rex", "price": 45}},
        },
    )
    verdict = F.decide(contract, traj)
    assert verdict.verdict == "feasible", verdict.message
    assert verdict.witness is not None and verdict.witness["holes"] == {"b": 100}


def test_allow_rejected_steps() -> None:
    contract, trajs = example("petstore")
    traj = trajs["rejected-then-retry"]
    holed = attrs.evolve(
        traj, steps=(attrs.evolve(traj.steps[0], input={"petId": {"$var": "p"}}), *traj.steps[1:])
    )
    holed = traj_of(json.loads(json.dumps(envfactory.trajectory.to_json(holed)))["steps"])
    assert F.decide(contract, holed, allow_rejected=True).verdict == "feasible"
    assert F.decide(contract, holed, allow_rejected=False).verdict == "invalid"


# -- hostile input -------------------------------------------------------------------------------


@pytest.mark.timeout(600)
def test_thousands_of_holes_do_not_hang() -> None:
    contract, _ = example("tickets")
    steps = [
        {"tool": "create_ticket", "input": {"title": {"$var": f"t{i}"}, "priority": "low"}}
        for i in range(3000)
    ]
    verdict = F.decide(contract, traj_of(steps), timeout=2.0)  # bounded: the mark is the hang guard
    assert verdict.verdict in ("unknown", "feasible")


def test_huge_constants_and_tiny_time_limits_give_unknown_or_an_answer() -> None:
    contract, trajs = example("bank")
    traj = trajs["transfer-some-amount"]
    steps = list(traj.steps)
    steps[2] = attrs.evolve(steps[2], input={"account": "AA01", "amount": 10**300})
    verdict = F.decide(contract, attrs.evolve(traj, steps=tuple(steps)), timeout=1.0)
    assert verdict.verdict == "invalid" and verdict.kind == "input_schema"  # maximum: 1000000
    # a time limit below the solver's floor: whether a warm solver answers within it depends on
    # the machine, so either outcome is right, and neither may be an error
    verdict = F.decide(contract, traj, timeout=1e-6)
    assert verdict.verdict in ("unknown", "feasible")
    assert verdict.verdict == "feasible" or "time" in verdict.message


def test_a_tiny_resource_limit_gives_unknown_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resource limit is the deterministic twin of the time-out: the same question under the
    same limit is undecided on any machine, and the message names the limit, not the clock."""
    contract, trajs = example("bank")
    monkeypatch.setattr(F, "RLIMIT_PER_SECOND", 1)  # 60 units for the tracked pass, 15 for the quick
    verdicts = [F.decide(contract, trajs["transfer-some-amount"], timeout=60.0) for _ in range(3)]
    assert [(v.verdict, v.message) for v in verdicts] == [
        ("unknown", "the solver reached its resource limit")
    ] * 3


def test_the_same_question_gets_the_same_answer() -> None:
    contract, trajs = example("tickets")
    first = F.decide(contract, trajs["assign-some-ticket"])
    again = [F.decide(contract, trajs["assign-some-ticket"]) for _ in range(3)]
    assert {v.verdict for v in again} == {first.verdict} == {"feasible"}
    contract, trajs = example("bank")
    cores = [F.decide(contract, trajs["impossible-transfer"]).core for _ in range(3)]
    assert cores[0] == cores[1] == cores[2]


@given(st.integers(min_value=0, max_value=2))
@settings(max_examples=3, deadline=None, database=None)
def test_result_serializes(seed: int) -> None:
    contract, trajs = example("bank")
    verdict = F.decide(contract, trajs["impossible-transfer" if seed else "transfer-some-amount"])
    json.dumps(verdict.to_json())


def test_deep_expressions_are_encoded_without_recursion_trouble() -> None:
    deep = "input.n"
    for _ in range(60):
        deep = f"({deep} + 1 - 1)"
    text = f"""\
envfactory: "1"
info: {{title: Deep, version: "1"}}
state:
  x: {{type: integer, initial: 0}}
operations:
  set:
    input: {{type: object, properties: {{n: {{type: integer}}}}, required: [n]}}
    requires: ["{deep} == 41 + 1"]
    effects: ["x = {deep}"]
"""
    contract = load_text(text)
    traj = traj_of([{"tool": "set", "input": {"n": {"$var": "n"}}}])
    verdict = F.decide(contract, traj, timeout=10.0)
    assert verdict.verdict == "feasible", verdict.message
    assert verdict.witness is not None and verdict.witness["holes"] == {"n": 42}


def test_a_server_failure_under_allow_rejected_changed_nothing_as_verify_reads_it() -> None:
    """Under ``--allow-rejected`` the verifier reads a permitted call answered 5xx as one that
    changed nothing; the solver's encoding and its concrete replay of a completion read it the
    same way (before, the replay failed the call, so a holed trajectory the verifier passes
    without holes came out ``unknown``), and without the flag it still fails there."""
    contract, _ = example("tickets")
    created = {"id": 1, "title": "a", "priority": "low", "status": "open", "assignee": None}
    steps = [
        {"tool": "create_ticket", "input": {"title": "a", "priority": "low"}, "output": created},
        {"tool": "assign", "input": {"id": 1, "assignee": "jen"}, "status": 503},
        {"tool": "start", "input": {"id": {"$var": "h"}}},
    ]
    concrete = traj_of([*steps[:2], {"tool": "start", "input": {"id": 1}}])
    (result,) = envfactory.verify(contract, [concrete], allow_rejected=True)
    assert result.verdict == "invalid"  # the 503 assigned nobody
    assert F.decide(contract, traj_of(steps), allow_rejected=True).verdict == "invalid"
    steps[1:1] = [{"tool": "assign", "input": {"id": 1, "assignee": "roy"}}]
    verdict = F.decide(contract, traj_of(steps), allow_rejected=True)
    assert verdict.verdict == "feasible", verdict.message
    assert verdict.witness is not None and verdict.witness["holes"] == {"h": 1}
    refused = F.decide(contract, traj_of(steps))
    assert (refused.verdict, refused.step, refused.kind) == ("invalid", 2, "postcondition")
