"""The Z3 reading of the IR under ``solver.transition`` agrees with the concrete semantics."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import z3
from _graph_contracts import example, write_contract
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.values import FrozenMap
from envfactory.solver.bmc import plan
from envfactory.solver.regex import RegexUnsupported, to_z3_regex
from envfactory.solver.schema import PRINTABLE
from envfactory.solver.states import StepVars
from envfactory.solver.symbolic import lift
from envfactory.solver.transition import Transition
from envfactory.verification import verify

CORPUS = Path(__file__).resolve().parents[1] / "realworld" / "corpus"

accounts = st.dictionaries(
    st.sampled_from(["AA01", "BB02", "CC03"]),
    st.fixed_dictionaries(
        {"owner": st.sampled_from(["ann", "bob"]), "balance": st.integers(0, 40), "frozen": st.booleans()}
    ),
    max_size=3,
)
bank_inputs = st.fixed_dictionaries(
    {
        "account": st.sampled_from(["AA01", "BB02", "ZZ99"]),
        "source": st.sampled_from(["AA01", "BB02", "CC03"]),
        "target": st.sampled_from(["AA01", "CC03"]),
        "amount": st.integers(-1, 50),
        "owner": st.sampled_from(["ann", "x"]),
    }
)


def _concrete(clause: Any, state: dict[str, Any], value: Any) -> bool:
    try:
        return clause.fn(Env(state, value)) is True
    except EvaluationError:
        return False


@settings(max_examples=20, deadline=None, database=None, derandomize=True)
@given(accounts, st.integers(0, 3), bank_inputs)
def test_requires_agree_with_the_evaluator(
    accts: dict[str, Any], transfers: int, value: dict[str, Any]
) -> None:
    bank = example("bank")
    tr = Transition(bank)
    state = tr.fresh_state("s", 3)
    concrete = {"accounts": FrozenMap(accts), "transfers": transfers}
    solver = z3.Solver()
    solver.add(state.wf, tr.initial(state, {"accounts": accts, "transfers": transfers}))
    io = StepVars(lift(value), None, z3.BoolVal(True))
    for op in bank.operations.values():
        for clause in op.requires:
            symbolic = tr.clause(clause, state, io)
            expected = _concrete(clause, concrete, value)
            assert solver.check(symbolic if expected else z3.Not(symbolic)) == z3.sat, clause.source
            assert solver.check(z3.Not(symbolic) if expected else symbolic) == z3.unsat, clause.source
    for clause in [*bank.invariants, *bank.goals.values()]:
        expected = _concrete(clause, concrete, None)
        assert (
            solver.check(z3.Not(tr.clause(clause, state)) if expected else tr.clause(clause, state))
            == z3.unsat
        )


@pytest.mark.parametrize("pattern", ["^[A-Z]{2}[0-9]{2,6}$", "^ab(c|d)+$", r"\d{3}-\w", "^[a-z_]*$", "x.y"])
def test_regex_translation(pattern: str) -> None:
    translated = to_z3_regex(pattern)
    s = z3.String("s")
    solver = z3.Solver()
    solver.add(z3.InRe(s, translated), z3.InRe(s, PRINTABLE))
    for _ in range(3):
        assert solver.check() == z3.sat
        text = solver.model().eval(s).as_string()
        assert re.search(pattern, text), (pattern, text)
        solver.add(s != z3.StringVal(text))
    with pytest.raises(RegexUnsupported):  # look-ahead: left to the concrete validator
        to_z3_regex("(?=x)y")


def test_plans_solve_string_operations(tmp_path: Path) -> None:
    names = write_contract(tmp_path, "names", NAMES)
    result = plan(names, "len(users) == 2")
    assert result.status == "found" and result.trajectory is not None
    assert all(s.input["name"].startswith("ab") for s in result.trajectory.steps)
    (verdict,) = list(verify(names, [result.trajectory]))
    assert verdict.verdict == "valid"


def test_open_world_plans_record_their_assumed_start() -> None:
    open_world = envfactory.load(CORPUS / "petstore-expanded.yaml")
    result = plan(open_world, "len(pets) == 2")
    assert result.depth == 0 and result.trajectory is not None
    assert len(result.trajectory.initial["pets"]) == 2  # type: ignore[index]
    (verdict,) = list(verify(open_world, [result.trajectory]))
    assert verdict.verdict == "valid"
    closed = envfactory.load(CORPUS / "petstore-expanded.yaml", closed_world=True)
    result = plan(closed, "len(pets) == 2")
    assert result.trajectory is not None and [s.tool for s in result.trajectory.steps] == ["addPet", "addPet"]
    (verdict,) = list(verify(closed, [result.trajectory]))
    assert verdict.verdict == "valid"


NAMES = """
envfactory: "1"
info: {title: Names, version: "1"}
state:
  users:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: string}}, required: [n]}}
operations:
  add:
    input: {type: object, properties: {name: {type: string, maxLength: 6}}, required: [name]}
    requires:
      - input.name.startswith("ab")
      - not (input.name in users)
    effects: ['users[input.name] = {"n": input.name}']
"""
