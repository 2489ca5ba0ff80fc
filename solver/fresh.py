"""Fresh symbolic values of a type, constrained by their JSON Schema, and one call's input and output.

``Fresh`` makes the ``domain`` values for a contract type: Z3 constants with the schema's bounds
(``minimum``, ``multipleOf``, ``enum``, ``minLength``, ``pattern`` as a Z3 regular expression
through ``solver.regex``), records field by field, collections as K slots. The constraints it
collects are rules; ``cosmetic`` ones are wishes (printable strings) asked for once a model is
found. ``step_vars`` gives one call its fresh input and output. The feasibility engine turns
schemas into constraints its own way (``solver.schema`` over ``solver.symbolic`` values).
Imports the contracts layer, Z3 and ``solver.domain`` / ``solver.regex``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.model import Operation
from envfactory.solver.domain import (
    LITERALS,
    NULL,
    TRUE,
    AStr,
    NullSym,
    Opaque,
    Opt,
    Rec,
    Slot,
    SMap,
    Sym,
    conj,
    disj,
    literal_id,
    unsupported,
)
from envfactory.solver.regex import RegexUnsupported, to_z3_regex
from envfactory.statemachine.paths import resolve_pointer

PRINTABLE = z3.Star(z3.Range(" ", "~"))
"""Printable ASCII: what a free string is wished to be, and ``concretize_strings``'s wider alphabet."""


class Fresh:
    """Makes fresh symbolic values of a type, with the constraints their schema puts on them."""

    def __init__(self, slots: int = 2, printable: bool = True, abstract: bool = False) -> None:
        self.slots = slots
        self.printable = printable
        self.abstract = abstract
        self.strings: list[tuple[AStr, Any]] = []
        """Abstract strings made here, with their schemas (for ``concretize_strings``)."""
        self.constraints: list[z3.BoolRef] = []
        self.cosmetic: list[z3.BoolRef] = []
        """Wishes, not rules: free strings printable (costly for the string solver, so asked
        for once a model is found)."""

    def value(self, name: str, typ: T.Type, schema: Any = None, root: Any = None, keyed: bool = True) -> Sym:
        schema = _deref(schema, root if root is not None else schema)
        root = root if root is not None else schema
        opts = T.options(typ)
        nullable = T.NULL in opts
        rest = [o for o in opts if o != T.NULL]
        if not rest:
            return NULL
        if any(isinstance(o, T.AnyType) for o in rest):
            return Opaque("any", z3.Int(name))
        if len(rest) > 1:
            if all(isinstance(o, T.Prim) and o.kind == "string" for o in rest):
                rest = [T.STRING]
            elif {getattr(o, "kind", None) for o in rest} == {"integer", "number"}:
                rest = [T.NUMBER]
            else:
                raise unsupported(f"a value of type {typ.describe()} at {name}")
        inner = self.plain(name, rest[0], schema, root)
        if nullable:
            return Opt(z3.Bool(name + "?null"), inner)
        return inner

    def plain(self, name: str, typ: T.Type, schema: Any, root: Any) -> Sym:
        """A value of one non-null type (``value`` adds the null flag of a nullable one)."""
        match typ:
            case T.Prim(kind="integer"):
                v = z3.Int(name)
                self.constraints.extend(_numeric_bounds(v, schema))
                return v
            case T.Prim(kind="number"):
                v = z3.Real(name)
                self.constraints.extend(_numeric_bounds(v, schema))
                return v
            case T.Prim(kind="boolean"):
                return z3.Bool(name)
            case T.Prim(kind="string", enum=enum) if self.abstract:
                a = AStr(z3.Int(name))
                choices = enum or _schema_enum(schema)
                if choices:
                    self.constraints.append(disj(*(a.id == literal_id(e) for e in choices)))
                elif schema is not None or self.printable:
                    schema = schema if schema is not None else {}
                    # a literal that the schema rejects cannot be this string's value
                    self.constraints.append(_fresh_or_literal(a.id, schema))
                    self.strings.append((a, schema))
                    if self.printable:  # rather a string of its own than one of the contract's words
                        self.cosmetic.append(a.id >= 0)
                return a
            case T.Prim(kind="string", enum=enum):
                s = z3.String(name)
                choices = enum or _schema_enum(schema)
                if choices:
                    self.constraints.append(disj(*(s == z3.StringVal(e) for e in choices)))
                else:
                    self.constraints.extend(string_bounds(s, schema))
                    if self.printable and not (isinstance(schema, Mapping) and "pattern" in schema):
                        self.cosmetic.append(z3.InRe(s, PRINTABLE))
                return s
            case T.RecordType(fields=fields, required=required):
                props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
                values: dict[str, Sym] = {}
                optional: set[str] = set()
                for fname, ftype in fields:
                    sub = _deref(props.get(fname), root)
                    fv = self.value(f"{name}.{fname}", ftype, sub, root)
                    if fname not in required and not isinstance(fv, Opt | NullSym):
                        fv = Opt(z3.Bool(f"{name}.{fname}?absent"), fv)
                    if fname not in required:
                        optional.add(fname)
                    values[fname] = fv
                return Rec(values, frozenset(optional))
            case T.MapType(key=key, value=vtype):
                item_schema = schema.get("additionalProperties") if isinstance(schema, Mapping) else None
                slots = []
                for i in range(self.slots):
                    k = self.plain(f"{name}#{i}.key", key, None, None)
                    v = self.value(f"{name}#{i}", vtype, item_schema, root)
                    slots.append(Slot(z3.Bool(f"{name}#{i}.present"), k, v))
                return SMap(tuple(slots))
            case T.ListType():
                return Opaque("list", z3.Int(name))
            case T.AnyType():
                return Opaque("any", z3.Int(name))
        raise unsupported(f"a value of type {typ.describe()} at {name}")


def _fresh_or_literal(ident: z3.ArithRef, schema: Any) -> z3.BoolRef:
    """A string of its own (id >= 0) or one of the contract's literals (ids -1, -2, ...) that the
    schema admits, as ranges of ids: one bound where every literal fits (a schema with no length
    or pattern), not a disjunction as long as the contract's vocabulary for every string field."""
    unconstrained = not isinstance(schema, Mapping) or not any(
        k in schema for k in ("minLength", "maxLength", "pattern")
    )
    fits = sorted((i for t, i in LITERALS.items() if unconstrained or _fits(t, schema)), reverse=True)
    runs: list[tuple[int, int]] = []  # inclusive id ranges, from -1 downwards
    for i in fits:
        if runs and i == runs[-1][0] - 1:
            runs[-1] = (i, runs[-1][1])
        else:
            runs.append((i, i))
    fresh_low = runs.pop(0)[0] if runs and runs[0][1] == -1 else 0  # the run that joins id 0
    ranges = [ident >= fresh_low]
    ranges += [ident == lo if lo == hi else z3.And(ident >= lo, ident <= hi) for lo, hi in runs]
    return disj(*ranges)


def _fits(text: str, schema: Any) -> bool:
    """Whether a literal satisfies a string schema's length and pattern (Python's ``re``)."""
    if not isinstance(schema, Mapping):
        return True
    lo, hi = schema.get("minLength"), schema.get("maxLength")
    if isinstance(lo, int) and len(text) < lo:
        return False
    if isinstance(hi, int) and len(text) > hi:
        return False
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            return re.search(pattern, text) is not None
        except re.error:
            return False
    return True


_MISSING = object()


def _deref(schema: Any, root: Any) -> Any:
    """``schema`` with local ``$ref``s followed (kept as it is where one does not resolve)."""
    for _ in range(16):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            return schema
        target = resolve_pointer(root, schema["$ref"], _MISSING)
        if target is _MISSING:
            return schema
        schema = target
    return schema


def _schema_enum(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    if "const" in schema and isinstance(schema["const"], str):
        return [schema["const"]]
    enum = schema.get("enum")
    if isinstance(enum, list):
        return [e for e in enum if isinstance(e, str)]
    return []


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric_bounds(v: z3.ArithRef, schema: Any) -> list[z3.BoolRef]:
    if not isinstance(schema, Mapping):
        return []
    out: list[z3.BoolRef] = []
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if _num(lo):
        out.append(v > lo if xlo is True else v >= lo)
    if _num(hi):
        out.append(v < hi if xhi is True else v <= hi)
    if _num(xlo):
        out.append(v > xlo)
    if _num(xhi):
        out.append(v < xhi)
    mult = schema.get("multipleOf")
    if isinstance(mult, int) and not isinstance(mult, bool) and mult > 0 and z3.is_int(v):
        out.append(v % mult == 0)
    if "const" in schema and _num(schema["const"]):
        out.append(v == schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(_num(e) for e in enum):
        out.append(disj(*(v == e for e in enum)))
    return out


def string_bounds(s: z3.SeqRef, schema: Any) -> list[z3.BoolRef]:
    out: list[z3.BoolRef] = []
    pattern_re = None
    if isinstance(schema, Mapping):
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if isinstance(lo, int) and not isinstance(lo, bool):
            out.append(z3.Length(s) >= lo)
        if isinstance(hi, int) and not isinstance(hi, bool):
            out.append(z3.Length(s) <= hi)
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            pattern_re = regex(pattern)
    if pattern_re is not None:
        out.append(z3.InRe(s, pattern_re))
    return out


def regex(pattern: str) -> z3.ReRef | None:
    """A JSON Schema ``pattern`` (an unanchored search) as a Z3 regular expression, or None where
    the pattern uses something ``solver.regex`` does not translate (the concrete validator then
    has the last word)."""
    if len(pattern) > 200:
        return None
    try:
        result: z3.ReRef = to_z3_regex(pattern)
    except RegexUnsupported:
        return None
    return result


@attrs.frozen(slots=True)
class StepVars:
    """The symbolic input and output of one call, and the constraints their schemas impose."""

    input: Sym
    output: Sym
    constraints: z3.BoolRef
    cosmetic: z3.BoolRef = TRUE
    strings: tuple[tuple[AStr, Any], ...] = ()


def step_vars(op: Operation, tag: str, abstract: bool = False) -> StepVars:
    """Fresh input and output for one call of ``op`` (output ``None`` when the operation has no
    output schema and nothing reads its output)."""
    fresh = Fresh(abstract=abstract)
    value = fresh.value(f"{tag}.in", op.input_type, op.input_schema)
    if len(fresh.strings) > 1:  # wish: the input's strings tell apart (an owner is not an account)
        fresh.cosmetic.append(z3.Distinct(*(a.id for a, _ in fresh.strings)))
    output: Sym = None
    reads_output = op.reads_output or any("output" in ir.free_names(c.expr) for c in op.ensures)
    if op.output_schema is not None or reads_output:
        if isinstance(op.output_type, T.AnyType):
            if reads_output:
                raise unsupported(f"{op.name} reads an output that has no schema")
        else:
            output = fresh.value(f"{tag}.out", op.output_type, op.output_schema)
    return StepVars(value, output, conj(*fresh.constraints), conj(*fresh.cosmetic), tuple(fresh.strings))


__all__ = [
    "PRINTABLE",
    "Fresh",
    "StepVars",
    "regex",
    "step_vars",
    "string_bounds",
]
