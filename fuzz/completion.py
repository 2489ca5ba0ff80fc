"""A trial call sequence's integers chosen again by the solver, so the model judges it as before.

The shrinker's moves keep a call's values or swap them for others the trace used. Two restocks
of two with a bin of capacity two do not become one restock of four that way: leaving out the
second restock starves the orders after it, and no single value moved alone lets it go (the
capacity has to grow with the restock). Here the trial's integers (those the trace chose, not ids
a response gave) become unknowns of a trajectory, each call recorded as the model judged it in
the trace (accepted, or refused with the status it answered), and ``solver.feasibility`` decides
whether any integers make the model judge every call that way: a witness is a trial to replay.

Z3's answer to the same query depends on what its context already holds, and the same seed must
shrink to the same trace after other work in the process (a test suite, a notebook): the queries
run in a worker forked for one shrinking move (``Completions``), whose solver state starts afresh.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.model import Contract
from envfactory.fuzz import oracle
from envfactory.fuzz.references import key_names, references
from envfactory.solver import deadline
from envfactory.solver.feasibility import decide
from envfactory.solver.fresh import start_afresh
from envfactory.trajectory import Hole, Step, Trajectory

if TYPE_CHECKING:
    from envfactory.fuzz.runner import Session

SECONDS = 0.5
"""The solver's effort per trial, as a deterministic resource limit (``decide``'s ``timeout``):
a trial of ten calls takes it a few hundredths of a second."""

Verdict = tuple[bool, "int | None"]
"""How the model judged a call: accepted, or refused with a status."""

Query = tuple[tuple[Step, ...], tuple[Verdict, ...], int, bool]
"""A trial, the verdicts wanted of it, how many of its first calls may change, and whether the
words of the responses stay (``solve``)."""


def solve(contract: Contract, query: Query) -> dict[int, dict[str, int]] | None:
    """Integers for the accepted calls among the trial's first ``free`` that make the model judge
    each call as the verdicts say, by call and field (an id a response gave stays the id that
    response gives; a refused call keeps its values); None where the solver finds none.

    With ``words``, the responses before the last keep what they answered in words (a booking
    ``waiting``, a flag), where the ``ensures`` tie them to the state: a finding often needs more
    than the verdicts (a booking that waits for a seat, where a seated one is accepted too)."""
    trial, verdicts, free, words = query
    refs = references(trial, key_names(contract))
    names = {
        v
        for step in trial
        if isinstance(step.input, Mapping)
        for v in step.input.values()
        if isinstance(v, str)
    }  # the words a trial sent (an input's list, say an order's lines, is no name)
    holes: dict[str, tuple[int, str]] = {}
    steps: list[Step] = []
    for i, (step, (accepted, status)) in enumerate(zip(trial, verdicts, strict=True)):
        value = dict(step.input) if isinstance(step.input, Mapping) else step.input
        if isinstance(value, dict):
            for field, sent in value.items():
                ref = refs.get((i, str(field)))
                if ref is not None:
                    value[field] = Hole(f"out{ref[0]}.{ref[1]}")
                elif i < free and accepted and isinstance(sent, int) and not isinstance(sent, bool):
                    holes[f"in{i}.{field}"] = (i, str(field))
                    value[field] = Hole(f"in{i}.{field}")
        if not accepted:
            steps.append(Step(step.tool, value, status=status))
        elif i < len(trial) - 1 and isinstance(step.output, Mapping):
            # every other field unknown: an id tied to its uses, a count free to follow the inputs
            output = {
                field: answered
                if words
                and (isinstance(answered, bool) or (isinstance(answered, str) and answered not in names))
                else Hole(f"out{i}.{field}")
                for field, answered in step.output.items()
            }
            steps.append(Step(step.tool, value, output=output, has_output=True))
        else:
            steps.append(Step(step.tool, value))
    if not holes:
        return None
    answer = decide(
        contract, Trajectory(id="shrink", steps=tuple(steps)), timeout=SECONDS, allow_rejected=True
    )
    if answer.verdict != "feasible" or answer.witness is None:
        return None
    chosen = answer.witness.get("holes", {})
    out: dict[int, dict[str, int]] = {}
    for name, (i, field) in holes.items():
        if isinstance(chosen.get(name), int):
            out.setdefault(i, {})[field] = chosen[name]
    for (i, field), (k, returned) in refs.items():
        value = chosen.get(f"out{k}.{returned}")
        if value is not None and not isinstance(value, bool):
            out.setdefault(i, {})[field] = value  # the id as the completion's response gives it
    return out


@attrs.define
class Completions:
    """``solve`` for one shrinking move's trials, in a worker forked on the first and started
    afresh (where there is no fork, in this process); leaving the ``with`` ends the worker."""

    session: Session
    worker: deadline.Worker[Query, Any] = attrs.field(init=False)

    @worker.default
    def _worker(self) -> deadline.Worker[Query, Any]:
        return deadline.Worker(_handler(self.session.contract))  # forks on its first call

    def completed(
        self, trial: Sequence[Step], verdicts: Sequence[oracle.Expectation], free: int, words: bool = True
    ) -> list[tuple[Step, ...]]:
        """``trial`` with the integers of a completion (``solve``, with or without ``words``) that
        the model, asked again here, judges call by call as ``verdicts`` say: first with each
        integer moved back toward what the trial sent (``_closest``), then as the solver chose
        them; none where there is no completion, or it changes nothing."""
        query: Query = (tuple(trial), tuple((v.accepted, v.status) for v in verdicts), free, words)
        answer = self.worker.call(query, SECONDS)
        if not isinstance(answer, dict):
            return []
        out = list(trial)
        for i, values in answer.items():
            out[i] = attrs.evolve(out[i], input={**out[i].input, **values})
        # a refusal the solver explains otherwise than the model (an input out of its schema for
        # a 409) is no completion of this trial
        shape = self._shape(out, verdicts)
        if shape is None:
            return []
        closest = self._closest(trial, out, verdicts, shape)
        found = [tuple(closest)] if closest != list(trial) else []
        return found if out in (closest, list(trial)) else [*found, tuple(out)]

    def _shape(self, steps: Sequence[Step], verdicts: Sequence[oracle.Expectation]) -> tuple[Any, ...] | None:
        """The words and flags of the model's state after each call of ``steps``, if the model
        judges them call by call as ``verdicts`` say (else None)."""
        got = judged(self.session, steps)
        if got is None or differs(got, verdicts) is not None:
            return None
        return tuple(frozenset(_words(expect.post)) for expect in got if expect.accepted)

    def _closest(
        self,
        trial: Sequence[Step],
        done: list[Step],
        verdicts: Sequence[oracle.Expectation],
        shape: tuple[Any, ...],
    ) -> list[Step]:
        """``done`` with each integer the solver changed moved back toward what the trial sent,
        one at a time in the trial's order, as far as the model judges every call as before and
        its states keep the words and flags of ``shape`` (a booking that waits for a seat still
        waits, where with more seats it would be seated and accepted as well). The solver's
        witness is any solution; the closest keeps most of what the trace had, and the solver's
        own may be what lets the shorter trace show (a show of one seat where the trace had
        four): both are tried."""
        refs = references(trial, key_names(self.session.contract))
        for i, step in enumerate(trial):
            if not isinstance(step.input, Mapping):
                continue
            for field, sent in step.input.items():
                now = done[i].input.get(field)
                if (
                    (i, str(field)) in refs
                    or not isinstance(sent, int)
                    or isinstance(sent, bool)
                    or now == sent
                ):
                    continue
                toward = -1 if now < sent else 1
                for value in _between(sent, now, toward):
                    moved = list(done)
                    moved[i] = attrs.evolve(done[i], input={**done[i].input, field: value})
                    if self._shape(moved, verdicts) == shape:
                        done = moved
                        break
        return done

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> Completions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


CLOSEST = 16
"""Values ``_closest`` tries per integer, nearest to what the trial sent first."""


def _between(sent: int, chosen: int, toward: int) -> list[int]:
    """From ``sent`` toward ``chosen`` (not included), ``CLOSEST`` values at most: the nearest
    one at a time, then in growing steps."""
    span = abs(chosen - sent)
    offsets = sorted(
        {*range(min(span, CLOSEST // 2)), *(span * k // (CLOSEST // 2) for k in range(CLOSEST // 2))}
    )
    return [sent + toward * d for d in offsets if d < span]


def counts(expr: ir.Expr) -> bool:
    """Whether a clause compares numbers (an order, arithmetic, a size, a sum, an equality with a
    number): only such a clause can come to hold when integers change. A key that a left-out
    call made is missing whatever the integers are."""
    for node in ir.walk(expr):
        match node:
            case ir.Compare(op="<" | "<=" | ">" | ">="):
                return True
            case ir.Compare(op="==" | "!=", left=left, right=right) if _number(left) or _number(right):
                return True
            case ir.BinOp() | ir.Call(func="len" | "abs" | "min" | "max") | ir.Quant(kind="sum"):
                return True
    return False


def _number(expr: ir.Expr) -> bool:
    return (
        isinstance(expr, ir.Const)
        and isinstance(expr.value, int | float)
        and not isinstance(expr.value, bool)
    )


def _words(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """The strings and booleans ``value`` holds, with where (no numbers: those may move)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _words(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for n, item in enumerate(value):
            yield from _words(item, (*path, n))
    elif isinstance(value, (str, bool)):
        yield path, value


def _handler(contract: Contract) -> Any:
    """``solve`` on ``contract``, the solver state started afresh before the first query where it
    runs in a forked worker."""
    parent = os.getpid()
    fresh = [False]

    def handle(query: Query) -> dict[int, dict[str, int]] | None:
        if not fresh[0] and os.getpid() != parent:
            start_afresh()
            fresh[0] = True
        return solve(contract, query)

    return handle


def differs(verdicts: Sequence[oracle.Expectation], expected: Sequence[oracle.Expectation]) -> int | None:
    """The first call that ``verdicts`` judge otherwise than ``expected`` (accepted where it was
    refused, or refused with another status)."""
    for i, (got, want) in enumerate(zip(verdicts, expected, strict=True)):
        if got.accepted != want.accepted or (not got.accepted and got.status != want.status):
            return i
    return None


def judged(session: Session, steps: Sequence[Step]) -> list[oracle.Expectation] | None:
    """The model's verdict on each call of ``steps`` in turn; None where a state is read off a
    response, which the model alone cannot follow."""
    out: list[oracle.Expectation] = []
    calls = ((step.tool, step.input) for step in steps)
    for _, expect, after in oracle.walk(session.model, session.contract.operations, session.initial, calls):
        if after is None:
            return None
        out.append(expect)
    return out


__all__ = ["Completions", "counts", "differs", "judged", "solve"]
