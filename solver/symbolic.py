"""Symbolic values: what the Z3 encoder computes with, one class per kind of value.

A *term* is either a plain Python constant (``bool``, ``int``, ``float``, ``str``) or a Z3
expression of the matching sort (Bool, Int, Real, String). The smart constructors below fold
constants in Python, with Python's own semantics, so that the known parts of a trajectory never
become Z3 terms: only what depends on an unknown does. That keeps the encoding small and exact
(concrete floats stay IEEE floats; only symbolic reals are rationals, see ``Tracker.inexact``).

Values (``SVal``), frozen and slotted:

* ``Null()``: the null value; ``Bool(t)``, ``Int(t)``, ``Real(t)``, ``Str(t)`` over a term.
* ``Atom(t)``: a string in the *abstract* reading, for contracts that only compare, order and
  measure strings (most do; ``solver.measures``): an Int identity instead of a Z3 string. Literals have fixed negative
  identities (``literal_id``); every other identity stands for a string that is none of them, so
  equality of identities is equality of strings. The string theory's cost (it made one plan of
  the tickets example time out) is paid only where a contract does more with a string (then the
  encoder raises ``NeedStrings`` and the caller reads strings as ``Str``). Texts for the
  identities a model picks are chosen afterwards (``schema.atom_texts``).
* ``Rec(fields)``: a record; each field is ``(name, present, value)``, ``present`` a Bool term
  (an absent optional field reads as null; ``len`` and ``==`` see presence).
* ``Lst(items, n)``: a list. With ``n`` None its length is ``len(items)``; otherwise ``n`` is an
  Int term, the list's length, and ``items`` its first ``len(items)`` places (the capacity): the
  items at and past ``n`` are not in the list. ``length``/``item``/quantifiers read ``n``.
* ``Map(slots, key_kind, open)``: a state collection as a finite map over *slots*. Each
  ``Slot(key, present, value)`` holds a key term (Int or String, possibly symbolic), a presence
  term and the record stored there. Invariant: no two *present* slots have equal keys; slot order
  is iteration order. Reading ``m[k]`` is the ite-chain over slots whose key equals ``k``; ``len``
  counts present slots; ``all/any/sum`` unroll over slots. ``open`` marks an open-world collection
  that may hold keys the encoding never named (then ``len``/quantifiers are only approximate).
* ``Py(value)``: a fully known value kept as the plain Python value (dicts, lists, FrozenMaps),
  expanded one level at a time (``expand``) only where it meets an unknown. Most of a trajectory
  is known, so most of the work stays in Python: the encoder hands every sub-expression whose
  inputs are all ``Py`` to the concrete interpreter.
* ``Union(options)``: a value whose kind depends on the unknowns; ``options`` are
  ``(guard, value)`` pairs with mutually exclusive guards (the option type for null is
  ``Union(((is_null, Null()), (not is_null, Str(s))))``).

This module imports z3 and the contracts layer only; ``evaluated`` reads a term out of a model for
every reader of Z3 models.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any, ClassVar

import attrs
import z3

from envfactory.contracts.errors import SolverError
from envfactory.contracts.values import FrozenMap

Term = Any
"""A Python constant or a Z3 expression (z3 ships no type hints, so this stays loose)."""


class Unsupported(SolverError):
    """A construct outside the symbolic fragment; the verdict becomes ``unknown`` with the reason."""


class NeedStrings(Unsupported):
    """A string operation beyond equality met an abstract string (``Atom``): the contract needs
    the string reading (``Str``)."""


class Budget(SolverError):
    """The encoding grew past its size limit (a pathological contract or trajectory)."""


# ------------------------------------------------------------------------------------------ terms


def is_sym(t: Term) -> bool:
    return isinstance(t, z3.ExprRef)


def real_val(value: float | int | Fraction) -> Any:
    frac = Fraction(value)
    return z3.RealVal(f"{frac.numerator}/{frac.denominator}")


_CONSTANTS: dict[tuple[type, Any], Any] = {}
"""Z3 values of small Python constants, made once (the wrappers cost more than the terms)."""
_MAX_CONSTANTS = 4096


def to_z3(t: Term) -> Any:
    """A term as a Z3 expression (constants become Z3 values of their sort)."""
    if isinstance(t, z3.ExprRef):
        return t
    key = (type(t), t)
    try:
        hit = _CONSTANTS.get(key)
    except TypeError:  # unhashable: not a constant this module makes terms of
        hit = None
    if hit is not None:
        return hit
    made = _to_z3(t)
    if len(_CONSTANTS) < _MAX_CONSTANTS and not (isinstance(t, str) and len(t) > 64):
        _CONSTANTS[key] = made
    return made


def _to_z3(t: Term) -> Any:
    if isinstance(t, bool):
        return z3.BoolVal(t)
    if isinstance(t, int):
        return z3.IntVal(t)
    if isinstance(t, float):
        return real_val(t)
    if isinstance(t, str):
        return string_val(t)
    raise Unsupported(f"no Z3 term for {type(t).__name__}")


MAX_CHAR = 0x2FFFF
"""Z3's last code point (its default ``unicode`` encoding): one past it has no Z3 character."""
_SPARE = iter(range(0x2FA20, 0x2FFFE))
"""Code points Unicode leaves unassigned below ``MAX_CHAR``: each stands in for one past it."""
_STAND_IN: dict[str, str] = {}
_STOOD_FOR: dict[str, str] = {}


def _stand_in(c: str) -> str:
    if c not in _STAND_IN:
        spare = next(_SPARE, None)
        if spare is None:
            raise Unsupported(f"more characters past Z3's U+{MAX_CHAR:X} than spare ones")
        _STAND_IN[c] = chr(spare)
        _STOOD_FOR[chr(spare)] = c
    return _STAND_IN[c]


def string_val(text: str) -> z3.SeqRef:
    """``text`` as a Z3 string, each character as itself. ``StringVal`` reads ``\\u{..}`` and
    ``\\uXXXX`` in its argument as escapes (``"a\\u{41}"`` would be ``"aA"``), so every backslash
    goes in as one; a code point past ``MAX_CHAR`` would go in as the text of its escape, so an
    unassigned one stands in for it (one character still, and ``text_of`` gives it back)."""
    if not text.isascii() and any(ord(c) > MAX_CHAR for c in text):
        text = "".join(_stand_in(c) if ord(c) > MAX_CHAR else c for c in text)
    try:
        return z3.StringVal(text.replace("\\", "\\u{5c}"))
    except z3.Z3Exception as err:
        raise Unsupported(f"string {text[:20]!r} cannot be encoded: {err}") from None


def text_of(value: z3.SeqRef) -> str:
    """The text of a Z3 string value: ``as_string`` writes a backslash before ``u`` and the code
    points outside printable ASCII as ``\\u{..}``; a stand-in is the character it stands in for."""
    text = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), value.as_string())
    if _STOOD_FOR and not text.isascii():
        text = "".join(_STOOD_FOR.get(c, c) for c in text)
    return text


def to_real(t: Term) -> Term:
    if isinstance(t, z3.ExprRef):
        return z3.ToReal(t) if t.sort() == z3.IntSort() else t
    return t


def _nary(make: Any, terms: list[Any]) -> Any:
    """``And``/``Or`` through the C API: z3's Python wrappers re-check and re-cast every argument."""
    ctx = terms[0].ctx
    args = (z3.Ast * len(terms))(*(t.as_ast() for t in terms))
    return z3.BoolRef(make(ctx.ref(), len(terms), args), ctx)


def flat_bool(terms: Iterable[Any], unit: Any, zero: Any, make: Callable[[list[Any]], Any]) -> Any:
    """An n-ary ``And`` (``unit`` true, ``zero`` false) or ``Or`` (the reverse) kept small: the
    literal ``unit`` dropped, ``zero`` absorbing, a single term as itself, else ``make(terms)``.
    Literals are compared by identity: z3py's own tests cost more than the rest of the encoding."""
    out: list[Any] = []
    for t in terms:
        if t is unit:
            continue
        if t is zero:
            return zero
        out.append(t)
    if not out:
        return unit
    return out[0] if len(out) == 1 else make(out)


_AND = functools.partial(_nary, z3.Z3_mk_and)
_OR = functools.partial(_nary, z3.Z3_mk_or)


def and_(*terms: Term) -> Term:
    return flat_bool(terms, True, False, _AND)


def and_all(terms: Iterable[Term]) -> Term:
    return and_(*terms)


def or_(*terms: Term) -> Term:
    return flat_bool(terms, False, True, _OR)


def or_all(terms: Iterable[Term]) -> Term:
    return or_(*terms)


def not_(t: Term) -> Term:
    if t is True:
        return False
    if t is False:
        return True
    ctx = t.ctx
    return z3.BoolRef(z3.Z3_mk_not(ctx.ref(), t.as_ast()), ctx)


def implies(a: Term, b: Term) -> Term:
    return or_(not_(a), b)


def ite(c: Term, a: Term, b: Term) -> Term:
    if c is True:
        return a
    if c is False:
        return b
    if not is_sym(a) and not is_sym(b) and type(a) is type(b) and a == b:
        return a
    if a is True and b is False:
        return c
    if a is False and b is True:
        return not_(c)
    x, y = to_z3(a), to_z3(b)
    cls = _same_sort(x, y)
    if cls is not None:
        ctx = c.ctx
        return cls(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), x.as_ast(), y.as_ast()), ctx)
    return z3.If(c, x, y)  # z3 coerces Int to Real where the branches differ


_WRAPPER = {
    z3.BoolRef: z3.BoolRef,
    z3.ArithRef: z3.ArithRef,
    z3.IntNumRef: z3.ArithRef,
    z3.RatNumRef: z3.ArithRef,
    z3.SeqRef: z3.SeqRef,
}


def _same_sort(x: Any, y: Any) -> Any:
    """The wrapper class of a term over the common sort of ``x`` and ``y``, or None when the
    sorts differ or are not plain ones (then z3's own coercing wrappers take over)."""
    cls = _WRAPPER.get(type(x))
    if cls is None or cls is not _WRAPPER.get(type(y)):
        return None
    if cls is not z3.BoolRef:
        ref = x.ctx_ref()
        if z3.Z3_get_sort(ref, x.as_ast()).value != z3.Z3_get_sort(ref, y.as_ast()).value:
            return None
    return cls


def eq(a: Term, b: Term) -> Term:
    """Equality of two terms of one kind (numbers may mix Int and Real)."""
    if not is_sym(a) and not is_sym(b):
        return bool(a == b)
    if is_sym(a) and is_sym(b) and a.eq(b):
        return True
    if not is_sym(a):
        a, b = b, a
    if not isinstance(b, z3.ExprRef):
        b = to_z3(b) if isinstance(b, float | str) else b
        if not isinstance(b, z3.ExprRef) and isinstance(b, int) and not isinstance(b, bool):
            y = to_z3(b)
            if _same_sort(a, y) is not None:
                b = y
    if isinstance(b, z3.ExprRef) and _same_sort(a, b) is not None:
        ctx = a.ctx
        return z3.BoolRef(z3.Z3_mk_eq(ctx.ref(), a.as_ast(), b.as_ast()), ctx)
    return a == b  # z3 coerces ints and Int/Real


def arith(op: str, a: Term, b: Term) -> Term:
    """``+ - * < <= > >=`` on numbers (or ordering of strings); Python folds constants."""
    if not is_sym(a) and not is_sym(b):
        match op:
            case "+":
                return a + b
            case "-":
                return a - b
            case "*":
                return a * b
            case "<":
                return bool(a < b)
            case "<=":
                return bool(a <= b)
            case ">":
                return bool(a > b)
            case ">=":
                return bool(a >= b)
    x, y = (to_z3(a) if isinstance(a, float | str) else a), (to_z3(b) if isinstance(b, float | str) else b)
    if not is_sym(x):
        x = to_z3(x)
    match op:
        case "+":
            return x + y
        case "-":
            return x - y
        case "*":
            return x * y
        case "<":
            return x < y
        case "<=":
            return x <= y
        case ">":
            return x > y
        case ">=":
            return x >= y
    raise Unsupported(f"operator {op}")  # pragma: no cover


# ----------------------------------------------------------------------------------------- values


@attrs.frozen(slots=True, eq=False)
class SVal:
    """Base of every symbolic value; ``kind`` names it in messages and merge keys."""

    kind: ClassVar[str]


@attrs.frozen(slots=True, eq=False)
class Null(SVal):
    kind: ClassVar[str] = "null"


NULL = Null()


@attrs.frozen(slots=True, eq=False)
class Simple(SVal):
    """A value that is one Z3 term; the subclass says of which kind."""

    t: Term


@attrs.frozen(slots=True, eq=False)
class Bool(Simple):
    kind: ClassVar[str] = "boolean"


@attrs.frozen(slots=True, eq=False)
class Int(Simple):
    kind: ClassVar[str] = "integer"


@attrs.frozen(slots=True, eq=False)
class Real(Simple):
    kind: ClassVar[str] = "number"


@attrs.frozen(slots=True, eq=False)
class Str(Simple):
    kind: ClassVar[str] = "string"


@attrs.frozen(slots=True, eq=False)
class Atom(Simple):
    """A string in the abstract reading: ``t`` is an Int identity (see the module docstring)."""

    kind: ClassVar[str] = "string"


_LITERALS: dict[str, int] = {}
LITERALS: Mapping[str, int] = MappingProxyType(_LITERALS)
"""Every string literal given an identity so far (process-wide: identities never change)."""
LITERAL_TEXTS: dict[int, str] = {}


def literal_id(text: str) -> int:
    """The identity of a literal string in the abstract reading: -1, -2, ... in order of first use."""
    ident = _LITERALS.get(text)
    if ident is None:
        ident = -(len(_LITERALS) + 1)
        _LITERALS[text] = ident
        LITERAL_TEXTS[ident] = text
    return ident


def atom_term(v: SVal) -> Term:
    """The identity of a string value (an ``Atom``, or a known string) in the abstract reading."""
    if isinstance(v, Atom):
        return v.t
    if isinstance(v, Str) and isinstance(v.t, str):
        return literal_id(v.t)
    if isinstance(v, Py) and isinstance(v.value, str):
        return literal_id(v.value)
    if isinstance(v, Str):
        chosen = _literal_choice(v.t)
        if chosen is not None:
            return chosen
    raise NeedStrings("an abstract string compared with a computed string")


_UNICODE_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]{1,6})\}")
"""How ``as_string`` writes a code point outside printable ASCII."""


def _literal_choice(t: Term) -> Term | None:
    """The identity of a string term that only chooses among literals (``"draft" if c else
    "open"``: ``merge`` makes such ites of two known strings), else None."""
    if z3.is_string_value(t):
        text = text_of(t)
        return literal_id(text) if to_z3(text).eq(t) else None
    if z3.is_app_of(t, z3.Z3_OP_ITE):
        a, b = _literal_choice(t.arg(1)), _literal_choice(t.arg(2))
        if a is not None and b is not None:
            return ite(t.arg(0), a, b)
    return None


def no_atoms(*values: SVal) -> None:
    """Refuse, with ``NeedStrings``, an operation the abstract reading of strings cannot express."""
    for v in values:
        for _, o in cases(v):
            if isinstance(o, Atom):
                raise NeedStrings("a string operation beyond equality")


@attrs.frozen(slots=True, eq=False)
class Rec(SVal):
    """A record: ``fields`` maps a name to ``(present, value)``."""

    fields: Mapping[str, tuple[Term, SVal]]

    kind: ClassVar[str] = "record"

    def get(self, name: str) -> tuple[Term, SVal]:
        return self.fields.get(name, (False, NULL))


@attrs.frozen(slots=True, eq=False)
class Lst(SVal):
    items: tuple[SVal, ...]
    n: Term = None

    kind: ClassVar[str] = "list"

    @property
    def length(self) -> Term:
        """The length: ``n``, or the number of items of a list of known length."""
        return len(self.items) if self.n is None else self.n

    def within(self, i: int) -> Term:
        """Whether place ``i`` (below the capacity) is in the list."""
        return True if self.n is None else arith("<", i, self.n)


@attrs.frozen(slots=True, eq=False)
class Slot:
    """One entry of a finite map: a key term, whether it is present, and the value stored."""

    key: Term
    present: Term
    value: SVal


@attrs.frozen(slots=True, eq=False)
class Map(SVal):
    """A collection as a finite map over slots (see the module docstring for the invariant)."""

    slots: tuple[Slot, ...]
    key_kind: str = "string"  # "integer", "string", or "atom" (abstract strings)
    open: bool = False
    name: str = ""
    fixed: bool = False
    """A bounded collection (the fully symbolic states of ``solver.states``): a new key takes the
    first free slot instead of a new one, so a written state has the slots of the state it came
    from, and ``full`` is the condition that a write found no free slot (not a transition)."""
    full: Term = False

    kind: ClassVar[str] = "map"


@attrs.frozen(slots=True, eq=False)
class Union(SVal):
    """A value of several possible kinds: ``(guard, value)`` pairs, guards mutually exclusive."""

    options: tuple[tuple[Term, SVal], ...]

    kind: ClassVar[str] = "union"


@attrs.frozen(slots=True, eq=False)
class Opaque(SVal):
    """A value the solver carries but never looks into (a list of unknown length, or a value
    its schema leaves untyped, in the fully symbolic states of ``transition``): an identity
    ``handle``. Copying and comparing two are exact; any other use is outside the fragment (an
    abstraction, so a proof over it holds for every concrete value). Read back as ``[]`` or null."""

    handle: Term
    what: str = "list"

    kind: ClassVar[str] = "opaque"


def no_opaque(*values: SVal) -> None:
    """Refuse an operation that would look into an ``Opaque`` value."""
    for v in values:
        for _, o in cases(v):
            if isinstance(o, Opaque):
                raise Unsupported(f"an operation on a {o.what} the solver does not model")


@attrs.frozen(slots=True, eq=False)
class Py(SVal):
    """A known value as plain Python data; ``key_kind`` types an (empty) state collection."""

    value: Any
    key_kind: str | None = None

    kind: ClassVar[str] = "known"


SIMPLE = (Bool, Int, Real, Str, Atom)


def term_of(v: SVal) -> Term:
    """The term of a boolean, number or string value."""
    if isinstance(v, Simple):
        return v.t
    raise Unsupported(f"expected a boolean, number or string, got {v.kind}")


def expand(v: SVal) -> SVal:
    """One level of a ``Py`` value as symbolic structure (children stay ``Py``)."""
    if not isinstance(v, Py):
        return v
    x = v.value
    if x is None:
        return NULL
    if isinstance(x, bool):
        return Bool(x)
    if isinstance(x, int):
        return Int(x)
    if isinstance(x, float):
        return Real(x)
    if isinstance(x, str):
        return Str(x)
    if isinstance(x, list | tuple):
        return Lst(tuple(Py(i) for i in x))
    if isinstance(x, FrozenMap):
        kind = v.key_kind or ("integer" if x and all(type(k) is int for k in x) else "string")
        return Map(tuple(Slot(k, True, Py(val)) for k, val in x.items()), kind)
    if isinstance(x, dict):
        return Rec({str(k): (True, Py(val)) for k, val in x.items()})
    raise Unsupported(f"cannot encode a value of type {type(x).__name__}")


def cases(v: SVal) -> Sequence[tuple[Term, SVal]]:
    """The value as guarded single-kind options (one option, guard True, unless a ``Union``)."""
    if isinstance(v, Py):
        v = expand(v)
    if isinstance(v, Union):
        return v.options
    return ((True, v),)


def case_pairs(a: SVal, b: SVal) -> Iterator[tuple[Term, SVal, SVal]]:
    """Every option of ``a`` with every option of ``b`` that can hold together, and its guard:
    what an operator over two possibly-union values reads, one pair of single kinds at a time."""
    for g, x in cases(a):
        for h, y in cases(b):
            guard = and_(g, h)
            if guard is not False:
                yield guard, x, y


def key_sval(kind: str, t: Term) -> SVal:
    if kind == "atom":
        return Atom(t)
    return Int(t) if kind == "integer" else Str(t)


# ------------------------------------------------------------------------------------ merging


def _same_shape_key(v: SVal) -> Any:
    if isinstance(v, Lst):
        return ("list", len(v.items))
    if isinstance(v, Map):
        return ("map", len(v.slots), v.key_kind)
    return type(v)


def merge(c: Term, a: SVal, b: SVal) -> SVal:
    """``a if c else b`` as one value."""
    if c is True:
        return a
    if c is False:
        return b
    if a is b:
        return a
    if isinstance(a, Py) and isinstance(b, Py) and _same_py(a.value, b.value):
        return a
    a, b = expand(a), expand(b)
    if isinstance(a, Union) or isinstance(b, Union) or _same_shape_key(a) != _same_shape_key(b):
        return join([(and_(c, g), v) for g, v in cases(a)] + [(and_(not_(c), g), v) for g, v in cases(b)])
    if isinstance(a, Null):
        return a
    if isinstance(a, SIMPLE):
        return type(a)(ite(c, a.t, b.t))  # type: ignore[attr-defined]
    if isinstance(a, Rec):
        assert isinstance(b, Rec)
        names = list(a.fields) + [n for n in b.fields if n not in a.fields]
        fields = {}
        for n in names:
            pa, va = a.get(n)
            pb, vb = b.get(n)
            if n not in a.fields:
                va = vb
            elif n not in b.fields:
                vb = va
            fields[n] = (ite(c, pa, pb), merge(c, va, vb))
        return Rec(fields)
    if isinstance(a, Lst):
        assert isinstance(b, Lst)
        length = None if a.n is None and b.n is None else ite(c, a.length, b.length)
        return Lst(tuple(merge(c, x, y) for x, y in zip(a.items, b.items, strict=True)), length)
    if isinstance(a, Opaque):
        assert isinstance(b, Opaque)
        return Opaque(ite(c, a.handle, b.handle), a.what)
    if isinstance(a, Map):
        assert isinstance(b, Map)
        slots = []
        for sa, sb in zip(a.slots, b.slots, strict=True):
            if not same_term(sa.key, sb.key):
                raise Unsupported("a conditional choice between two collections with different keys")
            slots.append(Slot(sa.key, ite(c, sa.present, sb.present), merge(c, sa.value, sb.value)))
        return Map(
            tuple(slots),
            a.key_kind,
            a.open or b.open,
            a.name or b.name,
            a.fixed and b.fixed,
            ite(c, a.full, b.full),
        )
    raise Unsupported(f"cannot merge {a.kind} values")  # pragma: no cover


def join(pairs: Sequence[tuple[Term, SVal]], lazy: bool = False) -> SVal:
    """One value from guarded alternatives (guards mutually exclusive; exhaustive where it matters).

    Simple values of one kind merge into one ite term. Records, lists and maps merge field by
    field too, unless ``lazy``: then they stay separate options of a ``Union``, so that reading
    one field of a looked-up record costs one ite-chain instead of one per field."""
    live = [(g, expand(v)) for g, v in pairs if g is not False]
    flat: list[tuple[Term, SVal]] = []
    for g, v in live:
        if isinstance(v, Union):
            flat.extend((and_(g, h), w) for h, w in v.options)
        else:
            flat.append((g, v))
    flat = [(g, v) for g, v in flat if g is not False]
    if not flat:
        return NULL
    groups: dict[Any, list[tuple[Term, SVal]]] = {}
    for g, v in flat:
        groups.setdefault(_same_shape_key(v), []).append((g, v))
    merged: list[tuple[Term, SVal]] = []
    for shape, members in groups.items():
        if lazy and len(members) > 1 and not (isinstance(shape, type) and shape in (*SIMPLE, Null)):
            merged.extend(members)
            continue
        guard, value = members[-1]
        for g, v in reversed(members[:-1]):
            value = merge(g, v, value)
            guard = or_(g, guard)
        merged.append((guard, value))
    if len(merged) == 1:
        return merged[0][1]
    return Union(tuple(merged))


def _same_py(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict | list):
        return False  # not worth a deep comparison here
    return bool(a == b)


def same_term(a: Term, b: Term) -> bool:
    """Structural identity of two terms (cheap; not semantic equality)."""
    if is_sym(a) and is_sym(b):
        return bool(a.eq(b))
    if is_sym(a) or is_sym(b):
        return False
    return type(a) is type(b) and a == b


# ---------------------------------------------------------------------------- lifting and reading


def lift(value: Any, *, symbolic: bool = False, key_kind: str | None = None) -> SVal:
    """A concrete value as a symbolic one. ``symbolic`` makes Z3 constants instead of Python ones
    (so that the differential tests exercise the Z3 side of every operation)."""

    def term(t: Any) -> Term:
        return to_z3(t) if symbolic else t

    if value is None:
        return NULL
    if isinstance(value, bool):
        return Bool(term(value))
    if isinstance(value, int):
        return Int(term(value))
    if isinstance(value, float):
        return Real(term(value))
    if isinstance(value, str):
        return Str(term(value))
    if isinstance(value, list | tuple):
        return Lst(tuple(lift(v, symbolic=symbolic) for v in value))
    if isinstance(value, FrozenMap):
        kind = key_kind or ("integer" if value and all(type(k) is int for k in value) else "string")
        slots = tuple(Slot(term(k), term(True), lift(v, symbolic=symbolic)) for k, v in value.items())
        return Map(slots, kind)
    if isinstance(value, dict):
        return Rec({str(k): (True, lift(v, symbolic=symbolic)) for k, v in value.items()})
    raise Unsupported(f"cannot encode a value of type {type(value).__name__}")


def _num(t: Any, real: bool) -> Any:
    if not is_sym(t):
        return t
    if real:
        frac = t.as_fraction()
        return float(frac)
    return t.as_long()


def evaluated(model: z3.ModelRef, term: Any) -> Any:
    """``term``'s value in ``model``, as a literal where Z3 can make one.

    ``model.eval`` (and ``simplify``) rewrite some string operations one step at a time:
    ``"" < "b"`` comes back as ``Not("" == "b")``, which ``is_true`` does not recognise and a
    second pass turns into ``True``. So the result is simplified until it is a literal or stops
    changing.
    """
    x = model.eval(term, model_completion=True)
    for _ in range(4):
        if z3.is_true(x) or z3.is_false(x) or z3.is_int_value(x) or z3.is_rational_value(x):
            break
        if z3.is_string_value(x):
            break
        simpler = z3.simplify(x)
        if simpler.eq(x):
            break
        x = simpler
    return x


def read(
    v: SVal,
    model: z3.ModelRef | None = None,
    texts: Mapping[int, str] | None = None,
    held: set[int] | None = None,
) -> Any:
    """The concrete value of a symbolic one in a model (records as dicts, maps as FrozenMaps);
    without a model the value must be concrete. ``texts`` gives the strings chosen for the
    abstract identities of the model that are no literal's (``schema.atom_texts``); ``held``
    collects the ids of the Z3 constants inside the abstract strings read (the ones to choose
    texts for: a model's other strings, in operations not chosen, may hold anything)."""

    def ev(t: Term) -> Any:
        if not is_sym(t):
            return t
        if model is None:
            raise Unsupported("the value is not concrete")
        return evaluated(model, t)

    def truth(t: Term) -> bool:
        x = ev(t)
        return bool(z3.is_true(x)) if is_sym(x) else bool(x)

    if isinstance(v, Py):
        return v.value
    if isinstance(v, Null):
        return None
    if isinstance(v, Bool):
        return truth(v.t)
    if isinstance(v, Int):
        return _num(ev(v.t), False)
    if isinstance(v, Real):
        return _num(ev(v.t), True)
    if isinstance(v, Str):
        x = ev(v.t)
        return text_of(x) if is_sym(x) else x
    if isinstance(v, Atom):
        if held is not None and is_sym(v.t):
            held.update(constants_of(v.t))
        ident = _num(ev(v.t), False)
        if texts and ident in texts:  # chosen for this model (another contract's literal too)
            return texts[ident]
        if ident in LITERAL_TEXTS:
            return LITERAL_TEXTS[ident]
        return f"s{ident}"
    if isinstance(v, Rec):
        return {n: read(val, model, texts, held) for n, (p, val) in v.fields.items() if truth(p)}
    if isinstance(v, Lst):
        n = len(v.items) if v.n is None else read(Int(v.n), model)
        return [read(i, model, texts, held) for i in v.items[: max(0, min(n, len(v.items)))]]
    if isinstance(v, Map):
        out: dict[Any, Any] = {}
        for slot in v.slots:
            if truth(slot.present):
                key = read(key_sval(v.key_kind, slot.key), model, texts, held)
                out.setdefault(key, read(slot.value, model, texts, held))
        return FrozenMap(out)
    if isinstance(v, Union):
        for g, option in v.options:
            if truth(g):
                return read(option, model, texts, held)
        return read(v.options[-1][1], model, texts, held) if v.options else None
    if isinstance(v, Opaque):
        return [] if v.what == "list" else None
    raise Unsupported(f"cannot read back {v!r}")  # pragma: no cover


def constants_of(t: z3.ExprRef) -> set[int]:
    """The ids of the uninterpreted constants in a term (an identity chosen by ites)."""
    found: set[int] = set()
    stack, seen = [t], set()
    while stack:
        x = stack.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found.add(x.get_id())
        stack.extend(x.children())
    return found


def terms_of(v: SVal) -> Iterable[Term]:
    """Every term inside a value (for collecting variables and checking sizes)."""
    if isinstance(v, SIMPLE):
        yield v.t
    elif isinstance(v, Rec):
        for p, val in v.fields.values():
            yield p
            yield from terms_of(val)
    elif isinstance(v, Lst):
        if v.n is not None:
            yield v.n
        for i in v.items:
            yield from terms_of(i)
    elif isinstance(v, Map):
        for s in v.slots:
            yield s.key
            yield s.present
            yield from terms_of(s.value)
    elif isinstance(v, Union):
        for g, o in v.options:
            yield g
            yield from terms_of(o)
    elif isinstance(v, Opaque):
        yield v.handle


def is_concrete(v: SVal) -> bool:
    return not any(is_sym(t) for t in terms_of(v))
