"""Lists in the symbolic fragment (issue 18 item 2): a list of unknown length is a length term
over a bounded number of places, read by length, indexing, membership, all/any/sum and ``+``, in
plan, prove, feasibility and output solving alike."""

from __future__ import annotations

import z3

import envfactory
from envfactory.contracts.parser import parse_expr
from envfactory.solver.bmc import plan
from envfactory.solver.encode import Encoder, SymEnv, holds
from envfactory.solver.induction import prove
from envfactory.solver.schema import Schemas
from envfactory.solver.symbolic import lift, read
from envfactory.trajectory import Hole, Step, Trajectory


def test_a_proof_reads_the_lists_in_guards_and_effects(tally: envfactory.Contract) -> None:
    assert prove(tally, timeout=120).status == "proved"
    result = prove(tally, "n <= 5", timeout=120)
    assert result.status == "violated" and result.counterexample is not None
    (step,) = result.counterexample.steps
    assert step.tool == "deposit" and sum(step.input["items"]) > 5
    assert all(x >= 0 for x in step.input["items"])  # the guard over the list was kept
    assert [r.verdict for r in envfactory.verify(tally, [result.counterexample])] == ["valid"]


def test_a_plan_fills_a_list_to_reach_its_goal(tally: envfactory.Contract) -> None:
    result = plan(tally, "len(last) == 3 and n == 7 and last[2] == 0 and 4 in last", timeout=120)
    assert result.status == "found" and result.trajectory is not None, result
    (step,) = result.trajectory.steps
    items = step.input["items"]
    assert len(items) == 3 and sum(items) == 7 and items[2] == 0 and 4 in items
    assert [r.verdict for r in envfactory.verify(tally, [result.trajectory])] == ["valid"]


def test_a_goal_past_the_list_bound_has_no_plan_of_one_step(tally: envfactory.Contract) -> None:
    # four items do not fit in one deposit of at most three: two deposits are needed
    result = plan(tally, "n == 4 and len(last) == 1", max_depth=2, timeout=120)
    assert result.status == "found" and result.trajectory is not None
    assert [r.verdict for r in envfactory.verify(tally, [result.trajectory])] == ["valid"]


def test_a_fresh_list_solves_length_membership_and_quantifiers() -> None:
    encoder = Encoder()
    schema = {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 4}
    schemas = Schemas(encoder, schema)
    value = schemas.fresh(schema, "xs")
    env = SymEnv({"xs": value})
    solver = z3.Solver()
    solver.add(z3.BoolVal(True) if schemas.holds(value, schema) is True else schemas.holds(value, schema))
    for text in [
        "len(xs) == 4",
        "7 in xs",
        "all(x < 9 for x in xs)",
        "xs[-1] == 1",
        "sum(x for x in xs) == 10",
    ]:
        solver.add(holds(encoder.encode(parse_expr(text), env)))
    assert solver.check() == z3.sat
    got = read(value, solver.model())
    assert len(got) == 4 and 7 in got and got[-1] == 1 and sum(got) == 10 and all(0 <= x < 9 for x in got)
    solver.add(holds(encoder.encode(parse_expr("any(x > 7 for x in xs)"), env)))
    assert solver.check() == z3.unsat


def test_joining_lists_of_unknown_length() -> None:
    encoder = Encoder()
    schema = {"type": "array", "items": {"type": "integer"}}
    schemas = Schemas(encoder, schema)
    env = SymEnv({"a": schemas.fresh(schema, "a"), "b": schemas.fresh(schema, "b"), "c": lift([5, 6, 7])})
    solver = z3.Solver()
    solver.add(schemas.holds(env.state["a"], schema), schemas.holds(env.state["b"], schema))
    solver.add(holds(encoder.encode(parse_expr("a + b == c and len(a) == 1"), env)))
    assert solver.check() == z3.sat
    model = solver.model()
    assert read(env.state["a"], model) == [5] and read(env.state["b"], model) == [6, 7]


def test_a_list_output_hole_is_completed_with_the_stored_records(library: envfactory.Contract) -> None:
    steps = (
        Step(
            "addBook", {"isbn": 1, "title": "A"}, {"isbn": 1, "title": "A", "holder": None}, has_output=True
        ),
        Step(
            "addBook", {"isbn": 2, "title": "B"}, {"isbn": 2, "title": "B", "holder": None}, has_output=True
        ),
        Step("listBooks", {}, {"books": Hole("all")}, has_output=True),
    )
    (verdict,) = envfactory.verify(library, [Trajectory(id="t", steps=steps)])
    assert verdict.verdict == "feasible", verdict
    assert verdict.witness is not None and verdict.witness["holes"]["all"] == [
        {"isbn": 1, "title": "A", "holder": None},
        {"isbn": 2, "title": "B", "holder": None},
    ]
