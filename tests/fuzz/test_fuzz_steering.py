"""Steering that builds deep states: two different keys where a clause wants them apart, no
"threshold" draw that makes them equal, swarm and focused cases, and the solver's prefixes to
clause outcomes never covered (a counter exactly at its limit)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.fuzz import machine
from envfactory.fuzz.draws import Source
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.reach import goal_of, plan
from envfactory.fuzz.runner import Session, clause_outcomes, fuzz
from envfactory.fuzz.steering import Steer, distinct_keys, key_fields
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
DEPOT = envfactory.load(IMPLS / "depot.yaml")
LEDGER = envfactory.load(IMPLS / "ledger.yaml")

COUNTER = """\
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  n: {type: integer, initial: 0}
  open: {type: boolean, initial: true}
operations:
  inc:
    input: {type: object, additionalProperties: false}
    requires:
      - {check: open, error: {status: 423}}
      - {check: 'n < 3', error: {status: 429}}
    effects: [n = n + 1]
  shut:
    input: {type: object, additionalProperties: false}
    requires: [open]
    effects: [open = false]
"""


def test_an_operation_that_wants_two_different_keys_needs_two() -> None:
    move = DEPOT.operations["move"]
    assert distinct_keys(move, key_fields(move, DEPOT)) == ("bins",)
    transfer = LEDGER.operations["transfer"]
    assert distinct_keys(transfer, key_fields(transfer, LEDGER)) == ("accounts",)
    stock = DEPOT.operations["stock"]
    assert distinct_keys(stock, key_fields(stock, DEPOT)) == ()
    steer = Steer.of(move, DEPOT)
    bin = {"qty": 1, "cap": 2, "locked": False, "moves": 0}
    assert not steer.possible({"bins": {"a": bin}})
    assert steer.possible({"bins": {"a": bin, "b": bin}})
    # the clause relating the two keys is no threshold to draw at: its bound is the refused value
    assert [t.apart for t in steer.thresholds if t.field in ("src", "dst")] == [True, True]


def _session(contract: envfactory.Contract, cls: str) -> Session:
    name = Path(str(contract.path)).stem
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{cls}", contract)
    return Session(contract, target, mode="adversarial", time_budget=None)


DEPOT_SESSION = _session(DEPOT, "Depot")
DEPOT_PLANS = {p.name: p for p in plans(DEPOT_SESSION)}


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.data())
def test_a_valid_draw_names_two_different_bins(data: st.DataObject) -> None:
    case = Case(DEPOT_SESSION, replay=True)
    for name in ("a", "b", "c"):
        case.send(DEPOT.operations["addBin"], {"name": name, "cap": 5})
    value = case.draw(DEPOT_PLANS["move"], Source(data), breaking=False)
    if {value["src"], value["dst"]} <= {"a", "b", "c"}:  # two live bins (not a drawn name)
        assert value["src"] != value["dst"]


class Seeded:
    """A ``draws.Source`` stand-in taking its choices from a seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def index(self, n: int) -> int:
        return self.rng.randrange(n) if n > 1 else 0

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        return self.rng.randint(-9 if low is None else low, 9 if high is None else high)

    def boolean(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def pick(self, items: Any) -> Any:
        return items[self.index(len(items))]

    def string(self, alphabet: Any, min_size: int, max_size: int) -> str:
        return "x" * self.rng.randint(min_size, max_size)


def _repeats(focus: bool) -> float:
    """The share of draws naming the bin the draw before named, among four bins."""
    src: Any = Seeded(1)
    case = Case(DEPOT_SESSION, replay=True)
    for name in ("a", "b", "c", "d"):
        case.send(DEPOT.operations["addBin"], {"name": name, "cap": 5})
    case.focus = focus
    names = [case.draw(DEPOT_PLANS[op], src, breaking=False)["name"] for op in ["peek", "lock"] * 200]
    return sum(a == b for a, b in itertools.pairwise(names)) / (len(names) - 1)


def test_a_focused_case_calls_one_resource_again_and_again() -> None:
    assert _repeats(focus=True) > 0.7  # three in four, and the other draws now and then
    assert _repeats(focus=False) < 0.5


def test_swarm_cases_leave_operations_out_and_all_stay_callable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seeded run: some cases prefer a subset of the operations, and still every operation is
    accepted somewhere in the run."""
    seen: list[frozenset[str]] = []
    original = machine.Case.valid

    def valid(self: Case, plan: machine.OpPlan, src: Source) -> None:
        seen.append(self.off)
        original(self, plan, src)

    monkeypatch.setattr(machine.Case, "valid", valid)
    target = open_target(f"python:{IMPLS / 'depot_impl.py'}:Depot", DEPOT)
    try:
        summary = fuzz(DEPOT, target, seed=3, max_examples=150)
    finally:
        target.close()
    assert any(seen) and not all(seen)
    assert set(summary.operations_covered) == set(DEPOT.operations)


def test_the_solver_plans_to_a_counter_exactly_at_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "counter.yaml"
    path.write_text(COUNTER)
    contract = envfactory.load(path)
    goals = [g for o in clause_outcomes(contract) if (g := goal_of(o)) is not None]
    assert ("inc", 1) in goals and ("inc", None) in goals
    found = plan(contract, [("inc", 1), ("inc", 0)], effort=10**9)
    # the limit: three increments, then the one the second clause refuses; closed: one call
    assert found == [("shut", "inc"), ("inc", "inc", "inc", "inc")]
    assert goal_of("inc: input schema fails") is None
