"""Generated checkers: an operation's clauses, or its whole step, written out as one Python function.

``all_true`` writes a conjunction of clauses; ``step_checker`` writes a whole step (input schema,
requires, effects written in place with their own rollback, output schema, ensures, invariant
re-checks at the written keys), which the verifier runs first on every step.

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

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.parser import Effect
from envfactory.contracts.values import FrozenMap

_MISSING = object()

_COMPARE = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*"}


class _NotSure(Exception):
    """Raised by a generated step checker after it wrote: caught in the same function, which
    puts back what it wrote and answers "not sure"."""


_UNWRITTEN = object()

_FIXED_DATA: dict[str, Any] = {
    "_MISSING": _MISSING,
    "_UNW": _UNWRITTEN,
    "_FM": FrozenMap,
    "_int": int,
    "_str": str,
    "_bool": bool,
    "_none": type(None),
    "_dict": dict,
    "_list": list,
    "_len": len,
    "_set": dict.__setitem__,
    "_del": dict.__delitem__,
    "_pop": dict.pop,
    "_NS": _NotSure,
    "_zero": 0,
    "_plain": frozenset({int, float, str, bool, type(None), dict, list, FrozenMap}),
    "_Exc": Exception,
}
_FIXED = frozenset({"env", "_st", "_ow", "_run", "_h", *_FIXED_DATA})
_CLASS_NAMES = {
    int: "_int",
    str: "_str",
    bool: "_bool",
    type(None): "_none",
    dict: "_dict",
    FrozenMap: "_FM",
    list: "_list",
}
"""The generator's own names besides the numbered ones (``_v``, ``_k``, ``_f``)."""
ATTRIBUTES = frozenset({"input", "output", "state", "owned", "get", "add", "__class__"})
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
        self.bound: dict[str, str] = {}  # a quantifier's variable -> the generated local holding it
        self.fail = "return False"  # what "not sure" is written as (``raise _NS`` once state is written)
        # values already computed on the straight-line path at ``level`` (no branch or loop around
        # them, state unchanged since): read again, not recomputed
        self.known: dict[Any, str] = {}
        self.level = 0
        self.cls: dict[str, type] = {}  # locals and constants whose class is sure wherever they are read
        # locals whose class the straight-line path has tested (one of these classes); a local is
        # bound once, so what a test found stays true after the state changes
        self.tested: dict[str, frozenset[type]] = {}
        self.state_vars: dict[str, str] = {}  # state variables read up front (``read_state``)

    def var(self, cls: type | None = None) -> str:
        """A new local; ``cls``: the class its value surely has (then no test of it is written)."""
        self.count += 1
        name = f"_v{self.count}"
        if cls is not None:
            self.cls[name] = cls
        else:  # numbers are reused after ``attempt`` takes code back
            self.cls.pop(name, None)
        return name

    def constant(self, value: Any) -> str:
        name = f"_k{len(self.data)}"
        self.data.append(value)
        self.names.append(name)
        self.cls[name] = value.__class__
        return name

    def closure(self, fn: Compiled) -> str:
        name = f"_f{len(self.data)}"
        self.data.append(fn)
        self.names.append(name)
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def guard(self, depth: int, name: str, *classes: type) -> None:
        """Give up ("not sure") unless ``name``'s value is of one of ``classes``; nothing is
        written when that is known already, and a test on the straight-line path is remembered."""
        known = self.cls.get(name)
        if known is not None and known in classes:
            return
        tested = self.tested.get(name)
        if tested is not None and tested <= set(classes):
            return
        test = " and ".join(f"{name}.__class__ is not {_CLASS_NAMES[c]}" for c in classes)
        self.emit(depth, f"if {test}:")
        self.emit(depth + 1, self.fail)
        if depth == self.level:
            self.tested[name] = frozenset(classes)

    def read_state(self, names: Iterable[str], depth: int) -> None:
        """Read each state variable once, up front (``_st[...]``: a missing one raises, not sure);
        ``_Name`` then reuses the local. Done again after the step wrote."""
        self.state_vars = {}
        for name in sorted(set(names) - {"input", "output"}):
            key = self.constant(name)
            out = self.var()
            self.emit(depth, f"{out} = _st[{key}]")
            self.state_vars[name] = out

    # ------------------------------------------------------------------ one expression

    def value(self, node: ir.Expr, depth: int) -> str:
        """Emit statements at ``depth`` that leave ``node``'s value in a new variable (or return
        False, "not sure"); return the variable."""
        shared = depth == self.level and not self.bound
        key = _shape(node) if shared else None
        if key is not None and key in self.known:
            return self.known[key]
        out = None
        method: Callable[[Any, int], str] | None = getattr(self, "_" + type(node).__name__, None)
        if method is not None:
            out = self.attempt(lambda: method(node, depth))
        if out is None:
            out = self._closure_value(node, depth)
        if key is not None:
            self.known[key] = out
        return out

    def straight(self, level: int) -> None:
        """From here on, straight-line code is at ``level``, and nothing computed before is reused
        (the state is about to change); the classes tested of locals still hold."""
        self.known = {}
        self.level = level

    def attempt(self, build: Callable[[], str]) -> str | None:
        """``build()``, or None with everything it emitted taken back when it raised ``Unsupported``."""
        mark = (
            len(self.lines),
            len(self.data),
            len(self.names),
            self.count,
            dict(self.bound),
            dict(self.known),
            dict(self.tested),
        )
        try:
            return build()
        except Unsupported:
            del self.lines[mark[0] :], self.data[mark[1] :], self.names[mark[2] :]
            self.count, self.bound, self.known, self.tested = mark[3], mark[4], mark[5], mark[6]
            return None

    def _closure_value(self, node: ir.Expr, depth: int) -> str:
        if self.bound:  # a closure would read the variable from ``env.locals``, which is not set
            raise Unsupported
        fn = self.closure(compile_expr(node))
        out = self.var()
        self.emit(depth, f"{out} = {fn}(env)")
        return out

    def _Const(self, node: ir.Const, depth: int) -> str:
        if node.value.__class__ not in (int, str, bool, type(None)):
            raise Unsupported
        return self.constant(node.value)

    def _Name(self, node: ir.Name, depth: int) -> str:
        if node.id in self.bound:
            return self.bound[node.id]
        if node.id in self.state_vars:
            return self.state_vars[node.id]
        out = self.var()
        if node.id in ("input", "output"):
            self.emit(depth, f"{out} = env.{node.id}")
            return out
        key = self.constant(node.id)
        self.emit(depth, f"{out} = _st[{key}]")  # a KeyError: not sure (the caller's or our except)
        return out

    def _Attr(self, node: ir.Attr, depth: int) -> str:
        obj = self.value(node.obj, depth)
        key = self.constant(node.name)
        out = self.var()
        self.guard(depth, obj, dict)
        self.emit(depth, f"{out} = {obj}.get({key})")
        return out

    def _Index(self, node: ir.Index, depth: int) -> str:
        obj = self.value(node.obj, depth)
        key = self.value(node.key, depth)
        out = self.var()
        self.guard(depth, obj, FrozenMap)
        self.guard(depth, key, int, str)
        self.emit(depth, f"{out} = {obj}[{key}]")  # a missing key raises KeyError: not sure
        return out

    def _Unary(self, node: ir.Unary, depth: int) -> str:
        operand = self.value(node.operand, depth)
        if node.op == "not":
            out = self.var(bool)
            self.guard(depth, operand, bool)
            self.emit(depth, f"{out} = not {operand}")
        elif node.op == "-":
            out = self.var(int)
            self.guard(depth, operand, int)
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
        out = self.var(int)
        self.guard(depth, left, int)
        self.guard(depth, right, int)
        self.emit(depth, f"{out} = {left} {op} {right}")
        return out

    def _Compare(self, node: ir.Compare, depth: int) -> str:
        if node.op in ("in", "not in"):
            item = self.value(node.left, depth)
            container = self.value(node.right, depth)
            out = self.var(bool)
            self.guard(depth, container, FrozenMap)
            self.guard(depth, item, int, str)
            self.emit(depth, f"{out} = {item} {'not in' if node.op == 'not in' else 'in'} {container}")
            return out
        op = _COMPARE.get(node.op)
        if op is None:
            raise Unsupported
        left = self.value(node.left, depth)
        right = self.value(node.right, depth)
        out = self.var(bool)
        if op in ("==", "!="):
            # on JSON values the language's strict == is Python's, except that a boolean
            # equals no number (``values.strict_eq``)
            same = self._equal(depth, left, right)
            self.emit(depth, f"{out} = {same}" if op == "==" else f"{out} = not ({same})")
            return out
        known = self.cls.get(left) or self.cls.get(right)
        if known in (int, str):
            self.guard(depth, left, known)
            self.guard(depth, right, known)
        else:
            self.emit(
                depth,
                f"if {left}.__class__ is not {right}.__class__ or ({left}.__class__ is not _int and {left}.__class__ is not _str):",
            )
            self.emit(depth + 1, self.fail)
        self.emit(depth, f"{out} = {left} {op} {right}")
        return out

    def _equal(self, depth: int, left: str, right: str) -> str:
        """The expression of ``strict_eq(left, right)``: Python's ``==``, a boolean equal to no
        number. With a constant of known class on one side, one test or none is needed."""
        for one, other in ((left, right), (right, left)):
            cls = self.cls.get(one)
            if cls is str:  # a string equals only a string: Python's == is exact
                return f"{other} == {one}"
            if cls is type(None):
                return f"{other} is None"
            if cls is bool:
                return f"{other} is {one}"
            if cls is int:
                return f"({other}.__class__ is not _bool and {other} == {one})"
        self.emit(depth, f"if {left}.__class__ not in _plain or {right}.__class__ not in _plain:")
        self.emit(depth + 1, self.fail)
        return f"({left}.__class__ is _bool) is ({right}.__class__ is _bool) and {left} == {right}"

    def _BoolOp(self, node: ir.BoolOp, depth: int) -> str:
        if node.op not in ("and", "or"):
            raise Unsupported
        stop = "False" if node.op == "and" else "True"  # the value that decides the whole
        go = "True" if node.op == "and" else "False"
        out = self.var(bool)
        self.emit(depth, f"{out} = {stop}")
        level = depth
        for operand in node.operands:
            value = self.value(operand, level)
            if self.cls.get(value) is not bool:
                self.emit(level, f"if {value} is not {go} and {value} is not {stop}:")
                self.emit(level + 1, self.fail)
            self.emit(level, f"if {value} is {go}:")
            level += 1
        self.emit(level, f"{out} = {go}")
        return out

    def _IfExp(self, node: ir.IfExp, depth: int) -> str:
        test = self.value(node.test, depth)
        out = self.var()
        self.guard(depth, test, bool)
        self.emit(depth, f"if {test}:")
        body = self.value(node.body, depth + 1)
        self.emit(depth + 1, f"{out} = {body}")
        self.emit(depth, "else:")
        orelse = self.value(node.orelse, depth + 1)
        self.emit(depth + 1, f"{out} = {orelse}")
        return out

    def _RecordLit(self, node: ir.RecordLit, depth: int) -> str:
        parts = [
            (self.constant(k), self.value(v, depth)) for k, v in zip(node.keys, node.values, strict=True)
        ]
        out = self.var(dict)
        self.emit(depth, f"{out} = {{{', '.join(f'{k}: {v}' for k, v in parts)}}}")
        return out

    def _ListLit(self, node: ir.ListLit, depth: int) -> str:
        items = [self.value(v, depth) for v in node.items]
        out = self.var(list)
        self.emit(depth, f"{out} = [{', '.join(items)}]")
        return out

    def _Quant(self, node: ir.Quant, depth: int) -> str:
        """``all``/``any``/``sum`` over a collection's keys as a loop, the variable a local."""
        if node.kind not in ("all", "any", "sum"):
            raise Unsupported
        domain = self.value(node.domain, depth)
        self.guard(depth, domain, FrozenMap)
        out = self.var(int if node.kind == "sum" else bool)
        item = self.var()
        self.emit(depth, f"{out} = {'_zero' if node.kind == 'sum' else node.kind == 'all'}")
        self.emit(depth, f"for {item} in {domain}:")
        inner = depth + 1
        outer = dict(self.bound)
        self.bound[node.var] = item
        if node.cond is not None:
            keep = self.value(node.cond, inner)
            self.emit(inner, f"if {keep} is not True:")
            if self.cls.get(keep) is not bool:
                self.emit(inner + 1, f"if {keep} is not False:")
                self.emit(inner + 2, self.fail)
            self.emit(inner + 1, "continue")
        body = self.value(node.body, inner)
        if node.kind == "sum":
            self.guard(inner, body, int)
            self.emit(inner, f"{out} += {body}")
        else:
            decides = "False" if node.kind == "all" else "True"
            self.emit(inner, f"if {body} is not {'True' if node.kind == 'all' else 'False'}:")
            if self.cls.get(body) is not bool:
                self.emit(inner + 1, f"if {body} is not {decides}:")
                self.emit(inner + 2, self.fail)
            self.emit(inner + 1, f"{out} = {decides}")
            self.emit(inner + 1, "break")
        self.bound = outer
        return out

    def _Call(self, node: ir.Call, depth: int) -> str:
        if node.func == "len" and len(node.args) == 1:
            arg = self.value(node.args[0], depth)
            out = self.var(int)
            self.guard(depth, arg, FrozenMap, str)
            self.emit(depth, f"{out} = _len({arg})")
            return out
        if node.func == "implies" and len(node.args) == 2:
            return self._BoolOp(ir.BoolOp("or", (ir.Unary("not", node.args[0]), node.args[1])), depth)
        raise Unsupported


def source_of(exprs: Sequence[ir.Expr]) -> tuple[str, list[str], list[Any]]:
    """The generated source of the checker of ``exprs`` (all must be exactly True), the names of
    the factory's arguments and the data they are bound to."""
    writer = _Writer()
    writer.emit(0, "_st = env.state")
    writer.read_state(_reads(exprs), 0)
    for expr in exprs:
        value = writer.value(expr, 0)
        writer.emit(0, f"if {value} is not True:")
        writer.emit(1, "return False")
    writer.emit(0, "return True")
    return _assemble(writer, "env")


def _assemble(writer: _Writer, args: str) -> tuple[str, list[str], list[Any]]:
    params = [*sorted(_FIXED_DATA), *writer.names]
    lines = [f"def _factory({', '.join(params)}):", f"    def _check({args}):"]
    lines += ["        " + line for line in writer.lines]
    lines += ["    return _check", ""]
    return "\n".join(lines), params, [_FIXED_DATA[n] for n in sorted(_FIXED_DATA)] + writer.data


def _build(source: str, data: list[Any]) -> Callable[..., bool]:
    namespace: dict[str, Any] = {"__builtins__": {}}
    exec(compile(source, "<envfactory generated checker>", "exec"), namespace)
    check: Callable[..., bool] = namespace["_factory"](*data)
    return check


def all_true(exprs: Sequence[ir.Expr]) -> Callable[[Env], bool] | None:
    """A function ``env -> bool``: True only when every one of ``exprs`` is exactly True there;
    False (or an exception, such as ``KeyError`` for a missing key) when one is not or the
    generated code is not sure. None for no clauses."""
    if not exprs:
        return None
    source, _, data = source_of(exprs)
    return _build(source, data)


@attrs.frozen
class StepSpec:
    """What one operation's step checker checks, in the verifier's order.

    ``rechecks`` are the invariants to re-check after the step, each with whether it is
    ``all(body for k in c)`` to check at the keys of ``c`` the step wrote only (sound because it
    held before; ``envfactory._fastpath.rechecks`` decides). ``input_test``/``output_test`` are
    the compiled schemas' tests (true for a valid value; may raise on one they cannot take).
    ``collections`` names the state's collections.
    """

    requires: tuple[ir.Expr, ...]
    effects: tuple[Effect, ...]
    ensures: tuple[ir.Expr, ...]
    rechecks: tuple[tuple[ir.Expr, bool], ...]
    input_test: Callable[[Any], Any] | None
    output_test: Callable[[Any], Any] | None
    needs_output: bool
    collections: frozenset[str]
    guards: tuple[tuple[str, int], ...] = ()
    """``(variable, sign)``: a per-key re-check above is sound only when the step moved the
    variable that way (``envfactory._fastpath.monotone_rechecks``): an ``int`` that did not
    shrink (sign +1) or grow (-1); anything else is "not sure"."""


def step_source(spec: StepSpec) -> tuple[str, list[str], list[Any]]:
    """The generated source of one operation's step checker ``_check(env, _run, _h)``.

    It reads the call's input and output from ``env`` (whose ``state`` is ``_run.state``) and
    whether an output was recorded from ``_h``. It answers True when it is sure the step passes
    every check (input schema, requires, effects, output schema, ensures, the invariant
    re-checks), having written the effects into ``_run.state`` in place (copying a collection
    the run does not own yet, as ``envfactory._fastpath.Run`` does); anything else answers False
    (or raises, before it wrote) with the state as it was: each write keeps what it overwrote in
    a local, and a failure after the first write puts those back, last first. Raises
    ``Unsupported`` for an operation it writes no checker for (the caller keeps the closures).
    """
    free = [n for e in (*spec.requires, *(c for c, _ in spec.rechecks)) for n in ir.free_names(e)]
    if "output" in free or "input" in [n for c, _ in spec.rechecks for n in ir.free_names(c)]:
        raise Unsupported
    w = _Writer()
    w.emit(0, "_st = _run.state")
    if spec.needs_output:
        w.emit(0, "if not _h:")
        w.emit(1, "return False")
    if spec.input_test is not None:
        test = w.closure(spec.input_test)
        w.emit(0, f"if not {test}(env.input):")
        w.emit(1, "return False")
    parts = [e for effect in spec.effects for e in (effect.target.key, effect.value) if e is not None]
    later = [] if spec.effects else [*spec.ensures, *(c for c, _ in spec.rechecks)]  # same state
    guarded = [var for var, _ in spec.guards]
    w.read_state(_reads([*spec.requires, *parts, *later]) | set(guarded), 0)
    before = dict(w.state_vars)
    for expr in spec.requires:
        _all_true(w, expr, 0)
    planned = [_plan_write(w, effect, spec.collections) for effect in spec.effects]
    depth = 0
    if planned:
        w.emit(0, "_ow = _run.owned")
        w.emit(0, " = ".join(p.old for p in planned) + " = _UNW")
        w.emit(0, "try:")
        w.fail, depth = "raise _NS", 1
        w.straight(1)
        for p in planned:
            _write(w, p, depth)
        w.read_state(_reads([*spec.ensures, *(c for c, _ in spec.rechecks)]) | set(guarded), depth)
        for var, sign in spec.guards:
            old, new = before[var], w.state_vars[var]
            w.emit(depth, f"if {old}.__class__ is not _int or {new}.__class__ is not _int:")
            w.emit(depth + 1, w.fail)
            w.emit(depth, f"if {new} {'<' if sign > 0 else '>'} {old}:")
            w.emit(depth + 1, w.fail)
    if spec.output_test is not None:
        test = w.closure(spec.output_test)
        w.emit(depth, "if _h:")
        w.emit(depth + 1, f"if not {test}(env.output):")
        w.emit(depth + 2, w.fail)
    for expr in spec.ensures:
        _all_true(w, expr, depth)
    for expr, per_key in spec.rechecks:
        if not (per_key and w.attempt(functools.partial(_per_key, w, expr, planned, depth)) is not None):
            _all_true(w, expr, depth)
    w.emit(depth, "return True")
    if planned:
        w.emit(0, "except _Exc:")
        for p in reversed(planned):
            w.emit(1, f"if {p.old} is not _UNW:")
            w.emit(2, f"if {p.old} is _MISSING:")
            w.emit(3, f"_pop({p.container}, {p.key or p.var}, None)")
            w.emit(2, "else:")
            w.emit(3, f"_set({p.container}, {p.key or p.var}, {p.old})")
        w.emit(1, "return False")
    return _assemble(w, "env, _run, _h")


def step_checker(spec: StepSpec) -> Callable[[Env, Any, bool], bool] | None:
    """The compiled step checker of ``step_source``, or None for an operation it does not cover."""
    try:
        source, _, data = step_source(spec)
    except Unsupported:
        return None
    return _build(source, data)


def _shape(node: Any) -> Any:
    """``node`` without its source locations: equal shapes compute equal values."""
    if isinstance(node, ir.Expr):
        fields = attrs.fields(type(node))
        return (type(node).__name__, *(_shape(getattr(node, f.name)) for f in fields if f.name != "loc"))
    if isinstance(node, tuple):
        return tuple(_shape(v) for v in node)
    return (type(node).__name__, node)


def _reads(exprs: Iterable[ir.Expr]) -> set[str]:
    """The state variables ``exprs`` read (their free names but ``input`` and ``output``)."""
    return {n for e in exprs for n in ir.free_names(e)} - {"input", "output"}


def _all_true(w: _Writer, expr: ir.Expr, depth: int) -> None:
    value = w.value(expr, depth)
    w.emit(depth, f"if {value} is not True:")
    w.emit(depth + 1, w.fail)


@attrs.frozen
class _Planned:
    """One effect with its key and value computed on the pre-state (generated locals) and the
    locals its write will use: the container written and what it held (``_UNW`` until written)."""

    var: str
    key: str | None
    value: str | None
    field: str | None
    container: str
    old: str
    state_var: str


def _plan_write(w: _Writer, effect: Effect, collections: frozenset[str]) -> _Planned:
    target = effect.target
    if len(target.fields) > 1 or (target.key is None and (target.fields or target.var in collections)):
        raise Unsupported  # nested fields, or a whole collection replaced: the closures' path
    if effect.value is None and target.key is None:
        raise Unsupported
    var = w.constant(target.var)
    key = None
    if target.key is not None:
        key = w.value(target.key, 0)
        w.guard(0, key, int, str)
    value = w.value(effect.value, 0) if effect.value is not None else None
    field = w.constant(target.fields[0]) if target.fields else None
    return _Planned(var, key, value, field, w.var(), w.var(), target.var)


def _write(w: _Writer, p: _Planned, depth: int) -> None:
    """One write, in place, keeping what it overwrote in ``p.old`` (as ``_fastpath._put``)."""
    if p.key is None:
        w.emit(depth, f"{p.container} = _st")
        w.emit(depth, f"{p.old} = _st.get({p.var}, _MISSING)")
        w.emit(depth, f"_set(_st, {p.var}, {p.value})")
        return
    w.emit(depth, f"{p.container} = _st.get({p.var}, _MISSING)")
    w.emit(depth, f"if {p.container}.__class__ is not _FM:")
    w.emit(depth + 1, "raise _NS")
    record = w.var()
    w.emit(depth, f"{record} = {p.container}.get({p.key}, _MISSING)")
    value = p.value
    if p.value is None:
        w.emit(depth, f"if {record} is _MISSING:")
        w.emit(depth + 1, "raise _NS")
    elif p.field is not None:
        w.emit(depth, f"if {record}.__class__ is not _dict:")
        w.emit(depth + 1, "raise _NS")
        value = w.var()
        w.emit(depth, f"{value} = _dict({record})")
        w.emit(depth, f"{value}[{p.field}] = {p.value}")
    w.emit(depth, f"if {p.var} not in _ow:")  # the run's first write to this collection: copy it
    w.emit(depth + 1, f"{p.container} = _FM({p.container})")
    w.emit(depth + 1, f"_set(_st, {p.var}, {p.container})")
    w.emit(depth + 1, f"_ow.add({p.var})")
    w.emit(depth, f"{p.old} = {record}")
    if value is None:
        w.emit(depth, f"_del({p.container}, {p.key})")
    else:
        w.emit(depth, f"_set({p.container}, {p.key}, {value})")


def _per_key(w: _Writer, expr: ir.Expr, planned: list[_Planned], depth: int) -> str:
    """``all(body for k in c)`` checked at the keys of ``c`` the step wrote and still holds."""
    if not (isinstance(expr, ir.Quant) and expr.kind == "all" and expr.cond is None):
        raise Unsupported
    if not isinstance(expr.domain, ir.Name):
        raise Unsupported
    coll = expr.domain.id
    items = w.value(expr.domain, depth)
    w.guard(depth, items, FrozenMap)
    for p in planned:
        if p.state_var != coll or p.key is None:
            continue
        w.emit(depth, f"if {p.key} in {items}:")
        w.bound = {expr.var: p.key}
        _all_true(w, expr.body, depth + 1)
        w.bound = {}
    return items


def generated_names(count: int) -> frozenset[str]:
    """Every identifier generated source may hold, for sources with fewer than ``count`` values
    (the allow-list the safety test checks the source against)."""
    numbered = {f"_{p}{i}" for p in "vkf" for i in range(count + 1)}
    return frozenset(numbered | _FIXED | {"_factory", "_check"})


__all__ = [
    "ATTRIBUTES",
    "StepSpec",
    "Unsupported",
    "all_true",
    "generated_names",
    "source_of",
    "step_checker",
    "step_source",
]
