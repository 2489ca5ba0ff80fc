"""Where an operation reads an input field as a key of a collection, and whether the key must be
new: what makes generated calls connect (live keys for reads, fresh ones for inserts) and what
lets an answer echo the record a call named.
"""

from __future__ import annotations

import attrs

from envfactory.contracts import ir
from envfactory.contracts.model import Operation
from envfactory.statemachine.paths import Path


@attrs.frozen(slots=True)
class KeyUse:
    """An input field the clauses use as a key of a collection, and whether it must be new."""

    path: Path
    collection: str
    fresh: bool | None  # True: must be absent; False: must exist; None: either


def key_uses(op: Operation, collections: frozenset[str]) -> list[KeyUse]:
    """Where ``op``'s requires and effects read an input field as a key of a collection."""
    found: dict[tuple[Path, str], bool | None] = {}

    def note(path: Path | None, coll: ir.Expr, fresh: bool | None) -> None:
        if not path or not (isinstance(coll, ir.Name) and coll.id in collections):
            return
        key = (path, coll.id)
        if key not in found or found[key] is None:
            found[key] = fresh

    def visit(node: ir.Expr, negated: bool) -> None:
        if isinstance(node, ir.Unary) and node.op == "not":
            visit(node.operand, not negated)
            return
        if isinstance(node, ir.Compare) and node.op in ("in", "not in"):
            absent = (node.op == "not in") != negated
            note(ir.field_path(node.left, "input"), node.right, absent)
        if isinstance(node, ir.Index):
            note(ir.field_path(node.key, "input"), node.obj, False)
        for child in ir.children(node):
            visit(child, negated if isinstance(node, ir.BoolOp) else False)

    for clause in op.requires:
        visit(clause.expr, False)
    for effect in op.effects:
        if effect.target.key is not None:
            note(
                ir.field_path(effect.target.key, "input"),
                ir.Name(effect.target.var),
                None if effect.value is not None else False,
            )
        if effect.value is not None:
            visit(effect.value, False)
    return [KeyUse(path, coll, fresh) for (path, coll), fresh in found.items()]


__all__ = ["KeyUse", "key_uses"]
