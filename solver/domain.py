"""The symbolic value domain of the state-level encoding: what a state variable reads as in Z3.

* integers, numbers and booleans are Z3 constants; a nullable value is an ``Opt`` (an
  ``is_null`` flag beside the value); ``NULL`` is the ``null`` literal;
* strings are read one of two ways, chosen per contract by ``transition.Transition``: where the
  contract only compares strings (most do), an ``AStr`` is an integer *identity* (literals have
  fixed ones, ``literal_id``) and concrete texts satisfying the schemas are picked after solving
  (``readback.concretize_strings``), so the solver never enters the string theory; otherwise Z3
  strings;
* lists and untyped values are ``Opaque`` handles: carried and compared, never looked into;
  list displays are ``SList``;
* records are ``Rec`` (one symbolic value per declared field; an optional field that is absent
  reads as null, as in the concrete semantics);
* a collection is an ``SMap`` of K key ``Slot``s, each a presence flag, a key and a record: the
  collection is the set of present slots, whose keys are kept distinct.

Beside the values, the operations every reading of them shares: ``equal``, ``ite``, ``coerce``
(a write into a variable's representation), ``same`` (frames), ``const`` (JSON -> symbolic).
``state_encoder`` interprets the IR over these values, ``fresh`` makes them, ``readback`` reads
them out of a model. The feasibility engine has its own domain (``solver.symbolic``, read by
``solver.encode``), built for mostly-known trajectories; this one is fully symbolic, for the
graph, BMC and k-induction. Imports the contracts layer and Z3 only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.solver.symbolic import flat_bool


def z3_literal(value: Any) -> z3.ExprRef | None:
    """The Z3 literal of a boolean, integer, float or string; None for any other value."""
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    if isinstance(value, float):
        return z3.RealVal(value)
    if isinstance(value, str):
        return z3.StringVal(value)
    return None


class NullSym:
    """The ``null`` literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


NULL = NullSym()


class Opt:
    """A nullable value: ``is_null`` beside the value it has when not null."""

    __slots__ = ("is_null", "val")

    def __init__(self, is_null: z3.BoolRef, val: Sym) -> None:
        self.is_null = is_null
        self.val = val


class Rec:
    """A record: one symbolic value per field; ``optional`` fields may be absent (read as null)."""

    __slots__ = ("fields", "optional")

    def __init__(self, fields: dict[str, Sym], optional: frozenset[str] = frozenset()) -> None:
        self.fields = fields
        self.optional = optional


class Slot:
    """One key slot of a collection."""

    __slots__ = ("key", "present", "value")

    def __init__(self, present: z3.BoolRef, key: z3.ExprRef, value: Sym) -> None:
        self.present = present
        self.key = key
        self.value = value


class SMap:
    """A collection as K slots."""

    __slots__ = ("slots",)

    def __init__(self, slots: tuple[Slot, ...]) -> None:
        self.slots = slots


class AStr:
    """A string in the *abstract* reading: an integer identity. Used when the contract only
    compares strings for equality (and uses them as keys), which is most contracts: the solver
    then never touches the string theory. Literals get fixed negative identities
    (``literal_id``); concrete strings are chosen after solving (``concretize_strings``)."""

    __slots__ = ("id",)

    def __init__(self, ident: z3.ArithRef) -> None:
        self.id = ident


class Opaque:
    """A value the solver carries but never looks into (a list, or what a schema leaves open):
    an identity ``handle``. Copying it and comparing two of them is fine; anything else is
    outside the fragment. Read back as ``[]`` (lists) or ``null``."""

    __slots__ = ("handle", "kind")

    def __init__(self, kind: str, handle: z3.ArithRef) -> None:
        self.kind = kind
        self.handle = handle


def no_opaque(*values: Any) -> None:
    """Refuse an operation that would look into an ``Opaque`` value."""
    if any(isinstance(v, Opaque) for v in values):
        raise unsupported("an operation on a list or an untyped value")


class NeedStrings(SolverError):
    """The contract does more with a string than compare it: use the string theory instead."""


_LITERALS: dict[str, int] = {}
_BY_ID: dict[int, str] = {}
LITERALS: Mapping[str, int] = MappingProxyType(_LITERALS)
"""Every string literal seen so far, text -> identity (read-only)."""
LITERAL_TEXTS: Mapping[int, str] = MappingProxyType(_BY_ID)
"""The same, identity -> text."""


def literal_id(text: str) -> int:
    """The fixed identity of a string literal (negative; the same for the whole process)."""
    ident = _LITERALS.get(text)
    if ident is None:
        ident = -(len(_LITERALS) + 1)
        _LITERALS[text] = ident
        _BY_ID[ident] = text
    return ident


def no_astr(*values: Any) -> None:
    """Refuse, with ``NeedStrings``, a string operation the abstract reading cannot express."""
    if any(isinstance(v, AStr) for v in values):
        raise NeedStrings("a string operation beyond equality")
    no_opaque(*values)


class SList:
    """A list of known length (list displays)."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[Sym, ...]) -> None:
        self.items = items


Sym = Any  # z3.ExprRef | NullSym | Opt | Rec | SMap | SList

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)


def conj(*parts: z3.BoolRef) -> z3.BoolRef:
    """``And`` that drops the literal ``TRUE``, keeping formulas small."""
    return flat_bool(parts, TRUE, FALSE, z3.And)


def disj(*parts: z3.BoolRef) -> z3.BoolRef:
    """``Or`` that drops the literal ``FALSE``."""
    return flat_bool(parts, FALSE, TRUE, z3.Or)


def implies(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    """``Implies`` that folds the literal ``TRUE`` and ``FALSE``."""
    if a is TRUE:
        return b
    if a is FALSE or b is TRUE:
        return TRUE
    return z3.Implies(a, b)


def is_z3(value: Any) -> bool:
    """Whether a value is a plain Z3 term (not one of the wrappers above)."""
    return isinstance(value, z3.ExprRef)


def unsupported(what: str, node: ir.Expr | None = None) -> SolverError:
    """The error for a construct outside the symbolic fragment (the callers say ``unknown``)."""
    return SolverError(f"outside the symbolic fragment: {what}", node.loc if node is not None else None)


def const(value: Any, node: ir.Expr | None = None, abstract: bool = False) -> Sym:
    """A JSON value as a symbolic constant (records become ``Rec``, lists ``SList``; strings
    ``AStr`` literals in the abstract reading)."""
    if value is None:
        return NULL
    if abstract and isinstance(value, str):
        return AStr(z3.IntVal(literal_id(value)))
    scalar = z3_literal(value)
    if scalar is not None:
        return scalar
    if isinstance(value, Mapping):
        return Rec({str(k): const(v, node, abstract) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return SList(tuple(const(v, node, abstract) for v in value))
    raise unsupported(f"the value {value!r}", node)


def unwrap(value: Sym) -> tuple[Sym, z3.BoolRef]:
    """The value where it is used as a non-null value, and the condition that it is not null."""
    if isinstance(value, Opt):
        return value.val, z3.Not(value.is_null)
    if value is NULL:
        return NULL, FALSE
    return value, TRUE


def is_arith(value: Sym) -> bool:
    """Whether a value is an Int or Real term."""
    return is_z3(value) and z3.is_arith(value)


def same_arith(a: Any, b: Any) -> tuple[Any, Any]:
    """Two arithmetic terms of one sort (an Int beside a Real becomes a Real)."""
    if z3.is_int(a) and z3.is_real(b):
        return z3.ToReal(a), b
    if z3.is_real(a) and z3.is_int(b):
        return a, z3.ToReal(b)
    return a, b


def equal(a: Sym, b: Sym, node: ir.Expr | None = None) -> z3.BoolRef:
    """Structural equality with the concrete rules: null equals only null, booleans are not numbers."""
    if isinstance(a, Opt) and isinstance(b, Opt):
        return z3.Or(
            z3.And(a.is_null, b.is_null), z3.And(z3.Not(a.is_null), z3.Not(b.is_null), equal(a.val, b.val))
        )
    if isinstance(a, Opt):
        if b is NULL:
            return a.is_null
        return conj(z3.Not(a.is_null), equal(a.val, b, node))
    if isinstance(b, Opt):
        return equal(b, a, node)
    if a is NULL or b is NULL:
        return TRUE if a is b else FALSE
    if isinstance(a, AStr) or isinstance(b, AStr):
        if isinstance(a, AStr) and isinstance(b, AStr):
            return a.id == b.id
        no_opaque(a, b)
        return FALSE
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        if isinstance(a, Opaque) and isinstance(b, Opaque):
            return a.handle == b.handle
        raise unsupported("comparing a list or an untyped value", node)
    if isinstance(a, Rec) and isinstance(b, Rec):
        names = set(a.fields) | set(b.fields)
        return conj(*(equal(a.fields.get(n, NULL), b.fields.get(n, NULL), node) for n in sorted(names)))
    if isinstance(a, SList) and isinstance(b, SList):
        if len(a.items) != len(b.items):
            return FALSE
        return conj(*(equal(x, y, node) for x, y in zip(a.items, b.items, strict=True)))
    if is_z3(a) and is_z3(b):
        if z3.is_arith(a) and z3.is_arith(b):
            x, y = same_arith(a, b)
            return x == y
        if a.sort() == b.sort():
            return a == b
        return FALSE
    if isinstance(a, SMap) or isinstance(b, SMap):
        raise unsupported("comparing whole collections", node)
    return FALSE


def ite(c: z3.BoolRef, a: Sym, b: Sym, node: ir.Expr | None = None) -> Sym:
    """``a if c else b`` over symbolic values of compatible shapes."""
    if c is TRUE:
        return a
    if c is FALSE:
        return b
    if is_z3(a) and is_z3(b):
        if z3.is_arith(a) and z3.is_arith(b):
            a, b = same_arith(a, b)
        if a.sort() == b.sort():
            return z3.If(c, a, b)
        raise unsupported("a conditional whose branches have different types", node)
    if a is NULL and b is NULL:
        return NULL
    if isinstance(a, AStr) and isinstance(b, AStr):
        return AStr(z3.If(c, a.id, b.id))
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return Opaque(a.kind, z3.If(c, a.handle, b.handle))
    if isinstance(a, Opt | NullSym) or isinstance(b, Opt | NullSym):
        oa = _as_opt(a, b)
        ob = _as_opt(b, a)
        return Opt(z3.If(c, oa.is_null, ob.is_null), ite(c, oa.val, ob.val, node))
    if isinstance(a, Rec) and isinstance(b, Rec):
        names = list(dict.fromkeys([*a.fields, *b.fields]))
        return Rec(
            {n: ite(c, a.fields.get(n, NULL), b.fields.get(n, NULL), node) for n in names},
            a.optional | b.optional,
        )
    if isinstance(a, SList) and isinstance(b, SList) and len(a.items) == len(b.items):
        return SList(tuple(ite(c, x, y, node) for x, y in zip(a.items, b.items, strict=True)))
    raise unsupported("a conditional over values of different shapes", node)


def _as_opt(value: Sym, other: Sym) -> Opt:
    if isinstance(value, Opt):
        return value
    if value is NULL:
        shape = other.val if isinstance(other, Opt) else other
        return Opt(TRUE, default_like(shape))
    return Opt(FALSE, value)


def default_like(shape: Sym) -> Sym:
    """Some value of the same shape (the content of a null, never read)."""
    if is_z3(shape):
        if z3.is_bool(shape):
            return FALSE
        if z3.is_int(shape):
            return z3.IntVal(0)
        if z3.is_real(shape):
            return z3.RealVal(0)
        if z3.is_string(shape):
            return z3.StringVal("")
    if isinstance(shape, AStr):
        return AStr(z3.IntVal(0))
    if isinstance(shape, Opaque):
        return Opaque(shape.kind, z3.IntVal(0))
    if isinstance(shape, Opt):
        return Opt(TRUE, default_like(shape.val))
    if isinstance(shape, Rec):
        return Rec({n: default_like(v) for n, v in shape.fields.items()}, shape.optional)
    if shape is NULL:
        return NULL
    raise unsupported("a null of this shape")


def coerce(value: Sym, shape: Sym, where: str) -> Sym:
    """``value`` in the representation of ``shape`` (a state variable's, a record field's)."""
    if isinstance(shape, Opt):
        if isinstance(value, Opt):
            return Opt(value.is_null, coerce(value.val, shape.val, where))
        if value is NULL:
            return Opt(TRUE, shape.val)
        return Opt(FALSE, coerce(value, shape.val, where))
    if shape is NULL:
        return NULL
    if isinstance(shape, AStr | Opaque):
        inner = value.val if isinstance(value, Opt) else value
        if isinstance(inner, type(shape)):
            return inner
        raise unsupported(f"a value of another type written to {where}")
    if isinstance(shape, Rec):
        value, _ = unwrap(value) if isinstance(value, Opt) else (value, TRUE)
        if not isinstance(value, Rec):
            raise unsupported(f"a non-record written to the record {where}")
        return Rec(
            {n: coerce(value.fields.get(n, NULL), s, f"{where}.{n}") for n, s in shape.fields.items()},
            shape.optional,
        )
    if is_z3(shape):
        inner = value.val if isinstance(value, Opt) else value
        if is_z3(inner):
            if z3.is_real(shape) and z3.is_int(inner):
                return z3.ToReal(inner)
            if inner.sort() == shape.sort():
                return inner
        raise unsupported(f"a value of another type written to {where}")
    raise unsupported(f"a write to {where}")


def same(a: Sym, b: Sym) -> z3.BoolRef:
    """Component-wise equality of two values of the same shape (states, for frames)."""
    if isinstance(a, SMap) and isinstance(b, SMap):
        return conj(
            *(
                conj(x.present == y.present, same(x.key, y.key), same(x.value, y.value))
                for x, y in zip(a.slots, b.slots, strict=True)
            )
        )
    if isinstance(a, Opt) and isinstance(b, Opt):
        return conj(a.is_null == b.is_null, same(a.val, b.val))
    if isinstance(a, Rec) and isinstance(b, Rec):
        return conj(*(same(a.fields[n], b.fields[n]) for n in a.fields))
    if a is NULL and b is NULL:
        return TRUE
    if isinstance(a, AStr) and isinstance(b, AStr):
        return a.id == b.id
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return a.handle == b.handle
    if is_z3(a) and is_z3(b):
        return a == b
    raise unsupported("frame of values of different shapes")


__all__ = [
    "FALSE",
    "LITERALS",
    "LITERAL_TEXTS",
    "NULL",
    "TRUE",
    "AStr",
    "NeedStrings",
    "NullSym",
    "Opaque",
    "Opt",
    "Rec",
    "SList",
    "SMap",
    "Slot",
    "Sym",
    "coerce",
    "conj",
    "const",
    "default_like",
    "disj",
    "equal",
    "implies",
    "is_arith",
    "is_z3",
    "ite",
    "literal_id",
    "no_astr",
    "no_opaque",
    "same",
    "same_arith",
    "unsupported",
    "unwrap",
]
