"""The plan/prove encoder (``solver.state_encoder`` under ``Transition``) against the concrete
evaluator on drawn expressions: a clause holds in a pinned symbolic state exactly when it holds
concretely (defined and true). ``tests/solver/test_solver_encode.py`` does the same for the
feasibility encoder; together they cover both Z3 readings of the IR. This encoder has no lists,
so the signature's list ``l`` is left out here."""

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
from envfactory.contracts.errors import EvaluationError, SolverError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.parser import parse_expr
from envfactory.solver.transition import Transition

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


def test_the_plan_encoder_agrees_with_the_evaluator(signature: envfactory.Contract) -> None:
    tried: list[bool] = []

    @given(state=S.states(), text=S.expressions("bool", depth=3, lists=False))
    @settings(
        max_examples=500,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def check(state: Any, text: str) -> None:
        expr = parse_expr(text)
        state = {k: v for k, v in state.items() if k != "l"}
        want = _holds(expr, state)
        tr = Transition(signature, abstract=False)
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

    check()
    assert tried.count(True) >= 10 and tried.count(False) >= 10


def test_every_comparison_agrees_on_equal_smaller_and_larger_values(signature: envfactory.Contract) -> None:
    """The drawn expressions above rarely compare equal operands; this sweep does, for every
    comparison operator and operand kind, on states where the operands are equal, smaller,
    larger, null or missing."""
    tr = Transition(signature, abstract=False)
    for state in S.COMPARISON_STATES:
        symbolic = tr.fresh_state("s", 4)
        solver = z3.Solver()
        solver.add(symbolic.wf, tr.initial(symbolic, {k: v for k, v in state.items() if k != "l"}))
        for text in S.comparisons():
            expr = parse_expr(text)
            want = _holds(expr, state)
            claim = tr.clause(expr, symbolic)
            assert solver.check(z3.Not(claim) if want else claim) == z3.unsat, (text, dict(state))
