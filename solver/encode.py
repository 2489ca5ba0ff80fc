"""The Z3 interpretation of the expression IR: the second reading of ``contracts.ir``.

``encode_expr(expr, env)`` walks the same frozen nodes the concrete evaluator compiles, one method
per node class (``_Const`` ... ``_Quant``), and returns an ``Encoded(value, ok)``:

* ``value`` is a symbolic value (``solver.symbolic``: ``Null``, ``Bool``, ``Int``, ``Real``,
  ``Str``, ``Atom`` (a string read abstractly: equality and membership, order and length
  through ``solver.measures``, prefixes and suffixes through ``solver.affixes``; ``NeedStrings``
  otherwise), ``Rec``, ``Lst``, ``Map`` of slots with symbolic keys, ``Union`` of guarded options,
  ``Py`` for a value that is entirely known);
* ``ok`` is a Bool term: when the concrete evaluator would *not* raise ``EvaluationError``
  (a missing key, a field of null, a wrong type, division by zero). A clause holds exactly when
  ``ok`` and its value is ``true``, as in ``Machine``.

The rules are those of ``contracts.values`` (docs/language.md, "Semantics"): null equals only
null, booleans are not numbers, ``/`` is true division, ``//`` and ``%`` floor as in Python,
``and``/``or``/``implies``/``if`` short-circuit (the ``ok`` of a skipped operand does not count),
quantifiers stop at the first decisive item in iteration order. A sub-expression whose every name
is bound to a ``Py`` value goes to the reference interpreter, so the known bulk of a trajectory
costs no Z3 terms at all; terms that only depend on known values are folded by Python, so they
match the evaluator bit for bit. Symbolic reals are rationals, which ``Tracker.inexact`` records. Anything outside the fragment raises
``Unsupported`` (a ``SolverError``): the caller turns it into the verdict ``unknown``.

``SymEnv`` is what an expression reads: the state (name -> value), input, output, bound
variables. This module imports z3 and the contracts layer only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeGuard

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts import values as V
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.interpreter import Interpreter
from envfactory.solver import maps
from envfactory.solver.affixes import Affixes, has
from envfactory.solver.measures import Lengths, Ranks
from envfactory.solver.symbolic import (
    NULL,
    Atom,
    Bool,
    Budget,
    Int,
    Lst,
    Map,
    Null,
    Opaque,
    Py,
    Real,
    Rec,
    Slot,
    Str,
    SVal,
    Term,
    Union,
    Unsupported,
    and_,
    arith,
    atom_term,
    case_pairs,
    cases,
    eq,
    is_sym,
    ite,
    join,
    key_sval,
    merge,
    no_atoms,
    no_opaque,
    not_,
    or_,
    or_all,
    same_term,
    term_of,
    to_real,
    to_z3,
)

DEFAULT_BUDGET = 2_000_000
"""Most IR nodes one ``Encoder`` will encode (quantifiers unroll, so a node can count many times)."""


@attrs.frozen(slots=True, eq=False)
class Encoded:
    """A symbolic value and the condition under which evaluating it is defined."""

    value: SVal
    ok: Term


class SymEnv:
    """What an expression reads, symbolically: state, input, output and bound variables."""

    __slots__ = ("input", "locals", "output", "state")

    def __init__(self, state: Mapping[str, SVal], input: SVal = NULL, output: SVal = NULL) -> None:
        self.state = state
        self.input = input
        self.output = output
        self.locals: dict[str, SVal] = {}


class _KnownState(Mapping[str, Any]):
    """The known part of a symbolic state, as the plain values the interpreter reads."""

    __slots__ = ("_state",)

    def __init__(self, state: Mapping[str, SVal]) -> None:
        self._state = state

    def __getitem__(self, name: str) -> Any:
        value = self._state[name]
        if not isinstance(value, Py):
            raise KeyError(name)
        return value.value

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)


def _plain(v: SVal) -> Any:
    return v.value if isinstance(v, Py) else None


_FREE: dict[int, tuple[ir.Expr, frozenset[str]]] = {}
"""``ir.free_names`` of every node seen, by identity (IR nodes are immutable and shared by every
call on a contract); cleared when it grows past ``_MAX_FREE`` entries."""
_MAX_FREE = 200_000


def free_of(node: ir.Expr) -> frozenset[str]:
    """``ir.free_names(node)``, remembered for the node and every node below it."""
    entry = _FREE.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    if isinstance(node, ir.Name):
        names = frozenset({node.id})
    elif isinstance(node, ir.Quant):
        inner = free_of(node.body) | (free_of(node.cond) if node.cond is not None else frozenset())
        names = free_of(node.domain) | (inner - {node.var})
    else:
        names = frozenset().union(*(free_of(child) for child in ir.children(node)))
    if len(_FREE) >= _MAX_FREE:
        _FREE.clear()
    _FREE[id(node)] = (node, names)
    return names


class Tracker:
    """What an encoding leaned on: approximations (so an ``unsat`` may not be trusted) and the key
    terms read from open-world collections (so that the next pass can give them initial slots)."""

    def __init__(self) -> None:
        self.inexact: list[str] = []
        self.open_keys: dict[str, list[Term]] = {}

    def note(self, reason: str) -> None:
        self.inexact.append(reason)

    def touch(self, m: Map, key: SVal) -> None:
        if not m.open:
            return
        known = self.open_keys.setdefault(m.name, [])
        for _, option in cases(key):
            term = maps.key_term(m, option)
            if term is None or isinstance(option, Bool | Real):
                continue
            if not any(same_term(term, k) for k in known):
                known.append(term)


def _truth(v: SVal) -> tuple[Term, Term]:
    """(value, ok) of using ``v`` where a boolean is needed."""
    no_opaque(v)
    if isinstance(v, Py):
        return (v.value, True) if isinstance(v.value, bool) else (False, False)
    if isinstance(v, Bool):
        return v.t, True
    if isinstance(v, Union):
        value = or_all(and_(g, o.t) for g, o in v.options if isinstance(o, Bool))
        ok = or_all(g for g, o in v.options if isinstance(o, Bool))
        return value, ok
    return False, False


def _constant(t: Term) -> bool | None:
    """A Bool term's value where it is a constant (after simplification), else None."""
    if not is_sym(t):
        return bool(t)
    t = z3.simplify(t)
    return True if z3.is_true(t) else False if z3.is_false(t) else None


def _is_collection(v: SVal) -> TypeGuard[Map | Py]:
    return isinstance(v, Map) or (isinstance(v, Py) and isinstance(v.value, V.FrozenMap))


def _number(v: SVal) -> bool:
    return isinstance(v, Int | Real)


def _num_kind(a: SVal, b: SVal) -> type[Int] | type[Real]:
    return Int if isinstance(a, Int) and isinstance(b, Int) else Real


class Encoder:
    """Encodes IR nodes over symbolic values; one method per node class, named ``_<Class>``."""

    def __init__(
        self, tracker: Tracker | None = None, budget: int = DEFAULT_BUDGET, deadline: float | None = None
    ) -> None:
        self.tracker = tracker if tracker is not None else Tracker()
        self.budget = budget
        self.deadline = deadline  # time.monotonic() after which encoding stops (``Budget``)
        self._bound: list[tuple[Map, Slot]] = []  # (collection, slot) a quantifier is visiting
        self._interpreter = Interpreter()
        self.affixes = Affixes({})
        """The literal prefixes and suffixes abstract strings are tested against (``affixes``):
        none unless a ``Transition`` collected the contract's in its dry run."""
        self.ranks = Ranks()
        """The order of abstract strings (``measures``)."""
        self.lengths = Lengths()
        """The lengths of abstract strings (``measures``)."""
        self._dispatch: dict[type[ir.Expr], Callable[[Any, SymEnv], Encoded]] = {
            t: getattr(self, "_" + t.__name__) for t in ir.NODE_TYPES if hasattr(self, "_" + t.__name__)
        }

    def encode(self, node: ir.Expr, env: SymEnv) -> Encoded:
        self.budget -= 1
        if self.budget & 1023 == 0:
            if self.budget < 0:
                raise Budget("the encoding is too large (more IR nodes than the solver budget allows)")
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise Budget("encoding took longer than the time limit")
        if self._known(node, env):
            return self._evaluate(node, env)
        method = self._dispatch.get(type(node))
        if method is None:
            raise Unsupported(f"the Z3 encoder has no rule for {type(node).__name__}")
        return method(node, env)

    # -- known values: the concrete interpreter ---------------------------------------------------

    def _known(self, node: ir.Expr, env: SymEnv) -> bool:
        """Whether every name the expression reads is bound to a known (``Py``) value."""
        for name in free_of(node):
            if name in env.locals:
                value = env.locals[name]
            elif name == "input":
                value = env.input
            elif name == "output":
                value = env.output
            else:
                value = env.state.get(name)  # type: ignore[assignment]
            if not isinstance(value, Py):
                return False
        return True

    def _evaluate(self, node: ir.Expr, env: SymEnv) -> Encoded:
        """A sub-expression over known values, by the reference interpreter (exact by definition)."""
        if isinstance(node, ir.Const):
            return Encoded(Py(node.value), True)
        penv = Env(_KnownState(env.state), _plain(env.input), _plain(env.output))
        penv.locals = {k: v.value for k, v in env.locals.items() if isinstance(v, Py)}
        try:
            value = self._interpreter.eval(node, penv)
        except (EvaluationError, TypeError, ValueError, OverflowError):
            return Encoded(NULL, False)
        return Encoded(Py(value), True)

    # -- leaves ---------------------------------------------------------------------------------

    def _Const(self, node: ir.Const, env: SymEnv) -> Encoded:
        return Encoded(Py(node.value), True)

    def _ListLit(self, node: ir.ListLit, env: SymEnv) -> Encoded:
        parts = [self.encode(i, env) for i in node.items]
        return Encoded(Lst(tuple(p.value for p in parts)), and_(*(p.ok for p in parts)))

    def _RecordLit(self, node: ir.RecordLit, env: SymEnv) -> Encoded:
        parts = [self.encode(v, env) for v in node.values]
        fields = {k: (True, p.value) for k, p in zip(node.keys, parts, strict=True)}
        return Encoded(Rec(fields), and_(*(p.ok for p in parts)))

    def _Name(self, node: ir.Name, env: SymEnv) -> Encoded:
        name = node.id
        if name in env.locals:
            return Encoded(env.locals[name], True)
        if name == "input":
            return Encoded(env.input, True)
        if name == "output":
            return Encoded(env.output, True)
        value = env.state.get(name)
        if value is None:
            return Encoded(NULL, False)
        return Encoded(value, True)

    # -- access ---------------------------------------------------------------------------------

    def field(self, obj: SVal, name: str) -> Encoded:
        """``obj.name``: a record's field (null when absent), a collection's key ``name``."""
        no_opaque(obj)
        if _is_collection(obj):
            value, found = self.lookup(obj, Py(name))
            return Encoded(value, found)
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for g, o in cases(obj):
            if isinstance(o, Rec):
                present, value = o.get(name)
                out.append((g, merge(present, value, NULL)))
                oks.append(g)
            elif isinstance(o, Map):
                value, found = self.lookup(o, Str(name))
                out.append((g, value))
                oks.append(and_(g, found))
        return Encoded(join(out), or_all(oks))

    def _Attr(self, node: ir.Attr, env: SymEnv) -> Encoded:
        obj = self.encode(node.obj, env)
        got = self.field(obj.value, node.name)
        return Encoded(got.value, and_(obj.ok, got.ok))

    def _visiting(self, m: Map, key: SVal) -> Slot | None:
        """The slot a quantifier over ``m`` is visiting, when ``key`` is its bound key.

        Inside ``all(c[k].f ... for k in c)`` the visited slot is present (the item is skipped
        otherwise) and, keys being unique, it is the one ``c[k]`` reads: no ite-chain needed.
        """
        if isinstance(key, Py):
            term: Term = key.value
        elif isinstance(key, Int | Str | Atom):
            term = key.t
        else:
            return None
        for bound_map, slot in reversed(self._bound):
            if bound_map is m and same_term(slot.key, term):
                return slot
        return None

    def lookup(self, m: Map | Py, key: SVal) -> tuple[SVal, Term]:
        if isinstance(m, Map):
            slot = self._visiting(m, key)
            if slot is not None:
                return slot.value, slot.present
            self.tracker.touch(m, key)
        return maps.lookup(m, key)

    def index(self, obj: SVal, key: SVal) -> Encoded:
        no_opaque(obj, key)
        if _is_collection(obj):
            value, found = self.lookup(obj, key)
            return Encoded(value, found)
        if not any(isinstance(o, Map) for _, o in cases(obj)):
            no_atoms(obj, key)
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for g, o in cases(obj):
            if isinstance(o, Map):
                value, found = self.lookup(o, key)
                out.append((g, value))
                oks.append(and_(g, found))
                continue
            for h, k in cases(key):
                guard = and_(g, h)
                if guard is False:
                    continue
                if isinstance(o, Lst) and isinstance(k, Int):
                    n = o.length
                    for i, item in enumerate(o.items):
                        hit = and_(guard, o.within(i), or_(eq(k.t, i), eq(k.t, arith("-", i, n))))
                        if hit is not False:
                            out.append((hit, item))
                            oks.append(hit)
                elif isinstance(o, Rec) and isinstance(k, Str):
                    oks.append(guard)
                    if not is_sym(k.t):
                        present, value = o.get(k.t)
                        out.append((guard, merge(present, value, NULL)))
                        continue
                    rest = guard
                    for fname, (present, value) in o.fields.items():
                        hit = and_(guard, eq(k.t, fname))
                        out.append((hit, merge(present, value, NULL)))
                        rest = and_(rest, not_(hit))
                    out.append((rest, NULL))
                elif isinstance(o, Str) and isinstance(k, Int):
                    n = self._strlen(o.t)
                    pos = ite(arith("<", k.t, 0), arith("+", k.t, n), k.t)
                    inside = and_(arith("<=", 0, pos), arith("<", pos, n))
                    if not is_sym(o.t) and not is_sym(pos):
                        char = o.t[pos] if inside is True else ""
                        out.append((guard, Str(char)))
                    else:
                        out.append((guard, Str(z3.SubString(to_z3(o.t), to_z3(pos), 1))))
                    oks.append(and_(guard, inside))
        return Encoded(join(out), or_all(oks))

    def _Index(self, node: ir.Index, env: SymEnv) -> Encoded:
        obj = self.encode(node.obj, env)
        key = self.encode(node.key, env)
        got = self.index(obj.value, key.value)
        return Encoded(got.value, and_(obj.ok, key.ok, got.ok))

    @staticmethod
    def _strlen(t: Term) -> Term:
        return len(t) if not is_sym(t) else z3.Length(t)

    # -- operators ------------------------------------------------------------------------------

    def _Unary(self, node: ir.Unary, env: SymEnv) -> Encoded:
        operand = self.encode(node.operand, env)
        no_opaque(operand.value)
        no_atoms(operand.value)
        if node.op == "not":
            value, ok = _truth(operand.value)
            return Encoded(Bool(not_(value)), and_(operand.ok, ok))
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for g, o in cases(operand.value):
            if isinstance(o, Int | Real):
                t = o.t if node.op == "+" else -o.t
                out.append((g, type(o)(t)))
                oks.append(g)
        return Encoded(join(out), and_(operand.ok, or_all(oks)))

    def binop(self, op: str, a: SVal, b: SVal) -> Encoded:
        no_opaque(a, b)
        no_atoms(a, b)
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for guard, x, y in case_pairs(a, b):
            got = self._binop1(op, x, y)
            if got is None:
                continue
            value, ok = got
            out.append((guard, value))
            oks.append(and_(guard, ok))
        return Encoded(join(out), or_all(oks))

    def _binop1(self, op: str, x: SVal, y: SVal) -> tuple[SVal, Term] | None:
        if op == "+" and isinstance(x, Str) and isinstance(y, Str):
            if not is_sym(x.t) and not is_sym(y.t):
                return Str(x.t + y.t), True
            return Str(z3.Concat(to_z3(x.t), to_z3(y.t))), True
        if op == "+" and isinstance(x, Lst) and isinstance(y, Lst):
            return _concat(x, y), True
        if not (_number(x) and _number(y)):
            return None
        a: Term = term_of(x)
        b: Term = term_of(y)
        kind = _num_kind(x, y)
        symbolic = is_sym(a) or is_sym(b)
        if kind is Real and symbolic:
            self.tracker.note("real arithmetic is exact in Z3 but rounded in Python")
        if op in ("+", "-", "*"):
            return kind(arith(op, a, b)), True
        nonzero = not_(eq(b, 0))
        if op == "/":
            self.tracker.note("true division")
            if not symbolic:
                return Real(a / b if b != 0 else 0.0), nonzero
            return Real(to_real(to_z3(a)) / to_real(to_z3(b))), nonzero
        if not symbolic:
            if b == 0:
                return kind(0), False
            return kind(a // b if op == "//" else a % b), True
        if kind is Int:
            za, zb = to_z3(a), to_z3(b)
            quotient = z3.If(zb > 0, za / zb, (-za) / (-zb))
            return Int(quotient if op == "//" else za - zb * quotient), nonzero
        za, zb = to_real(to_z3(a)), to_real(to_z3(b))
        floor = z3.ToReal(z3.ToInt(za / zb))
        return Real(floor if op == "//" else za - zb * floor), nonzero

    def _BinOp(self, node: ir.BinOp, env: SymEnv) -> Encoded:
        left = self.encode(node.left, env)
        right = self.encode(node.right, env)
        got = self.binop(node.op, left.value, right.value)
        return Encoded(got.value, and_(left.ok, right.ok, got.ok))

    def equal(self, a: SVal, b: SVal) -> Term:
        """Strict equality: booleans are not numbers, ``1 == 1.0``, records compare field sets."""
        if isinstance(a, Py) and isinstance(b, Py):
            return V.strict_eq(a.value, b.value)
        if isinstance(a, Opaque) and isinstance(b, Opaque) and a.what == b.what:
            return eq(a.handle, b.handle)
        no_opaque(a, b)
        return or_all([and_(guard, self._equal1(x, y)) for guard, x, y in case_pairs(a, b)])

    def _equal1(self, x: SVal, y: SVal) -> Term:
        if isinstance(x, Null) and isinstance(y, Null):
            return True
        if _number(x) and _number(y):
            return eq(term_of(x), term_of(y))
        if isinstance(x, Atom) or isinstance(y, Atom):
            if not isinstance(x, Atom | Str) or not isinstance(y, Atom | Str):
                return False
            return eq(atom_term(x), atom_term(y))
        if type(x) is not type(y):
            return False
        if isinstance(x, Bool | Str):
            return eq(term_of(x), term_of(y))
        if isinstance(x, Rec):
            assert isinstance(y, Rec)
            parts = []
            for name in dict.fromkeys([*x.fields, *y.fields]):
                pa, va = x.get(name)
                pb, vb = y.get(name)
                parts.append(eq(pa, pb) if is_sym(pa) or is_sym(pb) else pa == pb)
                parts.append(or_(not_(pa), self.equal(va, vb)))
            return and_(*parts)
        if isinstance(x, Lst):
            assert isinstance(y, Lst)
            if x.n is None and y.n is None:
                if len(x.items) != len(y.items):
                    return False
                return and_(*(self.equal(i, j) for i, j in zip(x.items, y.items, strict=True)))
            parts = [eq(x.length, y.length)]
            for i in range(max(len(x.items), len(y.items))):
                if i < len(x.items) and i < len(y.items):
                    parts.append(or_(not_(x.within(i)), self.equal(x.items[i], y.items[i])))
                else:
                    parts.append(not_(x.within(i) if i < len(x.items) else y.within(i)))
            return and_(*parts)
        if isinstance(x, Map):
            assert isinstance(y, Map)
            if x.open or y.open:
                self.tracker.note("equality of an open-world collection")
            return and_(self._sub_map(x, y), self._sub_map(y, x))
        return False  # pragma: no cover

    def _sub_map(self, x: Map, y: Map) -> Term:
        parts = []
        for slot in x.slots:
            key = key_sval(x.key_kind, slot.key)
            value, found = maps.lookup(y, key)
            parts.append(or_(not_(slot.present), and_(found, self.equal(slot.value, value))))
        return and_(*parts)

    def contains(self, container: SVal, item: SVal) -> Encoded:
        """``item in container``: keys of a collection, items of a list, substrings, field names."""
        no_opaque(container, item)
        if _is_collection(container):
            return Encoded(Bool(self.lookup(container, item)[1]), True)
        values: list[Term] = []
        oks: list[Term] = []
        for g, c in cases(container):
            if isinstance(c, Map):
                values.append(and_(g, self.lookup(c, item)[1]))
                oks.append(g)
            elif isinstance(c, Lst):
                values.append(
                    and_(g, or_all(and_(c.within(i), self.equal(item, x)) for i, x in enumerate(c.items)))
                )
                oks.append(g)
            elif isinstance(c, Atom):
                no_atoms(c)
            elif isinstance(c, Rec):
                no_atoms(item)
                oks.append(g)
                for h, k in cases(item):
                    if isinstance(k, Str):
                        if not is_sym(k.t):
                            values.append(and_(g, h, c.get(k.t)[0]))
                        else:
                            values.append(
                                and_(g, h, or_all(and_(p, eq(k.t, n)) for n, (p, _) in c.fields.items()))
                            )
            elif isinstance(c, Str):
                no_atoms(item)
                for h, k in cases(item):
                    if isinstance(k, Str):
                        guard = and_(g, h)
                        oks.append(guard)
                        if not is_sym(k.t) and not is_sym(c.t):
                            values.append(and_(guard, k.t in c.t))
                        else:
                            values.append(and_(guard, z3.Contains(to_z3(c.t), to_z3(k.t))))
        return Encoded(Bool(or_all(values)), or_all(oks))

    def order(self, op: str, a: SVal, b: SVal) -> Encoded:
        no_opaque(a, b)
        values: list[Term] = []
        oks: list[Term] = []
        for guard, x, y in case_pairs(a, b):
            if isinstance(x, Atom) or isinstance(y, Atom):
                if isinstance(x, Atom | Str) and isinstance(y, Atom | Str):
                    values.append(and_(guard, self.ranks.compare(op, atom_term(x), atom_term(y))))
                    oks.append(guard)
            elif (_number(x) and _number(y)) or (isinstance(x, Str) and isinstance(y, Str)):
                values.append(and_(guard, arith(op, term_of(x), term_of(y))))
                oks.append(guard)
        return Encoded(Bool(or_all(values)), or_all(oks))

    def _Compare(self, node: ir.Compare, env: SymEnv) -> Encoded:
        left = self.encode(node.left, env)
        right = self.encode(node.right, env)
        ok = and_(left.ok, right.ok)
        op = node.op
        if op in ("==", "!="):
            same = self.equal(left.value, right.value)
            return Encoded(Bool(same if op == "==" else not_(same)), ok)
        if op in ("in", "not in"):
            got = self.contains(right.value, left.value)
            value = got.value.t if isinstance(got.value, Bool) else False
            return Encoded(Bool(value if op == "in" else not_(value)), and_(ok, got.ok))
        got = self.order(op, left.value, right.value)
        return Encoded(got.value, and_(ok, got.ok))

    # -- control --------------------------------------------------------------------------------

    def _BoolOp(self, node: ir.BoolOp, env: SymEnv) -> Encoded:
        stop = node.op == "or"
        parts: list[tuple[Term, Term]] = []
        for operand in node.operands:
            got = self.encode(operand, env)
            value, ok = _truth(got.value)
            ok = and_(got.ok, ok)
            parts.append((value, ok))
            if value is stop and ok is True:
                break  # every later operand is skipped, concretely and symbolically
        value_acc: Term = not stop
        ok_acc: Term = True
        for value, ok in reversed(parts):
            if stop:
                ok_acc = and_(ok, or_(value, ok_acc))
                value_acc = or_(value, value_acc)
            else:
                ok_acc = and_(ok, or_(not_(value), ok_acc))
                value_acc = and_(value, value_acc)
        return Encoded(Bool(value_acc), ok_acc)

    def _IfExp(self, node: ir.IfExp, env: SymEnv) -> Encoded:
        test = self.encode(node.test, env)
        tv, tok = _truth(test.value)
        ok = and_(test.ok, tok)
        if tv is True:
            body = self.encode(node.body, env)
            return Encoded(body.value, and_(ok, body.ok))
        if tv is False:
            orelse = self.encode(node.orelse, env)
            return Encoded(orelse.value, and_(ok, orelse.ok))
        body = self.encode(node.body, env)
        orelse = self.encode(node.orelse, env)
        return Encoded(merge(tv, body.value, orelse.value), and_(ok, ite(tv, body.ok, orelse.ok)))

    def length(self, v: SVal) -> Encoded:
        no_opaque(v)
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for g, o in cases(v):
            if isinstance(o, Atom):
                out.append((g, Int(self.lengths.of(o.t))))
            elif isinstance(o, Str):
                out.append((g, Int(self._strlen(o.t))))
            elif isinstance(o, Lst):
                out.append((g, Int(o.length)))
            elif isinstance(o, Rec):
                total: Term = 0
                for present, _ in o.fields.values():
                    total = arith("+", total, ite(present, 1, 0))
                out.append((g, Int(total)))
            elif isinstance(o, Map):
                if o.open:
                    self.tracker.note(f"len of open-world collection {o.name}")
                out.append((g, Int(maps.size(o))))
            else:
                continue
            oks.append(g)
        return Encoded(join(out), or_all(oks))

    def records(self, v: SVal, ok: Term) -> Encoded:
        """``values(c)``: a collection's records as a list, in slot (iteration) order. Where which
        slots are present is unknown, item ``j`` is the slot with ``j`` present slots before it
        and the length is the number of present slots (an open-world collection, whose unnamed
        entries are unknown, stays outside the fragment)."""
        no_opaque(v)
        out: list[tuple[Term, SVal]] = []
        oks: list[Term] = []
        for g, o in cases(v):
            if not isinstance(o, Map):
                continue
            if o.open:
                raise Unsupported(f"values() of open-world collection {o.name or '?'}")
            present = [_constant(s.present) for s in o.slots]
            if all(p is not None for p in present):
                out.append((g, Lst(tuple(s.value for s, p in zip(o.slots, present, strict=True) if p))))
            else:
                out.append((g, _compacted(o)))
            oks.append(g)
        return Encoded(join(out), and_(ok, or_all(oks)))

    def _Call(self, node: ir.Call, env: SymEnv) -> Encoded:
        func = node.func
        if func == "implies":
            premise = self.encode(node.args[0], env)
            pv, pok = _truth(premise.value)
            ok = and_(premise.ok, pok)
            if pv is False:
                return Encoded(Bool(True), ok)
            conclusion = self.encode(node.args[1], env)
            cv, cok = _truth(conclusion.value)
            return Encoded(Bool(or_(not_(pv), cv)), and_(ok, or_(not_(pv), and_(conclusion.ok, cok))))
        args = [self.encode(a, env) for a in node.args]
        ok = and_(*(a.ok for a in args))
        if func == "len":
            got = self.length(args[0].value)
            return Encoded(got.value, and_(ok, got.ok))
        if func == "values":
            return self.records(args[0].value, ok)
        if func == "abs":
            out: list[tuple[Term, SVal]] = []
            oks: list[Term] = []
            for g, o in cases(args[0].value):
                if isinstance(o, Int | Real):
                    t = abs(o.t) if not is_sym(o.t) else z3.If(o.t < 0, -o.t, o.t)
                    out.append((g, type(o)(t)))
                    oks.append(g)
            return Encoded(join(out), and_(ok, or_all(oks)))
        if func in ("min", "max"):
            out = []
            oks = []
            for guard, x, y in case_pairs(args[0].value, args[1].value):
                if not (_number(x) and _number(y)):
                    continue
                a, b = term_of(x), term_of(y)
                # Python: min(a, b) is b only when b < a; max(a, b) is b only when b > a
                take_b = arith("<" if func == "min" else ">", b, a)
                kind = _num_kind(x, y)
                if kind is Real and isinstance(x, Int) != isinstance(y, Int) and not is_sym(take_b):
                    out.append((guard, y if take_b else x))
                else:
                    out.append((guard, kind(ite(take_b, b, a))))
                oks.append(guard)
            return Encoded(join(out), and_(ok, or_all(oks)))
        if func in ("startswith", "endswith"):
            no_atoms(args[1].value)  # a prefix the state or an input holds: strings, not identities
            values: list[Term] = []
            oks = []
            for guard, s, p in case_pairs(args[0].value, args[1].value):
                if isinstance(s, Atom) and isinstance(p, Str) and not is_sym(p.t):
                    values.append(and_(guard, self.affixes.test(func, s.t, p.t)))
                    oks.append(guard)
                    continue
                if not (isinstance(s, Str) and isinstance(p, Str)):
                    continue
                if not is_sym(s.t) and not is_sym(p.t):
                    hit = has(func, s.t, p.t)
                elif func == "startswith":
                    hit = z3.PrefixOf(to_z3(p.t), to_z3(s.t))
                else:
                    hit = z3.SuffixOf(to_z3(p.t), to_z3(s.t))
                values.append(and_(guard, hit))
                oks.append(guard)
            return Encoded(Bool(or_all(values)), and_(ok, or_all(oks)))
        raise Unsupported(f"the Z3 encoder has no rule for the built-in {func}()")

    def _Quant(self, node: ir.Quant, env: SymEnv) -> Encoded:
        domain = self.encode(node.domain, env)
        no_opaque(domain.value)
        items: list[tuple[Term, SVal, tuple[Map, Slot] | None]] = []  # (active, bound, visiting)
        kinds: list[Term] = []
        for g, d in cases(domain.value):
            if isinstance(d, Map):
                if d.open:
                    self.tracker.note(f"quantifier over open-world collection {d.name}")
                items.extend(
                    (
                        and_(g, s.present),
                        Py(s.key)
                        if not is_sym(s.key) and d.key_kind != "atom"
                        else key_sval(d.key_kind, s.key),
                        (d, s),
                    )
                    for s in d.slots
                )
                kinds.append(g)
            elif isinstance(d, Lst):
                items.extend((and_(g, d.within(i)), item, None) for i, item in enumerate(d.items))
                kinds.append(g)
        ok: Term = and_(domain.ok, or_all(kinds))
        var = node.var
        saved = env.locals.get(var)
        rows: list[tuple[Term, Term, Term, Encoded | None]] = []  # active, cond, cond_ok, body
        try:
            for active, bound, visiting in items:
                if active is False:
                    continue
                env.locals[var] = bound
                if visiting is not None:
                    self._bound.append(visiting)
                try:
                    rows.append((active, *self._item(node, env)))
                finally:
                    if visiting is not None:
                        self._bound.pop()
        finally:
            if saved is None:
                env.locals.pop(var, None)
            else:
                env.locals[var] = saved
        if node.kind == "sum":
            return self._sum(rows, ok)
        want = node.kind == "any"
        prior: Term = False
        oks: list[Term] = [ok]
        for active, cv, cok, body in rows:
            bv: Term = False
            bok: Term = True
            if body is not None:
                bv, btok = _truth(body.value)
                bok = and_(body.ok, btok)
            item_ok = and_(cok, or_(not_(cv), bok))
            oks.append(or_(not_(active), prior, item_ok))
            decisive = and_(active, cv, bv if want else not_(bv))
            prior = or_(prior, decisive)
            if prior is True:
                break
        value = prior if want else not_(prior)
        return Encoded(Bool(value), and_(*oks))

    def _item(self, node: ir.Quant, env: SymEnv) -> tuple[Term, Term, Encoded | None]:
        """One item of a quantifier: its condition, the condition's ok, and the body (if reached)."""
        cv: Term = True
        cok: Term = True
        if node.cond is not None:
            cond = self.encode(node.cond, env)
            cv, ctok = _truth(cond.value)
            cok = and_(cond.ok, ctok)
        body = self.encode(node.body, env) if cv is not False else None
        return cv, cok, body

    def _sum(self, rows: list[tuple[Term, Term, Term, Encoded | None]], ok: Term) -> Encoded:
        total: SVal = Int(0)
        oks: list[Term] = [ok]
        for active, cv, cok, body in rows:
            taken = and_(active, cv)
            item_ok = cok
            if body is not None and taken is not False:
                numeric = [(g, o) for g, o in cases(body.value) if _number(o)]
                item_ok = and_(cok, or_(not_(cv), and_(body.ok, or_all(g for g, _ in numeric))))
                addend = join(numeric) if numeric else Int(0)
                if isinstance(addend, Union):
                    raise Unsupported("sum() over values that may be integers or numbers")
                zero = Int(0) if isinstance(addend, Int) else Real(0.0)
                term = merge(taken, addend, zero)
                kind = _num_kind(total, term)
                total = kind(arith("+", term_of(total), term_of(term)))
            oks.append(or_(not_(active), item_ok))
        return Encoded(total, and_(*oks))


def _concat(x: Lst, y: Lst) -> Lst:
    """``x + y``; where ``x``'s length is unknown, place ``j`` holds ``x[j]`` below it and
    ``y[k]`` where ``j`` is ``len(x) + k``."""
    if x.n is None and y.n is None:
        return Lst(x.items + y.items)
    items = []
    for j in range(len(x.items) + len(y.items)):
        options: list[tuple[Term, SVal]] = []
        if j < len(x.items):
            options.append((x.within(j), x.items[j]))
        options.extend((eq(x.length, j - k), b) for k, b in enumerate(y.items))
        items.append(join([(g, v) for g, v in options if g is not False]))
    return Lst(tuple(items), arith("+", x.length, y.length))


def _compacted(m: Map) -> Lst:
    """The present slots' values of ``m`` in order, as a list of symbolic length."""
    before: list[Term] = []  # present slots before slot i
    count: Term = 0
    for slot in m.slots:
        before.append(count)
        count = arith("+", count, ite(slot.present, 1, 0))
    items = []
    for j in range(len(m.slots)):
        options = [(and_(s.present, eq(before[i], j)), s.value) for i, s in enumerate(m.slots) if i >= j]
        items.append(join([(g, v) for g, v in options if g is not False]))
    return Lst(tuple(items), to_z3(count) if not is_sym(count) else count)


def encode_expr(expr: ir.Expr, env: SymEnv, tracker: Tracker | None = None) -> Encoded:
    """Encode one expression in a symbolic environment (see the module docstring)."""
    return Encoder(tracker).encode(expr, env)


def holds(encoded: Encoded) -> Term:
    """The condition under which a clause holds: defined and true (undefined counts as false)."""
    value, ok = _truth(encoded.value)
    return and_(encoded.ok, ok, value)


def fails(encoded: Encoded) -> Term:
    """The condition under which a clause is defined and false (``holds``' other side, without
    the undefined)."""
    value, ok = _truth(encoded.value)
    return and_(encoded.ok, ok, not_(value))


def covers() -> frozenset[type[ir.Expr]]:
    """Node types this interpreter handles (checked against ``ir.NODE_TYPES`` in tests)."""
    return frozenset(t for t in ir.NODE_TYPES if hasattr(Encoder, "_" + t.__name__))
