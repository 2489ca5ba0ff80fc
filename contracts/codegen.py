"""Generated checkers: a conjunction of clauses written out as one Python function per operation.

DESIGN.md "Generated code is allowed", under its rules, all kept here:

- every identifier in the generated source is made by the generator (``env``, ``_v3``, ``_k0``,
  ``_f1``, the names in ``_FIXED``); no name, key, string or number of the contract is spliced
  into it;
- every constant of the contract (state variable names, field names, literals) is passed in as
  data: an argument of the factory the generated function closes over;
- the closure evaluator (``envfactory.contracts.evaluator``) stays the reference, and the
  generated function only *decides the common case*: it answers True when it is sure every
  clause is exactly True (exact ``int``/``str``/``bool``/``None`` values, records that are plain
  dicts, collections that are ``FrozenMap``), and False (meaning "not sure") on anything else,
  after which the caller runs the clauses' closures, which find the failing clause and explain it.
  So a wrong False costs time, never a wrong verdict; only a wrong True could, and the
  differential test (tests/verify/test_verify_codegen.py) looks for that over drawn contracts
  and states.

A node the generator does not know (a quantifier, a literal list, anything added to the IR later)
is read through its compiled closure, passed in as data too. Nothing from a contract is ever
evaluated as Python: the source is built from the generator's own tokens only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.values import FrozenMap

_MISSING = object()

_COMPARE = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*"}
_FIXED = frozenset({"env", "_st", "_MISSING", "_FM", "_int", "_str", "_bool", "_none", "_dict", "_len"})
"""The generator's own names besides the numbered ones (``_v``, ``_k``, ``_f``)."""
_FIXED_DATA: dict[str, Any] = {
    "_MISSING": _MISSING,
    "_FM": FrozenMap,
    "_int": int,
    "_str": str,
    "_bool": bool,
    "_none": type(None),
    "_dict": dict,
    "_len": len,
}
ATTRIBUTES = frozenset({"input", "output", "state", "get", "__class__"})
"""The attribute names generated code reads."""


class Unsupported(Exception):
    """A node the generator writes no code for: its closure is used instead."""


class _Writer:
    """Builds one function's source line by line; constants and closures go to ``data``."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.data: list[Any] = []  # factory arguments, in order: _k0, _k1, ... and _f0, ...
        self.names: list[str] = []
        self.count = 0

    def var(self) -> str:
        self.count += 1
        return f"_v{self.count}"

    def constant(self, value: Any) -> str:
        name = f"_k{len(self.data)}"
        self.data.append(value)
        self.names.append(name)
        return name

    def closure(self, fn: Compiled) -> str:
        name = f"_f{len(self.data)}"
        self.data.append(fn)
        self.names.append(name)
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    # ------------------------------------------------------------------ one expression

    def value(self, node: ir.Expr, depth: int) -> str:
        """Emit statements at ``depth`` that leave ``node``'s value in a new variable (or return
        False, "not sure"); return the variable."""
        method: Callable[[Any, int], str] | None = getattr(self, "_" + type(node).__name__, None)
        if method is not None:
            try:
                mark = (len(self.lines), len(self.data), len(self.names), self.count)
                return method(node, depth)
            except Unsupported:
                del self.lines[mark[0] :], self.data[mark[1] :], self.names[mark[2] :]
                self.count = mark[3]
        return self._closure_value(node, depth)

    def _closure_value(self, node: ir.Expr, depth: int) -> str:
        fn = self.closure(compile_expr(node))
        out = self.var()
        self.emit(depth, f"{out} = {fn}(env)")
        return out

    def _Const(self, node: ir.Const, depth: int) -> str:
        if node.value.__class__ not in (int, str, bool, type(None)):
            raise Unsupported
        return self.constant(node.value)

    def _Name(self, node: ir.Name, depth: int) -> str:
        out = self.var()
        if node.id in ("input", "output"):
            self.emit(depth, f"{out} = env.{node.id}")
            return out
        key = self.constant(node.id)
        self.emit(depth, f"{out} = _st.get({key}, _MISSING)")
        self.emit(depth, f"if {out} is _MISSING:")
        self.emit(depth + 1, "return False")
        return out

    def _Attr(self, node: ir.Attr, depth: int) -> str:
        obj = self.value(node.obj, depth)
        key = self.constant(node.name)
        out = self.var()
        self.emit(depth, f"if {obj}.__class__ is not _dict:")
        self.emit(depth + 1, "return False")
        self.emit(depth, f"{out} = {obj}.get({key})")
        return out

    def _Index(self, node: ir.Index, depth: int) -> str:
        obj = self.value(node.obj, depth)
        key = self.value(node.key, depth)
        out = self.var()
        self.emit(
            depth,
            f"if {obj}.__class__ is not _FM or ({key}.__class__ is not _str and {key}.__class__ is not _int):",
        )
        self.emit(depth + 1, "return False")
        self.emit(depth, f"{out} = {obj}.get({key}, _MISSING)")
        self.emit(depth, f"if {out} is _MISSING:")
        self.emit(depth + 1, "return False")
        return out

    def _Unary(self, node: ir.Unary, depth: int) -> str:
        operand = self.value(node.operand, depth)
        out = self.var()
        if node.op == "not":
            self.emit(depth, f"if {operand}.__class__ is not _bool:")
            self.emit(depth + 1, "return False")
            self.emit(depth, f"{out} = not {operand}")
        elif node.op == "-":
            self.emit(depth, f"if {operand}.__class__ is not _int:")
            self.emit(depth + 1, "return False")
            self.emit(depth, f"{out} = -{operand}")
        else:
            raise Unsupported
        return out

    def _BinOp(self, node: ir.BinOp, depth: int) -> str:
        op = _ARITH.get(node.op)
        if op is None:
            raise Unsupported
        left = self.value(node.left, depth)
        right = self.value(node.right, depth)
        out = self.var()
        self.emit(depth, f"if {left}.__class__ is not _int or {right}.__class__ is not _int:")
        self.emit(depth + 1, "return False")
        self.emit(depth, f"{out} = {left} {op} {right}")
        return out

    def _Compare(self, node: ir.Compare, depth: int) -> str:
        if node.op in ("in", "not in"):
            item = self.value(node.left, depth)
            container = self.value(node.right, depth)
            out = self.var()
            self.emit(
                depth,
                f"if {container}.__class__ is not _FM or ({item}.__class__ is not _str and {item}.__class__ is not _int):",
            )
            self.emit(depth + 1, "return False")
            self.emit(depth, f"{out} = {item} {'not in' if node.op == 'not in' else 'in'} {container}")
            return out
        op = _COMPARE.get(node.op)
        if op is None:
            raise Unsupported
        left = self.value(node.left, depth)
        right = self.value(node.right, depth)
        out = self.var()
        if op in ("==", "!="):
            # equal classes among int, str, bool, None: Python's == is the language's strict ==
            self.emit(
                depth,
                f"if {left}.__class__ is not {right}.__class__ or ({left}.__class__ is not _int and "
                f"{left}.__class__ is not _str and {left}.__class__ is not _bool and {left}.__class__ is not _none):",
            )
        else:
            self.emit(
                depth,
                f"if {left}.__class__ is not {right}.__class__ or ({left}.__class__ is not _int and {left}.__class__ is not _str):",
            )
        self.emit(depth + 1, "return False")
        self.emit(depth, f"{out} = {left} {op} {right}")
        return out

    def _BoolOp(self, node: ir.BoolOp, depth: int) -> str:
        if node.op not in ("and", "or"):
            raise Unsupported
        stop = "False" if node.op == "and" else "True"  # the value that decides the whole
        go = "True" if node.op == "and" else "False"
        out = self.var()
        self.emit(depth, f"{out} = {stop}")
        level = depth
        for operand in node.operands:
            value = self.value(operand, level)
            self.emit(level, f"if {value} is not {go} and {value} is not {stop}:")
            self.emit(level + 1, "return False")
            self.emit(level, f"if {value} is {go}:")
            level += 1
        self.emit(level, f"{out} = {go}")
        return out

    def _IfExp(self, node: ir.IfExp, depth: int) -> str:
        test = self.value(node.test, depth)
        out = self.var()
        self.emit(depth, f"if {test}.__class__ is not _bool:")
        self.emit(depth + 1, "return False")
        self.emit(depth, f"if {test}:")
        body = self.value(node.body, depth + 1)
        self.emit(depth + 1, f"{out} = {body}")
        self.emit(depth, "else:")
        orelse = self.value(node.orelse, depth + 1)
        self.emit(depth + 1, f"{out} = {orelse}")
        return out

    def _Call(self, node: ir.Call, depth: int) -> str:
        if node.func == "len" and len(node.args) == 1:
            arg = self.value(node.args[0], depth)
            out = self.var()
            self.emit(depth, f"if {arg}.__class__ is not _FM and {arg}.__class__ is not _str:")
            self.emit(depth + 1, "return False")
            self.emit(depth, f"{out} = _len({arg})")
            return out
        if node.func == "implies" and len(node.args) == 2:
            return self._BoolOp(ir.BoolOp("or", (ir.Unary("not", node.args[0]), node.args[1])), depth)
        raise Unsupported


def source_of(exprs: Sequence[ir.Expr]) -> tuple[str, list[str], list[Any]]:
    """The generated source of the checker of ``exprs`` (all must be exactly True), the names of
    the factory's arguments and the data they are bound to."""
    writer = _Writer()
    body: list[str] = []
    for expr in exprs:
        value = writer.value(expr, 0)
        writer.emit(0, f"if {value} is not True:")
        writer.emit(1, "return False")
    body = writer.lines
    params = [*sorted(_FIXED_DATA), *writer.names]
    lines = [f"def _factory({', '.join(params)}):", "    def _check(env):", "        _st = env.state"]
    lines += ["        " + line for line in body]
    lines += ["        return True", "    return _check", ""]
    return "\n".join(lines), params, [_FIXED_DATA[n] for n in sorted(_FIXED_DATA)] + writer.data


def all_true(exprs: Sequence[ir.Expr]) -> Callable[[Env], bool] | None:
    """A function ``env -> bool``: True only when every one of ``exprs`` is exactly True there;
    False when one is not or the generated code is not sure. None for no clauses."""
    if not exprs:
        return None
    source, _, data = source_of(exprs)
    namespace: dict[str, Any] = {"__builtins__": {}}
    exec(compile(source, "<envfactory generated checker>", "exec"), namespace)
    check: Callable[[Env], bool] = namespace["_factory"](*data)
    return check


def generated_names(count: int) -> frozenset[str]:
    """Every identifier generated source may hold, for sources with fewer than ``count`` values
    (the allow-list the safety test checks the source against)."""
    numbered = {f"_{p}{i}" for p in "vkf" for i in range(count + 1)}
    return frozenset(numbered | _FIXED | {"_factory", "_check"})


__all__ = ["ATTRIBUTES", "all_true", "generated_names", "source_of"]
