"""Generated step checkers (``contracts.codegen.step_checker``, issue 17 item 1): the whole step
(input schema, requires, effects written in place, output schema, ensures, invariant re-checks)
as one generated function per operation.

* differential: over drawn contracts and drawn, mutated trajectories, the verifier with the
  generated step checkers gives exactly the results (verdict, step, kind, message, values) of the
  verifier without them (the closures and the undo log of ``envfactory._fastpath``);
* rollback: whenever a step checker answers "not sure", the state is exactly as before the step,
  also when it gave up after it had written (two writes to one collection, the second undefined);
* it settles the common case: every step of a valid trajectory of each bundled contract;
* an invariant ``all(body for k in c)`` whose body reads a variable the step moves the way the
  body's polarity allows (``create_ticket``: ``next_id`` grows, ``t < next_id``) is re-checked
  at the written keys only (issue 20), under a run-time guard; drawn in the differential test.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.values import FrozenMap
from envfactory.trajectory import Trajectory, read_trajectories, read_trajectories_text
from envfactory.verification import Verifier

ROOT = Path(__file__).resolve().parents[2]

TEMPLATE = """\
envfactory: "1"
info: {{title: Drawn, version: "1"}}
state:
  n: {{type: integer, initial: 0}}
  flag: {{type: boolean, initial: false}}
  label: {{type: [string, "null"], initial: null}}
  c:
    collection:
      key: {{type: integer}}
      value: {{$ref: "#/schemas/R"}}
operations:
  put:
    input: {{$ref: "#/schemas/In"}}
    requires: [{put_req}]
    effects: ['c[input.k] = {{"a": input.a, "t": input.t}}', "n = n + 1"]
    ensures: [{put_ens}]
  setf:
    input: {{$ref: "#/schemas/In"}}
    requires: ["input.k in c", {setf_req}]
    effects: ["c[input.k].a = input.a", "label = input.t"]
  two:
    input: {{$ref: "#/schemas/In"}}
    effects: ["c[input.k].a = input.a", "c[input.j].t = input.t"]
  drop:
    input: {{$ref: "#/schemas/In"}}
    effects: ["del c[input.k]", "flag = not flag"]
  look:
    input: {{$ref: "#/schemas/In"}}
    output: {{type: object, properties: {{m: {{type: integer}}}}}}
    ensures: [{look_ens}]
invariants: [{inv1}, {inv2}]
schemas:
  R:
    type: object
    properties: {{a: {{type: [integer, number, string, boolean, "null"]}}, t: {{type: [string, "null"]}}}}
  In:
    type: object
    properties:
      k: {{type: integer}}
      j: {{type: integer}}
      a: {{type: [integer, number, string, boolean, "null"]}}
      t: {{type: [string, "null"]}}
    required: [k]
"""

PUT_REQ = ['"true"', '"input.k >= 0"', '"not (input.k in c)"', '"n < 3"', '"input.a != null"']
PUT_ENS = ['"true"', '"c[input.k].a == input.a"', '"n == len(c)"', '"n >= 1 and c[input.k].t == input.t"']
SETF_REQ = ['"true"', '"c[input.k].a != input.a"', '"flag or input.t == null"', "\"label != 'x'\""]
LOOK_ENS = ['"output.m == n"', '"output.m == sum(1 for k in c if c[k].t != null)"', '"output.m >= len(c)"']
INVARIANTS = [
    '"true"',
    '"n <= 4"',
    '"len(c) <= 2"',
    "'all(implies(c[k].t == \"x\", c[k].a != null) for k in c)'",
    '"all(c[k].a != 0 for k in c)"',
    '"all(k < 3 for k in c)"',
    '"sum(1 for k in c if c[k].t != null) <= 1"',
    '"any(c[k].a == 1 for k in c) or len(c) < 2"',
    '"all(k < n + 3 for k in c)"',  # per key after put while n grows (issue 20: polarity +1)
    '"all(k + n <= 4 for k in c)"',  # polarity -1: put's growing n makes the checker unsure
    '"all(c[k].t != null or k <= n for k in c)"',
]


@st.composite
def contracts(draw: Any) -> str:
    return TEMPLATE.format(
        put_req=draw(st.sampled_from(PUT_REQ)),
        put_ens=draw(st.sampled_from(PUT_ENS)),
        setf_req=draw(st.sampled_from(SETF_REQ)),
        look_ens=draw(st.sampled_from(LOOK_ENS)),
        inv1=draw(st.sampled_from(INVARIANTS)),
        inv2=draw(st.sampled_from(INVARIANTS)),
    )


KEYS = st.sampled_from([0, 1, 2, 1.0, 3])  # 1.0 is a JSON Schema integer, and no exact int
VALUES = st.sampled_from([0, 1, -1, 2, 1.5, 1.0, "x", "", True, False, None])
LABELS = st.sampled_from(["x", "y", None])


@st.composite
def steps(draw: Any) -> dict[str, Any]:
    tool = draw(st.sampled_from(["put", "put", "setf", "two", "drop", "look", "nope"]))
    value: dict[str, Any] = {"k": draw(KEYS), "j": draw(KEYS), "a": draw(VALUES), "t": draw(LABELS)}
    for field in ("j", "a", "t"):
        if draw(st.integers(0, 4)) == 0:
            del value[field]
    if draw(st.integers(0, 15)) == 0:
        del value["k"]  # breaks the input schema
    step: dict[str, Any] = {"tool": tool, "input": value}
    if tool == "look" and draw(st.integers(0, 3)):
        step["output"] = draw(st.sampled_from([{"m": 0}, {"m": 1}, {"m": 2}, {"m": 1.0}, {}, {"m": "1"}]))
    if draw(st.integers(0, 9)) == 0:
        step["status"] = draw(st.sampled_from([200, 404, 409, 500]))
    return step


def _load(text: str) -> envfactory.Contract:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        path.write_text(text, "utf-8")
        return envfactory.load(path)


def _trajectory(raw: dict[str, Any]) -> Trajectory:
    (traj,) = read_trajectories_text(orjson.dumps(raw), "t.jsonl")
    assert isinstance(traj, Trajectory), traj
    return traj


def _snapshot(state: FrozenMap) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, dict) else v for k, v in state.items()}


def _watched(verifier: Verifier, answers: list[bool]) -> None:
    """Wrap every step checker: record its answers, and check that "not sure" leaves the state
    exactly as it was (the generated rollback)."""
    for name, plan in verifier.plans.items():
        check = plan.step
        if check is None:
            continue

        def watched(env: Any, run: Any, has_output: bool, check: Any = check) -> bool:
            before = _snapshot(run.state)
            try:
                answer = check(env, run, has_output)
            except Exception:
                assert _snapshot(run.state) == before  # it raises only before it writes
                raise
            if answer is not True:
                assert _snapshot(run.state) == before
            answers.append(answer is True)
            return answer

        verifier.plans[name] = attrs.evolve(plan, step=watched)


def _without_steps(verifier: Verifier) -> Verifier:
    verifier.plans = {name: attrs.evolve(plan, step=None) for name, plan in verifier.plans.items()}
    return verifier


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(
    contracts(), st.lists(st.lists(steps(), min_size=1, max_size=8), min_size=1, max_size=6), st.booleans()
)
def test_generated_steps_give_the_results_of_the_closures(
    text: str, raws: list[list[dict[str, Any]]], allow_rejected: bool
) -> None:
    contract = _load(text)
    fast = Verifier(contract, allow_rejected=allow_rejected)
    assert any(plan.step is not None for plan in fast.plans.values())
    answers: list[bool] = []
    _watched(fast, answers)
    slow = _without_steps(Verifier(contract, allow_rejected=allow_rejected))
    for i, raw in enumerate(raws):
        traj = _trajectory({"id": f"t{i}", "steps": raw})
        assert fast.check(traj).to_json() == slow.check(traj).to_json(), raw


def test_a_step_that_fails_after_it_wrote_is_rolled_back() -> None:
    """``two`` writes ``c[k].a``, then finds no ``c[j]``: the first write is undone in place and
    the closures' path explains the failure from the state as it was."""
    contract = _load(
        TEMPLATE.format(
            put_req='"true"',
            put_ens='"true"',
            setf_req='"true"',
            look_ens='"output.m == n"',
            inv1='"true"',
            inv2='"true"',
        )
    )
    fast = Verifier(contract)
    answers: list[bool] = []
    _watched(fast, answers)
    traj = _trajectory(
        {
            "id": "t",
            "steps": [
                {"tool": "put", "input": {"k": 0, "a": 1, "t": "x"}},
                {"tool": "two", "input": {"k": 0, "j": 2, "a": 5, "t": "y"}},
            ],
        }
    )
    result = fast.check(traj)
    assert (result.verdict, result.step, result.kind) == ("invalid", 1, "precondition")
    assert answers == [True, False]
    assert result.to_json() == _without_steps(Verifier(contract)).check(traj).to_json()


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_the_step_checkers_settle_every_step_of_valid_trajectories(name: str) -> None:
    """Else the generated code would be a slower way to the closures."""
    contract = envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
    verifier = Verifier(contract)
    assert all(plan.step is not None for plan in verifier.plans.values())
    answers: list[bool] = []
    _watched(verifier, answers)
    checked = 0
    for traj in read_trajectories(ROOT / "examples" / name / "trajectories.jsonl"):
        assert isinstance(traj, Trajectory)
        if traj.has_holes or traj.initial is not None:
            continue
        before = len(answers)
        result = verifier.check(traj)
        if result.verdict == "valid" and all(s.status is None or s.status < 400 for s in traj.steps):
            assert answers[before:] == [True] * len(traj.steps), traj.id
            checked += 1
    assert checked


def test_a_growing_counter_keeps_the_invariant_per_key() -> None:
    """``create_ticket`` writes ``tickets[next_id]`` and raises ``next_id``: its checker re-checks
    ``all(t < next_id for t in tickets)`` at the new key only (no loop over the tickets), guarded
    by ``next_id`` not shrinking; the closures' plan still checks it whole."""
    from envfactory._fastpath import collection_vars
    from envfactory.contracts.codegen import step_source
    from envfactory.verification import step_spec

    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    verifier = Verifier(contract)
    plan = verifier.plans["create_ticket"]
    assert plan.monotone is not None and plan.monotone[1] == (("next_id", 1),)
    assert [r.per_key is None for r in plan.invariants] == [True, False]  # the closures: whole
    source, _, _ = step_source(step_spec(plan, collection_vars(contract)))
    assert "for " not in source
    # per key is sound only from a state where the invariant held: the initial one is checked whole
    raw = {
        "id": "t",
        "initial": {"next_id": 1, "tickets": {"5": _ticket(5)}},
        "steps": [{"tool": "create_ticket", "input": {"title": "a", "priority": "low"}}],
    }
    result = verifier.check(_trajectory(raw))
    assert (result.verdict, result.step, result.kind) == ("invalid", 0, "invariant")


def _ticket(tid: int) -> dict[str, Any]:
    return {"id": tid, "title": "t", "priority": "low", "status": "open", "assignee": None}
