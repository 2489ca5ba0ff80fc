"""The expression IR read over ``domain`` values: the encoder of the graph, BMC and k-induction.

``Encoder.encode(node, env)`` has one method per node type (``_Const`` ... ``_Quant``) and
returns the value and the condition under which it is *defined* (a read of a missing key, a
field of null, a division by zero are undefined; a clause holds only where it is defined and
true, as in ``contracts.semantics``). Inside quantifiers over a collection, ``c[k]`` for the
bound ``k`` is the slot itself (linear, not quadratic, in K). In the abstract string reading an
operation on a string beyond equality raises ``NeedStrings``, so ``transition.Transition`` falls
back to Z3's string theory.

``solver.encode`` is the feasibility engine's reading of the same IR, over ``solver.symbolic``
values (mostly known, folded in Python); this one is fully symbolic. Imports the contracts
layer, Z3 and ``solver.domain``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.printer import to_source
from envfactory.solver.domain import (
    FALSE,
    NULL,
    TRUE,
    AStr,
    NeedStrings,
    Opt,
    Rec,
    SList,
    Slot,
    SMap,
    Sym,
    conj,
    const,
    disj,
    equal,
    implies,
    is_arith,
    is_z3,
    ite,
    no_astr,
    no_opaque,
    same_arith,
    unsupported,
    unwrap,
)


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
            raise unsupported(type(node).__name__, node)
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
                raise unsupported("input read where there is none", node)
            return env.input, TRUE
        if name == "output":
            if env.output is None:
                raise unsupported("output read where there is none", node)
            return env.output, TRUE
        if name in env.state:
            return env.state[name], TRUE
        raise unsupported(f"unknown name {name!r}", node)

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
        raise unsupported(f"indexing {to_source(node.obj)}", node)

    # -- operators -----------------------------------------------------------------------------

    def _Unary(self, node: ir.Unary, env: Env) -> Encoded:
        value, defined = self.encode(node.operand, env)
        value, ok = unwrap(value)
        if node.op == "not":
            if not z3.is_bool(value):
                return TRUE, FALSE
            return z3.Not(value), conj(defined, ok)
        if not is_arith(value):
            return z3.IntVal(0), FALSE
        return (-value if node.op == "-" else value), conj(defined, ok)

    def _BinOp(self, node: ir.BinOp, env: Env) -> Encoded:
        left, d1 = self.encode(node.left, env)
        right, d2 = self.encode(node.right, env)
        a, ok1 = unwrap(left)
        b, ok2 = unwrap(right)
        no_astr(a, b)
        defined = conj(d1, d2, ok1, ok2)
        op = node.op
        if op == "+" and is_z3(a) and is_z3(b) and z3.is_string(a) and z3.is_string(b):
            return z3.Concat(a, b), defined
        if op == "+" and isinstance(a, SList) and isinstance(b, SList):
            return SList(a.items + b.items), defined
        if not (is_arith(a) and is_arith(b)):
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
            raise unsupported(f"{op} on numbers that are not integers", node)
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
        a, ok1 = unwrap(left)
        b, ok2 = unwrap(right)
        no_astr(a, b)
        defined = conj(d1, d2, ok1, ok2)
        if is_arith(a) and is_arith(b):
            a, b = same_arith(a, b)
            rel = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
            return rel, defined
        if is_z3(a) and is_z3(b) and z3.is_string(a) and z3.is_string(b):
            # Z3's str.< / str.<= (the operators of its strings): code point order, as Python's
            rel = {"<": a < b, "<=": a <= b, ">": b < a, ">=": b <= a}[op]
            return rel, defined
        return FALSE, FALSE

    def _BoolOp(self, node: ir.BoolOp, env: Env) -> Encoded:
        # short-circuit: operand i is only evaluated when the ones before let it be reached
        values: list[z3.BoolRef] = []
        defined: z3.BoolRef = TRUE
        reach: z3.BoolRef = TRUE
        for operand in node.operands:
            value, d = self.encode(operand, env)
            value, ok = unwrap(value)
            if not z3.is_bool(value):
                value, ok = FALSE, FALSE
            defined = conj(defined, implies(reach, conj(d, ok)))
            values.append(value)
            reach = conj(reach, value) if node.op == "and" else conj(reach, z3.Not(value))
        result = z3.And(*values) if node.op == "and" else z3.Or(*values)
        return result, defined

    def _IfExp(self, node: ir.IfExp, env: Env) -> Encoded:
        test, dt = self.encode(node.test, env)
        test, ok = unwrap(test)
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
            a, oka = unwrap(a)
            b, okb = unwrap(b)
            if not (z3.is_bool(a) and z3.is_bool(b)):
                return FALSE, FALSE
            return z3.Implies(a, b), conj(da, oka, implies(a, conj(db, okb)))
        args = [self.encode(a, env) for a in node.args]
        defined = conj(*(d for _, d in args))
        values = [a for a, _ in args]
        if func == "len":
            (v,) = values
            v, ok = unwrap(v)
            no_astr(v)
            if isinstance(v, SMap):
                return z3.Sum([z3.If(s.present, 1, 0) for s in v.slots]) if v.slots else z3.IntVal(0), conj(
                    defined, ok
                )
            if isinstance(v, SList):
                return z3.IntVal(len(v.items)), conj(defined, ok)
            if isinstance(v, Rec):
                return z3.IntVal(len(v.fields)), conj(defined, ok)
            if is_z3(v) and z3.is_string(v):
                return z3.Length(v), conj(defined, ok)
            return z3.IntVal(0), FALSE
        unwrapped = [unwrap(v) for v in values]
        defined = conj(defined, *(ok for _, ok in unwrapped))
        vals = [v for v, _ in unwrapped]
        no_astr(*vals)
        if func in ("abs", "min", "max"):
            if not all(is_arith(v) for v in vals):
                return z3.IntVal(0), FALSE
            if func == "abs":
                return z3.If(vals[0] >= 0, vals[0], -vals[0]), defined
            a, b = same_arith(vals[0], vals[1])
            return (z3.If(a <= b, a, b) if func == "min" else z3.If(a >= b, a, b)), defined
        if func in ("startswith", "endswith"):
            s, p = vals
            if not (is_z3(s) and is_z3(p) and z3.is_string(s) and z3.is_string(p)):
                return FALSE, FALSE
            return (z3.PrefixOf(p, s) if func == "startswith" else z3.SuffixOf(p, s)), defined
        raise unsupported(f"{func}()", node)

    def _Quant(self, node: ir.Quant, env: Env) -> Encoded:
        domain, dd = self.encode(node.domain, env)
        domain, ok = unwrap(domain)
        if isinstance(domain, SMap):
            items = [(s.present, s.key) for s in domain.slots]
        elif isinstance(domain, SList):
            items = [(TRUE, v) for v in domain.items]
        else:
            raise unsupported(f"{node.kind}() over {to_source(node.domain)}", node)
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
                    cond, okc = unwrap(cond)
                    defined = conj(defined, implies(present, conj(dc, okc)))
                    guard = conj(present, cond)
                body, db = self.encode(node.body, env)
                body, okb = unwrap(body)
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
        if not all(is_arith(b) for _, b in terms):
            return z3.IntVal(0), FALSE
        return z3.Sum([z3.If(g, b, 0) for g, b in terms]), defined


def _truth(value: Sym, node: ir.Expr) -> z3.BoolRef:
    value, ok = unwrap(value)
    if is_z3(value) and z3.is_bool(value):
        return conj(ok, value)
    return FALSE


def field(obj: Sym, name: str, node: ir.Expr) -> Encoded:
    obj, ok = unwrap(obj)
    if isinstance(obj, Rec):
        return obj.fields.get(name, NULL), ok
    if obj is NULL:
        return NULL, FALSE
    raise unsupported(f"field .{name} of a non-record", node)


def lookup(coll: SMap, key: Sym, node: ir.Expr) -> Encoded:
    key, ok = unwrap(key)
    if not coll.slots:
        return NULL, FALSE
    hits = [conj(s.present, equal(s.key, key, node)) for s in coll.slots]
    value = coll.slots[-1].value
    for slot, hit in zip(reversed(coll.slots[:-1]), reversed(hits[:-1]), strict=True):
        value = ite(hit, slot.value, value, node)
    return value, conj(ok, disj(*hits))


def member(item: Sym, container: Sym, node: ir.Expr) -> Encoded:
    container, ok = unwrap(container)
    no_opaque(container)
    if isinstance(container, Rec) and isinstance(item, AStr):
        raise NeedStrings("'in' on a record's field names")
    no_astr(container)
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
        raise unsupported("'in' on a record with a computed field name", node)
    if is_z3(container) and z3.is_string(container):
        item, ok2 = unwrap(item)
        if is_z3(item) and z3.is_string(item):
            return z3.Contains(container, item), conj(ok, ok2)
        return FALSE, FALSE
    return FALSE, FALSE


__all__ = [
    "Encoded",
    "Encoder",
    "Env",
    "field",
    "lookup",
    "member",
]
