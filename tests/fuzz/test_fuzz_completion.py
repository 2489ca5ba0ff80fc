"""Shrinking with the solver choosing the integers again (``fuzz.completion``, ``shrink._solved``):
a step left out, or a name merged into another, where the integers the trace chose have to
change together for the model to accept the calls as before (two restocks of two in a bin of two
are one restock of four in a bin of four)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.fuzz import runner, shrink
from envfactory.fuzz.completion import Completions, differs, judged
from envfactory.fuzz.findings import Finding, FindingError
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.targets import open_target
from envfactory.trajectory import Step

IMPLS = Path(__file__).resolve().parent / "impls"
DEPOT = envfactory.load(IMPLS / "depot.yaml")

# FourthOrder: with four open orders on one bin, ``ship`` marks the oldest instead of the one
# named, so the order named can be shipped twice. A search's trace stocks the bin twice.
TWO_RESTOCKS = [
    ("addBin", {"name": "a", "cap": 2}),
    ("stock", {"name": "a", "qty": 2}),
    ("order", {"name": "a", "qty": 1}),
    ("order", {"name": "a", "qty": 1}),
    ("stock", {"name": "a", "qty": 2}),
    ("order", {"name": "a", "qty": 1}),
    ("order", {"name": "a", "qty": 1}),
    ("ship", {"id": 4}),
    ("ship", {"id": 4}),
]


def _session(
    factory: str, contract: envfactory.Contract = DEPOT, impl: str = "depot_impl.py"
) -> runner.Session:
    target = open_target(f"python:{IMPLS / impl}:{factory}", contract)
    session = runner.Session(contract, target, mode="adversarial", time_budget=None)
    plans(session)
    return session


def _found(factory: str, calls: Sequence[tuple[str, Any]]) -> tuple[runner.Session, Finding]:
    session = _session(factory)
    case = Case(session, replay=True)
    with pytest.raises(FindingError) as err:
        for name, value in calls:
            case.send(DEPOT.operations[name], value)
    return session, err.value.finding


def _steps(calls: Sequence[tuple[str, Any]]) -> list[Step]:
    return [Step(name, value) for name, value in calls]


def test_a_step_left_out_gets_integers_that_make_the_model_judge_the_rest_as_before() -> None:
    session = _session("Depot")
    steps = _steps(TWO_RESTOCKS)
    expected = judged(session, steps)
    assert expected is not None
    trial, verdicts = [*steps[:4], *steps[5:]], [*expected[:4], *expected[5:]]
    # as it stands, the fourth order finds the bin empty
    plain = judged(session, trial)
    assert plain is not None and differs(plain, verdicts) == 4
    with Completions(session) as completions:
        done, *_ = completions.completed(trial, verdicts, free=5)
    assert differs(judged(session, done) or [], verdicts) is None
    # the capacity and the one restock grew together; the calls after the refused one kept theirs
    assert done[0].input["cap"] >= 4 and done[1].input["qty"] >= 4
    assert list(done[5:]) == trial[5:]


def test_no_completion_where_no_integers_save_the_trial() -> None:
    session = _session("Depot")
    steps = _steps(TWO_RESTOCKS)
    expected = judged(session, steps)
    assert expected is not None
    # without the bin, no quantity lets the first restock in
    with Completions(session) as completions:
        assert completions.completed(steps[1:], expected[1:], free=len(steps) - 1) == []


def test_two_restocks_shrink_to_one_of_their_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    session, finding = _found("FourthOrder", TWO_RESTOCKS)
    shrunk = shrink.minimize(session, finding)
    assert (shrunk.kind, len(shrunk.steps)) == ("forbidden_accepted", 8)
    assert [s.tool for s in shrunk.steps].count("stock") == 1
    # no other move gets there: each value moved alone starves an order or overfills the bin
    monkeypatch.setattr(shrink, "_solved", lambda session, finding: finding)
    session, finding = _found("FourthOrder", TWO_RESTOCKS)
    assert len(shrink.minimize(session, finding).steps) == 9


def test_a_second_bin_merged_into_the_first_takes_its_orders_and_its_creation_goes() -> None:
    """FullCancel: once four orders exist, a cancel puts the goods back without the capacity
    check. A search's trace spread the four orders over two bins (10 calls; the minimum is 8)."""
    calls = [
        ("addBin", {"cap": 2, "name": "a"}),
        ("stock", {"qty": 2, "name": "a"}),
        ("order", {"qty": 1, "name": "a"}),
        ("order", {"qty": 1, "name": "a"}),
        ("addBin", {"cap": 5, "name": "b"}),
        ("stock", {"qty": 5, "name": "b"}),
        ("order", {"qty": 1, "name": "b"}),
        ("stock", {"qty": 2, "name": "a"}),
        ("order", {"qty": 1, "name": "b"}),
        ("cancel", {"id": 2}),
    ]
    session, finding = _found("FullCancel", calls)
    shrunk = shrink.minimize(session, finding)
    assert (shrunk.kind, len(shrunk.steps)) == ("forbidden_accepted", 8)
    assert {s.input.get("name") for s in shrunk.steps} == {"a", None}


OPS = ["addBin", "stock", "order", "move", "removeBin"]


@st.composite
def _depot_calls(draw: st.DrawFn) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(3, 9))):
        op = draw(st.sampled_from(OPS))
        name = draw(st.sampled_from("ab"))
        qty = draw(st.integers(1, 5))
        if op == "addBin":
            calls.append((op, {"name": name, "cap": qty}))
        elif op == "move":
            calls.append((op, {"src": name, "dst": "b" if name == "a" else "a", "qty": qty}))
        elif op == "removeBin":
            calls.append((op, {"name": name}))
        else:
            calls.append((op, {"name": name, "qty": qty}))
    return calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_depot_calls(), data=st.data())
def test_a_completion_is_judged_by_the_model_as_asked(
    calls: list[tuple[str, Any]], data: st.DataObject
) -> None:
    """Whatever the solver chooses, the concrete model judges the completed calls one by one as
    the verdicts asked: the Z3 encoding of the contract and its evaluator agree on it."""
    session = _session("Depot")
    steps = _steps(calls)
    expected = judged(session, steps)
    assert expected is not None
    left_out = data.draw(st.integers(0, len(steps) - 1))
    trial = [*steps[:left_out], *steps[left_out + 1 :]]
    verdicts = [*expected[:left_out], *expected[left_out + 1 :]]
    with Completions(session) as completions:
        done = completions.completed(trial, verdicts, free=len(trial))
    for steps in done:
        assert [s.tool for s in steps] == [s.tool for s in trial]
        assert differs(judged(session, steps) or [], verdicts) is None


WAREHOUSE = envfactory.load(IMPLS / "warehouse.yaml")
# an order's lines are a list: the words a trial sent were gathered in a set, lists too
# (TypeError: unhashable type: 'list', the warehouse's first shrink)
ORDERS = [
    ("addProduct", {"product": "a", "limit": 2}),
    ("addBin", {"bin": "b", "capacity": 2}),
    ("receive", {"product": "a", "bin": "b", "quantity": 2, "shelf": 2}),
    ("placeOrder", {"customer": "a", "lines": [{"product": "a", "quantity": 2}]}),
    ("placeOrder", {"customer": "a", "lines": [{"product": "a", "quantity": 2}]}),
]


def test_a_trial_that_sends_a_list_is_completed_like_any_other() -> None:
    session = _session("Warehouse", WAREHOUSE, "warehouse_impl.py")
    steps = _steps(ORDERS)
    verdicts = judged(session, steps)
    assert verdicts is not None and [v.status for v in verdicts][-1] == 403  # over the limit
    # one unit received: the first order finds too little (409), not what the trace showed
    trial = [*steps[:2], Step("receive", {**steps[2].input, "quantity": 1}), *steps[3:]]
    with Completions(session) as completions:
        done = completions.completed(trial, verdicts, free=4)
    assert done and all(differs(judged(session, d) or [], verdicts) is None for d in done)
    assert all(d[2].input["quantity"] == 2 and d[3:] == tuple(trial[3:]) for d in done)
