"""The reference interpreter: walks the IR node by node.

Slower than the compiled closures of ``evaluator`` but simple enough to trust, so it serves as the
oracle in differential tests, as the baseline in ``bench/bench_evaluator.py``, and to explain a
failed clause: ``explain`` records the value of every sub-expression it evaluated.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts import values as V
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.printer import to_source

Trace = list[tuple[ir.Expr, Any]]

_INT_OPS: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Interpreter:
    """Evaluates nodes against an ``Env``; with ``trace`` set, records (node, value) pairs."""

    _methods: dict[type[ir.Expr], Callable[[Any, ir.Expr, Env], Any]] = {}  # filled below the class

    def __init__(self, trace: Trace | None = None) -> None:
        self.trace = trace

    def eval(self, node: ir.Expr, env: Env) -> Any:
        value = self._methods[type(node)](self, node, env)
        if self.trace is not None:
            self.trace.append((node, value))
        return value

    def _Const(self, node: ir.Const, env: Env) -> Any:
        return node.value

    def _ListLit(self, node: ir.ListLit, env: Env) -> Any:
        return [self.eval(i, env) for i in node.items]

    def _RecordLit(self, node: ir.RecordLit, env: Env) -> Any:
        return {k: self.eval(v, env) for k, v in zip(node.keys, node.values, strict=True)}

    def _Name(self, node: ir.Name, env: Env) -> Any:
        if node.id in env.locals:
            return env.locals[node.id]
        if node.id == "input":
            return env.input
        if node.id == "output":
            return env.output
        try:
            return env.state[node.id]
        except KeyError:
            raise EvaluationError.unset(node.id) from None

    def _Attr(self, node: ir.Attr, env: Env) -> Any:
        value = self.eval(node.obj, env)
        if value.__class__ is dict:
            return value.get(node.name)
        return V.get_field(value, node.name, to_source(node.obj))

    def _Index(self, node: ir.Index, env: Env) -> Any:
        container = self.eval(node.obj, env)
        key = self.eval(node.key, env)
        return V.get_item(container, key, to_source(node.obj))

    def _Unary(self, node: ir.Unary, env: Env) -> Any:
        value = self.eval(node.operand, env)
        if node.op == "not":
            return not V.truth(value, to_source(node.operand))
        if not V.is_number(value):
            raise EvaluationError(
                f"unary {node.op} needs a number, but {to_source(node.operand)} is {V.type_name(value)}"
            )
        return -value if node.op == "-" else value

    def _BinOp(self, node: ir.BinOp, env: Env) -> Any:
        a = self.eval(node.left, env)
        b = self.eval(node.right, env)
        if a.__class__ is int and b.__class__ is int and node.op in _INT_OPS:
            return _INT_OPS[node.op](a, b)
        return V.arith(node.op, a, b, to_source(node.left), to_source(node.right))

    def _Compare(self, node: ir.Compare, env: Env) -> Any:
        a = self.eval(node.left, env)
        b = self.eval(node.right, env)
        if node.op == "==":
            return V.strict_eq(a, b)
        if node.op == "!=":
            return not V.strict_eq(a, b)
        if node.op in ("in", "not in"):
            if b.__class__ is V.PersistentMap and a.__class__ in (int, str):
                found = a in b
            else:
                found = V.contains(b, a, to_source(node.right))
            return found if node.op == "in" else not found
        if a.__class__ is int and b.__class__ is int:
            return _ORDER[node.op](a, b)
        return V.order(node.op, a, b, to_source(node.left), to_source(node.right))

    def _truth(self, node: ir.Expr, env: Env) -> bool:
        value = self.eval(node, env)
        if value is True or value is False:
            return value
        return V.truth(value, to_source(node))

    def _BoolOp(self, node: ir.BoolOp, env: Env) -> Any:
        stop = node.op == "or"
        for operand in node.operands:
            if self._truth(operand, env) is stop:
                return stop
        return not stop

    def _IfExp(self, node: ir.IfExp, env: Env) -> Any:
        if self._truth(node.test, env):
            return self.eval(node.body, env)
        return self.eval(node.orelse, env)

    def _Call(self, node: ir.Call, env: Env) -> Any:
        sources = [to_source(a) for a in node.args]
        if node.func == "implies":
            if not V.truth(self.eval(node.args[0], env), sources[0]):
                return True
            return V.truth(self.eval(node.args[1], env), sources[1])
        args = [self.eval(a, env) for a in node.args]
        if node.func == "len":
            return V.length(args[0], sources[0])
        if node.func == "values":
            if not isinstance(args[0], V.FrozenMap):
                raise EvaluationError(
                    f"values() needs a collection, but {sources[0]} is {V.type_name(args[0])}"
                )
            return list(args[0].values())
        if node.func in ("abs", "min", "max"):
            for value, src in zip(args, sources, strict=True):
                if not V.is_number(value):
                    raise EvaluationError(f"{node.func}() needs numbers, but {src} is {V.type_name(value)}")
            if node.func == "abs":
                return abs(args[0])
            return min(args) if node.func == "min" else max(args)
        s, p = args
        if not isinstance(s, str) or not isinstance(p, str):
            raise EvaluationError(
                f"{node.func}() works on strings, got {V.type_name(s)} and {V.type_name(p)}"
            )
        return s.startswith(p) if node.func == "startswith" else s.endswith(p)

    def _Quant(self, node: ir.Quant, env: Env) -> Any:
        domain = self.eval(node.domain, env)
        items = (
            list(domain.keys())
            if domain.__class__ is V.PersistentMap
            else V.iterate(domain, to_source(node.domain))
        )
        missing = object()
        saved = env.locals.get(node.var, missing)
        total: Any = 0
        try:
            for item in items:
                env.locals[node.var] = item
                if node.cond is not None and not self._truth(node.cond, env):
                    continue
                if node.kind == "sum":
                    value = self.eval(node.body, env)
                    if not V.is_number(value):
                        raise EvaluationError(
                            f"sum() adds numbers, but {to_source(node.body)} is {V.type_name(value)}"
                        )
                    total += value
                elif node.kind == "all" and not self._truth(node.body, env):
                    return False
                elif node.kind == "any" and self._truth(node.body, env):
                    return True
        finally:
            if saved is missing:
                env.locals.pop(node.var, None)
            else:
                env.locals[node.var] = saved
        return total if node.kind == "sum" else node.kind == "all"


Interpreter._methods.update({t: getattr(Interpreter, "_" + t.__name__) for t in ir.NODE_TYPES})
"""One dispatch table for every interpreter (explanations make one per clause)."""


def evaluate(node: ir.Expr, env: Env) -> Any:
    """Evaluate by walking the tree (the reference semantics). One interpreter serves every call:
    without a trace it holds no state, and building its dispatch table cost more than a small
    clause's walk (explanations evaluate many)."""
    return _REFERENCE.eval(node, env)


_REFERENCE = Interpreter()


def explain(node: ir.Expr, env: Env, limit: int = 12) -> tuple[dict[str, Any], str | None]:
    """The values of a clause's sub-expressions, and the reason if the clause is undefined.

    Returns ``({source text: JSON value}, error or None)``: constants and bound variables are left
    out, and at most ``limit`` entries are kept, innermost first, so reports stay short.
    """
    trace: Trace = []
    reason: str | None = None
    try:
        Interpreter(trace).eval(node, env)
    except EvaluationError as err:
        reason = err.message
    values: dict[str, Any] = {}
    for sub, value in trace:
        if isinstance(sub, ir.Const | ir.ListLit | ir.RecordLit) or sub is node:
            continue
        if isinstance(sub, ir.Name) and sub.id in ("input", "output"):
            continue
        if isinstance(sub, ir.Quant | ir.BoolOp):
            continue
        text = to_source(sub)
        if text not in values:
            values[text] = V.to_json(value)
    if len(values) > limit:
        values = dict(list(values.items())[:limit])
    return values, reason


def covers() -> frozenset[type[ir.Expr]]:
    """Node types this interpreter handles (checked against ``ir.NODE_TYPES`` in tests)."""
    return frozenset(t for t in ir.NODE_TYPES if hasattr(Interpreter, "_" + t.__name__))
