"""The concrete evaluator: IR compiled once into nested Python closures.

No ``eval``, no ``exec``, no code generation: each node becomes a closure over its children's
closures, so evaluating a clause is a handful of Python calls. Semantics are those of
``envfactory.contracts.values``; the tree-walking ``interpreter`` is the reference it is tested
against and the one that explains failures (sub-expression values, the exact undefined read).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts import values as V
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.printer import to_source


class Env:
    """What an expression reads: the state, the call's input and output, and bound variables."""

    __slots__ = ("input", "locals", "output", "state")

    def __init__(self, state: Mapping[str, Any], input: Any = None, output: Any = None) -> None:
        self.state = state
        self.input = input
        self.output = output
        self.locals: dict[str, Any] = {}


Compiled = Callable[[Env], Any]


class _Compiler:
    def __init__(self) -> None:
        self.bound: list[str] = []

    def compile(self, node: ir.Expr) -> Compiled:
        method: Callable[[Any], Compiled] = getattr(self, "_" + type(node).__name__)
        return method(node)

    def _Const(self, node: ir.Const) -> Compiled:
        value = node.value
        return lambda env: value

    def _ListLit(self, node: ir.ListLit) -> Compiled:
        items = [self.compile(i) for i in node.items]
        return lambda env: [f(env) for f in items]

    def _RecordLit(self, node: ir.RecordLit) -> Compiled:
        pairs = [(k, self.compile(v)) for k, v in zip(node.keys, node.values, strict=True)]
        return lambda env: {k: f(env) for k, f in pairs}

    def _Name(self, node: ir.Name) -> Compiled:
        name = node.id
        if name in self.bound:
            return lambda env: env.locals[name]
        if name == "input":
            return lambda env: env.input
        if name == "output":
            return lambda env: env.output

        def state(env: Env) -> Any:
            try:
                return env.state[name]
            except KeyError:
                raise EvaluationError.unset(name) from None

        return state

    def _Attr(self, node: ir.Attr) -> Compiled:
        name = node.name
        source = to_source(node.obj)
        if isinstance(node.obj, ir.Index):
            return self._field_of_item(node.obj, name, source)
        if (
            isinstance(node.obj, ir.Name)
            and node.obj.id in ("input", "output")
            and node.obj.id not in self.bound
        ):
            return self._call_field(node.obj.id, name, source)
        obj = self.compile(node.obj)

        def attr(env: Env) -> Any:
            value = obj(env)
            if value.__class__ is dict:
                return value.get(name)
            return V.get_field(value, name, source)

        return attr

    @staticmethod
    def _call_field(which: str, name: str, source: str) -> Compiled:
        """``input.f`` / ``output.f`` in one closure: the commonest reads of all."""
        if which == "input":

            def input_field(env: Env) -> Any:
                value = env.input
                if value.__class__ is dict:
                    return value.get(name)
                return V.get_field(value, name, source)

            return input_field

        def output_field(env: Env) -> Any:
            value = env.output
            if value.__class__ is dict:
                return value.get(name)
            return V.get_field(value, name, source)

        return output_field

    def _field_of_item(self, index: ir.Index, name: str, source: str) -> Compiled:
        """``c[k].f`` in one closure: the commonest shape in contracts. A state collection ``c``
        and a leaf key (``input.g``, a loop variable, a constant) are read inline, no calls."""
        container_source = to_source(index.obj)
        persistent = V.PersistentMap
        state_name = self._state_name(index.obj)
        container_fn = self.compile(index.obj) if state_name is None else None
        cname = state_name or ""
        kkind, kval = self._leaf(index.key)
        ksrc = to_source(index.key)
        if state_name is not None and kkind is _LOCAL:
            # state_collection[loop_var].field: the body of most quantifiers, read with no calls
            def field_in_loop(env: Env) -> Any:
                k = env.locals[kval]
                try:
                    record = env.state[cname][k]
                except (KeyError, TypeError):
                    if cname not in env.state:
                        raise EvaluationError.unset(cname) from None
                    record = V.get_item(env.state[cname], k, container_source)
                if record.__class__ is dict:
                    return record.get(name)
                return V.get_field(record, name, source)

            return field_in_loop

        def field_of_item(env: Env) -> Any:
            if container_fn is None:
                try:
                    container = env.state[cname]
                except KeyError:
                    raise EvaluationError.unset(cname) from None
            else:
                container = container_fn(env)
            if kkind is _INPUT_FIELD and env.input.__class__ is dict:
                k = env.input.get(kval)
            elif kkind is _LOCAL:
                k = env.locals[kval]
            elif kkind is _INPUT:
                k = env.input
            else:
                k = _read(kkind, kval, ksrc, env)
            if container.__class__ is persistent:
                try:
                    record = container[k]
                except (KeyError, TypeError):
                    raise V.missing_key(container_source, k) from None
            else:
                record = V.get_item(container, k, container_source)
            if record.__class__ is dict:
                return record.get(name)
            return V.get_field(record, name, source)

        return field_of_item

    def _state_name(self, node: ir.Expr) -> str | None:
        """The state variable ``node`` names, if it is one (not ``input``, ``output``, a loop variable)."""
        if isinstance(node, ir.Name) and node.id not in self.bound and node.id not in ("input", "output"):
            return node.id
        return None

    def _Index(self, node: ir.Index) -> Compiled:
        obj = self.compile(node.obj)
        key = self.compile(node.key)
        source = to_source(node.obj)
        get_item = V.get_item

        def index(env: Env) -> Any:
            container = obj(env)
            k = key(env)
            if container.__class__ is V.PersistentMap:
                try:
                    return container[k]
                except (KeyError, TypeError):
                    raise V.missing_key(source, k) from None
            return get_item(container, k, source)

        return index

    def _Unary(self, node: ir.Unary) -> Compiled:
        operand = self.compile(node.operand)
        source = to_source(node.operand)
        if node.op == "not":
            truth = V.truth

            def negate(env: Env) -> bool:
                value = operand(env)
                if value is True:
                    return False
                if value is False:
                    return True
                return not truth(value, source)

            return negate
        sign = -1 if node.op == "-" else 1

        def signed(env: Env) -> Any:
            value = operand(env)
            if not V.is_number(value):
                raise EvaluationError(f"unary {node.op} needs a number, but {source} is {V.type_name(value)}")
            return sign * value

        return signed

    def _BinOp(self, node: ir.BinOp) -> Compiled:
        left = self.compile(node.left)
        rkind, rval = self._leaf(node.right)
        right = rval if rkind is _FN else self.compile(node.right)
        op = node.op
        lsrc, rsrc = to_source(node.left), to_source(node.right)
        arith = V.arith
        fast: Callable[[Any, Any], Any] | None = {
            "+": operator.add,
            "-": operator.sub,
            "*": operator.mul,
        }.get(op)
        if fast is not None:

            def quick(env: Env) -> Any:
                a = left(env)
                if rkind is _CONST:
                    b = rval
                elif rkind is _INPUT_FIELD and env.input.__class__ is dict:
                    b = env.input.get(rval)
                else:
                    b = _read(rkind, rval, rsrc, env)
                if a.__class__ is int and b.__class__ is int:
                    return fast(a, b)
                return arith(op, a, b, lsrc, rsrc)

            return quick
        return lambda env: arith(op, left(env), right(env), lsrc, rsrc)

    def _leaf(self, node: ir.Expr) -> tuple[str, Any]:
        """How a parent reads an operand inline, saving a call: constants, loop variables, state
        variables and ``input.f`` / ``output.f`` are read in place (``_read``); anything else is
        a closure."""
        if isinstance(node, ir.Const):
            return (_CONST, node.value)
        if isinstance(node, ir.Name) and node.id in self.bound:
            return (_LOCAL, node.id)
        if isinstance(node, ir.Name) and node.id in ("input", "output"):
            return (_INPUT if node.id == "input" else _OUTPUT, None)
        if isinstance(node, ir.Name) and node.id not in self.bound:
            return (_STATE, node.id)
        if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name) and node.obj.id not in self.bound:
            if node.obj.id == "input":
                return (_INPUT_FIELD, node.name)
            if node.obj.id == "output":
                return (_OUTPUT_FIELD, node.name)
        return (_FN, self.compile(node))

    def _Compare(self, node: ir.Compare) -> Compiled:
        op = node.op
        if op in ("==", "!=", "<", "<=", ">", ">="):
            special = self._inline_compare(node)
            if special is not None:
                return special
        if op in ("in", "not in"):
            return self._member(node)
        left = self.compile(node.left)
        right = self.compile(node.right)
        lsrc, rsrc = to_source(node.left), to_source(node.right)
        if op in ("==", "!="):
            eq = V.strict_eq
            negated = op == "!="

            def equal(env: Env) -> bool:
                a = left(env)
                b = right(env)
                same = a == b if a.__class__ is b.__class__ else eq(a, b)
                return not same if negated else bool(same)

            return equal
        order = V.order
        fast = _OPERATORS[op]

        def compare(env: Env) -> bool:
            a = left(env)
            b = right(env)
            if a.__class__ is int and b.__class__ is int:
                return bool(fast(a, b))
            return order(op, a, b, lsrc, rsrc)

        return compare

    def _member(self, node: ir.Compare) -> Compiled:
        """``x in c`` / ``x not in c``, with ``x`` a leaf and ``c`` a state collection read inline."""
        ikind, ival = self._leaf(node.left)
        isrc, rsrc = to_source(node.left), to_source(node.right)
        state_name = self._state_name(node.right)
        container_fn = self.compile(node.right) if state_name is None else None
        cname = state_name or ""
        contains = V.contains
        negate = node.op == "not in"
        persistent = V.PersistentMap

        def member(env: Env) -> bool:
            if ikind is _INPUT_FIELD and env.input.__class__ is dict:
                item = env.input.get(ival)
            else:
                item = _read(ikind, ival, isrc, env)
            if container_fn is None:
                try:
                    container = env.state[cname]
                except KeyError:
                    raise EvaluationError.unset(cname) from None
            else:
                container = container_fn(env)
            if container.__class__ is persistent and (item.__class__ is str or item.__class__ is int):
                found = item in container
            else:
                found = contains(container, item, rsrc)
            return not found if negate else found

        return member

    def _inline_compare(self, node: ir.Compare) -> Compiled | None:
        """``e OP leaf`` (and mirrored): the leaf read in place, without a closure call."""
        lkind, lval = self._leaf(node.left)
        rkind, rval = self._leaf(node.right)
        if lkind is _FN and rkind is _FN:
            return None
        flipped = rkind is _FN
        kind, payload = (lkind, lval) if flipped else (rkind, rval)
        other_kind, other = (rkind, rval) if flipped else (lkind, lval)
        op = node.op
        lsrc, rsrc = to_source(node.left), to_source(node.right)
        if kind is _CONST and other_kind is _FN:
            special = (
                _equals_constant(other, payload, op == "!=")
                if op in ("==", "!=")
                else _ordered_constant(other, payload, op, flipped, lsrc, rsrc)
            )
            if special is not None:
                return special
        psrc = lsrc if flipped else rsrc
        osrc = rsrc if flipped else lsrc
        eq = V.strict_eq
        order = V.order
        fast = _OPERATORS[op]
        equality = op in ("==", "!=")

        def compare(env: Env) -> bool:
            if other_kind is _FN:
                x = other(env)
            elif other_kind is _INPUT:
                x = env.input
            else:
                x = _read(other_kind, other, osrc, env)
            if kind is _CONST:
                y = payload
            elif kind is _LOCAL:
                y = env.locals[payload]
            elif kind is _INPUT_FIELD and env.input.__class__ is dict:
                y = env.input.get(payload)
            elif kind is _OUTPUT_FIELD and env.output.__class__ is dict:
                y = env.output.get(payload)
            elif kind is _STATE and payload in env.state:
                y = env.state[payload]
            else:
                y = _read(kind, payload, psrc, env)
            a, b = (y, x) if flipped else (x, y)
            if a.__class__ is b.__class__ and (equality or a.__class__ is int or a.__class__ is str):
                return bool(fast(a, b))
            if equality:
                same = eq(a, b)
                return same if op == "==" else not same
            return order(op, a, b, lsrc, rsrc)

        return compare

    def _BoolOp(self, node: ir.BoolOp) -> Compiled:
        operands = [(self.compile(o), to_source(o)) for o in node.operands]
        truth = V.truth
        if node.op == "and" and len(operands) == 2:
            (first, fsrc), (second, ssrc) = operands

            def both(env: Env) -> bool:  # the commonest conjunction, without the loop
                value = first(env)
                if value is not True:
                    if value is False:
                        return False
                    truth(value, fsrc)
                value = second(env)
                if value is True or value is False:
                    return value
                return truth(value, ssrc)

            return both
        if node.op == "and":

            def conj(env: Env) -> bool:
                for f, src in operands:
                    value = f(env)
                    if value is False:
                        return False
                    if value is not True:
                        truth(value, src)
                return True

            return conj

        def disj(env: Env) -> bool:
            for f, src in operands:
                value = f(env)
                if value is True:
                    return True
                if value is not False:
                    truth(value, src)
            return False

        return disj

    def _IfExp(self, node: ir.IfExp) -> Compiled:
        test = self.compile(node.test)
        body = self.compile(node.body)
        orelse = self.compile(node.orelse)
        source = to_source(node.test)
        truth = V.truth
        return lambda env: body(env) if truth(test(env), source) else orelse(env)

    def _Call(self, node: ir.Call) -> Compiled:
        args = [self.compile(a) for a in node.args]
        sources = [to_source(a) for a in node.args]
        func = node.func
        if func == "len":
            (arg,) = args
            length = V.length
            return lambda env: length(arg(env), sources[0])
        if func == "values":
            (arg,) = args

            def records(env: Env) -> list[Any]:
                value = arg(env)
                if not isinstance(value, V.FrozenMap):
                    raise EvaluationError(
                        f"values() needs a collection, but {sources[0]} is {V.type_name(value)}"
                    )
                return list(value.values())

            return records
        if func == "implies":
            premise, conclusion = args
            truth = V.truth

            def implies(env: Env) -> bool:
                value = premise(env)
                if value is False or (value is not True and not truth(value, sources[0])):
                    return True
                value = conclusion(env)
                return value if value is True or value is False else truth(value, sources[1])

            return implies
        if func == "abs":
            (arg,) = args

            def absolute(env: Env) -> Any:
                value = arg(env)
                if not V.is_number(value):
                    raise EvaluationError(f"abs() needs a number, but {sources[0]} is {V.type_name(value)}")
                return abs(value)

            return absolute
        if func in ("min", "max"):
            first, second = args
            pick = min if func == "min" else max

            def extreme(env: Env) -> Any:
                a, b = first(env), second(env)
                for value, src in ((a, sources[0]), (b, sources[1])):
                    if not V.is_number(value):
                        raise EvaluationError(f"{func}() needs numbers, but {src} is {V.type_name(value)}")
                return pick(a, b)

            return extreme
        subject, affix = args
        method = str.startswith if func == "startswith" else str.endswith

        def affix_test(env: Env) -> bool:
            s, p = subject(env), affix(env)
            if not isinstance(s, str) or not isinstance(p, str):
                raise EvaluationError(f"{func}() works on strings, got {V.type_name(s)} and {V.type_name(p)}")
            return method(s, p)

        return affix_test

    def _Quant(self, node: ir.Quant) -> Compiled:
        domain = self.compile(node.domain)
        dsrc = to_source(node.domain)
        self.bound.append(node.var)
        try:
            body = self.compile(node.body)
            cond = self.compile(node.cond) if node.cond is not None else None
        finally:
            self.bound.pop()
        var = node.var
        csrc = to_source(node.cond) if node.cond is not None else ""
        bsrc = to_source(node.body)
        iterate, truth = V.iterate, V.truth
        persistent = V.PersistentMap

        def domain_items(env: Env) -> Any:
            value = domain(env)
            if value.__class__ is persistent:
                return value.keys()
            return iterate(value, dsrc)

        def restore(local: dict[str, Any], saved: Any) -> None:
            if saved is _UNBOUND:
                local.pop(var, None)
            else:
                local[var] = saved

        if node.kind == "sum":
            constant = (
                node.body.value if isinstance(node.body, ir.Const) and V.is_number(node.body.value) else None
            )

            def total(env: Env) -> Any:
                local = env.locals
                saved = local.get(var, _UNBOUND)
                try:
                    acc: Any = 0
                    for item in domain_items(env):
                        local[var] = item
                        if cond is not None:
                            keep = cond(env)
                            if keep is not True and (keep is False or not truth(keep, csrc)):
                                continue
                        value = constant if constant is not None else body(env)
                        if value.__class__ is not int and not V.is_number(value):
                            raise EvaluationError(f"sum() adds numbers, but {bsrc} is {V.type_name(value)}")
                        acc += value
                    return acc
                finally:
                    restore(local, saved)

            return total
        want = node.kind == "any"

        def quantify(env: Env) -> bool:
            local = env.locals
            saved = local.get(var, _UNBOUND)
            try:
                for item in domain_items(env):
                    local[var] = item
                    if cond is not None:
                        keep = cond(env)
                        if keep is not True and (keep is False or not truth(keep, csrc)):
                            continue
                    value = body(env)
                    if value is not True and value is not False:
                        value = truth(value, bsrc)
                    if value is want:
                        return want
                return not want
            finally:
                restore(local, saved)

        return quantify


def _equals_constant(read: Compiled, constant: Any, negated: bool) -> Compiled | None:
    """``e == null`` and ``e == "text"`` (or ``!=``, either side) with the operator inline.

    ``strict_eq`` against null is identity, and against a string is Python's ``==`` (which is
    false for every value of another type, booleans included), so neither needs the general
    path; other constants (numbers, where booleans must not equal 1) take it.
    """
    if constant is None:
        if negated:
            return lambda env: read(env) is not None
        return lambda env: read(env) is None
    if constant.__class__ is str:
        if negated:
            return lambda env: read(env) != constant
        return lambda env: read(env) == constant
    return None


def _ordered_constant(
    read: Compiled, constant: Any, op: str, flipped: bool, lsrc: str, rsrc: str
) -> Compiled | None:
    """``e < 0``, ``e >= "m"`` (either side): one type test, then the operator; any other type
    takes ``order``, which accepts mixed numbers and explains the rest."""
    cls = constant.__class__
    if cls is not int and cls is not str:
        return None
    fast = _OPERATORS[_MIRRORED[op] if flipped else op]  # ``0 < e`` is ``e > 0``
    order = V.order

    def ordered(env: Env) -> bool:
        value = read(env)
        if value.__class__ is cls:
            return fast(value, constant)
        if flipped:
            return order(op, constant, value, lsrc, rsrc)
        return order(op, value, constant, lsrc, rsrc)

    return ordered


_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

_UNBOUND = object()

_CONST, _LOCAL, _STATE, _INPUT, _OUTPUT, _INPUT_FIELD, _OUTPUT_FIELD, _FN = (
    "const",
    "local",
    "state",
    "input",
    "output",
    "input.f",
    "output.f",
    "fn",
)
"""How ``_Compiler._leaf`` says an operand is read (compared by identity in the closures)."""


def _read(kind: str, payload: Any, source: str, env: Env) -> Any:
    """The value of a leaf operand: the general path of the closures that read leaves inline."""
    if kind is _FN:
        return payload(env)
    if kind is _CONST:
        return payload
    if kind is _LOCAL:
        return env.locals[payload]
    if kind is _STATE:
        try:
            return env.state[payload]
        except KeyError:
            raise EvaluationError.unset(payload) from None
    if kind is _INPUT:
        return env.input
    if kind is _OUTPUT:
        return env.output
    value = env.input if kind is _INPUT_FIELD else env.output
    if value.__class__ is dict:
        return value.get(payload)
    return V.get_field(value, payload, "input" if kind is _INPUT_FIELD else "output")


def compile_expr(node: ir.Expr, bound: Sequence[str] = ()) -> Compiled:
    """Compile an expression to a closure ``f(env) -> value``; the names in ``bound`` are
    variables a quantifier around ``node`` binds (read from ``env.locals``).

    The closure raises ``EvaluationError`` where the value is undefined (a missing key, a null
    read); callers treat that as the failure of the clause.
    """
    compiler = _Compiler()
    compiler.bound.extend(bound)
    return compiler.compile(node)


def covers() -> frozenset[type[ir.Expr]]:
    """Node types this interpreter handles (checked against ``ir.NODE_TYPES`` in tests)."""
    return frozenset(t for t in ir.NODE_TYPES if hasattr(_Compiler, "_" + t.__name__))
