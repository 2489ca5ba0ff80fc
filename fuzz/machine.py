"""The lock-step state machine built from a contract: one rule per operation.

``build_machine(session)`` returns a Hypothesis ``RuleBasedStateMachine`` subclass with one rule
per operation; ``fast_test(session)`` runs the same steps from a plain ``@given`` loop that picks
the operation itself (a rule-based machine spends ~250 microseconds per step choosing a rule,
which caps a run near 3,000 calls a second before any work is done). Both drive a ``Case``: the
model state and the calls of one test case, and ``Case.step``, where a call is drawn, judged by
the model, sent to the target and its response checked.

Each step draws an input from the operation's input schema and replaces the fields that name
keys of a state collection (see ``inputs.links``) with a live key most of the time, a key seen
earlier in the test case (deleted since: use after delete) some of the time, and a fresh value
otherwise, so that calls connect into deep states. In ``valid`` mode a step only sends a call
the model accepts (it redraws a few times and otherwise sends nothing); in ``adversarial`` mode
it also sends calls that break a precondition or the input schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from envfactory.contracts.model import Operation
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz import inputs, oracle
from envfactory.fuzz.draws import Source
from envfactory.fuzz.findings import Finding, error_for
from envfactory.trajectory import Step

if TYPE_CHECKING:
    from collections.abc import Callable

    from envfactory.fuzz.runner import Session

TRIES = 3
"""How many inputs a step draws looking for one of the kind it wants."""
VARIANTS = ("valid", "valid", "precondition", "schema")
STEP_LABEL = 0x5EED_F022


class OpPlan:
    """What a step needs about its operation, computed once per run."""

    __slots__ = ("gen", "linked", "name", "op")

    def __init__(self, op: Operation, session: Session) -> None:
        self.op = op
        self.name = op.name
        self.gen = inputs.compile_schema(op.input_schema)
        self.linked = sorted(inputs.links(op, session.contract).items())


class Case:
    """One test case: the model's state, the calls made so far and every key seen."""

    __slots__ = ("known", "seen", "session", "state", "steps")

    def __init__(self, session: Session, *, replay: bool = False) -> None:
        if not replay:
            session.begin_case()
        self.session = session
        self.state: FrozenMap = session.initial
        self.steps: list[Step] = []
        self.known: dict[str, list[Any]] = {
            c: list(session.initial.get(c) or ()) for c in session.collections
        }
        self.seen: dict[str, set[Any]] = {c: set(keys) for c, keys in self.known.items()}
        session.target.reset()

    def step(self, plan: OpPlan, src: Source) -> None:
        session = self.session
        want = "valid" if session.mode == "valid" else src.pick(VARIANTS)
        op = plan.op
        state = self.state
        value: Any = None
        expect: oracle.Expectation | None = None
        # adversarial steps draw once, so that removing an earlier step while shrinking does not
        # shift the draws of later ones; valid mode redraws until the model accepts
        tries = TRIES if session.mode == "valid" else 1
        for _ in range(tries):
            value = plan.gen(src)
            if plan.linked and isinstance(value, dict):
                value = self._connect(plan, value, src, fresh_first=want == "precondition")
            if want == "schema":
                value = inputs.mutate(
                    value,
                    op.input_schema,
                    src.pick(inputs.MUTATIONS),
                    src.integer(0, 255),
                    allow_non_object=session.allow_non_object,
                )
            expect = oracle.judge(session.model, state, op, value)
            if expect.accepted:
                break
        assert expect is not None
        if session.mode == "valid" and not expect.accepted:
            return
        self.send(op, value, expect)

    def send(self, op: Operation, value: Any, expect: oracle.Expectation | None = None) -> None:
        """Send one call to the target, check the response, and move the model on.

        Raises ``FindingError`` (after recording the finding) when the response breaks the contract.
        """
        session = self.session
        state = self.state
        if expect is None:
            expect = oracle.judge(session.model, state, op, value)
        response = session.target.call(op.name, value)
        session.calls += 1
        self.steps.append(Step(op.name, value, response.output, response.status, True))
        if expect.accepted:
            post, verdict = oracle.check_accepted(session.model, state, op, value, expect, response)
            if verdict is None:
                session.covered(state, op.name, post)
                self.state = post
                for name in session.writes[op.name]:
                    self._remember(name, post.get(name))
                return
        else:
            judged = expect
            verdict = oracle.check_rejected(
                op, judged, response, lambda: oracle.explain(session.model, state, op, value, judged)
            )
            if verdict is None:
                session.rejected += 1
                return
        if session.kinds is not None and verdict.kind not in session.kinds:
            return  # a kind this run does not look for: carry on as if the call were fine
        failure = verdict.failure
        finding = Finding(
            kind=verdict.kind,
            operation=op.name,
            message=verdict.message,
            steps=tuple(self.steps),
            expected=expect.describe(),
            status=response.status,
            clause=failure.clause_text if failure is not None else None,
            location=str(failure.location) if failure is not None and failure.location is not None else None,
        )
        session.found(finding)
        raise error_for(finding)

    def _remember(self, name: str, keys: Any) -> None:
        if not keys:
            return
        seen = self.seen[name]
        for key in keys:
            if key not in seen:
                seen.add(key)
                self.known[name].append(key)

    def _connect(
        self, plan: OpPlan, value: dict[str, Any], src: Source, *, fresh_first: bool
    ) -> dict[str, Any]:
        """Key-naming fields take a live key, a key seen before, or keep their fresh value.

        The same draws happen whatever the state (an index into the keys, taken modulo their
        number, counted from the newest key), so that shrinking earlier steps away keeps later
        choices in place: the simplest choice is always "the key made last".
        """
        state = self.state
        value = dict(value)
        for field, collection in plan.linked:
            how = src.index(8)
            pick = src.integer(0, 63)
            if fresh_first:
                how = 7 - how
            if how <= 4:
                live = state.get(collection)
                if live:
                    keys = list(live)
                    value[field] = keys[-1 - pick % len(keys)]
                    continue
            if how <= 6:
                known = self.known.get(collection)
                if known:
                    if how == 5:  # a key that is gone now, where there is one: use after delete
                        live = state.get(collection) or ()
                        known = [k for k in known if k not in live] or known
                    value[field] = known[-1 - pick % len(known)]
        return value


class ContractMachine(RuleBasedStateMachine):
    """Base class of the generated machines: a ``Case`` per test case."""

    session: Session

    def __init__(self) -> None:
        super().__init__()
        self.case = Case(self.session)


def plans(session: Session) -> list[OpPlan]:
    return [OpPlan(op, session) for op in session.contract.operations.values()]


def build_machine(session: Session) -> type[ContractMachine]:
    """A state machine class for ``session``: one rule per operation of its contract."""
    namespace: dict[str, Any] = {"session": session}
    for index, plan in enumerate(plans(session)):
        namespace[f"op_{index}_{_slug(plan.name)}"] = _make_rule(plan)
    return type("FuzzMachine", (ContractMachine,), namespace)


def _make_rule(plan: OpPlan) -> Any:
    def call(self: ContractMachine, data: st.DataObject) -> None:
        self.case.step(plan, Source(data))

    call.__name__ = _slug(plan.name)
    return rule(data=st.data())(call)


def fast_test(session: Session, steps: int) -> Callable[..., None]:
    """The same steps as the machine, driven by one ``@given`` loop (for throughput)."""
    ops = plans(session)

    @given(st.data())
    def run(data: st.DataObject) -> None:
        cd = data.conjecture_data
        src = Source(cd)
        case = Case(session)
        for count in range(steps + 1):
            # as the rule-based runner does: each step is one span that starts with a rarely-true
            # stop flag, so the shrinker can drop whole steps and end the case early
            cd.start_span(STEP_LABEL)
            if cd.draw_boolean(p=2**-16, forced=True if count >= steps else None):
                cd.stop_span()
                break
            case.step(ops[src.index(len(ops))], src)
            cd.stop_span()

    return run


def _slug(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out or "op"
