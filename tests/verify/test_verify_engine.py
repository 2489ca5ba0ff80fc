"""verify(): verdicts, check kinds in order, --allow-rejected, provenance, missing outputs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import envfactory
from envfactory.trajectory import Hole, Step, Trajectory, read_trajectories
from envfactory.verification import RESULT_FIELDS, Result, verify

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

COUNTER = """\
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  count: {type: integer, initial: 0}
  items:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: integer}}, required: [n]}}
operations:
  inc:
    input: {type: object, properties: {by: {type: integer}}, required: [by]}
    output: {type: object, properties: {count: {type: integer, minimum: 0}}, required: [count]}
    effects: [count = count + input.by]
    ensures: [output.count == count]
  dec:
    input: {type: object}
    effects: [count = count - 1]
  put:
    input: {type: object, properties: {k: {type: string}, n: {type: integer}}, required: [k, n]}
    effects: ['items[input.k] = {"n": input.n}']
  bump:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    effects: ["items[input.k].n = items[input.k].n + 1"]
  peek:
    input: {type: object}
    output: {type: object, properties: {count: {type: integer}}, required: [count]}
    ensures: [output.count >= count]
invariants:
  - count >= 0
  - all(items[k].n < 3 for k in items)
"""


def _load(name: str) -> envfactory.Contract:
    return envfactory.load(EXAMPLES / name / f"{name}.yaml")


def _results(name: str, **kwargs: Any) -> dict[str, Result]:
    contract = _load(name)
    trajs = read_trajectories(EXAMPLES / name / "trajectories.jsonl")
    return {r.id: r for r in verify(contract, trajs, **kwargs)}


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path = tmp_path_factory.mktemp("counter") / "counter.yaml"
    path.write_text(COUNTER)
    return envfactory.load(path)


def _traj(*steps: Step, initial: dict[str, Any] | None = None, tid: str = "t") -> Trajectory:
    return Trajectory(id=tid, steps=tuple(steps), initial=initial)


def _one(contract: envfactory.Contract, traj: Trajectory, **kwargs: Any) -> Result:
    (result,) = verify(contract, [traj], **kwargs)
    return result


def test_examples_give_every_concrete_kind() -> None:
    results = {**_results("bank"), **_results("petstore"), **_results("tickets")}
    assert results["open-deposit-transfer"].verdict == "valid"
    assert results["adopt-rex"].verdict == "valid"
    expected = {
        "unknown-tool": ("unknown_tool", 0),
        "bad-input-type": ("input_schema", 1),
        "bad-account-number": ("input_schema", 0),
        "add-without-login": ("precondition", 0),
        "overdraft": ("precondition", 3),
        "get-after-delete": ("precondition", 3),
        "wrong-count": ("postcondition", 2),
        "wrong-balance-reported": ("postcondition", 1),
    }
    for tid, (kind, step) in expected.items():
        result = results[tid]
        assert (result.verdict, result.kind, result.step) == ("invalid", kind, step), result


def test_valid_result_has_no_step_or_kind() -> None:
    result = _results("bank")["open-deposit-transfer"]
    doc = result.to_json()
    assert list(doc) == list(RESULT_FIELDS)
    assert doc["step"] is None and doc["kind"] is None and doc["witness"] is None
    assert result.steps == 5 and result.seconds >= 0


def test_provenance_sentence_names_location_value_and_step() -> None:
    result = _results("bank")["overdraft"]
    assert result.operation == "transfer"
    assert result.clause == "accounts[input.source].balance >= input.amount"
    assert result.location is not None and result.location.endswith("bank.yaml:66:16")
    assert "transfer requires accounts[input.source].balance >= input.amount" in result.message
    assert "but accounts['AA01'].balance is 50, set at step 2" in result.message
    assert "input.amount is 80" in result.message
    assert result.values["accounts[input.source].balance"] == 50


def test_provenance_of_a_deleted_key() -> None:
    result = _results("petstore")["get-after-delete"]
    assert "pets has no key 6, deleted at step 2" in result.message


def test_provenance_of_the_initial_state(counter: envfactory.Contract) -> None:
    traj = _traj(Step("bump", {"k": "a"}), initial={"items": {"a": {"n": 2}}})
    result = _one(counter, traj)
    assert (result.kind, result.step) == ("invariant", 0)
    assert "items['a'].n is 3, set at step 0" in result.message


def test_output_schema_and_invariant(counter: envfactory.Contract) -> None:
    bad_output = _traj(Step("inc", {"by": 1}, {"count": "one"}, has_output=True))
    result = _one(counter, bad_output)
    assert (result.verdict, result.kind, result.step) == ("invalid", "output_schema", 0)
    assert result.values == {"output.count": "one"}
    broken = _traj(Step("inc", {"by": 1}, {"count": 1}, has_output=True), Step("dec", {}), Step("dec", {}))
    result = _one(counter, broken)
    assert (result.kind, result.step, result.clause) == ("invariant", 2, "count >= 0")
    assert "count is -1, set at step 2" in result.message


def test_quantified_invariant_names_the_culprit(counter: envfactory.Contract) -> None:
    traj = _traj(
        Step("put", {"k": "x", "n": 1}),
        Step("put", {"k": "y", "n": 0}),
        Step("bump", {"k": "x"}),
        Step("bump", {"k": "x"}),
    )
    result = _one(counter, traj)
    assert (result.kind, result.step) == ("invariant", 3)
    assert "items['x'].n is 3, set at step 3" in result.message


def test_checks_run_in_order(counter: envfactory.Contract) -> None:
    # bad input schema wins over everything after it
    traj = _traj(Step("inc", {"by": "x"}, {"count": -1}, has_output=True))
    assert _one(counter, traj).kind == "input_schema"
    # an undefined effect is a precondition failure, before output checks
    traj = _traj(Step("bump", {"k": "nope"}))
    result = _one(counter, traj)
    assert (result.kind, result.step) == ("precondition", 0)
    assert "nope" in result.message


def test_initial_overrides(counter: envfactory.Contract) -> None:
    traj = _traj(Step("dec", {}), initial={"count": 1})
    assert _one(counter, traj).verdict == "valid"
    assert _one(counter, _traj(Step("dec", {}))).kind == "invariant"
    bad = _traj(Step("dec", {}), initial={"nosuch": 1})
    assert _one(counter, bad).verdict == "unreadable"


def test_allow_rejected() -> None:
    default = _results("petstore")
    allowed = _results("petstore", allow_rejected=True)
    assert default["rejected-then-retry"].kind == "precondition"
    assert allowed["rejected-then-retry"].verdict == "valid"
    # a forbidden call recorded without an error status stays invalid
    assert allowed["add-without-login"].verdict == "invalid"
    assert "recorded as a success" in allowed["add-without-login"].message


def test_allow_rejected_needs_the_clause_status() -> None:
    contract = _load("petstore")
    wrong = _traj(Step("adopt", {"petId": 1}, {"error": "x"}, status=409, has_output=True))
    right = _traj(Step("adopt", {"petId": 1}, {"error": "x"}, status=401, has_output=True))
    assert _one(contract, right, allow_rejected=True).verdict == "valid"
    result = _one(contract, wrong, allow_rejected=True)
    assert result.verdict == "invalid" and "answered with status 409" in result.message
    # an unknown tool or a schema-invalid input answered with a 4xx is a rejection too
    odd = _traj(Step("feedPet", {}, status=404), Step("getPet", {"petId": "x"}, status=422))
    assert _one(contract, odd, allow_rejected=True).verdict == "valid"
    assert _one(contract, odd).kind == "unknown_tool"


def test_permitted_call_answered_with_error() -> None:
    contract = _load("petstore")
    down = _traj(
        Step("login", {"name": "a"}, {"error": "down"}, status=503, has_output=True),
        Step("addPet", {"id": 1, "name": "x", "price": 1}, status=200),
    )
    result = _one(contract, down)
    assert (result.verdict, result.kind, result.step) == ("invalid", "postcondition", 0)
    assert "status 503" in result.message
    # with --allow-rejected a server failure changed nothing: the next call is not logged in
    result = _one(contract, down, allow_rejected=True)
    assert (result.verdict, result.kind, result.step) == ("invalid", "precondition", 1)
    refused = _traj(Step("login", {"name": "a"}, {"error": "no"}, status=403, has_output=True))
    result = _one(contract, refused, allow_rejected=True)
    assert (result.verdict, result.kind) == ("invalid", "postcondition")
    assert "status 403" in result.message


def test_missing_output_that_matters_for_nothing_is_valid() -> None:
    contract = _load("bank")
    traj = _traj(Step("open", {"account": "AA01", "owner": "a"}), Step("freeze", {"account": "AA01"}))
    assert _one(contract, traj).verdict == "valid"


def test_missing_output_fixed_by_ensures_is_feasible_with_witness() -> None:
    contract = _load("bank")
    traj = _traj(
        Step("open", {"account": "AA01", "owner": "a"}), Step("deposit", {"account": "AA01", "amount": 7})
    )
    result = _one(contract, traj)
    assert result.verdict == "feasible"
    assert result.witness is not None and result.witness["outputs"] == {1: {"balance": 7}}
    assert result.to_json()["witness"]["outputs"] == {"1": {"balance": 7}}


ECHO = """\
envfactory: "1"
info: {title: Echo, version: "1"}
state:
  n: {type: integer, initial: 0}
operations:
  put:
    input: {type: object, properties: {v: {type: integer}}, required: [v]}
    output: {type: object, properties: {v: {type: integer, minimum: 0}}, required: [v]}
    effects: [n = input.v]
    ensures: [output.v == n]
"""


def test_a_pinned_response_off_its_schema_is_no_completion(tmp_path: Path) -> None:
    """``put`` ensures ``output.v == n`` and its output schema wants ``v >= 0``: after ``put`` of
    -5 the one response the ensures allow breaks the schema, so no response completes the call."""
    (tmp_path / "echo.yaml").write_text(ECHO)
    echo = envfactory.load(tmp_path / "echo.yaml")
    result = _one(echo, _traj(Step("put", {"v": -5})))
    assert (result.verdict, result.step) == ("invalid", 0), result.message
    fine = _one(echo, _traj(Step("put", {"v": 5})))
    assert fine.verdict == "feasible" and fine.witness is not None
    assert fine.witness["outputs"] == {0: {"v": 5}}


def test_concrete_failure_before_a_hole_is_reported_without_z3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    contract = _load("bank")
    traj = _traj(Step("close", {"account": "ZZ99"}), Step("deposit", {"account": Hole("a"), "amount": 1}))
    result = _one(contract, traj)
    assert (result.verdict, result.kind, result.step) == ("invalid", "precondition", 0)


def test_holes_without_solver_are_unknown_with_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    result = _results("bank")["transfer-some-amount"]
    assert result.verdict == "unknown"
    assert "step 3 (transfer) holds unknown values" in result.message


def test_outputs_the_run_completed_before_the_first_hole_go_to_the_solver() -> None:
    """bank's ``transfer-some-amount``: a deposit without its output, then a transfer of an unknown
    amount. The concrete run completes the deposit's output and Z3 starts at the transfer; its
    completion is replayed from the first step, which needs that output too (the demo showed
    "unknown: the solver's completion does not verify concretely at step 2")."""
    result = _results("bank")["transfer-some-amount"]
    assert result.verdict == "feasible", result.message
    assert result.witness is not None
    assert result.witness["holes"] == {"x": 60}
    assert result.witness["outputs"] == {2: {"balance": 100}}


def test_a_step_that_fails_whatever_the_holes_are_is_invalid_without_z3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past a step only Z3 could decide, a later step whose input breaks its schema fails in every
    completion: invalid, with that step, and the message says the first failure may be earlier."""
    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    traj = _traj(
        Step("open", {"account": "AA01", "owner": "a"}),
        Step("deposit", {"account": "AA01", "amount": Hole("x")}, {"balance": 5}, has_output=True),
        Step("balance", {"account": "AA01"}, {"balance": 5}, has_output=True),
        Step("deposit", {"account": "AA01", "amount": -3}, {"balance": 2}, has_output=True),
    )
    result = _one(_load("bank"), traj)
    assert (result.verdict, result.step, result.kind) == ("invalid", 3, "input_schema")
    assert "steps 1-2 are undecided, so the first failing step may be earlier" in result.message
    # a rejection (4xx) with --allow-rejected changes nothing and is passed over
    rejected = attrs.evolve(traj, steps=(*traj.steps[:3], attrs.evolve(traj.steps[3], status=400)))
    assert _one(_load("bank"), rejected, allow_rejected=True).verdict == "unknown"


def test_unreadable_items_are_reported_not_raised() -> None:
    from envfactory.trajectory import read_trajectories_text

    contract = _load("bank")
    text = '{"id": "a", "steps": []}\n{not json\n{"id": "b", "steps": 3}\n{"id": "c", "steps": []}\n'
    results = list(verify(contract, read_trajectories_text(text, "x.jsonl")))
    assert [r.verdict for r in results] == ["valid", "unreadable", "unreadable", "valid"]
    assert results[1].location == "x.jsonl:2:2"


def test_quantified_invariant_on_a_large_collection(counter: envfactory.Contract) -> None:
    # above the size where only the written keys are re-checked: same verdicts as a full check
    items = {f"k{i}": {"n": i % 3} for i in range(40)}
    ok = _traj(Step("bump", {"k": "k0"}), Step("put", {"k": "new", "n": 2}), initial={"items": items})
    assert _one(counter, ok).verdict == "valid"
    bad = _traj(
        Step("bump", {"k": "k0"}),
        Step("bump", {"k": "k1"}),
        Step("bump", {"k": "k1"}),
        initial={"items": items},
    )
    result = _one(counter, bad)
    assert (result.kind, result.step) == ("invariant", 2)
    assert "items['k1'].n is 3, set at step 2" in result.message
    put = _traj(Step("put", {"k": "k5", "n": 9}), Step("dec", {}), initial={"items": items, "count": 5})
    assert (_one(counter, put).kind, _one(counter, put).step) == ("invariant", 0)
    late = _traj(Step("bump", {"k": "k0"}), Step("put", {"k": "k5", "n": 9}), initial={"items": items})
    result = _one(counter, late)
    assert (result.kind, result.step) == ("invariant", 1)
    assert "items['k5'].n is 9, set at step 1" in result.message


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_fast_apply_agrees_with_machine_apply(name: str) -> None:
    """The verifier's in-place effects give Machine.apply's post-states and undefined cases."""
    from envfactory._fastpath import applied
    from envfactory.contracts.errors import EvaluationError
    from envfactory.contracts.evaluator import Env
    from envfactory.verification import Verifier

    contract = _load(name)
    verifier = Verifier(contract)
    machine = verifier.machine
    checked = 0
    for traj in read_trajectories(EXAMPLES / name / "trajectories.jsonl"):
        assert isinstance(traj, Trajectory)
        if traj.has_holes:
            continue
        state = machine.initial_state(traj.initial)
        for step in traj.steps:
            plan = verifier.plans.get(step.tool)
            if plan is None or not plan.effects:
                continue
            output = step.output if step.has_output else None
            try:
                expected: Any = machine.apply(state, plan.op, step.input, output)
            except EvaluationError:
                expected = EvaluationError
            try:
                got: Any = applied(plan.effects, state, Env(state, step.input, output))
            except EvaluationError:
                got = EvaluationError
            assert got == expected
            checked += 1
            if expected is not EvaluationError:
                state = expected
    assert checked >= 5


def _json_values() -> Any:
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["AA01", "BB02", "", "x"])
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["account", "amount", "id", "k"]), inner, max_size=3)
        ),
        max_leaves=6,
    )


LOOSE = """\
envfactory: "1"
info: {title: Loose, version: "1"}
state:
  n: {type: integer, initial: 0}
  items:
    collection: {key: {type: string}, value: {type: object}}
operations:
  put:
    input: {type: object}
    requires: [not (input.account in items)]
    effects: ["items[input.account] = input", n = n + 1]
  take:
    input: {type: object}
    requires: [input.account in items, "items[input.account].amount > 0"]
    effects: ["del items[input.account]", "n = n - input.amount"]
  look:
    input: {type: object}
    output: {type: object}
    ensures: [output.amount == len(items) + input.amount]
invariants: [n >= 0, "all(items[k].amount >= 0 for k in items)"]
"""


@pytest.mark.parametrize("which", ["bank", "loose"])
def test_arbitrary_steps_never_crash(which: str, tmp_path: Path) -> None:
    """Whatever the recorded calls, verify returns a verdict (contracts without strict schemas too)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    if which == "loose":
        (tmp_path / "loose.yaml").write_text(LOOSE)
        loose = envfactory.load(tmp_path / "loose.yaml")
    else:
        loose = envfactory.load(EXAMPLES / "bank" / "bank.yaml")
    tools = [*loose.operations, "nosuch"]
    step = st.builds(
        lambda tool, value, output, has, status: Step(tool, value, output, status, has),
        st.sampled_from(tools),
        st.fixed_dictionaries(
            {},
            optional={
                "account": st.sampled_from(["AA01", "BB02"]) | _json_values(),
                "amount": _json_values(),
                "owner": st.just("o"),
                "source": st.just("AA01"),
                "target": st.just("BB02"),
            },
        )
        | _json_values(),
        _json_values(),
        st.booleans(),
        st.none() | st.sampled_from([200, 404, 409, 423, 500]),
    )

    @settings(max_examples=80, deadline=None, database=None, derandomize=True)
    @given(st.lists(step, max_size=6), st.booleans())
    def run(steps: list[Step], allow: bool) -> None:
        (result,) = verify(loose, [_traj(*steps)], allow_rejected=allow)
        assert result.verdict in ("valid", "invalid", "feasible", "unknown")
        assert "internal error" not in result.message and "solver failed" not in result.message
        if result.verdict == "invalid":
            assert result.step is not None and result.kind is not None and result.message

    run()


def test_initial_state_that_breaks_an_invariant(counter: envfactory.Contract) -> None:
    items = {f"k{i}": {"n": 0} for i in range(30)}
    items["k7"] = {"n": 5}
    traj = _traj(
        Step("peek", {}, {"count": 0}, has_output=True), Step("bump", {"k": "k1"}), initial={"items": items}
    )
    result = _one(counter, traj)
    assert (result.verdict, result.kind, result.step) == ("invalid", "invariant", 0)
    assert result.clause == "all(items[k].n < 3 for k in items)"
    assert "the initial state breaks invariant" in result.message
    assert "items['k7'].n is 5, from the trajectory's initial state" in result.message


def test_package_level_verify_works_after_the_submodule_is_imported() -> None:
    import importlib

    importlib.import_module("envfactory.verification")
    contract = _load("bank")
    (result,) = envfactory.verify(contract, [_traj(Step("open", {"account": "AA01", "owner": "a"}))])
    assert result.verdict == "valid"


def test_provenance_skips_calls_that_changed_nothing() -> None:
    contract = _load("bank")
    traj = _traj(
        Step("open", {"account": "AA01", "owner": "a"}),
        Step("deposit", {"account": "AA01", "amount": 5}, {"balance": 5}, status=200, has_output=True),
        Step("deposit", {"account": "AA01", "amount": 7}, {"error": "x"}, status=503, has_output=True),
        Step("deposit", {"account": "ZZ01", "amount": 7}, {"error": "x"}, status=404, has_output=True),
        Step("close", {"account": "AA01"}),
    )
    result = _one(contract, traj, allow_rejected=True)
    assert (result.kind, result.step) == ("precondition", 4)
    assert "accounts['AA01'].balance is 5, set at step 1" in result.message
