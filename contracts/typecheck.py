"""The type checker: every clause is checked against the state, input and output types at load time.

Errors carry the location of the offending node and, for unknown names and fields, the closest
known name. Null is lenient: a value typed ``T or null`` may be used where ``T`` is needed (the
clause is then undefined, hence false, in states where it is null), so that guards such as
``user != null and len(user) > 0`` need no special narrowing.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import ExpressionError
from envfactory.contracts.printer import to_source


def _suggest(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


class TypeChecker:
    """Checks expressions in one scope (a mapping from name to type)."""

    def __init__(self, scope: Mapping[str, T.Type], *, context: str = "expression") -> None:
        self.scope = dict(scope)
        self.context = context

    def fail(self, node: ir.Expr, message: str) -> ExpressionError:
        return ExpressionError(message, node.loc)

    def check_bool(self, node: ir.Expr) -> None:
        """A clause: must be a boolean expression."""
        result = self.check(node)
        if not T.only(result, "boolean"):
            raise self.fail(
                node, f"{self.context} must be true or false, but {to_source(node)!r} is {result.describe()}"
            )

    def check(self, node: ir.Expr) -> T.Type:
        method = getattr(self, "_" + type(node).__name__)
        result: T.Type = method(node)
        return result

    def _Const(self, node: ir.Const) -> T.Type:
        return T._literal_type(node.value, (node.value,)) if node.value is not None else T.NULL

    def _ListLit(self, node: ir.ListLit) -> T.Type:
        return T.ListType(T.union(self.check(i) for i in node.items) if node.items else T.ANY)

    def _RecordLit(self, node: ir.RecordLit) -> T.Type:
        fields = tuple((k, self.check(v)) for k, v in zip(node.keys, node.values, strict=True))
        return T.RecordType(fields, frozenset(node.keys), False)

    def _Name(self, node: ir.Name) -> T.Type:
        if node.id in self.scope:
            return self.scope[node.id]
        known = sorted(self.scope)
        where = f" in {self.context}" if self.context else ""
        hint = _suggest(node.id, known)
        if not hint and node.id in ("input", "output"):
            hint = f"; {node.id!r} cannot be used here"
        raise self.fail(node, f"unknown name {node.id!r}{where}{hint}")

    def _field(self, node: ir.Expr, obj_type: T.Type, name: str, obj: ir.Expr) -> T.Type:
        results: list[T.Type] = []
        base = T.strip_null(obj_type)
        for option in T.options(base):
            match option:
                case T.AnyType():
                    return T.ANY
                case T.RecordType():
                    field = option.field(name)
                    if field is None:
                        if option.open and not option.fields:
                            return T.ANY
                        if option.open:
                            results.append(T.ANY)
                            continue
                        raise self.fail(
                            node,
                            f"{to_source(obj)!r} has no field {name!r}{_suggest(name, list(option.names))}"
                            f" (fields: {', '.join(option.names) or 'none'})",
                        )
                    results.append(field if name in option.required else T.union([field, T.NULL]))
                case T.MapType():
                    if T.admits(option.key, "string"):
                        results.append(T.union([option.value, T.NULL]))
                        continue
                    raise self.fail(node, f"{to_source(obj)!r} is a collection; use {to_source(obj)}[key]")
                case T.Prim(kind="null"):
                    continue
                case _:
                    raise self.fail(
                        node, f"{to_source(obj)!r} is {option.describe()}, which has no field {name!r}"
                    )
        if not results:
            raise self.fail(node, f"{to_source(obj)!r} is always null here; it has no field {name!r}")
        return T.union(results)

    def _Attr(self, node: ir.Attr) -> T.Type:
        return self._field(node, self.check(node.obj), node.name, node.obj)

    def _Index(self, node: ir.Index) -> T.Type:
        obj_type = self.check(node.obj)
        key_type = self.check(node.key)
        results: list[T.Type] = []
        for option in T.options(T.strip_null(obj_type)):
            match option:
                case T.AnyType():
                    return T.ANY
                case T.MapType():
                    self._expect_key(node.key, key_type, option.key, node.obj)
                    results.append(option.value)
                case T.ListType():
                    if not T.only(key_type, "number"):
                        raise self.fail(node.key, f"list index must be an integer, got {key_type.describe()}")
                    results.append(option.item)
                case T.Prim(kind="string"):
                    results.append(T.STRING)
                case T.RecordType():
                    if isinstance(node.key, ir.Const) and isinstance(node.key.value, str):
                        results.append(self._field(node, option, node.key.value, node.obj))
                    elif T.only(key_type, "string"):
                        results.append(T.ANY)
                    else:
                        raise self.fail(
                            node.key, f"a record's fields are named by strings, got {key_type.describe()}"
                        )
                case T.Prim(kind="null"):
                    continue
                case _:
                    raise self.fail(
                        node, f"{to_source(node.obj)!r} is {option.describe()} and cannot be indexed"
                    )
        return T.union(results) if results else T.ANY

    def _expect_key(self, key: ir.Expr, key_type: T.Type, expected: T.Type, coll: ir.Expr) -> None:
        want = T.kind_of(expected) - {"null"}
        got = T.kind_of(T.strip_null(key_type)) - {"null"}
        if "any" in want or "any" in got or not got or want & got:
            return
        raise self.fail(
            key,
            f"{to_source(coll)} is keyed by {expected.describe()}, but {to_source(key)!r} is {key_type.describe()}",
        )

    def _Unary(self, node: ir.Unary) -> T.Type:
        operand = self.check(node.operand)
        if node.op == "not":
            if not T.only(operand, "boolean"):
                raise self.fail(node, f"'not' needs true or false, got {operand.describe()}")
            return T.BOOL
        if not T.only(operand, "number"):
            raise self.fail(node, f"unary {node.op} needs a number, got {operand.describe()}")
        return T.strip_null(operand)

    def _BinOp(self, node: ir.BinOp) -> T.Type:
        left = self.check(node.left)
        right = self.check(node.right)
        if node.op == "+":
            if (
                T.only(left, "string")
                and T.only(right, "string")
                and "any" not in T.kind_of(left) | T.kind_of(right)
            ):
                return T.STRING
            if (
                T.only(left, "list")
                and T.only(right, "list")
                and "any" not in T.kind_of(left) | T.kind_of(right)
            ):
                return T.union([T.strip_null(left), T.strip_null(right)])
        for side, typ in ((node.left, left), (node.right, right)):
            if not T.only(typ, "number"):
                raise self.fail(side, f"{node.op} needs numbers, but {to_source(side)!r} is {typ.describe()}")
        if node.op == "/":
            return T.NUMBER
        return T.numeric_result(left, right)

    def _Compare(self, node: ir.Compare) -> T.Type:
        left = self.check(node.left)
        right = self.check(node.right)
        if node.op in ("in", "not in"):
            self._check_membership(node, left, right)
        elif node.op in ("==", "!="):
            lk = T.kind_of(left)
            rk = T.kind_of(right)
            if "any" not in lk and "any" not in rk and not (lk & rk) and "null" not in lk | rk:
                raise self.fail(
                    node,
                    f"comparing {left.describe()} with {right.describe()} is always "
                    f"{'false' if node.op == '==' else 'true'}",
                )
            self._check_enum(node, left, right)
        else:
            ok = (T.only(left, "number") and T.only(right, "number")) or (
                T.only(left, "string") and T.only(right, "string")
            )
            if not ok:
                raise self.fail(
                    node,
                    f"{node.op} compares two numbers or two strings, not {left.describe()} and {right.describe()}",
                )
        return T.BOOL

    def _check_enum(self, node: ir.Compare, left: T.Type, right: T.Type) -> None:
        for typ, other in ((left, node.right), (right, node.left)):
            enum = [o for o in T.options(typ) if isinstance(o, T.Prim) and o.enum]
            if enum and isinstance(other, ir.Const) and isinstance(other.value, str):
                allowed = {v for o in enum for v in (o.enum or ())}
                if other.value not in allowed:
                    raise self.fail(
                        other, f"{other.value!r} is not one of {', '.join(map(repr, sorted(allowed)))}"
                    )

    def _check_membership(self, node: ir.Compare, left: T.Type, right: T.Type) -> None:
        for option in T.options(T.strip_null(right)):
            match option:
                case T.AnyType() | T.ListType():
                    continue
                case T.MapType():
                    self._expect_key(node.left, left, option.key, node.right)
                case T.Prim(kind="string"):
                    if not T.only(left, "string"):
                        raise self.fail(node.left, f"'in' a string needs a string, got {left.describe()}")
                case T.RecordType():
                    if not T.only(left, "string"):
                        raise self.fail(node.left, "'in' a record tests a field name, which is a string")
                case _:
                    raise self.fail(
                        node.right, f"'in' needs a collection, a list or a string, got {option.describe()}"
                    )

    def _BoolOp(self, node: ir.BoolOp) -> T.Type:
        for operand in node.operands:
            typ = self.check(operand)
            if not T.only(typ, "boolean"):
                raise self.fail(
                    operand,
                    f"'{node.op}' needs true or false, but {to_source(operand)!r} is {typ.describe()}",
                )
        return T.BOOL

    def _IfExp(self, node: ir.IfExp) -> T.Type:
        test = self.check(node.test)
        if not T.only(test, "boolean"):
            raise self.fail(node.test, f"the condition must be true or false, got {test.describe()}")
        return T.union([self.check(node.body), self.check(node.orelse)])

    def _Call(self, node: ir.Call) -> T.Type:
        args = [self.check(a) for a in node.args]
        func = node.func
        if func == "len":
            if not T.only(args[0], "string", "list", "map", "record"):
                raise self.fail(
                    node, f"len() needs a collection, a list or a string, got {args[0].describe()}"
                )
            return T.INT
        if func == "values":
            found = [o for o in T.options(T.strip_null(args[0])) if isinstance(o, T.MapType)]
            if not T.only(args[0], "map"):
                raise self.fail(node, f"values() needs a collection, got {args[0].describe()}")
            return T.ListType(T.union([o.value for o in found]) if found else T.ANY)
        if func == "abs":
            if not T.only(args[0], "number"):
                raise self.fail(node, f"abs() needs a number, got {args[0].describe()}")
            return T.strip_null(args[0])
        if func in ("min", "max"):
            for arg, typ in zip(node.args, args, strict=True):
                if not T.only(typ, "number"):
                    raise self.fail(arg, f"{func}() needs numbers, got {typ.describe()}")
            return T.numeric_result(args[0], args[1])
        if func == "implies":
            for arg, typ in zip(node.args, args, strict=True):
                if not T.only(typ, "boolean"):
                    raise self.fail(arg, f"implies() needs true or false, got {typ.describe()}")
            return T.BOOL
        for arg, typ in zip(node.args, args, strict=True):  # startswith / endswith
            if not T.only(typ, "string"):
                raise self.fail(arg, f"{func}() works on strings, got {typ.describe()}")
        return T.BOOL

    def _Quant(self, node: ir.Quant) -> T.Type:
        domain = T.strip_null(self.check(node.domain))
        var_types: list[T.Type] = []
        for option in T.options(domain):
            match option:
                case T.MapType():
                    var_types.append(option.key)
                case T.ListType():
                    var_types.append(option.item)
                case T.AnyType():
                    var_types.append(T.ANY)
                case _:
                    raise self.fail(
                        node.domain,
                        f"{node.kind}() iterates over a collection or a list, got {option.describe()}",
                    )
        if node.var in self.scope and node.var not in ("input", "output"):
            pass  # shadowing a state name inside the generator is allowed, as in Python
        saved = self.scope.get(node.var)
        self.scope[node.var] = T.union(var_types)
        try:
            if node.cond is not None:
                cond = self.check(node.cond)
                if not T.only(cond, "boolean"):
                    raise self.fail(node.cond, f"the filter must be true or false, got {cond.describe()}")
            body = self.check(node.body)
        finally:
            if saved is None:
                del self.scope[node.var]
            else:
                self.scope[node.var] = saved
        if node.kind == "sum":
            if not T.only(body, "number"):
                raise self.fail(node.body, f"sum() adds numbers, got {body.describe()}")
            return T.strip_null(body)
        if not T.only(body, "boolean"):
            raise self.fail(node.body, f"{node.kind}() needs a true-or-false body, got {body.describe()}")
        return T.BOOL
