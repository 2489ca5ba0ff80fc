"""Symbolic states and the one-step transition relation of a contract, in Z3.

The engine under ``plan``, ``prove`` and the state graph. A symbolic state gives every state
variable a Z3 reading of its type:

* integers, numbers and booleans are Z3 constants; a nullable value is an ``Opt`` (an
  ``is_null`` flag beside the value);
* strings are read one of two ways, chosen per contract by ``Transition``: where the contract
  only compares strings (most do), an ``AStr`` is an integer *identity* (literals have fixed
  ones) and concrete texts satisfying the schemas are picked after solving
  (``concretize_strings``), so the solver never enters the string theory; otherwise Z3 strings,
  with schema ``pattern``s translated to Z3 regular expressions (``regex``);
* lists and untyped values are ``Opaque`` handles: carried and compared, never looked into;
* records are ``Rec`` (one symbolic value per declared field; an optional field that is absent
  reads as null, as in the concrete semantics);
* a collection is an ``SMap`` of K key *slots*, each a presence flag, a key and a record: the
  collection is the set of present slots, whose keys are kept distinct. K bounds the number of
  entries; a write of a new key into a full collection is not a transition (``capacity``).

``Encoder`` interprets the IR over these values, one method per node type, returning the value
and the condition under which it is *defined* (a read of a missing key, a field of null, a
division by zero are undefined; a clause holds only where it is defined and true, as in
``contracts.semantics``). ``Transition`` builds, for one operation, the guard (every
``requires``), the effects (simultaneous, evaluated on the pre-state), the ``ensures`` on the
output and the schema constraints on input and output. ``Model`` turns a Z3 model back into
plain JSON values (inputs, outputs, states).

Inside quantifiers over a collection, ``c[k]`` for the bound ``k`` is the slot itself (linear,
not quadratic, in K). This is the encoding the graph, BMC and k-induction need, kept beside them
(``solver.encode`` is the feasibility engine's reading of the same IR); it reads only the
contracts layer and Z3.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import UNKNOWN, Clause, Contract, Operation
from envfactory.contracts.parser import Effect
from envfactory.contracts.printer import to_source
from envfactory.solver.regex import RegexUnsupported, to_z3_regex
from envfactory.solver.symbolic import flat_bool
from envfactory.statemachine._z3_literal import z3_literal

# ------------------------------------------------------------------------------------- values


class _NullSym:
    """The ``null`` literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


NULL = _NullSym()


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


def _no_opaque(*values: Any) -> None:
    if any(isinstance(v, Opaque) for v in values):
        raise _unsupported("an operation on a list or an untyped value")


class NeedStrings(SolverError):
    """The contract does more with a string than compare it: use the string theory instead."""


_LITERALS: dict[str, int] = {}
_BY_ID: dict[int, str] = {}


def literal_id(text: str) -> int:
    """The fixed identity of a string literal (negative; the same for the whole process)."""
    ident = _LITERALS.get(text)
    if ident is None:
        ident = -(len(_LITERALS) + 1)
        _LITERALS[text] = ident
        _BY_ID[ident] = text
    return ident


def _no_astr(*values: Any) -> None:
    if any(isinstance(v, AStr) for v in values):
        raise NeedStrings("a string operation beyond equality")
    _no_opaque(*values)


class SList:
    """A list of known length (list displays)."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[Sym, ...]) -> None:
        self.items = items


Sym = Any  # z3.ExprRef | _NullSym | Opt | Rec | SMap | SList

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)
PRINTABLE = z3.Star(z3.Range(" ", "~"))


def conj(*parts: z3.BoolRef) -> z3.BoolRef:
    """``And`` that drops the literal ``TRUE``, keeping formulas small."""
    return flat_bool(parts, TRUE, FALSE, z3.And)


def disj(*parts: z3.BoolRef) -> z3.BoolRef:
    """``Or`` that drops the literal ``FALSE``."""
    return flat_bool(parts, FALSE, TRUE, z3.Or)


def implies(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    if a is TRUE:
        return b
    if a is FALSE or b is TRUE:
        return TRUE
    return z3.Implies(a, b)


def _is_z3(value: Any) -> bool:
    return isinstance(value, z3.ExprRef)


def _unsupported(what: str, node: ir.Expr | None = None) -> SolverError:
    return SolverError(f"outside the symbolic fragment: {what}", node.loc if node is not None else None)


# ------------------------------------------------------------------------------ fresh values


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
                raise _unsupported(f"a value of type {typ.describe()} at {name}")
        inner = self._plain(name, rest[0], schema, root)
        if nullable:
            return Opt(z3.Bool(name + "?null"), inner)
        return inner

    def _plain(self, name: str, typ: T.Type, schema: Any, root: Any) -> Sym:
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
                    fits = [i for t, i in _LITERALS.items() if _fits(t, schema)]
                    self.constraints.append(disj(a.id >= 0, *(a.id == i for i in fits)))
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
                    self.constraints.extend(_string_bounds(s, schema))
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
                    if fname not in required and not isinstance(fv, Opt | _NullSym):
                        fv = Opt(z3.Bool(f"{name}.{fname}?absent"), fv)
                    if fname not in required:
                        optional.add(fname)
                    values[fname] = fv
                return Rec(values, frozenset(optional))
            case T.MapType(key=key, value=vtype):
                item_schema = schema.get("additionalProperties") if isinstance(schema, Mapping) else None
                slots = []
                for i in range(self.slots):
                    k = self._plain(f"{name}#{i}.key", key, None, None)
                    v = self.value(f"{name}#{i}", vtype, item_schema, root)
                    slots.append(Slot(z3.Bool(f"{name}#{i}.present"), k, v))
                return SMap(tuple(slots))
            case T.ListType():
                return Opaque("list", z3.Int(name))
            case T.AnyType():
                return Opaque("any", z3.Int(name))
        raise _unsupported(f"a value of type {typ.describe()} at {name}")


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


def _deref(schema: Any, root: Any) -> Any:
    for _ in range(16):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            else:
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


def _string_bounds(s: z3.SeqRef, schema: Any) -> list[z3.BoolRef]:
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


# -------------------------------------------------------------------------------- the encoder


class Env:
    """What an expression reads, symbolically."""

    __slots__ = ("input", "locals", "output", "slots", "state")

    def __init__(self, state: Mapping[str, Sym], input: Sym = None, output: Sym = None) -> None:
        self.state = state
        self.input = input
        self.output = output
        self.locals: dict[str, Sym] = {}
        self.slots: dict[str, tuple[SMap, Slot]] = {}
        """A quantifier's variable bound to a slot's key: ``c[k]`` is then that slot's value."""


Encoded = tuple[Sym, z3.BoolRef]


class Encoder:
    """The IR over symbolic values: ``encode(node, env) -> (value, defined)``."""

    def __init__(self, abstract: bool = False) -> None:
        self.abstract = abstract

    def encode(self, node: ir.Expr, env: Env) -> Encoded:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:  # pragma: no cover - every node type has a method
            raise _unsupported(type(node).__name__, node)
        result: Encoded = method(node, env)
        return result

    def holds(self, node: ir.Expr, env: Env) -> z3.BoolRef:
        """A clause: defined and true."""
        value, defined = self.encode(node, env)
        return conj(defined, _truth(value, node))

    # -- leaves ------------------------------------------------------------------------------

    def _Const(self, node: ir.Const, env: Env) -> Encoded:
        return const(node.value, node, self.abstract), TRUE

    def _ListLit(self, node: ir.ListLit, env: Env) -> Encoded:
        items = [self.encode(i, env) for i in node.items]
        return SList(tuple(v for v, _ in items)), conj(*(d for _, d in items))

    def _RecordLit(self, node: ir.RecordLit, env: Env) -> Encoded:
        items = [self.encode(v, env) for v in node.values]
        fields = dict(zip(node.keys, (v for v, _ in items), strict=True))
        return Rec(fields), conj(*(d for _, d in items))

    def _Name(self, node: ir.Name, env: Env) -> Encoded:
        name = node.id
        if name in env.locals:
            return env.locals[name], TRUE
        if name == "input":
            if env.input is None:
                raise _unsupported("input read where there is none", node)
            return env.input, TRUE
        if name == "output":
            if env.output is None:
                raise _unsupported("output read where there is none", node)
            return env.output, TRUE
        if name in env.state:
            return env.state[name], TRUE
        raise _unsupported(f"unknown name {name!r}", node)

    # -- access --------------------------------------------------------------------------------

    def _Attr(self, node: ir.Attr, env: Env) -> Encoded:
        obj, defined = self.encode(node.obj, env)
        value, ok = field(obj, node.name, node)
        return value, conj(defined, ok)

    def _Index(self, node: ir.Index, env: Env) -> Encoded:
        obj, d1 = self.encode(node.obj, env)
        if isinstance(node.key, ir.Name) and node.key.id in env.slots:
            coll, slot = env.slots[node.key.id]
            if coll is obj:  # c[k] inside all/any/sum(... for k in c): the slot itself, O(1)
                return slot.value, d1
        key, d2 = self.encode(node.key, env)
        if isinstance(obj, SMap):
            value, ok = lookup(obj, key, node)
            return value, conj(d1, d2, ok)
        if isinstance(obj, Rec | Opt) and isinstance(node.key, ir.Const) and isinstance(node.key.value, str):
            value, ok = field(obj, node.key.value, node)
            return value, conj(d1, d2, ok)
        if isinstance(obj, SList) and isinstance(node.key, ir.Const) and isinstance(node.key.value, int):
            index = node.key.value
            if -len(obj.items) <= index < len(obj.items):
                return obj.items[index], conj(d1, d2)
            return NULL, FALSE
        raise _unsupported(f"indexing {to_source(node.obj)}", node)

    # -- operators -----------------------------------------------------------------------------

    def _Unary(self, node: ir.Unary, env: Env) -> Encoded:
        value, defined = self.encode(node.operand, env)
        value, ok = _unwrap(value)
        if node.op == "not":
            if not z3.is_bool(value):
                return TRUE, FALSE
            return z3.Not(value), conj(defined, ok)
        if not _is_arith(value):
            return z3.IntVal(0), FALSE
        return (-value if node.op == "-" else value), conj(defined, ok)

    def _BinOp(self, node: ir.BinOp, env: Env) -> Encoded:
        left, d1 = self.encode(node.left, env)
        right, d2 = self.encode(node.right, env)
        a, ok1 = _unwrap(left)
        b, ok2 = _unwrap(right)
        _no_astr(a, b)
        defined = conj(d1, d2, ok1, ok2)
        op = node.op
        if op == "+" and _is_z3(a) and _is_z3(b) and z3.is_string(a) and z3.is_string(b):
            return z3.Concat(a, b), defined
        if op == "+" and isinstance(a, SList) and isinstance(b, SList):
            return SList(a.items + b.items), defined
        if not (_is_arith(a) and _is_arith(b)):
            return z3.IntVal(0), FALSE
        if op == "+":
            return a + b, defined
        if op == "-":
            return a - b, defined
        if op == "*":
            return a * b, defined
        nonzero = b != 0
        if op == "/":
            return z3.ToReal(a) / z3.ToReal(b) if z3.is_int(a) or z3.is_int(b) else a / b, conj(
                defined, nonzero
            )
        if not (z3.is_int(a) and z3.is_int(b)):
            raise _unsupported(f"{op} on numbers that are not integers", node)
        floor_div = z3.If(b > 0, a / b, (-a) / (-b))
        if op == "//":
            return floor_div, conj(defined, nonzero)
        return a - b * floor_div, conj(defined, nonzero)

    def _Compare(self, node: ir.Compare, env: Env) -> Encoded:
        left, d1 = self.encode(node.left, env)
        right, d2 = self.encode(node.right, env)
        op = node.op
        if op in ("==", "!="):
            eq = equal(left, right, node)
            return (eq if op == "==" else z3.Not(eq)), conj(d1, d2)
        if op in ("in", "not in"):
            result, ok = member(left, right, node)
            return (result if op == "in" else z3.Not(result)), conj(d1, d2, ok)
        a, ok1 = _unwrap(left)
        b, ok2 = _unwrap(right)
        _no_astr(a, b)
        defined = conj(d1, d2, ok1, ok2)
        if _is_arith(a) and _is_arith(b):
            a, b = _same_arith(a, b)
            rel = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
            return rel, defined
        if _is_z3(a) and _is_z3(b) and z3.is_string(a) and z3.is_string(b):
            rel = {
                "<": z3.StrLT(a, b),
                "<=": z3.StrLE(a, b),
                ">": z3.StrLT(b, a),
                ">=": z3.StrLE(b, a),
            }[op]
            return rel, defined
        return FALSE, FALSE

    def _BoolOp(self, node: ir.BoolOp, env: Env) -> Encoded:
        # short-circuit: operand i is only evaluated when the ones before let it be reached
        values: list[z3.BoolRef] = []
        defined: z3.BoolRef = TRUE
        reach: z3.BoolRef = TRUE
        for operand in node.operands:
            value, d = self.encode(operand, env)
            value, ok = _unwrap(value)
            if not z3.is_bool(value):
                value, ok = FALSE, FALSE
            defined = conj(defined, implies(reach, conj(d, ok)))
            values.append(value)
            reach = conj(reach, value) if node.op == "and" else conj(reach, z3.Not(value))
        result = z3.And(*values) if node.op == "and" else z3.Or(*values)
        return result, defined

    def _IfExp(self, node: ir.IfExp, env: Env) -> Encoded:
        test, dt = self.encode(node.test, env)
        test, ok = _unwrap(test)
        body, db = self.encode(node.body, env)
        orelse, de = self.encode(node.orelse, env)
        if not z3.is_bool(test):
            return NULL, FALSE
        return ite(test, body, orelse, node), conj(dt, ok, z3.If(test, db, de))

    def _Call(self, node: ir.Call, env: Env) -> Encoded:
        func = node.func
        if func == "implies":
            a, da = self.encode(node.args[0], env)
            b, db = self.encode(node.args[1], env)
            a, oka = _unwrap(a)
            b, okb = _unwrap(b)
            if not (z3.is_bool(a) and z3.is_bool(b)):
                return FALSE, FALSE
            return z3.Implies(a, b), conj(da, oka, implies(a, conj(db, okb)))
        args = [self.encode(a, env) for a in node.args]
        defined = conj(*(d for _, d in args))
        values = [a for a, _ in args]
        if func == "len":
            (v,) = values
            v, ok = _unwrap(v)
            _no_astr(v)
            if isinstance(v, SMap):
                return z3.Sum([z3.If(s.present, 1, 0) for s in v.slots]) if v.slots else z3.IntVal(0), conj(
                    defined, ok
                )
            if isinstance(v, SList):
                return z3.IntVal(len(v.items)), conj(defined, ok)
            if isinstance(v, Rec):
                return z3.IntVal(len(v.fields)), conj(defined, ok)
            if _is_z3(v) and z3.is_string(v):
                return z3.Length(v), conj(defined, ok)
            return z3.IntVal(0), FALSE
        unwrapped = [_unwrap(v) for v in values]
        defined = conj(defined, *(ok for _, ok in unwrapped))
        vals = [v for v, _ in unwrapped]
        _no_astr(*vals)
        if func in ("abs", "min", "max"):
            if not all(_is_arith(v) for v in vals):
                return z3.IntVal(0), FALSE
            if func == "abs":
                return z3.If(vals[0] >= 0, vals[0], -vals[0]), defined
            a, b = _same_arith(vals[0], vals[1])
            return (z3.If(a <= b, a, b) if func == "min" else z3.If(a >= b, a, b)), defined
        if func in ("startswith", "endswith"):
            s, p = vals
            if not (_is_z3(s) and _is_z3(p) and z3.is_string(s) and z3.is_string(p)):
                return FALSE, FALSE
            return (z3.PrefixOf(p, s) if func == "startswith" else z3.SuffixOf(p, s)), defined
        raise _unsupported(f"{func}()", node)

    def _Quant(self, node: ir.Quant, env: Env) -> Encoded:
        domain, dd = self.encode(node.domain, env)
        domain, ok = _unwrap(domain)
        if isinstance(domain, SMap):
            items = [(s.present, s.key) for s in domain.slots]
        elif isinstance(domain, SList):
            items = [(TRUE, v) for v in domain.items]
        else:
            raise _unsupported(f"{node.kind}() over {to_source(node.domain)}", node)
        missing = object()
        saved = env.locals.get(node.var, missing)
        saved_slot = env.slots.pop(node.var, None)
        terms: list[Any] = []
        defined: z3.BoolRef = conj(dd, ok)
        try:
            for index, (present, key) in enumerate(items):
                env.locals[node.var] = key
                if isinstance(domain, SMap):
                    env.slots[node.var] = (domain, domain.slots[index])
                guard = present
                if node.cond is not None:
                    cond, dc = self.encode(node.cond, env)
                    cond, okc = _unwrap(cond)
                    defined = conj(defined, implies(present, conj(dc, okc)))
                    guard = conj(present, cond)
                body, db = self.encode(node.body, env)
                body, okb = _unwrap(body)
                defined = conj(defined, implies(guard, conj(db, okb)))
                terms.append((guard, body))
        finally:
            env.slots.pop(node.var, None)
            if saved_slot is not None:
                env.slots[node.var] = saved_slot
            if saved is missing:
                env.locals.pop(node.var, None)
            else:
                env.locals[node.var] = saved
        if node.kind == "all":
            return conj(*(implies(g, b) for g, b in terms)), defined
        if node.kind == "any":
            return disj(*(conj(g, b) for g, b in terms)), defined
        if not terms:
            return z3.IntVal(0), defined
        if not all(_is_arith(b) for _, b in terms):
            return z3.IntVal(0), FALSE
        return z3.Sum([z3.If(g, b, 0) for g, b in terms]), defined


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
    raise _unsupported(f"the value {value!r}", node)


def _truth(value: Sym, node: ir.Expr) -> z3.BoolRef:
    value, ok = _unwrap(value)
    if _is_z3(value) and z3.is_bool(value):
        return conj(ok, value)
    return FALSE


def _unwrap(value: Sym) -> tuple[Sym, z3.BoolRef]:
    """The value where it is used as a non-null value, and the condition that it is not null."""
    if isinstance(value, Opt):
        return value.val, z3.Not(value.is_null)
    if value is NULL:
        return NULL, FALSE
    return value, TRUE


def _is_arith(value: Sym) -> bool:
    return _is_z3(value) and z3.is_arith(value)


def _same_arith(a: Any, b: Any) -> tuple[Any, Any]:
    if z3.is_int(a) and z3.is_real(b):
        return z3.ToReal(a), b
    if z3.is_real(a) and z3.is_int(b):
        return a, z3.ToReal(b)
    return a, b


def field(obj: Sym, name: str, node: ir.Expr) -> Encoded:
    obj, ok = _unwrap(obj)
    if isinstance(obj, Rec):
        return obj.fields.get(name, NULL), ok
    if obj is NULL:
        return NULL, FALSE
    raise _unsupported(f"field .{name} of a non-record", node)


def lookup(coll: SMap, key: Sym, node: ir.Expr) -> Encoded:
    key, ok = _unwrap(key)
    if not coll.slots:
        return NULL, FALSE
    hits = [conj(s.present, equal(s.key, key, node)) for s in coll.slots]
    value = coll.slots[-1].value
    for slot, hit in zip(reversed(coll.slots[:-1]), reversed(hits[:-1]), strict=True):
        value = ite(hit, slot.value, value, node)
    return value, conj(ok, disj(*hits))


def member(item: Sym, container: Sym, node: ir.Expr) -> Encoded:
    container, ok = _unwrap(container)
    _no_opaque(container)
    if isinstance(container, Rec) and isinstance(item, AStr):
        raise NeedStrings("'in' on a record's field names")
    _no_astr(container)
    if isinstance(container, SMap):
        return disj(*(conj(s.present, equal(s.key, item, node)) for s in container.slots)), ok
    if isinstance(container, SList):
        return disj(*(equal(item, v, node) for v in container.items)), ok
    if isinstance(container, Rec):
        if isinstance(item, z3.SeqRef) and z3.is_string_value(item):
            name = item.as_string()
            present = container.fields.get(name)
            if present is None:
                return FALSE, ok
            if name in container.optional and isinstance(present, Opt):
                return z3.Not(present.is_null), ok
            return TRUE, ok
        raise _unsupported("'in' on a record with a computed field name", node)
    if _is_z3(container) and z3.is_string(container):
        item, ok2 = _unwrap(item)
        if _is_z3(item) and z3.is_string(item):
            return z3.Contains(container, item), conj(ok, ok2)
        return FALSE, FALSE
    return FALSE, FALSE


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
        _no_opaque(a, b)
        return FALSE
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        if isinstance(a, Opaque) and isinstance(b, Opaque):
            return a.handle == b.handle
        raise _unsupported("comparing a list or an untyped value", node)
    if isinstance(a, Rec) and isinstance(b, Rec):
        names = set(a.fields) | set(b.fields)
        return conj(*(equal(a.fields.get(n, NULL), b.fields.get(n, NULL), node) for n in sorted(names)))
    if isinstance(a, SList) and isinstance(b, SList):
        if len(a.items) != len(b.items):
            return FALSE
        return conj(*(equal(x, y, node) for x, y in zip(a.items, b.items, strict=True)))
    if _is_z3(a) and _is_z3(b):
        if z3.is_arith(a) and z3.is_arith(b):
            x, y = _same_arith(a, b)
            return x == y
        if a.sort() == b.sort():
            return a == b
        return FALSE
    if isinstance(a, SMap) or isinstance(b, SMap):
        raise _unsupported("comparing whole collections", node)
    return FALSE


def ite(c: z3.BoolRef, a: Sym, b: Sym, node: ir.Expr | None = None) -> Sym:
    """``a if c else b`` over symbolic values of compatible shapes."""
    if c is TRUE:
        return a
    if c is FALSE:
        return b
    if _is_z3(a) and _is_z3(b):
        if z3.is_arith(a) and z3.is_arith(b):
            a, b = _same_arith(a, b)
        if a.sort() == b.sort():
            return z3.If(c, a, b)
        raise _unsupported("a conditional whose branches have different types", node)
    if a is NULL and b is NULL:
        return NULL
    if isinstance(a, AStr) and isinstance(b, AStr):
        return AStr(z3.If(c, a.id, b.id))
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return Opaque(a.kind, z3.If(c, a.handle, b.handle))
    if isinstance(a, Opt | _NullSym) or isinstance(b, Opt | _NullSym):
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
    raise _unsupported("a conditional over values of different shapes", node)


def _as_opt(value: Sym, other: Sym) -> Opt:
    if isinstance(value, Opt):
        return value
    if value is NULL:
        shape = other.val if isinstance(other, Opt) else other
        return Opt(TRUE, default_like(shape))
    return Opt(FALSE, value)


def default_like(shape: Sym) -> Sym:
    """Some value of the same shape (the content of a null, never read)."""
    if _is_z3(shape):
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
    raise _unsupported("a null of this shape")


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
        raise _unsupported(f"a value of another type written to {where}")
    if isinstance(shape, Rec):
        value, _ = _unwrap(value) if isinstance(value, Opt) else (value, TRUE)
        if not isinstance(value, Rec):
            raise _unsupported(f"a non-record written to the record {where}")
        return Rec(
            {n: coerce(value.fields.get(n, NULL), s, f"{where}.{n}") for n, s in shape.fields.items()},
            shape.optional,
        )
    if _is_z3(shape):
        inner = value.val if isinstance(value, Opt) else value
        if _is_z3(inner):
            if z3.is_real(shape) and z3.is_int(inner):
                return z3.ToReal(inner)
            if inner.sort() == shape.sort():
                return inner
        raise _unsupported(f"a value of another type written to {where}")
    raise _unsupported(f"a write to {where}")


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
    if _is_z3(a) and _is_z3(b):
        return a == b
    raise _unsupported("frame of values of different shapes")


# ------------------------------------------------------------------------------- states


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
                key = fresh._plain(f"{tag}.{name}#{i}.key", var.key_type, None, None)
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


# -------------------------------------------------------------------------- the transition


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
                raise _unsupported(f"{op.name} reads an output that has no schema")
        else:
            output = fresh.value(f"{tag}.out", op.output_type, op.output_schema)
    return StepVars(value, output, conj(*fresh.constraints), conj(*fresh.cosmetic), tuple(fresh.strings))


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
        if abstract is None:
            abstract = self._abstract_fits(extra)
        self.abstract = abstract
        self.encoder = Encoder(abstract)

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
        ensures = conj(*(self.encoder.holds(c.expr, env) for c in op.ensures))
        return conj(io.constraints, guard, defined, frame, ensures)

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
        raise _unsupported(f"{where}: {target.var} is not a collection")
    key, key_ok = _unwrap(key) if isinstance(key, Opt) else (key, TRUE)
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
                ite(take, key, s.key) if _is_z3(key) or isinstance(key, AStr) else s.key,
                ite(write, record, s.value),
            )
        )
        earlier_full = conj(earlier_full, s.present)
    room = disj(exists, z3.Not(earlier_full))
    return SMap(tuple(new_slots)), conj(key_ok, room)


def _set_path(record: Sym, fields: tuple[str, ...], value: Sym, where: str) -> Sym:
    record, _ = _unwrap(record) if isinstance(record, Opt) else (record, TRUE)
    if not isinstance(record, Rec):
        raise _unsupported(f"{where}: setting a field of a non-record")
    head, *rest = fields
    if head not in record.fields:
        raise _unsupported(f"{where}: the record has no declared field {head!r}")
    current = record.fields[head]
    new = _set_path(current, tuple(rest), value, where) if rest else coerce(value, current, where)
    updated = dict(record.fields)
    updated[head] = new
    return Rec(updated, record.optional)


# ------------------------------------------------------------------------------- models


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
            if z3.is_true(m.eval(sym.is_null, model_completion=True)):
                return None
            return self.value(sym.val)
        if isinstance(sym, Rec):
            out: dict[str, Any] = {}
            for name, fv in sym.fields.items():
                if (
                    name in sym.optional
                    and isinstance(fv, Opt)
                    and z3.is_true(m.eval(fv.is_null, model_completion=True))
                ):
                    continue
                out[name] = self.value(fv)
            return out
        if isinstance(sym, Opaque):
            return [] if sym.kind == "list" else None
        if isinstance(sym, AStr):
            ident = m.eval(sym.id, model_completion=True).as_long()
            if ident in self.strings:
                return self.strings[ident]
            return _BY_ID.get(ident, f"s{ident}")
        if isinstance(sym, SList):
            return [self.value(v) for v in sym.items]
        if isinstance(sym, SMap):
            entries: dict[Any, Any] = {}
            for slot in sym.slots:
                if z3.is_true(m.eval(slot.present, model_completion=True)):
                    entries[self.value(slot.key)] = self.value(slot.value)
            return entries
        v = m.eval(sym, model_completion=True)
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
        return bool(z3.is_true(self.model.eval(formula, model_completion=True)))

    def state(self, state: SymState) -> dict[str, Any]:
        return {name: self.value(sym) for name, sym in state.values.items()}


__all__ = [
    "NULL",
    "AStr",
    "Encoder",
    "Env",
    "Fresh",
    "Model",
    "NeedStrings",
    "Opaque",
    "Opt",
    "Rec",
    "SList",
    "SMap",
    "Slot",
    "StepVars",
    "SymState",
    "Transition",
    "concretize_strings",
    "conj",
    "const",
    "disj",
    "equal",
    "fresh_state",
    "initial_constraint",
    "literal_id",
    "regex",
    "slots_needed",
    "step_vars",
]


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


def concretize_strings(
    model: z3.ModelRef, specs: Iterable[tuple[AStr, Any]], timeout: float = 5.0
) -> dict[int, str]:
    """Concrete texts for the abstract strings of a model: one per identity, each satisfying
    the schema of every variable holding it (length, pattern), printable, different from each
    other and from every literal. Identities it cannot fill are left out (``Model`` then writes
    ``s<id>``, which the concrete re-check judges)."""
    groups: dict[int, list[Any]] = {}
    for sym, schema in specs:
        ident = model.eval(sym.id, model_completion=True).as_long()
        if ident in _BY_ID:
            continue
        groups.setdefault(ident, []).append(schema)
    if not groups:
        return {}
    texts = {ident: z3.String(f"text{ident}") for ident in groups}
    literals = [z3.StringVal(t) for t in _LITERALS]
    # first ask for plain words (a-z), then for any printable text
    for alphabet in (z3.Plus(z3.Range("a", "z")), PRINTABLE):
        solver = z3.Solver()
        solver.set("timeout", max(1, int(timeout * 500)))
        for ident, schemas in groups.items():
            var = texts[ident]
            patterned = False
            for schema in schemas:
                solver.add(*_string_bounds(var, schema))
                patterned = patterned or (isinstance(schema, Mapping) and "pattern" in schema)
            if not patterned:
                solver.add(z3.InRe(var, alphabet), z3.Length(var) <= 12)
            solver.add(*(var != lit for lit in literals))
        if len(texts) > 1:
            solver.add(z3.Distinct(*texts.values()))
        if solver.check() == z3.sat:
            found = solver.model()
            return {ident: found.eval(var, model_completion=True).as_string() for ident, var in texts.items()}
    return {}
