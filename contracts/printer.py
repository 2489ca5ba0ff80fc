"""The pretty-printer: IR back to the expression language's own text, minimally parenthesised.

Used in reports (the sub-expressions whose values broke a clause) and to round-trip the parser in
tests: ``parse(to_source(e)) == e`` for every well-formed tree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from envfactory.contracts import ir

# Binding strength, loosest first (Python's own table).
_IFEXP = 1
_OR = 2
_AND = 3
_NOT = 4
_CMP = 5
_ADD = 6
_MUL = 7
_UNARY = 8
_POSTFIX = 9
_ATOM = 10

_BINOP_PREC = {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "//": _MUL, "%": _MUL}


def const_source(value: Any) -> str:
    """A literal as the language spells it (``null``, ``true``, JSON-quoted strings)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def precedence(node: ir.Expr) -> int:
    """How tightly a node binds, to decide where parentheses are needed."""
    match node:
        case ir.IfExp():
            return _IFEXP
        case ir.BoolOp(op="or"):
            return _OR
        case ir.BoolOp():
            return _AND
        case ir.Unary(op="not"):
            return _NOT
        case ir.Compare():
            return _CMP
        case ir.BinOp(op=op):
            return _BINOP_PREC[op]
        case ir.Unary():
            return _UNARY
        case ir.Attr() | ir.Index() | ir.Call():
            return _POSTFIX
        case ir.Const(value=value) if (
            isinstance(value, int | float) and not isinstance(value, bool) and value < 0
        ):
            return _UNARY
    return _ATOM


def _wrap(node: ir.Expr, minimum: int) -> str:
    text = to_source(node)
    return f"({text})" if precedence(node) < minimum else text


def _const(node: ir.Const) -> str:
    return const_source(node.value)


def _list(node: ir.ListLit) -> str:
    return "[" + ", ".join(to_source(i) for i in node.items) + "]"


def _record(node: ir.RecordLit) -> str:
    pairs = (f"{json.dumps(k)}: {to_source(v)}" for k, v in zip(node.keys, node.values, strict=True))
    return "{" + ", ".join(pairs) + "}"


def _name(node: ir.Name) -> str:
    return node.id


def _attr(node: ir.Attr) -> str:
    return f"{_wrap(node.obj, _POSTFIX)}.{node.name}"


def _index(node: ir.Index) -> str:
    return f"{_wrap(node.obj, _POSTFIX)}[{to_source(node.key)}]"


def _unary(node: ir.Unary) -> str:
    if node.op == "not":
        # ``not (x in c)``, not ``not x in c``: the same tree, but nobody has to recall precedence.
        if isinstance(node.operand, ir.Compare):
            return f"not ({to_source(node.operand)})"
        return f"not {_wrap(node.operand, _NOT)}"
    return f"{node.op}{_wrap(node.operand, _UNARY)}"


def _binop(node: ir.BinOp) -> str:
    prec = _BINOP_PREC[node.op]
    # Left-associative: the right operand needs parentheses at equal precedence.
    return f"{_wrap(node.left, prec)} {node.op} {_wrap(node.right, prec + 1)}"


def _compare(node: ir.Compare) -> str:
    return f"{_wrap(node.left, _CMP + 1)} {node.op} {_wrap(node.right, _CMP + 1)}"


def _boolop(node: ir.BoolOp) -> str:
    prec = _OR if node.op == "or" else _AND
    return f" {node.op} ".join(_wrap(o, prec + 1) for o in node.operands)


def _ifexp(node: ir.IfExp) -> str:
    return (
        f"{_wrap(node.body, _IFEXP + 1)} if {_wrap(node.test, _IFEXP + 1)} else {_wrap(node.orelse, _IFEXP)}"
    )


def _call(node: ir.Call) -> str:
    if node.func in ("startswith", "endswith"):
        subject, arg = node.args
        return f"{_wrap(subject, _POSTFIX)}.{node.func}({to_source(arg)})"
    return f"{node.func}(" + ", ".join(to_source(a) for a in node.args) + ")"


def _quant(node: ir.Quant) -> str:
    cond = f" if {_wrap(node.cond, _IFEXP + 1)}" if node.cond is not None else ""
    body = _wrap(node.body, _IFEXP + 1)
    return f"{node.kind}({body} for {node.var} in {_wrap(node.domain, _IFEXP + 1)}{cond})"


_PRINTERS: dict[type[ir.Expr], Callable[[Any], str]] = {
    ir.Const: _const,
    ir.ListLit: _list,
    ir.RecordLit: _record,
    ir.Name: _name,
    ir.Attr: _attr,
    ir.Index: _index,
    ir.Unary: _unary,
    ir.BinOp: _binop,
    ir.Compare: _compare,
    ir.BoolOp: _boolop,
    ir.IfExp: _ifexp,
    ir.Call: _call,
    ir.Quant: _quant,
}


def to_source(node: ir.Expr) -> str:
    """The expression as text in the language's own syntax."""
    return _PRINTERS[type(node)](node)


def covers() -> frozenset[type[ir.Expr]]:
    """Node types this interpreter handles (checked against ``ir.NODE_TYPES`` in tests)."""
    return frozenset(_PRINTERS)
