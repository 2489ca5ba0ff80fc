"""The verifier's fast path against the reference semantics, on arbitrary trajectories.

``Verifier`` re-checks invariants only where a step wrote (one key of ``all(body for k in c)``,
when the other state the body reads is unchanged), applies effects with one copy, and inlines
every common case. The reference below does none of that: every check of ``Machine``, every
invariant whole, after every step. Hypothesis drives both over random calls of a contract whose
quantified invariants read other state variables, and they must agree on verdict, step and kind.
"""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.interpreter import evaluate
from envfactory.contracts.model import Clause
from envfactory.contracts.semantics import Machine
from envfactory.trajectory import Step, Trajectory
from tests import strategies as S

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LIMITS = """\
envfactory: "1"
info: {title: Limits, version: "1"}
state:
  limit: {type: integer, initial: 3}
  floor: {type: integer, initial: 0}
  items:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: integer}}, required: [n]}}
operations:
  put:
    input: {type: object, properties: {k: {type: string}, n: {type: integer}}, required: [k, n]}
    effects: ['items[input.k] = {"n": input.n}']
  bump:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: [input.k in items]
    effects: ["items[input.k].n = items[input.k].n + 1"]
  drop:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: [input.k in items]
    effects: ["del items[input.k]"]
  tighten:
    input: {type: object, properties: {by: {type: integer}}, required: [by]}
    effects: [limit = limit - input.by]
  raise_floor:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: [input.k in items]
    effects: ["floor = items[input.k].n", "items[input.k].n = items[input.k].n + 1"]
invariants:
  - all(items[k].n < limit for k in items)
  - all(implies(k != "z", items[k].n >= floor) for k in items)
  - limit >= 0
  - 'all(items[k] != {"n": 3} for k in items)'
"""


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path: Path = tmp_path_factory.mktemp("limits") / "limits.yaml"
    path.write_text(LIMITS)
    return envfactory.load(path)


_MACHINES: dict[int, Machine] = {}


def reference(
    contract: envfactory.Contract, traj: Trajectory, allow_rejected: bool = False
) -> tuple[str, int | None, str | None]:
    """Verdict, step and kind by the book: every check in the order of the format, every
    invariant whole, at every step (every output recorded).

    Statuses as the format says: a call that must succeed (every requires holds, the effects
    apply) but was answered with an error is invalid (kind ``postcondition``). With
    ``allow_rejected`` a call answered with a 4xx that the contract refuses anyway (an unknown
    tool, an input off its schema, a false requires with that error status or none, an undefined
    effect) is a rejection that changed nothing, and so is one the server failed (5xx)."""
    machine = _MACHINES.get(id(contract))
    if machine is None or machine.contract is not contract:
        machine = _MACHINES[id(contract)] = Machine(contract)
    state = machine.initial_state(traj.initial)
    if machine.check_invariants(state) is not None:
        return ("invalid", 0, "invariant")
    for index, step in enumerate(traj.steps):
        status = step.status
        refused = allow_rejected and status is not None and 400 <= status < 500
        failure = machine.check_tool(step.tool)
        if failure is not None:
            if refused:
                continue
            return ("invalid", index, failure.kind)
        op = contract.operations[step.tool]
        failure = machine.check_input(op, step.input)
        if failure is not None:
            if refused:
                continue
            return ("invalid", index, failure.kind)
        failure = machine.check_requires(state, op, step.input)
        if failure is not None:
            statuses = {
                c.error.status for c in op.requires if c.error is not None and not _holds(c, state, step)
            }
            if refused and (
                status in statuses or any(c.error is None and not _holds(c, state, step) for c in op.requires)
            ):
                continue
            return ("invalid", index, failure.kind)
        try:
            post = machine.apply(state, op, step.input, step.output)
        except EvaluationError:
            if refused:
                continue
            return ("invalid", index, "precondition")
        if status is not None and status >= 400:
            if allow_rejected and status >= 500:
                continue
            return ("invalid", index, "postcondition")
        failure = (
            (machine.check_output(op, step.output) if step.has_output else None)
            or machine.check_ensures(post, op, step.input, step.output)
            or machine.check_invariants(post)
        )
        if failure is not None:
            return ("invalid", index, failure.kind)
        state = post
    return ("valid", None, None)


def _holds(clause: Clause, state: Any, step: Step) -> bool:
    try:
        return evaluate(clause.expr, Env(state, step.input)) is True
    except EvaluationError:
        return False


KEYS = st.sampled_from(["a", "b", "c", "z"])
CALLS = st.one_of(
    st.builds(lambda k, n: Step("put", {"k": k, "n": n}), KEYS, st.integers(-2, 4)),
    st.builds(lambda k: Step("bump", {"k": k}), KEYS),
    st.builds(lambda k: Step("drop", {"k": k}), KEYS),
    st.builds(lambda by: Step("tighten", {"by": by}), st.integers(-1, 2)),
    st.builds(lambda k: Step("raise_floor", {"k": k}), KEYS),
)
INITIAL = st.none() | st.fixed_dictionaries(
    {"items": st.dictionaries(KEYS, st.builds(lambda n: {"n": n}, st.integers(-1, 3)), max_size=4)},
    optional={"limit": st.integers(0, 4), "floor": st.integers(-1, 1)},
)


def test_fast_verifier_agrees_with_the_reference(limits: envfactory.Contract) -> None:
    seen: set[tuple[str, str | None]] = set()

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(st.lists(CALLS, max_size=8), INITIAL)
    def check(steps: list[Step], initial: dict[str, Any] | None) -> None:
        traj = Trajectory(id="t", steps=tuple(steps), initial=initial)
        (result,) = envfactory.verify(limits, [traj])
        assert (result.verdict, result.step, result.kind) == reference(limits, traj)
        seen.add((result.verdict, result.kind))

    check()
    # the run exercised the shortcuts and the breaks they must not miss
    assert {("valid", None), ("invalid", "invariant"), ("invalid", "precondition")} <= seen


def test_a_changed_bound_is_checked_at_every_key(limits: envfactory.Contract) -> None:
    """``tighten`` writes no key of ``items``, but ``limit`` is read by the body: every key counts."""
    traj = Trajectory(
        id="t",
        steps=(Step("put", {"k": "a", "n": 2}), Step("put", {"k": "b", "n": 0}), Step("tighten", {"by": 1})),
    )
    (result,) = envfactory.verify(limits, [traj])
    assert (result.verdict, result.step, result.kind) == ("invalid", 2, "invariant")
    assert result.clause == "all(items[k].n < limit for k in items)"
    assert "items['a'].n is 2" in result.message


def test_a_field_write_is_checked_where_a_body_reads_the_whole_record(limits: envfactory.Contract) -> None:
    """``bump`` writes only ``n``, which the last invariant reads through the whole record."""
    traj = Trajectory(
        id="t", steps=(Step("put", {"k": "a", "n": 2}), Step("bump", {"k": "a"})), initial={"limit": 4}
    )
    (result,) = envfactory.verify(limits, [traj])
    assert (result.verdict, result.step, result.kind) == ("invalid", 1, "invariant")
    assert result.clause == 'all(items[k] != {"n": 3} for k in items)'


SMALL_INITIAL = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "x": st.integers(-3, 11),
        "items": st.dictionaries(
            st.integers(0, 2),
            st.fixed_dictionaries({"v": st.integers(0, 3), "active": st.booleans()}),
            max_size=3,
        ),
    },
)

_LOADED: dict[str, envfactory.Contract] = {}


def _small(text: str, where: Path) -> envfactory.Contract:
    if text not in _LOADED:
        path = where / f"c{len(_LOADED)}.yaml"
        path.write_text(text, encoding="utf-8")
        _LOADED[text] = envfactory.load(path)
    return _LOADED[text]


def _call(draw: Any, contract: envfactory.Contract, state: Any) -> Step:
    tool = draw(st.sampled_from(["add", "put", "drop", "flip", "peek"]))
    value = {field: draw(st.sampled_from(domain)) for (op, field), domain in S.DOMAINS.items() if op == tool}
    if tool == "drop" and state is not None and state["items"] and draw(st.integers(0, 3)):
        value["k"] = draw(st.sampled_from(sorted(state["items"])))
    output = None
    if tool == "peek":
        output = {"total": draw(st.sampled_from(S.PEEK_DOMAIN))}
        pinned = ir.pinned_output(contract.operations["peek"].ensures[0].expr)
        if state is not None and pinned is not None and draw(st.integers(0, 3)):
            with contextlib.suppress(EvaluationError):
                output = {"total": evaluate(pinned[1], Env(state))}
    status = draw(st.sampled_from([*[None] * 16, 200, 200, 404, 409, 500]))  # errors now and then
    return Step(tool, value, output, status, tool == "peek")


def _permitted(machine: Machine, state: Any, step: Step) -> bool:
    op = machine.contract.operations[step.tool]
    return (
        machine.check_input(op, step.input) is None and machine.check_requires(state, op, step.input) is None
    )


@st.composite
def runs(draw: Any, where: Path) -> tuple[envfactory.Contract, list[Trajectory]]:
    """A drawn ``strategies.small_contracts`` contract and one to three runs of it. Inputs come
    from each field's whole domain; most calls are permitted (redrawn up to three times), ``drop``
    mostly names a present key and ``peek`` mostly reports the total its ensures pins (computed
    by the reference interpreter), so that runs get past their first steps and reach the
    invariants; several runs in one ``verify`` call share its verifier."""
    contract = _small(draw(S.small_contracts()), where)
    machine = Machine(contract)
    trajectories = []
    for n in range(draw(st.integers(1, 3))):
        initial = draw(SMALL_INITIAL)
        try:
            state: Any = machine.initial_state(initial)
        except envfactory.EnvfactoryError:
            state = None
        steps = []
        for _ in range(draw(st.integers(0, 7))):
            for attempt in range(4):
                step = _call(draw, contract, state)
                permitted = state is not None and _permitted(machine, state, step)
                if permitted or attempt == 3 or not draw(st.integers(0, 4)):
                    break
            steps.append(step)
            if permitted:
                with contextlib.suppress(EvaluationError):
                    state = machine.apply(state, contract.operations[step.tool], step.input, step.output)
        trajectories.append(Trajectory(id=f"t{n}", steps=tuple(steps), initial=initial))
    return contract, trajectories


def completable(
    contract: envfactory.Contract, traj: Trajectory, allow_rejected: bool = False
) -> tuple[bool, int | None]:
    """Whether some response for each unrecorded ``peek`` output makes the run valid by the
    reference, by trying them all; and the step where the best completion fails (the latest)."""
    silent = [i for i, step in enumerate(traj.steps) if step.tool == "peek" and not step.has_output]
    latest: int | None = None
    for outputs in itertools.product(S.PEEK_DOMAIN, repeat=len(silent)):
        steps = list(traj.steps)
        for i, total in zip(silent, outputs, strict=True):
            steps[i] = attrs.evolve(steps[i], output={"total": total}, has_output=True)
        verdict, step, _ = reference(contract, attrs.evolve(traj, steps=tuple(steps)), allow_rejected)
        if verdict == "valid":
            return True, None
        assert step is not None
        latest = step if latest is None else max(latest, step)
    return False, latest


def test_missing_responses_are_completed_exactly_when_a_completion_exists(tmp_path: Path) -> None:
    """Runs whose ``peek`` calls went unrecorded: ``verify`` fills a response the ensures pin
    (``complete_output``) or asks Z3, and must answer feasible exactly when some response makes
    the run valid, and otherwise point at the step where every completion has failed."""
    seen: set[str] = set()

    @settings(max_examples=250, deadline=None, database=None, derandomize=True)
    @given(runs(tmp_path), st.data())
    def check(run: tuple[envfactory.Contract, list[Trajectory]], data: st.DataObject) -> None:
        contract, trajectories = run
        peeks = [[i for i, step in enumerate(t.steps) if step.tool == "peek"] for t in trajectories]
        silenced = []
        for traj, where in zip(trajectories, peeks, strict=True):
            drop = data.draw(st.sets(st.sampled_from(where), max_size=2)) if where else set()
            steps = tuple(
                attrs.evolve(step, output=None, has_output=False) if i in drop else step
                for i, step in enumerate(traj.steps)
            )
            silenced.append(attrs.evolve(traj, steps=steps))
        for traj, result in zip(silenced, envfactory.verify(contract, silenced, timeout=10.0), strict=True):
            exists, latest = completable(contract, traj)
            assert result.verdict in ("valid", "feasible", "invalid"), result.message
            assert (result.verdict != "invalid") == exists, (result.verdict, result.message)
            if not exists:
                assert result.step == latest, (result.step, latest, result.message)
            seen.add(result.verdict)

    check()
    assert {"valid", "feasible", "invalid"} <= seen


def test_fast_verifier_agrees_with_the_reference_on_random_contracts(tmp_path: Path) -> None:
    """Drawn contracts vary every clause (invariants over a collection that read ``x``, which
    ``add`` writes; aggregates; requires on state and input), drawn runs exercise them."""
    seen: set[str] = set()

    @settings(max_examples=400, deadline=None, database=None, derandomize=True)
    @given(runs(tmp_path), st.booleans())
    def check(run: tuple[envfactory.Contract, list[Trajectory]], allow: bool) -> None:
        contract, trajectories = run
        results = envfactory.verify(contract, trajectories, allow_rejected=allow)
        for traj, result in zip(trajectories, results, strict=True):
            assert (result.verdict, result.step, result.kind) == reference(contract, traj, allow)
            seen.add(result.kind or result.verdict)

    check()
    assert {"valid", "precondition", "postcondition", "invariant"} <= seen


def test_each_operation_rechecks_only_what_it_may_break() -> None:
    """The plan behind the shortcuts the reference tests hold to account, on the bundled contracts."""
    from envfactory.verification import Verifier

    def plan(name: str) -> dict[str, list[tuple[str, bool]]]:
        verifier = Verifier(envfactory.load(EXAMPLES / name / f"{name}.yaml"))
        return {
            op: [(r.invariant.clause.source, r.per_key is not None) for r in p.invariants]
            for op, p in verifier.plans.items()
        }

    bank = plan("bank")
    positive = ("all(accounts[a].balance >= 0 for a in accounts)", True)
    assert bank["deposit"] == [positive]  # at the written key only
    assert bank["transfer"] == [positive, ("transfers >= 0", False)]
    assert bank["freeze"] == []  # writes .frozen, which no invariant reads
    assert bank["balance"] == []  # writes nothing
    tickets = plan("tickets")
    assert [source for source, _ in tickets["start"]] == [
        'all(implies(tickets[t].status == "in_progress", tickets[t].assignee != null) for t in tickets)'
    ]  # not all(t < next_id ...): a field write keeps the keys
    assert tickets["create_ticket"][0] == ("all(t < next_id for t in tickets)", False)  # next_id moved
