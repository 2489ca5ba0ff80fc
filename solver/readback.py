"""Z3 models read back as plain JSON: the inputs, outputs and states of a plan or counterexample.

``Model`` reads any ``domain`` value out of a model (abstract strings through the texts chosen
by ``concretize_strings``; literals by their own identity; anything else the solver never looked
into as ``[]`` or ``null``). ``concretize_strings`` picks, after solving, concrete texts for the
abstract string identities that satisfy their schemas. The feasibility engine reads its own
models (``solver.feasibility``). Imports Z3 and ``solver.domain`` / ``solver.fresh`` /
``solver.states``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import z3

from envfactory.contracts.errors import SolverError
from envfactory.solver.domain import (
    LITERAL_TEXTS,
    LITERALS,
    NULL,
    AStr,
    Opaque,
    Opt,
    Rec,
    SList,
    SMap,
    Sym,
)
from envfactory.solver.fresh import PRINTABLE, string_bounds
from envfactory.solver.states import SymState
from envfactory.solver.symbolic import evaluated


class Model:
    """Reads plain JSON values back out of a Z3 model (abstract strings through ``strings``,
    identity -> text, from ``concretize_strings``; literals by their own identity)."""

    def __init__(self, model: z3.ModelRef, strings: Mapping[int, str] | None = None) -> None:
        self.model = model
        self.strings = dict(strings or {})

    def value(self, sym: Sym) -> Any:
        m = self.model
        if sym is None or sym is NULL:
            return None
        if isinstance(sym, Opt):
            if z3.is_true(evaluated(m, sym.is_null)):
                return None
            return self.value(sym.val)
        if isinstance(sym, Rec):
            out: dict[str, Any] = {}
            for name, fv in sym.fields.items():
                if name in sym.optional and isinstance(fv, Opt) and z3.is_true(evaluated(m, fv.is_null)):
                    continue
                out[name] = self.value(fv)
            return out
        if isinstance(sym, Opaque):
            return [] if sym.kind == "list" else None
        if isinstance(sym, AStr):
            ident = evaluated(m, sym.id).as_long()
            if ident in self.strings:
                return self.strings[ident]
            return LITERAL_TEXTS.get(ident, f"s{ident}")
        if isinstance(sym, SList):
            return [self.value(v) for v in sym.items]
        if isinstance(sym, SMap):
            entries: dict[Any, Any] = {}
            for slot in sym.slots:
                if z3.is_true(evaluated(m, slot.present)):
                    entries[self.value(slot.key)] = self.value(slot.value)
            return entries
        v = evaluated(m, sym)
        if z3.is_true(v):
            return True
        if z3.is_false(v):
            return False
        if z3.is_int_value(v):
            return v.as_long()
        if z3.is_rational_value(v):
            frac = v.as_fraction()
            return int(frac) if frac.denominator == 1 else float(frac)
        if z3.is_string_value(v):
            return v.as_string()
        if z3.is_algebraic_value(v):
            return float(v.approx(12).as_fraction())
        raise SolverError(f"cannot read a value of sort {v.sort()} from the model")

    def truth(self, formula: z3.BoolRef) -> bool:
        return bool(z3.is_true(evaluated(self.model, formula)))

    def state(self, state: SymState) -> dict[str, Any]:
        return {name: self.value(sym) for name, sym in state.values.items()}


def concretize_strings(
    model: z3.ModelRef, specs: Iterable[tuple[AStr, Any]], timeout: float = 5.0
) -> dict[int, str]:
    """Concrete texts for the abstract strings of a model: one per identity, each satisfying
    the schema of every variable holding it (length, pattern), printable, different from each
    other and from every literal. Identities it cannot fill are left out (``Model`` then writes
    ``s<id>``, which the concrete re-check judges)."""
    groups: dict[int, list[Any]] = {}
    for sym, schema in specs:
        ident = evaluated(model, sym.id).as_long()
        if ident in LITERAL_TEXTS:
            continue
        groups.setdefault(ident, []).append(schema)
    if not groups:
        return {}
    texts = {ident: z3.String(f"text{ident}") for ident in groups}
    literals = [z3.StringVal(t) for t in LITERALS]
    # first ask for plain words (a-z), then for any printable text
    for alphabet in (z3.Plus(z3.Range("a", "z")), PRINTABLE):
        solver = z3.Solver()
        solver.set("timeout", max(1, int(timeout * 500)))
        for ident, schemas in groups.items():
            var = texts[ident]
            patterned = False
            for schema in schemas:
                solver.add(*string_bounds(var, schema))
                patterned = patterned or (isinstance(schema, Mapping) and "pattern" in schema)
            if not patterned:
                solver.add(z3.InRe(var, alphabet), z3.Length(var) <= 12)
            solver.add(*(var != lit for lit in literals))
        if len(texts) > 1:
            solver.add(z3.Distinct(*texts.values()))
        if solver.check() == z3.sat:
            found = solver.model()
            return {ident: evaluated(found, var).as_string() for ident, var in texts.items()}
    return {}


__all__ = [
    "Model",
    "concretize_strings",
]
