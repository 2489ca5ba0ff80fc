"""Symbolic states: a ``domain`` value per state variable, well formed, and the initial one.

``fresh_state`` gives every state variable fresh Z3 constants (a collection gets K slots with
distinct keys); ``slots_needed`` picks K so that a bounded run never overflows a collection (a
write of a new key into a full collection is not a transition); ``initial_constraint`` pins a
state to the contract's initial values, leaving unknown ones free. The feasibility engine's
states are concrete where the trajectory knows them (``solver.symbolic``); these are symbolic
throughout, for the graph, BMC and k-induction. Imports the contracts layer, Z3 and
``solver.domain`` / ``solver.fresh``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import attrs
import z3

from envfactory.contracts import types as T
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import UNKNOWN, Contract
from envfactory.solver.domain import (
    Slot,
    SMap,
    Sym,
    conj,
    const,
    equal,
    implies,
)
from envfactory.solver.fresh import Fresh


@attrs.frozen(slots=True)
class SymState:
    """One symbolic state: a value per state variable, and the constraints making it well formed."""

    values: Mapping[str, Sym]
    wf: z3.BoolRef


def fresh_state(
    contract: Contract, tag: str, slots: int | Mapping[str, int] = 2, abstract: bool = False
) -> SymState:
    """Fresh Z3 constants for every state variable (named ``tag.var``), well formed: collection
    keys distinct among present slots, enum strings inside their enum."""
    values: dict[str, Sym] = {}
    wf: list[z3.BoolRef] = []
    for name, var in contract.state.items():
        k = slots if isinstance(slots, int) else slots.get(name, 2)
        fresh = Fresh(slots=k, printable=False, abstract=abstract)
        if var.collection:
            assert var.key_type is not None and isinstance(var.type, T.MapType)
            value_type = var.type.value
            coll: list[Slot] = []
            for i in range(k):
                key = fresh.plain(f"{tag}.{name}#{i}.key", var.key_type, None, None)
                value = fresh.value(f"{tag}.{name}#{i}", value_type, None)
                coll.append(Slot(z3.Bool(f"{tag}.{name}#{i}.present"), key, value))
            for x, y in itertools.combinations(coll, 2):
                wf.append(implies(conj(x.present, y.present), z3.Not(equal(x.key, y.key))))
            values[name] = SMap(tuple(coll))
        else:
            values[name] = fresh.value(f"{tag}.{name}", var.type, None)
        wf.extend(fresh.constraints)  # no schema for state: only enum memberships
    return SymState(values, conj(*wf))


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


def initial_constraint(
    contract: Contract, state: SymState, initial: Mapping[str, Any] | None = None, abstract: bool = False
) -> z3.BoolRef:
    """The state is the contract's initial state (``initial`` overrides; unknown values are free)."""
    parts: list[z3.BoolRef] = []
    for name, var in contract.state.items():
        value = initial[name] if initial is not None and name in initial else var.initial
        sym = state.values[name]
        if value is UNKNOWN:
            continue
        if var.collection:
            entries = list(dict(value).items())
            assert isinstance(sym, SMap)
            if len(entries) > len(sym.slots):
                raise SolverError(
                    f"{name} starts with {len(entries)} entries, more than {len(sym.slots)} slots"
                )
            for i, slot in enumerate(sym.slots):
                if i >= len(entries):
                    parts.append(z3.Not(slot.present))
                    continue
                key, record = entries[i]
                parts.append(slot.present)
                parts.append(equal(slot.key, const(key, None, abstract)))
                parts.append(equal(slot.value, const(record, None, abstract)))
        else:
            parts.append(equal(sym, const(value, None, abstract)))
    return conj(*parts)


__all__ = [
    "SymState",
    "fresh_state",
    "initial_constraint",
    "slots_needed",
]
