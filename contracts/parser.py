"""The one parser: expression text to IR, and effect statements to ``Effect`` values.

Python's own tokenizer and grammar (``ast.parse``) read the text; only a small, explicit subset of
the resulting syntax tree is translated, everything else is an ``ExpressionError`` with the
location inside the contract. Nothing is ever compiled or evaluated by Python.
"""

from __future__ import annotations

import ast

import attrs

from envfactory.contracts import ir
from envfactory.contracts.errors import ExpressionError, Location

MAX_SOURCE_CHARS = 20_000
MAX_DEPTH = 200

_CONST_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
_CMPOPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
}
_UNSUPPORTED_HINTS: dict[type[ast.AST], str] = {
    ast.Lambda: "lambdas are not part of the language",
    ast.ListComp: "list comprehensions are not part of the language; use all/any/sum(... for k in c)",
    ast.SetComp: "set comprehensions are not part of the language",
    ast.DictComp: "dict comprehensions are not part of the language",
    ast.NamedExpr: "assignment expressions (:=) are not part of the language",
    ast.JoinedStr: "f-strings are not part of the language; use + to join strings",
    ast.Await: "await is not part of the language",
    ast.Starred: "unpacking (*x) is not part of the language",
    ast.Slice: "slices are not part of the language",
    ast.Tuple: "tuples are not part of the language; use a list [a, b]",
    ast.Set: "sets are not part of the language; use a list [a, b]",
}
_POW_HINT = "** is not part of the language; write the multiplication out"


@attrs.frozen(slots=True)
class Target:
    """The left side of an effect: ``var``, ``var[key]`` or ``var[key].field...``."""

    var: str
    key: ir.Expr | None = None
    fields: tuple[str, ...] = ()
    loc: Location = attrs.field(default=Location("<expr>"), eq=False, repr=False)


@attrs.frozen(slots=True)
class Effect:
    """One assignment of an operation's effects; ``value`` is None for ``del var[key]``.

    All effects of an operation are simultaneous: every right side and key is evaluated on the
    pre-state, then the writes are applied in order.
    """

    target: Target
    value: ir.Expr | None
    source: str = attrs.field(eq=False)
    loc: Location = attrs.field(default=Location("<expr>"), eq=False, repr=False)

    @property
    def is_delete(self) -> bool:
        return self.value is None


class _Translator:
    """Turns one ``ast`` tree into IR, mapping every node to its place in the contract file."""

    def __init__(self, text: str, base: Location, first_line_shift: int = 0) -> None:
        self.lines = text.splitlines() or [""]
        self.base = base
        self.first_line_shift = first_line_shift
        self.bound: list[str] = []

    def loc(self, node: ast.AST) -> Location:
        lineno = getattr(node, "lineno", 1)
        byte_col = getattr(node, "col_offset", 0)
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        char_col = len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        if lineno == 1:
            char_col = max(char_col - self.first_line_shift, 0)
        return self.base.shifted(lineno - 1, char_col)

    def fail(self, node: ast.AST, message: str) -> ExpressionError:
        return ExpressionError(message, self.loc(node))

    def expr(self, node: ast.expr) -> ir.Expr:
        loc = self.loc(node)
        match node:
            case ast.Constant(value=value):
                if isinstance(value, bool) or value is None or isinstance(value, int | float | str):
                    if isinstance(value, float) and value != value:  # NaN cannot be written, but be sure
                        raise self.fail(node, "NaN is not a value of the language")
                    return ir.Const(value, loc)
                raise self.fail(node, f"literal {value!r} is not part of the language")
            case ast.Name(id=ident):
                if ident in _CONST_NAMES and ident not in self.bound:
                    return ir.Const(_CONST_NAMES[ident], loc)
                if ident.startswith("__"):
                    raise self.fail(node, f"name {ident!r} is not allowed (dunder names are reserved)")
                return ir.Name(ident, loc)
            case ast.Attribute(value=value, attr=attr):
                if attr.startswith("_"):
                    raise self.fail(
                        node, f"attribute {attr!r} is not allowed (names starting with _ are reserved)"
                    )
                return ir.Attr(self.expr(value), attr, loc)
            case ast.Subscript(value=value, slice=key):
                if isinstance(key, ast.Slice):
                    raise self.fail(node, _UNSUPPORTED_HINTS[ast.Slice])
                return ir.Index(self.expr(value), self.expr(key), loc)
            case ast.UnaryOp(op=op, operand=operand):
                if isinstance(op, ast.Not):
                    return ir.Unary("not", self.expr(operand), loc)
                if isinstance(op, ast.USub):
                    inner = self.expr(operand)
                    if (
                        isinstance(inner, ir.Const)
                        and isinstance(inner.value, int | float)
                        and not isinstance(inner.value, bool)
                    ):
                        return ir.Const(-inner.value, loc)
                    return ir.Unary("-", inner, loc)
                if isinstance(op, ast.UAdd):
                    return ir.Unary("+", self.expr(operand), loc)
                raise self.fail(node, "bitwise ~ is not part of the language")
            case ast.BinOp(op=op, left=left, right=right):
                if isinstance(op, ast.Pow):
                    raise self.fail(node, _POW_HINT)
                symbol = _BINOPS.get(type(op))
                if symbol is None:
                    raise self.fail(node, f"operator {type(op).__name__} is not part of the language")
                return ir.BinOp(symbol, self.expr(left), self.expr(right), loc)
            case ast.BoolOp(op=op, values=values):
                return ir.BoolOp(
                    "and" if isinstance(op, ast.And) else "or", tuple(self.expr(v) for v in values), loc
                )
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self.compare(node, left, ops, comparators)
            case ast.IfExp(test=test, body=body, orelse=orelse):
                return ir.IfExp(self.expr(test), self.expr(body), self.expr(orelse), loc)
            case ast.Call():
                return self.call(node)
            case ast.List(elts=elts):
                return ir.ListLit(tuple(self.expr(e) for e in elts), loc)
            case ast.Dict(keys=keys, values=values):
                names: list[str] = []
                for dict_key in keys:
                    if not (isinstance(dict_key, ast.Constant) and isinstance(dict_key.value, str)):
                        raise self.fail(
                            dict_key if dict_key is not None else node, "record keys must be string literals"
                        )
                    names.append(dict_key.value)
                if len(set(names)) != len(names):
                    raise self.fail(node, "a record display repeats a key")
                return ir.RecordLit(tuple(names), tuple(self.expr(v) for v in values), loc)
            case ast.GeneratorExp():
                raise self.fail(node, "a generator must be the only argument of all(), any() or sum()")
        hint = _UNSUPPORTED_HINTS.get(type(node))
        raise self.fail(node, hint or f"{type(node).__name__} syntax is not part of the language")

    def compare(
        self, node: ast.expr, left: ast.expr, ops: list[ast.cmpop], comparators: list[ast.expr]
    ) -> ir.Expr:
        parts: list[ir.Expr] = []
        current = self.expr(left)
        for op, right_node in zip(ops, comparators, strict=True):
            if isinstance(op, ast.Is | ast.IsNot):
                raise self.fail(node, "'is' is not part of the language; use == or !=")
            right = self.expr(right_node)
            parts.append(ir.Compare(_CMPOPS[type(op)], current, right, self.loc(node)))
            current = right
        if len(parts) == 1:
            return parts[0]
        return ir.BoolOp("and", tuple(parts), self.loc(node))

    def call(self, node: ast.Call) -> ir.Expr:
        loc = self.loc(node)
        if node.keywords:
            raise self.fail(node, "keyword arguments are not part of the language")
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith"):
            if len(node.args) != 1:
                raise self.fail(node, f".{func.attr}() takes exactly one argument")
            return ir.Call(func.attr, (self.expr(func.value), self.expr(node.args[0])), loc)
        if not isinstance(func, ast.Name):
            raise self.fail(node, "only the built-in functions can be called: " + _builtin_list())
        name = func.id
        if name in ir.QUANTIFIERS:
            return self.quantifier(node, name, loc)
        if name not in ir.BUILTINS:
            raise self.fail(node, f"unknown function {name!r}; the built-ins are " + _builtin_list())
        low, high = ir.BUILTINS[name]
        if not low <= len(node.args) <= high:
            raise self.fail(
                node, f"{name}() takes {low} argument{'s' if low != 1 else ''}, got {len(node.args)}"
            )
        return ir.Call(name, tuple(self.expr(a) for a in node.args), loc)

    def quantifier(self, node: ast.Call, kind: str, loc: Location) -> ir.Expr:
        if len(node.args) != 1 or not isinstance(node.args[0], ast.GeneratorExp):
            raise self.fail(node, f"{kind}() takes one generator: {kind}(... for k in collection)")
        gen = node.args[0]
        if len(gen.generators) != 1:
            raise self.fail(gen, "only one 'for' is allowed in a generator")
        comp = gen.generators[0]
        if comp.is_async:
            raise self.fail(gen, "async generators are not part of the language")
        if not isinstance(comp.target, ast.Name):
            raise self.fail(comp.target, "the loop variable must be a single name")
        var = comp.target.id
        if var.startswith("__") or var in _CONST_NAMES:
            raise self.fail(comp.target, f"{var!r} cannot be a loop variable")
        domain = self.expr(comp.iter)
        self.bound.append(var)
        try:
            conds = [self.expr(c) for c in comp.ifs]
            body = self.expr(gen.elt)
        finally:
            self.bound.pop()
        cond: ir.Expr | None = None
        if len(conds) == 1:
            cond = conds[0]
        elif conds:
            cond = ir.BoolOp("and", tuple(conds), conds[0].loc)
        return ir.Quant(kind, var, domain, body, cond, loc)


def _builtin_list() -> str:
    return ", ".join(sorted(ir.BUILTINS) + sorted(ir.QUANTIFIERS))


def _parse_ast(text: str, base: Location, mode: str) -> ast.AST:
    if len(text) > MAX_SOURCE_CHARS:
        raise ExpressionError(
            f"expression is {len(text)} characters long; the limit is {MAX_SOURCE_CHARS}", base
        )
    nesting = 0
    deepest = 0
    for ch in text:
        if ch in "([{":
            nesting += 1
            deepest = max(deepest, nesting)
        elif ch in ")]}":
            nesting -= 1
    if deepest > MAX_DEPTH // 2:
        raise ExpressionError(
            f"expression nests {deepest} brackets deep; the limit is {MAX_DEPTH // 2}", base
        )
    try:
        tree = ast.parse(text.strip(), mode=mode)
    except SyntaxError as err:
        line = (err.lineno or 1) - 1
        col = max((err.offset or 1) - 1, 0)
        raise ExpressionError(f"syntax error: {err.msg}", base.shifted(line, col)) from None
    except (RecursionError, MemoryError, ValueError) as err:
        raise ExpressionError(f"expression cannot be parsed: {type(err).__name__}", base) from None
    if _ast_depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"expression is more than {MAX_DEPTH} levels deep", base)
    return tree


def _ast_depth(tree: ast.AST) -> int:
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def parse_expr(text: str, base: Location | None = None) -> ir.Expr:
    """Parse one expression. ``base`` is where its first character stands in the contract."""
    base = base or Location("<expr>", 1, 1)
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression as a string, got {type(text).__name__}", base)
    if not text.strip():
        raise ExpressionError("empty expression", base)
    lead = text[: len(text) - len(text.lstrip())]
    if lead:
        base = base.shifted(lead.count("\n"), len(lead) - (lead.rfind("\n") + 1))
    source = text.strip()
    shift = 0
    if "\n" in source:
        # A YAML block scalar may continue on indented lines: parenthesise so Python accepts it.
        source, shift = f"({source})", 1
    tree = _parse_ast(source, base, "eval")
    assert isinstance(tree, ast.Expression)
    return _Translator(source, base, shift).expr(tree.body)


def parse_effect(text: str, base: Location | None = None) -> Effect:
    """Parse one effect: ``x = e``, ``c[k] = e``, ``c[k].f = e``, ``x += e``, ``del c[k]``."""
    base = base or Location("<expr>", 1, 1)
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("an effect must be a non-empty string like 'x = e' or 'del c[k]'", base)
    tree = _parse_ast(text.strip(), base, "exec")
    assert isinstance(tree, ast.Module)
    if len(tree.body) != 1:
        raise ExpressionError("an effect is exactly one assignment or deletion", base)
    stmt = tree.body[0]
    tr = _Translator(text.strip(), base)
    match stmt:
        case ast.Assign(targets=[target], value=value):
            return Effect(_target(tr, target), tr.expr(value), text.strip(), tr.loc(stmt))
        case ast.Assign():
            raise tr.fail(stmt, "chained assignment (a = b = e) is not allowed in effects")
        case ast.AugAssign(target=target, op=op, value=value):
            symbol = _BINOPS.get(type(op))
            if symbol is None:
                raise tr.fail(
                    stmt, _POW_HINT if isinstance(op, ast.Pow) else "unsupported augmented assignment"
                )
            tgt = _target(tr, target)
            current = _target_as_expr(tgt)
            return Effect(
                tgt, ir.BinOp(symbol, current, tr.expr(value), tr.loc(stmt)), text.strip(), tr.loc(stmt)
            )
        case ast.Delete(targets=[target]):
            tgt = _target(tr, target)
            if tgt.key is None or tgt.fields:
                raise tr.fail(stmt, "del removes one entry of a collection: del c[k]")
            return Effect(tgt, None, text.strip(), tr.loc(stmt))
        case ast.Expr():
            raise tr.fail(
                stmt, "an effect must assign (x = e) or delete (del c[k]); this is a bare expression"
            )
    raise tr.fail(stmt, f"{type(stmt).__name__} is not an effect; use 'x = e' or 'del c[k]'")


def _target(tr: _Translator, node: ast.expr) -> Target:
    fields: list[str] = []
    while isinstance(node, ast.Attribute):
        fields.append(node.attr)
        node = node.value
    fields.reverse()
    if isinstance(node, ast.Name):
        if fields:
            raise tr.fail(node, "assign to a whole state variable or to c[k].field, not to var.field")
        return Target(node.id, None, (), tr.loc(node))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if isinstance(node.slice, ast.Slice):
            raise tr.fail(node, _UNSUPPORTED_HINTS[ast.Slice])
        return Target(node.value.id, tr.expr(node.slice), tuple(fields), tr.loc(node))
    raise tr.fail(node, "the target of an effect must be 'x', 'c[k]' or 'c[k].field'")


def _target_as_expr(target: Target) -> ir.Expr:
    node: ir.Expr = ir.Name(target.var, target.loc)
    if target.key is not None:
        node = ir.Index(node, target.key, target.loc)
    for field in target.fields:
        node = ir.Attr(node, field, target.loc)
    return node


def target_as_expr(target: Target) -> ir.Expr:
    """The target read as an expression (``c[k].f``), for explanations and encoders."""
    return _target_as_expr(target)
