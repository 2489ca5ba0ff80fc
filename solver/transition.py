"""The one-step transition relation of a contract in Z3: the engine under ``plan``, ``prove``, the graph.

``Transition`` builds, for one operation, the guard (every ``requires``), the effects
(simultaneous, evaluated on the pre-state; a write of a new key into a full collection is not a
transition), the ``ensures`` on the output and the schema constraints on input and output, over
the symbolic states of ``solver.states`` and the values of ``solver.domain``, with the IR read
by ``solver.state_encoder``. It picks the reading of strings per contract: abstract identities
where the contract only compares strings, Z3's string theory otherwise. ``state_predicate``
parses a user's goal or invariant. Models are read back by ``solver.readback``.

``solver.encode`` / ``solver.feasibility`` are the trajectory-feasibility engine's encoding of
the same semantics. Imports the contracts layer, Z3 and these solver modules only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.parser import Effect
from envfactory.solver.domain import (
    NULL,
    TRUE,
    AStr,
    NeedStrings,
    Opt,
    Rec,
    Slot,
    SMap,
    Sym,
    coerce,
    conj,
    disj,
    equal,
    is_z3,
    ite,
    same,
    unsupported,
    unwrap,
)
from envfactory.solver.fresh import StepVars, step_vars
from envfactory.solver.state_encoder import Encoder, Env
from envfactory.solver.states import SymState, fresh_state, initial_constraint


class Transition:
    """The contract's one-step relation, built from the IR of its clauses and effects.

    ``abstract`` picks the reading of strings: ``None`` tries the abstract one (identities only)
    on every clause, effect and ``extra`` expression, and falls back to Z3's string theory when
    something does more with a string than compare it.
    """

    def __init__(
        self, contract: Contract, *, abstract: bool | None = None, extra: Sequence[Clause | ir.Expr] = ()
    ) -> None:
        self.contract = contract
        self.dropped: dict[str, str] = {}
        if abstract is None:
            abstract = self._abstract_fits(extra)
        self.abstract = abstract
        self.encoder = Encoder(abstract)
        self.dropped = {}
        """Output constraints left out of ``step`` (``"op: clause"`` -> why): outside the fragment,
        so the relation over-approximates the contract (more behaviours: a proof still holds, and
        a path found is replayed concretely before it is believed)."""

    def _abstract_fits(self, extra: Sequence[Clause | ir.Expr]) -> bool:
        self.abstract = True
        self.encoder = Encoder(True)
        try:
            try:
                pre = self.fresh_state("dry0", 1)
                post = self.fresh_state("dry1", 1)
            except NeedStrings:
                raise
            except SolverError:
                return True  # the state itself is outside the fragment: the callers will say so
            for op in self.contract.operations.values():
                try:
                    self.step(op, pre, post, self.step_vars(op, "dry"))
                except NeedStrings:
                    raise
                except SolverError:
                    continue
            for clause in [*self.contract.invariants, *self.contract.goals.values(), *extra]:
                try:
                    self.clause(clause, pre)
                except NeedStrings:
                    raise
                except SolverError:
                    continue
        except NeedStrings:
            return False
        return True

    def fresh_state(self, tag: str, slots: int | Mapping[str, int]) -> SymState:
        return fresh_state(self.contract, tag, slots, self.abstract)

    def step_vars(self, op: Operation, tag: str) -> StepVars:
        return step_vars(op, tag, self.abstract)

    def initial(self, state: SymState, overrides: Mapping[str, Any] | None = None) -> z3.BoolRef:
        return initial_constraint(self.contract, state, overrides, self.abstract)

    def clause(
        self, clause: Clause | ir.Expr, state: SymState, io: StepVars | None = None, post: bool = False
    ) -> z3.BoolRef:
        expr = clause.expr if isinstance(clause, Clause) else clause
        env = Env(state.values, io.input if io else None, io.output if io and post else None)
        return self.encoder.holds(expr, env)

    def invariants(self, state: SymState, clauses: Sequence[Clause | ir.Expr] | None = None) -> z3.BoolRef:
        chosen = self.contract.invariants if clauses is None else clauses
        return conj(*(self.clause(c, state) for c in chosen))

    def guard(self, op: Operation, pre: SymState, io: StepVars) -> z3.BoolRef:
        return conj(*(self.clause(c, pre, io) for c in op.requires))

    def step(self, op: Operation, pre: SymState, post: SymState, io: StepVars) -> z3.BoolRef:
        """The call is accepted in ``pre`` and leads to ``post``: schemas, requires, effects
        (defined, within capacity), ensures. Invariants are the caller's business."""
        guard = self.guard(op, pre, io)
        written, defined = self.effects(op, pre, io)
        frame = conj(*(same(written[name], post.values[name]) for name in self.contract.state))
        env = Env(post.values, io.input, io.output)
        ensures = conj(*(self._ensures(op, c, env) for c in op.ensures))
        return conj(io.constraints, guard, defined, frame, ensures)

    def _ensures(self, op: Operation, clause: Clause, env: Env) -> z3.BoolRef:
        """One ensures clause; one about the output that cannot be encoded is dropped (noted)."""
        try:
            return self.encoder.holds(clause.expr, env)
        except NeedStrings:
            raise
        except SolverError as err:
            if "output" not in ir.free_names(clause.expr):
                raise
            self.dropped.setdefault(f"{op.name}: {clause.source}", err.message)
            return TRUE

    def effects(self, op: Operation, pre: SymState, io: StepVars) -> tuple[dict[str, Sym], z3.BoolRef]:
        """The post-state values, and the condition that every effect is defined and fits."""
        env = Env(pre.values, io.input, io.output)
        planned: list[tuple[Effect, Sym, Sym, z3.BoolRef]] = []
        for effect in op.effects:
            key, dk = (NULL, TRUE)
            if effect.target.key is not None:
                key, dk = self.encoder.encode(effect.target.key, env)
            value, dv = (NULL, TRUE)
            if effect.value is not None:
                value, dv = self.encoder.encode(effect.value, env)
            planned.append((effect, key, value, conj(dk, dv)))
        state = dict(pre.values)
        ok: list[z3.BoolRef] = []
        for effect, key, value, defined in planned:
            ok.append(defined)
            state[effect.target.var], fits = _write(state[effect.target.var], effect, key, value)
            ok.append(fits)
        return state, conj(*ok)


def _write(current: Sym, effect: Effect, key: Sym, value: Sym) -> tuple[Sym, z3.BoolRef]:
    target = effect.target
    where = effect.source
    if target.key is None:
        return coerce(value, current, target.var), TRUE
    if not isinstance(current, SMap):
        raise unsupported(f"{where}: {target.var} is not a collection")
    key, key_ok = unwrap(key) if isinstance(key, Opt) else (key, TRUE)
    hits = [conj(s.present, equal(s.key, key)) for s in current.slots]
    exists = disj(*hits)
    if effect.value is None:  # del c[k]
        slots = tuple(
            Slot(conj(s.present, z3.Not(h)), s.key, s.value) for s, h in zip(current.slots, hits, strict=True)
        )
        return SMap(slots), conj(key_ok, exists)
    if target.fields:  # c[k].f... = v
        slots = tuple(
            Slot(s.present, s.key, ite(h, _set_path(s.value, target.fields, value, where), s.value))
            for s, h in zip(current.slots, hits, strict=True)
        )
        return SMap(slots), conj(key_ok, exists)
    # c[k] = v: overwrite where the key is, else take the first free slot
    new_slots: list[Slot] = []
    earlier_full: z3.BoolRef = TRUE
    for s, h in zip(current.slots, hits, strict=True):
        record = coerce(value, s.value, f"{target.var}[...]")
        take = conj(z3.Not(exists), z3.Not(s.present), earlier_full)
        write = disj(h, take)
        new_slots.append(
            Slot(
                disj(s.present, take),
                ite(take, key, s.key) if is_z3(key) or isinstance(key, AStr) else s.key,
                ite(write, record, s.value),
            )
        )
        earlier_full = conj(earlier_full, s.present)
    room = disj(exists, z3.Not(earlier_full))
    return SMap(tuple(new_slots)), conj(key_ok, room)


def _set_path(record: Sym, fields: tuple[str, ...], value: Sym, where: str) -> Sym:
    record, _ = unwrap(record) if isinstance(record, Opt) else (record, TRUE)
    if not isinstance(record, Rec):
        raise unsupported(f"{where}: setting a field of a non-record")
    head, *rest = fields
    if head not in record.fields:
        raise unsupported(f"{where}: the record has no declared field {head!r}")
    current = record.fields[head]
    new = _set_path(current, tuple(rest), value, where) if rest else coerce(value, current, where)
    updated = dict(record.fields)
    updated[head] = new
    return Rec(updated, record.optional)


def state_predicate(contract: Contract, text: str, kind: str = "goal") -> Clause:
    """A user's goal or invariant expression over the state, parsed and type-checked like the
    contract's own (an ``ExpressionError`` with the column on bad input)."""
    from envfactory.contracts.errors import Location
    from envfactory.contracts.parser import parse_expr
    from envfactory.contracts.typecheck import TypeChecker

    loc = Location(f"<{kind}>", 1, 1)
    expr = parse_expr(text, loc)
    TypeChecker(contract.state_types(), context=kind).check_bool(expr)
    return Clause(expr, " ".join(text.split()), loc, kind)


__all__ = [
    "Transition",
    "state_predicate",
]
