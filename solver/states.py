"""Symbolic states and calls: the fully symbolic unknowns of the graph, BMC and k-induction.

They are made of the one value set (``solver.symbolic``) by the one schema reader
(``solver.schema``, in its ``opaque`` reading), as the feasibility engine's holes are:

* ``fresh_state`` gives every state variable fresh Z3 constants of its schema's shape (a
  collection gets K slots: key, presence, record; keys distinct among present slots). The state is
  constrained by its schema's *shape* only (kinds, enums, required fields): the semantics never
  validates state against bounds, so assuming them would make a proof unsound;
* ``slots_needed`` picks K so that a bounded run never overflows a collection (a write of a new
  key into a full collection is not a transition);
* ``initial_constraint`` pins a state to the contract's initial values, leaving unknown ones free;
* ``step_vars`` gives one call its fresh input and output, with their schemas' constraints.

Imports the contracts layer, Z3 and ``solver.symbolic`` / ``solver.encode`` / ``solver.schema``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import UNKNOWN, Contract, Operation
from envfactory.solver.encode import Encoder
from envfactory.solver.schema import LIST_ITEMS, Schemas
from envfactory.solver.symbolic import (
    Int,
    Map,
    Opaque,
    Rec,
    Slot,
    Str,
    SVal,
    Term,
    Unsupported,
    and_,
    atom_term,
    cases,
    eq,
    implies,
    lift,
    not_,
    to_z3,
)


def formula(t: Term) -> z3.BoolRef:
    """A Bool term as a Z3 formula (a folded ``True``/``False`` becomes a Z3 literal)."""
    result: z3.BoolRef = to_z3(t)
    return result


@attrs.frozen(slots=True)
class SymState:
    """One symbolic state: a value per state variable, and the constraints making it well formed."""

    values: Mapping[str, SVal]
    wf: z3.BoolRef


@attrs.frozen(slots=True)
class StepVars:
    """The symbolic input and output of one call, the constraints their schemas impose, and the
    wishes (printable, distinct strings) asked for once a model is found."""

    input: SVal
    output: SVal | None
    constraints: z3.BoolRef
    cosmetic: z3.BoolRef = z3.BoolVal(True)


def _key_kind(var: Any, atoms: bool) -> str:
    if var.key_type == T.INT:
        return "integer"
    return "atom" if atoms else "string"


def fresh_state(
    contract: Contract,
    encoder: Encoder,
    tag: str,
    slots: int | Mapping[str, int] = 2,
    list_items: int = LIST_ITEMS,
    bounded: set[int] | None = None,
    atoms: list[tuple[Term, Any]] | None = None,
    unread: frozenset[str] = frozenset(),
) -> SymState:
    """Fresh Z3 constants for every state variable (named ``tag.var``), well formed; the
    capacities of its lists of unknown length are added to ``bounded``. With ``atoms`` (a list)
    strings are read abstractly and the identities made are added to it, with their schemas."""
    values: dict[str, SVal] = {}
    wf: list[Term] = []
    abstract = atoms is not None
    for name, var in contract.state.items():
        schemas = Schemas(
            encoder,
            var.schema,
            opaque=True,
            bounds=False,
            list_items=list_items,
            atoms=abstract,
            unread=unread,
        )
        if var.collection:
            k = slots if isinstance(slots, int) else slots.get(name, 2)
            kind = _key_kind(var, abstract)
            coll: list[Slot] = []
            for i in range(k):
                base = f"{tag}.{name}#{i}"
                key = z3.String(base + "#key") if kind == "string" else z3.Int(base + "#key")
                if kind == "atom" and atoms is not None:
                    atoms.append((key, var.key_schema))
                present = z3.Bool(base + "#present")
                record = schemas.fresh(var.schema, base)
                wf.append(implies(present, schemas.holds(record, var.schema)))
                coll.append(Slot(key, present, record))
            for x, y in itertools.combinations(coll, 2):
                wf.append(implies(and_(x.present, y.present), not_(eq(x.key, y.key))))
            values[name] = Map(tuple(coll), kind, False, name, fixed=True)
        else:
            value = schemas.fresh(var.schema, f"{tag}.{name}")
            wf.append(schemas.holds(value, var.schema))
            values[name] = value
        if bounded is not None:
            bounded.update(schemas.bounded)
        if atoms is not None:
            atoms.extend(schemas.strings)
    return SymState(values, formula(and_(*wf)))


def slots_needed(
    contract: Contract, depth: int, floor: int = 1, start: Mapping[str, Any] | None = None
) -> dict[str, int]:
    """Slots per collection so that ``depth`` steps from the initial state (or ``start``, a
    state overriding it) never overflow."""
    inserts = {name: 0 for name, var in contract.state.items() if var.collection}
    for op in contract.operations.values():
        per_op: dict[str, int] = {}
        for effect in op.effects:
            if effect.target.key is not None and not effect.target.fields and effect.value is not None:
                per_op[effect.target.var] = per_op.get(effect.target.var, 0) + 1
        for name, count in per_op.items():
            if name in inserts:
                inserts[name] = max(inserts[name], count)
    result = {}
    for name, per_step in inserts.items():
        var = contract.state[name]
        first = start[name] if start is not None and name in start else var.initial
        size = len(first) if first is not UNKNOWN and isinstance(first, Mapping) else floor
        result[name] = max(floor, size + per_step * depth)
    return result


def _pin(encoder: Encoder, sym: SVal, value: Any) -> Term:
    """``sym`` is ``value``; what the solver carries unseen (``Opaque``) is left free."""
    if isinstance(sym, Opaque):
        return True
    if isinstance(sym, Rec) and isinstance(value, Mapping):
        parts: list[Term] = [not_(p) for n, (p, _) in sym.fields.items() if n not in value]
        for name, item in value.items():
            present, field = sym.get(str(name))
            if present is False:
                return False  # a field the schema does not declare: not this shape
            parts.append(present)
            parts.append(_pin(encoder, field, item))
        return and_(*parts)
    if _opaque_inside(sym):
        return True
    return encoder.equal(sym, lift(value))


def _opaque_inside(sym: SVal) -> bool:
    for _, o in cases(sym):
        if isinstance(o, Opaque):
            return True
        if isinstance(o, Rec) and any(_opaque_inside(v) for _, v in o.fields.values()):
            return True
    return False


def initial_constraint(
    contract: Contract, encoder: Encoder, state: SymState, initial: Mapping[str, Any] | None = None
) -> z3.BoolRef:
    """The state is the contract's initial state (``initial`` overrides; unknown values are free)."""
    parts: list[Term] = []
    for name, var in contract.state.items():
        value = initial[name] if initial is not None and name in initial else var.initial
        sym = state.values[name]
        if value is UNKNOWN:
            continue
        if var.collection:
            entries = list(dict(value).items())
            assert isinstance(sym, Map)
            if len(entries) > len(sym.slots):
                raise SolverError(
                    f"{name} starts with {len(entries)} entries, more than {len(sym.slots)} slots"
                )
            for i, slot in enumerate(sym.slots):
                if i >= len(entries):
                    parts.append(not_(slot.present))
                    continue
                key, record = entries[i]
                key_value = Int(key) if sym.key_kind == "integer" else Str(key)
                parts.append(slot.present)
                parts.append(eq(slot.key, atom_term(key_value) if sym.key_kind == "atom" else key_value.t))
                parts.append(_pin(encoder, slot.value, record))
        else:
            parts.append(_pin(encoder, sym, value))
    return formula(and_(*parts))


def step_vars(
    op: Operation,
    encoder: Encoder,
    tag: str,
    list_items: int = LIST_ITEMS,
    bounded: set[int] | None = None,
    atoms: list[tuple[Term, Any]] | None = None,
    unread_outputs: bool = True,
    unread: frozenset[str] = frozenset(),
) -> StepVars:
    """Fresh input and output for one call of ``op`` (output ``None`` when nothing reads its
    output and it has no output schema, or ``unread_outputs`` is off: an output no clause or
    effect reads changes no transition, and only a plan's read-back wants it); ``atoms`` as in
    ``fresh_state``."""
    made: list[Schemas] = []
    abstract = atoms is not None
    ins = Schemas(encoder, op.input_schema, opaque=True, list_items=list_items, atoms=abstract, unread=unread)
    made.append(ins)
    value = ins.fresh(op.input_schema, f"{tag}.in")
    constraints = [ins.holds(value, op.input_schema)]
    wishes = ins.wishes()
    output: SVal | None = None
    reads_output = op.reads_output or any("output" in ir.free_names(c.expr) for c in op.ensures)
    if reads_output or (op.output_schema is not None and unread_outputs):
        if op.output_schema is None and reads_output and isinstance(op.output_type, T.AnyType):
            raise Unsupported(f"{op.name} reads an output that has no schema")
        schema = op.output_schema or {}
        outs = Schemas(encoder, schema, opaque=True, list_items=list_items, atoms=abstract, unread=unread)
        made.append(outs)
        output = outs.fresh(schema, f"{tag}.out")
        constraints.append(outs.holds(output, schema))
        wishes.extend(outs.wishes())
    for schemas in made:
        if bounded is not None:
            bounded.update(schemas.bounded)
        if atoms is not None:
            atoms.extend(schemas.strings)
    return StepVars(value, output, formula(and_(*constraints)), formula(and_(*wishes)))


__all__ = [
    "StepVars",
    "SymState",
    "formula",
    "fresh_state",
    "initial_constraint",
    "slots_needed",
    "step_vars",
]
