"""The one Z3 reading of the IR (``solver.encode`` over ``solver.symbolic``) against the
concrete evaluator, over drawn expressions and drawn states, in the two ways the solver uses it:

* as the feasibility engine does, on lifted values: same value and same definedness, with every
  name symbolic ("z3") or half of them known ("mixed");
* as plan/prove/the graph do, on the fully symbolic states of ``solver.states`` (fresh slots,
  pinned to the drawn state by ``Transition.initial``): a clause holds exactly when it holds
  concretely (defined and true). There the list ``l`` has a symbolic length (up to 3 items, as
  many as the drawn lists have), so length, indexing, membership and quantifiers over it are
  read through the length term.

The comparison sweep runs every comparison operator and operand kind through both.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies as S

import envfactory
from envfactory.contracts import ir
from envfactory.contracts import values as V
from envfactory.contracts.errors import EvaluationError, SolverError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.parser import parse_expr
from envfactory.solver import encode as E
from envfactory.solver.symbolic import Bool, Py, SVal, Unsupported, lift, read
from envfactory.solver.transition import Transition


def concrete(expr: ir.Expr, state: Any) -> tuple[str, Any]:
    try:
        return ("ok", compile_expr(expr)(Env(state)))
    except EvaluationError:
        return ("undefined", None)


def symbolic_state(state: Any, mode: str) -> dict[str, SVal]:
    out: dict[str, SVal] = {}
    for i, (name, value) in enumerate(sorted(state.items())):
        kind = "integer" if name == "c" else None
        if mode == "mixed" and i % 2 == 0:
            out[name] = Py(value, kind)
        else:
            out[name] = lift(value, symbolic=True, key_kind=kind)
    return out


def symbolic(expr: ir.Expr, state: Any, mode: str) -> tuple[tuple[str, Any], E.Tracker]:
    tracker = E.Tracker()
    got = E.encode_expr(expr, E.SymEnv(symbolic_state(state, mode)), tracker)
    solver = z3.SimpleSolver()
    assert solver.check() == z3.sat
    model = solver.model()
    if not read(Bool(got.ok), model):
        return ("undefined", None), tracker
    return ("ok", read(got.value, model)), tracker


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return V.is_number(a) and V.is_number(b) and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return V.strict_eq(a, b)


def test_every_node_type_has_an_encoder_method() -> None:
    assert E.covers() == frozenset(ir.NODE_TYPES)


@given(state=S.states(), text=S.expressions("any", depth=3))
@settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_the_feasibility_encoder_agrees_with_the_evaluator(state: Any, text: str) -> None:
    expr = parse_expr(text)
    want = concrete(expr, state)
    for mode in ("z3", "mixed"):
        try:
            got, tracker = symbolic(expr, state, mode)
        except Unsupported:
            continue  # outside the fragment is allowed (it becomes "unknown"), never a wrong answer
        if tracker.inexact and want[0] == "ok" and isinstance(want[1], float):
            continue  # symbolic reals are rationals; the tracker says so
        assert got[0] == want[0], (text, mode, want, got)
        if want[0] == "ok":
            assert same(got[1], want[1]), (text, mode, want, got)


CASES = [
    ("-7 // 2", ("ok", -4)),
    ("-7 % 2", ("ok", 1)),
    ("7 // -2", ("ok", -4)),
    ("7 % -2", ("ok", -1)),
    ("x // 0", ("undefined", None)),
    ("true == 1", ("ok", False)),
    ("1 == 1.0", ("ok", True)),
    ("n.a", ("undefined", None)),
    ("c[9].a", ("undefined", None)),
    ("9 in c and c[9].a > 0", ("ok", False)),
    ("c[1].tag", ("ok", None)),
    ("all(c[k].a > 0 for k in c)", ("ok", False)),
    ("sum(c[k].a for k in c if c[k].ok)", ("ok", 2)),
    ("s[-1]", ("ok", "b")),
    ('"" in s', ("ok", True)),
    ("len(c[1])", ("ok", 2)),
    ("values(c)", ("ok", [{"a": 2, "ok": True}, {"a": -7, "ok": False, "tag": "t"}])),
    ("len(values(c)) == len(c)", ("ok", True)),
    ("values(c)[1].a", ("ok", -7)),
    ("values(x)", ("undefined", None)),
]


@pytest.mark.parametrize(("text", "want"), CASES)
def test_semantic_corners(text: str, want: tuple[str, Any]) -> None:
    state = V.FrozenMap(
        {
            "x": 5,
            "n": None,
            "s": "ab",
            "c": V.FrozenMap({1: {"a": 2, "ok": True}, 3: {"a": -7, "ok": False, "tag": "t"}}),
        }
    )
    assert concrete(parse_expr(text), state) == want
    for mode in ("z3", "mixed"):
        got, _ = symbolic(parse_expr(text), state, mode)
        assert got == want, (text, mode)


def test_symbolic_keys_read_the_right_slot() -> None:
    k = z3.Int("k")
    state = {"c": lift(V.FrozenMap({1: {"a": 10}, 2: {"a": 20}}), key_kind="integer")}
    env = E.SymEnv(state, E.Rec({"k": (True, E.Int(k))}))
    got = E.encode_expr(parse_expr("input.k in c and c[input.k].a == 20"), env)
    solver = z3.Solver()
    solver.add(E.holds(got))
    assert solver.check() == z3.sat
    assert solver.model().eval(k).as_long() == 2
    solver.add(k != 2)
    assert solver.check() == z3.unsat


def test_unsupported_constructs_raise_a_solver_error() -> None:
    from envfactory.contracts.errors import SolverError

    with pytest.raises(SolverError):
        E.encode_expr(ir.Call("nosuch", (ir.Name("x"),)), E.SymEnv({"x": E.Int(z3.Int("x"))}))


SIGNATURE_CONTRACT = """\
envfactory: "1"
info: {title: Signature, version: "1"}
state:
  x: {type: integer, initial: 0}
  y: {type: integer, initial: 0}
  n: {type: [integer, "null"], initial: null}
  s: {type: string, initial: ""}
  t: {type: string, initial: ""}
  b: {type: boolean, initial: false}
  l: {type: array, items: {type: integer}, initial: []}
  c:
    collection:
      key: {type: integer}
      value:
        type: object
        properties: {a: {type: integer}, ok: {type: boolean}, tag: {type: string}}
        required: [a, ok]
operations:
  noop: {input: {type: object}}
"""


@pytest.fixture(scope="module")
def signature(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path = tmp_path_factory.mktemp("signature") / "signature.yaml"
    path.write_text(SIGNATURE_CONTRACT)
    return envfactory.load(path)


def _holds(expr: Any, state: Any) -> bool:
    try:
        return compile_expr(expr)(Env(state)) is True
    except EvaluationError:
        return False


def test_clauses_over_symbolic_states_agree_with_the_evaluator(signature: envfactory.Contract) -> None:
    tried: list[bool] = []

    @given(state=S.states(), text=S.expressions("bool", depth=3, lists=True))
    @settings(
        max_examples=500,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def check(state: Any, text: str) -> None:
        expr = parse_expr(text)
        want = _holds(expr, state)
        tr = Transition(signature, extra=[expr])  # the reading of strings the expression allows
        symbolic = tr.fresh_state("s", 4)
        solver = z3.Solver()
        try:
            solver.add(symbolic.wf, tr.initial(symbolic, state))
            claim = tr.clause(expr, symbolic)
        except SolverError:
            return  # outside the fragment: "unknown", never a wrong answer
        assert solver.check() == z3.sat, text
        assert solver.check(z3.Not(claim) if want else claim) == z3.unsat, (text, dict(state), want)
        tried.append(want)
        readings.append(tr.atoms is not None)
        if " in l" in text:
            on_lists.append(want)

    on_lists: list[bool] = []
    readings: list[bool] = []
    check()
    assert tried.count(True) >= 10 and tried.count(False) >= 10
    assert on_lists.count(True) >= 3 and on_lists.count(False) >= 3, on_lists
    assert readings.count(True) >= 10 and readings.count(False) >= 10, "both readings of strings"


_SWEPT: dict[tuple[int, str], Transition] = {}
"""The sweep's transitions, one per expression, shared by its states (where a worker runs more
than one): a transition does not depend on the state it is pinned to, and building one (its
dry run over the whole signature) was most of the sweep's time."""


@pytest.mark.parametrize("state", S.COMPARISON_STATES)
def test_every_comparison_agrees_on_equal_smaller_and_larger_values(
    state: Any, signature: envfactory.Contract
) -> None:
    """The drawn expressions rarely compare equal operands; this sweep does, for every comparison
    operator and operand kind, on states where the operands are equal, smaller, larger, null or
    missing, through both encoders."""
    readings: set[bool] = set()
    for text in S.comparisons():
        expr = parse_expr(text)
        want = concrete(expr, state)
        got, _ = symbolic(expr, state, "z3")
        assert got[0] == want[0] and (want[0] != "ok" or same(got[1], want[1])), (text, want, got)
        tr = _SWEPT.get((id(signature), text))
        if tr is None:  # strings abstract where only compared
            tr = _SWEPT[id(signature), text] = Transition(signature, extra=[expr])
        readings.add(tr.atoms is not None)
        pinned = tr.fresh_state("s", 4)
        solver = z3.Solver()
        solver.add(pinned.wf, tr.initial(pinned, state))
        claim = tr.clause(expr, pinned)
        holds = want == ("ok", True)
        assert solver.check(z3.Not(claim) if holds else claim) == z3.unsat, (text, dict(state))
    assert readings == {True, False}  # the sweep's strings are read both ways
