"""The one parsed form of the expression language: frozen, slotted node classes.

Every interpretation (the concrete evaluator, the tree-walking reference interpreter, the printer,
the Z3 encoder in ``envfactory.solver``) walks these same nodes, dispatching on the node type.
Adding a node type means adding one method to each interpreter; ``NODE_TYPES`` lists them all so
that a test can check that every interpreter covers every node.

Locations are kept out of equality: two nodes that read the same are equal wherever they stand.
This module imports nothing but attrs and the error types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from envfactory.contracts.errors import Location

_NOWHERE = Location("<expr>")


def _loc() -> Any:
    return attrs.field(default=_NOWHERE, eq=False, repr=False)


@attrs.frozen(slots=True)
class Expr:
    """Base of every node; every node has a ``loc`` (its place in the contract file)."""

    if TYPE_CHECKING:
        loc: Location


@attrs.frozen(slots=True)
class Const(Expr):
    """A literal: ``null``, a boolean, an integer, a float or a string."""

    value: bool | int | float | str | None
    loc: Location = _loc()


@attrs.frozen(slots=True)
class ListLit(Expr):
    """A list display ``[a, b]``."""

    items: tuple[Expr, ...]
    loc: Location = _loc()


@attrs.frozen(slots=True)
class RecordLit(Expr):
    """A record display ``{"id": e, "name": f}`` with string keys."""

    keys: tuple[str, ...]
    values: tuple[Expr, ...]
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Name(Expr):
    """``input``, ``output``, a state variable, or a variable bound by ``all/any/sum``."""

    id: str
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Attr(Expr):
    """Field access ``obj.name`` on a record."""

    obj: Expr
    name: str
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Index(Expr):
    """``obj[key]``: a collection's value at a key, a list's item, a record's field."""

    obj: Expr
    key: Expr
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Unary(Expr):
    """``not x``, ``-x``, ``+x``."""

    op: str
    operand: Expr
    loc: Location = _loc()


@attrs.frozen(slots=True)
class BinOp(Expr):
    """Arithmetic ``+ - * / // %`` (``+`` also joins strings and lists)."""

    op: str
    left: Expr
    right: Expr
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Compare(Expr):
    """One comparison ``== != < <= > >= in not in``; chains are parsed into ``and`` of these."""

    op: str
    left: Expr
    right: Expr
    loc: Location = _loc()


@attrs.frozen(slots=True)
class BoolOp(Expr):
    """``and`` / ``or`` over two or more operands, short-circuiting left to right."""

    op: str
    operands: tuple[Expr, ...]
    loc: Location = _loc()


@attrs.frozen(slots=True)
class IfExp(Expr):
    """``body if test else orelse``; only the chosen branch is evaluated."""

    test: Expr
    body: Expr
    orelse: Expr
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Call(Expr):
    """A built-in: ``len abs min max implies startswith endswith values``.

    ``s.startswith(p)`` is parsed as ``Call("startswith", (s, p))``.
    """

    func: str
    args: tuple[Expr, ...]
    loc: Location = _loc()


@attrs.frozen(slots=True)
class Quant(Expr):
    """``all(body for var in domain if cond)``, likewise ``any`` and ``sum``.

    Over a collection the variable ranges over its keys; over a list, over its items.
    """

    kind: str
    var: str
    domain: Expr
    body: Expr
    cond: Expr | None = None
    loc: Location = _loc()


NODE_TYPES: tuple[type[Expr], ...] = (
    Const,
    ListLit,
    RecordLit,
    Name,
    Attr,
    Index,
    Unary,
    BinOp,
    Compare,
    BoolOp,
    IfExp,
    Call,
    Quant,
)

BUILTINS: dict[str, tuple[int, int]] = {
    # name -> (min args, max args)
    "len": (1, 1),
    "abs": (1, 1),
    "min": (2, 2),
    "max": (2, 2),
    "implies": (2, 2),
    "startswith": (2, 2),
    "endswith": (2, 2),
    "values": (1, 1),  # a collection's records, as a list in iteration order
}
QUANTIFIERS = frozenset({"all", "any", "sum"})
ARITH_OPS = frozenset({"+", "-", "*", "/", "//", "%"})
COMPARE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in"})


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of a node, in evaluation order."""
    match node:
        case Const() | Name():
            return ()
        case ListLit(items=items):
            return items
        case RecordLit(values=values):
            return values
        case Attr(obj=obj):
            return (obj,)
        case Index(obj=obj, key=key):
            return (obj, key)
        case Unary(operand=operand):
            return (operand,)
        case BinOp(left=left, right=right) | Compare(left=left, right=right):
            return (left, right)
        case BoolOp(operands=operands):
            return operands
        case IfExp(test=test, body=body, orelse=orelse):
            return (test, body, orelse)
        case Call(args=args):
            return args
        case Quant(domain=domain, body=body, cond=cond):
            return (domain, body) if cond is None else (domain, cond, body)
    raise TypeError(f"not an expression node: {node!r}")


def with_children(node: Expr, change: Callable[[Expr], Expr]) -> Expr:
    """``node`` with each direct sub-expression ``e`` replaced by ``change(e)``, called in
    evaluation order (``children``'s); ``node`` itself where none changes."""
    parts: dict[str, Any]
    match node:
        case Const() | Name():
            return node
        case ListLit(items=items):
            parts = {"items": tuple(change(item) for item in items)}
        case RecordLit(values=values):
            parts = {"values": tuple(change(value) for value in values)}
        case Attr(obj=obj):
            parts = {"obj": change(obj)}
        case Index(obj=obj, key=key):
            parts = {"obj": change(obj), "key": change(key)}
        case Unary(operand=operand):
            parts = {"operand": change(operand)}
        case BinOp(left=left, right=right) | Compare(left=left, right=right):
            parts = {"left": change(left), "right": change(right)}
        case BoolOp(operands=operands):
            parts = {"operands": tuple(change(operand) for operand in operands)}
        case IfExp(test=test, body=body, orelse=orelse):
            parts = {"test": change(test), "body": change(body), "orelse": change(orelse)}
        case Call(args=args):
            parts = {"args": tuple(change(arg) for arg in args)}
        case Quant(domain=domain, body=body, cond=cond):
            parts = {"domain": change(domain)}
            if cond is not None:
                parts["cond"] = change(cond)
            parts["body"] = change(body)
        case _:
            raise TypeError(f"not an expression node: {node!r}")
    updates = {name: value for name, value in parts.items() if not _same(value, getattr(node, name))}
    return attrs.evolve(node, **updates) if updates else node


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    return a is b


def walk(node: Expr) -> Any:
    """Every node of the tree, pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def free_names(node: Expr) -> frozenset[str]:
    """Names the expression reads that are not bound inside it."""
    match node:
        case Name(id=ident):
            return frozenset({ident})
        case Quant(var=var, domain=domain, body=body, cond=cond):
            inner = free_names(body) | (free_names(cond) if cond is not None else frozenset())
            return free_names(domain) | (inner - {var})
    result: frozenset[str] = frozenset()
    for child in children(node):
        result |= free_names(child)
    return result


def depth(node: Expr) -> int:
    """Height of the tree (a leaf has depth 1)."""
    kids = children(node)
    return 1 + max((depth(k) for k in kids), default=0)


def field_path(node: Expr, root: str) -> tuple[str, ...] | None:
    """``root``, ``root.a.b`` or ``root["a"]`` as the path of field names below ``root``; None
    for anything else. Reads of ``input`` and ``output`` are recognised this way everywhere."""
    path: list[str] = []
    while True:
        match node:
            case Name(id=ident):
                return tuple(reversed(path)) if ident == root else None
            case Attr(obj=obj, name=name):
                path.append(name)
                node = obj
            case Index(obj=obj, key=Const(value=str() as name)):
                path.append(name)
                node = obj
            case _:
                return None


def conjuncts(node: Expr) -> list[Expr]:
    """The operands of a (nested) ``and``: the clauses' parts that must each hold."""
    if isinstance(node, BoolOp) and node.op == "and":
        return [c for operand in node.operands for c in conjuncts(operand)]
    return [node]


def pinned_output(node: Expr) -> tuple[tuple[str, ...], Expr] | None:
    """``output.p == e`` (either way round) where ``e`` does not read ``output``: ``(p, e)``.
    An ensures of this shape fixes that part of the response: it is computed, not searched for."""
    if not (isinstance(node, Compare) and node.op == "=="):
        return None
    for lhs, rhs in ((node.left, node.right), (node.right, node.left)):
        path = field_path(lhs, "output")
        if path is not None and "output" not in free_names(rhs):
            return path, rhs
    return None
