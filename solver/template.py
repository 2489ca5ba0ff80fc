"""A step of the transition relation encoded once and copied onto every pair of states.

Encoding a step walks every clause and effect of every operation in Python into Z3 terms, and on
a contract of a dozen operations that cost more than Z3's own solving of a seven-call plan (the
box office: about 60% of a planner's CPU time). The steps of an unrolling differ only in their
constants (state ``s3`` instead of ``s2``, the inputs of call 3), so ``Template`` encodes each
operation's step, and the invariants, once over states of its own, and copies them onto each
step's constants with ``z3.substitute``, which Z3 does in C++. The copy is the term the direct
encoding gives (the same shape of state, fresh on both sides: no value folds differently).

Imports Z3 and ``solver.states`` / ``solver.symbolic`` / ``solver.transition`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Clause, Operation
from envfactory.solver.states import StepVars, SymState
from envfactory.solver.symbolic import Lst, Map, Opaque, Rec, Simple, SVal, Union
from envfactory.solver.transition import Transition


def leaves(*values: SVal | None) -> list[z3.ExprRef]:
    """The Z3 constants of ``values``, each once, in the order a walk of their structure meets
    them: two values of the same schema and slots give their constants in corresponding order."""
    found: list[z3.ExprRef] = []
    seen: set[int] = set()

    def term(t: Any) -> None:
        if not isinstance(t, z3.ExprRef):
            return  # a folded True / False
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if t.get_id() not in seen:
                seen.add(t.get_id())
                found.append(t)
            return
        for child in t.children():
            term(child)

    def value(v: SVal | None) -> None:
        if isinstance(v, Simple):
            term(v.t)
        elif isinstance(v, Rec):
            for present, field in v.fields.values():
                term(present)
                value(field)
        elif isinstance(v, Lst):
            for item in v.items:
                value(item)
            term(v.n)
        elif isinstance(v, Map):
            for slot in v.slots:
                term(slot.key)
                term(slot.present)
                value(slot.value)
            term(v.full)
        elif isinstance(v, Union):
            for guard, option in v.options:
                term(guard)
                value(option)
        elif isinstance(v, Opaque):
            term(v.handle)

    for v in values:
        value(v)
    return found


def _state_leaves(state: SymState) -> list[z3.ExprRef]:
    return leaves(*state.values.values())


def _io_leaves(io: StepVars) -> list[z3.ExprRef]:
    return leaves(io.input, io.output)


class Template:
    """Each operation's step and the invariants over template states, copied onto the states and
    calls an unrolling makes (all of one shape: ``slots``)."""

    def __init__(self, transition: Transition, slots: int | Mapping[str, int], tag: str) -> None:
        self.transition = transition
        self.tag = tag
        self.pre = transition.fresh_state(f"{tag}~pre", slots)
        self.post = transition.fresh_state(f"{tag}~post", slots)
        self._pre = _state_leaves(self.pre)
        self._post = _state_leaves(self.post)
        self._steps: dict[str, tuple[list[z3.ExprRef], z3.BoolRef] | SolverError] = {}
        """Per operation: the template's constants (pre, post, call) and its step."""
        self._invariants: dict[tuple[int, ...] | None, tuple[Any, z3.BoolRef]] = {}
        """Keyed by the clauses' ids, kept alive beside their formula."""
        self._seen: dict[int, tuple[SymState, list[z3.ExprRef]]] = {}
        self.copied = 0
        """Constants the steps copied so far: what encoding them cost, counted the same way on
        every machine (``Effort.charge``)."""

    def step(self, op: Operation, pre: SymState, post: SymState, io: StepVars) -> z3.BoolRef:
        """``transition.step(op, pre, post, io)``, copied from the template; raises the
        ``SolverError`` the encoding raised (an operation outside the fragment)."""
        made = self._steps.get(op.name)
        if made is None:
            try:
                own = self.transition.step_vars(op, f"{self.tag}~{op.name}")
                made = (
                    [*self._pre, *self._post, *_io_leaves(own)],
                    self.transition.step(op, self.pre, self.post, own),
                )
            except SolverError as err:
                made = err
            self._steps[op.name] = made
        if isinstance(made, SolverError):
            raise made
        theirs = [*self._of(pre), *self._of(post), *_io_leaves(io)]
        self.copied += len(theirs)
        return _copy(made[1], made[0], theirs)

    def invariants(self, state: SymState, clauses: Sequence[Clause | ir.Expr] | None = None) -> z3.BoolRef:
        """``transition.invariants(state, clauses)``, copied from the template."""
        key = None if clauses is None else tuple(id(c) for c in clauses)
        made = self._invariants.get(key)
        if made is None:
            made = self._invariants[key] = (clauses, self.transition.invariants(self.pre, clauses))
        return _copy(made[1], self._pre, self._of(state))

    def _of(self, state: SymState) -> list[z3.ExprRef]:
        """The constants of ``state`` (each state is a post and then a pre: walked once)."""
        hit = self._seen.get(id(state))
        if hit is not None and hit[0] is state:
            return hit[1]
        found = _state_leaves(state)
        self._seen[id(state)] = (state, found)
        return found


def _copy(formula: z3.BoolRef, mine: list[z3.ExprRef], theirs: list[z3.ExprRef]) -> z3.BoolRef:
    """``formula`` with each of ``mine`` replaced by its counterpart in ``theirs`` (``z3.substitute``
    without its per-pair sort checks in Python, which cost as much as the copy: Z3 refuses a
    pair of two sorts itself)."""
    if len(mine) != len(theirs):
        raise AssertionError("a state or call of another shape than the template's")
    if not mine:
        return formula
    count = len(mine)
    before, after = (z3.Ast * count)(), (z3.Ast * count)()
    for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        before[i], after[i] = a.as_ast(), b.as_ast()
    ctx = formula.ctx
    copied: z3.BoolRef = z3.BoolRef(z3.Z3_substitute(ctx.ref(), formula.as_ast(), count, before, after), ctx)
    return copied


__all__ = ["Template", "leaves"]
