"""The abstraction predicates of the state graph, read off a contract's IR.

An abstract state is a valuation of these predicates: every boolean state variable, every value
of every enum state variable, every collection empty or not, and every *state-only atom* of the
preconditions (a comparison or call inside a ``requires`` that reads state and nothing else, such
as ``user != null``). They are IR expressions, so the concrete evaluator and the Z3 encoder read
them the same way. This module needs neither Z3 nor networkx.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.model import Contract
from envfactory.contracts.printer import to_source


@attrs.frozen(slots=True)
class Predicate:
    """One abstraction predicate: its text, its IR, and why it is there."""

    text: str
    expr: ir.Expr
    origin: str  # "boolean" | "enum" | "nonempty" | "precondition"
    fn: Any = attrs.field(eq=False, repr=False, default=None)

    def __attrs_post_init__(self) -> None:
        if self.fn is None:
            object.__setattr__(self, "fn", compile_expr(self.expr))

    def holds(self, state: Mapping[str, Any]) -> bool:
        """Concretely; an undefined predicate is false, as a clause would be."""
        try:
            return self.fn(Env(state)) is True
        except EvaluationError:
            return False


def predicates(contract: Contract) -> tuple[Predicate, ...]:
    """Every abstraction predicate of the contract, in a stable order, without repeats."""
    found: dict[str, Predicate] = {}

    def add(expr: ir.Expr, origin: str) -> None:
        text = to_source(expr)
        if text not in found:
            found[text] = Predicate(text, expr, origin)

    for name, var in contract.state.items():
        if var.collection:
            add(ir.Compare(">", ir.Call("len", (ir.Name(name),)), ir.Const(0)), "nonempty")
            continue
        for option in T.options(var.type):
            if option == T.BOOL:
                add(ir.Compare("==", ir.Name(name), ir.Const(True)), "boolean")
            elif isinstance(option, T.Prim) and option.kind == "string" and option.enum:
                for value in option.enum:
                    add(ir.Compare("==", ir.Name(name), ir.Const(value)), "enum")
    state = set(contract.state)
    for op in contract.operations.values():
        for clause in op.requires:
            for atom in atoms(clause.expr):
                names = ir.free_names(atom)
                if names and names <= state:
                    add(atom, "precondition")
    return tuple(found.values())


def atoms(node: ir.Expr) -> Iterator[ir.Expr]:
    """The atomic propositions of a boolean expression (below ``and``/``or``/``not``/``implies``)."""
    match node:
        case ir.BoolOp(operands=operands):
            for operand in operands:
                yield from atoms(operand)
        case ir.Unary(op="not", operand=operand):
            yield from atoms(operand)
        case ir.Call(func="implies", args=args):
            for arg in args:
                yield from atoms(arg)
        case ir.Const():
            return
        case _:
            yield node


def valuation(preds: tuple[Predicate, ...], state: Mapping[str, Any]) -> tuple[bool, ...]:
    """The abstract state of a concrete one."""
    return tuple(p.holds(state) for p in preds)


def describe(preds: tuple[Predicate, ...], values: tuple[bool, ...]) -> str:
    """A short label: the predicates that hold (``not (...)`` is left out), or ``initial-like``."""
    true = [p.text for p, v in zip(preds, values, strict=True) if v]
    return " & ".join(true) if true else "none holds"


__all__ = ["Predicate", "atoms", "describe", "predicates", "valuation"]
