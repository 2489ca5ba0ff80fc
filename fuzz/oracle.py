"""The oracle: what the contract's model expects of one call, and whether a response keeps to it.

The model is the contract's step semantics (``envfactory.contracts.semantics.Machine``, the same
transition relation the simulator runs), fed with the *target's* outputs: effects that read the
response (a producer whose id comes back) take the id the target chose, so the model follows the
target instead of inventing values of its own.

For a call the model rejects (a broken input schema, a false ``requires``, an undefined effect),
the target must answer with the clause's ``error.status`` where it names one, any 4xx otherwise.
For a call the model accepts, the target must answer 2xx, with an output inside the output
schema that satisfies every ``ensures``, and the post-state must keep every invariant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Clause, Operation
from envfactory.contracts.semantics import Failure, Machine, holds
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz.isolation import finding_kind
from envfactory.fuzz.targets import is_crash
from envfactory.statemachine.simulator import Response


@attrs.frozen(slots=True)
class Expectation:
    """The model's verdict on a call before the target answers it.

    Judging is on the hot path, so it records only which check failed (``kind``, ``clause``);
    ``explain`` builds the full ``Failure`` (values, sentence) when a finding needs it.
    """

    accepted: bool
    status: int | None = None
    post: FrozenMap | None = None
    kind: str | None = None
    clause: Clause | None = None

    def describe(self) -> str:
        if self.accepted:
            return "2xx"
        return f"status {self.status}" if self.status is not None else "a 4xx"


Judge = Callable[[FrozenMap, Operation, Any], Expectation]


def walk(
    machine: Machine,
    operations: Mapping[str, Operation],
    state: FrozenMap,
    calls: Iterable[tuple[str, Any]],
    judge_call: Judge | None = None,
) -> Iterator[tuple[FrozenMap, Expectation, FrozenMap | None]]:
    """The model's verdict on each call in turn, from ``state``: the state it is judged in, the
    expectation, and the state after it (a refused call leaves it as it was). A call accepted
    whose state is read off the target's output ends the walk with ``None`` after it: the model
    alone cannot follow it. What the shrinker, the reach planner's stepping stones and an
    inserted change's lookahead all ask of a sequence of calls, judged by ``judge_call`` where
    they count the model's judgements."""
    for name, value in calls:
        op = operations[name]
        expect = judge(machine, state, op, value) if judge_call is None else judge_call(state, op, value)
        after = state if not expect.accepted else expect.post
        yield state, expect, after
        if after is None:
            return
        state = after


@attrs.frozen(slots=True)
class Verdict:
    """A response that broke the contract: the finding kind, a sentence, and the clause."""

    kind: str
    message: str
    failure: Failure | None = None


def judge(machine: Machine, state: FrozenMap, op: Operation, value: Any) -> Expectation:
    """The model's expectation for ``op(value)`` in ``state``."""
    validator = op.input_validator
    if validator is not None and not validator.is_valid(value):
        return Expectation(False, kind="input_schema")
    env = Env(state, value)
    for clause in op.requires:
        if not holds(clause, env):
            status = clause.error.status if clause.error is not None else None
            return Expectation(False, status, kind="precondition", clause=clause)
    if op.reads_output:
        return Expectation(True)
    try:
        post = machine.apply(state, op, value)
    except EvaluationError:
        return Expectation(False, kind="effect")
    return Expectation(True, post=post)


def explain(
    machine: Machine, state: FrozenMap, op: Operation, value: Any, expect: Expectation
) -> Failure | None:
    """The full ``Failure`` behind a rejecting expectation (values and a sentence)."""
    if expect.kind == "input_schema":
        return machine.check_input(op, value)
    if expect.kind == "precondition":
        return machine.check_requires(state, op, value)
    if expect.kind == "effect":
        return machine.effect_failure(state, op, value, None)
    return None


def check_rejected(
    op: Operation, expect: Expectation, response: Response, failure: Callable[[], Failure | None]
) -> Verdict | None:
    """A call the model forbids: the target must reject it with the right status.

    ``failure`` explains the model's rejection; it is called only when there is a finding.
    """
    if is_crash(response):
        return Verdict(
            finding_kind(response), f"{op.name}: {response.error or f'status {response.status}'}", failure()
        )
    accepted = response.accepted or 200 <= response.status < 300
    if (
        accepted
        or (expect.status is not None and response.status != expect.status)
        or (expect.status is None and not 400 <= response.status < 500)
    ):
        why_failure = failure()
        why = why_failure.message if why_failure is not None else "the model rejects it"
        if accepted:
            return Verdict(
                "forbidden_accepted",
                f"{op.name} was accepted (status {response.status}) but {why}",
                why_failure,
            )
        wanted = expect.status if expect.status is not None else "a 4xx"
        return Verdict(
            "wrong_status", f"{op.name} answered {response.status}, expected {wanted}: {why}", why_failure
        )
    return None


def check_accepted(
    machine: Machine, state: FrozenMap, op: Operation, value: Any, expect: Expectation, response: Response
) -> tuple[FrozenMap, Verdict | None]:
    """A call the model allows: the target must accept it and answer within the contract.

    Returns the model's post-state (the pre-state where the call failed) and the verdict.
    """
    if is_crash(response):
        return state, Verdict(
            finding_kind(response), f"{op.name}: {response.error or f'status {response.status}'}"
        )
    if not (response.accepted and 200 <= response.status < 300):
        statuses = {c.error.status for c in op.requires if c.error is not None}
        kind = "divergence" if response.status in statuses else "valid_rejected"
        detail = f": {response.error}" if response.error else ""
        return state, Verdict(
            kind, f"{op.name} was rejected with status {response.status} but the model allows it{detail}"
        )
    output = response.output
    if op.output_schema is not None:
        failure = machine.check_output(op, output)
        if failure is not None:
            return state, Verdict("output_schema", failure.message, failure)
    post = expect.post
    if post is None:
        try:
            post = machine.apply(state, op, value, output)
        except EvaluationError:
            failure = machine.effect_failure(state, op, value, output)
            return state, Verdict("postcondition", failure.message, failure)
    failure = machine.check_ensures(post, op, value, output)
    if failure is not None:
        return post, Verdict("postcondition", failure.message, failure)
    failure = machine.check_invariants(post, before=state)  # the model's states all hold them
    if failure is not None:
        return post, Verdict("invariant", failure.message, failure)
    return post, None
