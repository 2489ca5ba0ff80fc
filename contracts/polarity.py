"""Which way an expression moves as one variable grows: the monotonicity behind cheap re-checks.

``all(t < next_id for t in tickets)`` read per key is ``t < next_id``: true stays true when
``next_id`` grows, so a step that only adds tickets and raises ``next_id`` keeps the invariant at
every ticket it did not write. ``polarity(body, "next_id")`` says so (+1). Truth values are ordered
``false < true``; numbers as numbers. The analysis is syntactic and conservative: ``None`` where it
cannot tell (``==``, ``*``, a field read through the variable, a call other than ``implies``).
Callers check at run time that the variable's values before and after are numbers and moved the
way the polarity allows. Imports nothing above ``contracts``.
"""

from __future__ import annotations

from collections.abc import Iterable

from envfactory.contracts import ir

Polarity = int | None
"""+1: grows (or stays) as the variable grows; -1: shrinks (or stays); 0: does not read it; None:
unknown."""

_INCREASING_RIGHT = {"<": True, "<=": True, ">": False, ">=": False}


def polarity(node: ir.Expr, name: str) -> Polarity:
    """How ``node`` moves as the variable ``name`` grows (see the module docstring)."""
    match node:
        case ir.Name(id=found):
            return 1 if found == name else 0
        case ir.Const():
            return 0
        case ir.Compare(op=op, left=left, right=right) if op in _INCREASING_RIGHT:
            if _INCREASING_RIGHT[op]:
                return _combine([_neg(polarity(left, name)), polarity(right, name)])
            return _combine([polarity(left, name), _neg(polarity(right, name))])
        case ir.BoolOp(operands=operands):  # and, or: monotone in every operand
            return _combine(polarity(o, name) for o in operands)
        case ir.Unary(op="not" | "-", operand=operand):
            return _neg(polarity(operand, name))
        case ir.Unary(op="+", operand=operand):
            return polarity(operand, name)
        case ir.BinOp(op="+", left=left, right=right):
            return _combine([polarity(left, name), polarity(right, name)])
        case ir.BinOp(op="-", left=left, right=right):
            return _combine([polarity(left, name), _neg(polarity(right, name))])
        case ir.Call(func="implies", args=(premise, conclusion)):
            return _combine([_neg(polarity(premise, name)), polarity(conclusion, name)])
    return 0 if name not in ir.free_names(node) else None


def _neg(value: Polarity) -> Polarity:
    return None if value is None else -value


def _combine(values: Iterable[Polarity]) -> Polarity:
    signs: set[int] = set()
    for value in values:
        if value is None:
            return None
        if value:
            signs.add(value)
    if len(signs) > 1:
        return None
    return signs.pop() if signs else 0


__all__ = ["Polarity", "polarity"]
