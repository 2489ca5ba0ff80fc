"""Ways through the conditions inside effects: clause outcomes, goals for the planner, and steps
aimed at the record that takes one (``fuzz/branches.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from envfactory.contracts.semantics import Machine
from envfactory.fuzz import oracle
from envfactory.fuzz.branches import branches, find
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.reach import goal_of, plan
from envfactory.fuzz.runner import Session, clause_outcomes, fuzz
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Seeded
from punch_card import IMPLS, PAST_CAP, PUNCH, punch_session


def test_each_way_through_an_effect_condition_is_a_clause_outcome() -> None:
    outcomes = clause_outcomes(PUNCH)
    ways = ["punch: condition 1 holds", "punch: condition 1 part 1 fails", PAST_CAP]
    assert [o for o in outcomes if "condition" in o] == ways  # the two effects share one condition
    (branch,) = branches(PUNCH.operations["punch"], PUNCH)
    card = {"c": {"punches": 3, "free": 0}}
    assert branch.taken({"cards": card}, {"card": "c"}) == ways[0]
    assert branch.taken({"cards": {"c": {"punches": 2, "free": 0}}}, {"card": "c"}) == ways[1]
    assert branch.taken({"cards": {"c": {"punches": 3, "free": 1}}}, {"card": "c"}) == ways[2]
    assert branch.taken({"cards": card}, {"card": "missing"}) is None  # not evaluable: no outcome
    assert find(PUNCH, "punch: accepted") is None and find(PUNCH, "punch: condition 2 holds") is None
    assert not branch.drawn  # the card the key names decides it, not a value another draw may change


def test_the_solver_plans_to_a_way_through_an_effect_no_requires_asks_for() -> None:
    goal = goal_of(PAST_CAP, PUNCH)
    assert goal is not None and goal_of(PAST_CAP) is None  # a condition needs the contract
    (route,) = plan(PUNCH, [goal], effort=10**9)
    assert route.operations == ("issue",) + ("punch",) * 8 and not route.refused
    # the route's own inputs, run through the contract, take that way at the last call
    (branch,) = branches(PUNCH.operations["punch"], PUNCH)
    machine = Machine(PUNCH)
    state = machine.initial_state()
    for name, value in zip(route.operations[:-1], route.inputs[:-1], strict=True):
        expect = oracle.judge(machine, state, PUNCH.operations[name], value)
        assert expect.accepted
        state = machine.apply(state, PUNCH.operations[name], value)
    assert branch.taken(state, route.inputs[-1]) == PAST_CAP


def _punched(session: Session, cards: dict[str, int]) -> Case:
    case = Case(session, replay=True)
    ops = PUNCH.operations
    for card, times in cards.items():
        case.send(ops["issue"], {"card": card})
        for _ in range(times):
            case.send(ops["punch"], {"card": card})
    return case


def test_a_step_aims_at_the_record_that_takes_a_way_no_call_took_yet() -> None:
    session = punch_session("Punch")
    by_name: dict[str, Any] = {p.name: p for p in plans(session)}
    enabled = list(by_name.values())
    # card a has its free coffee and is full again; card b is not full
    case = _punched(session, {"a": 7, "b": 2})
    assert PAST_CAP not in session.outcomes
    session.publish()  # a round begins: its steps aim at what was open then
    aimed = case._aimed(enabled, Seeded(0))
    assert aimed == (by_name["punch"], ("card", "a"))
    case.send(PUNCH.operations["punch"], {"card": "a"})
    assert PAST_CAP in session.outcomes and "punch" not in session.aims  # every way is covered
    assert case._aimed(enabled, Seeded(0)) == aimed  # within the round, as it began
    session.publish()
    assert case._aimed(enabled, Seeded(0)) is None


def test_the_second_free_coffee_is_found_and_shrunk_to_nine_calls_and_the_correct_card_is_not() -> None:
    for seed in (1, 2):
        summary = fuzz(
            PUNCH, open_target(f"python:{IMPLS / 'punch_impl.py'}:FreeBeyondCap", PUNCH), seed=seed
        )
        (finding,) = summary.findings
        assert finding.operation == "punch" and len(finding.steps) == 9
        assert PAST_CAP in summary.outcomes
    correct = fuzz(PUNCH, open_target(f"python:{IMPLS / 'punch_impl.py'}:Punch", PUNCH), seed=1)
    assert not correct.findings and PAST_CAP in correct.outcomes


QUEUE = """\
envfactory: "1"
info: {title: A queue behind a seat, version: "1"}
state:
  seat: {type: [string, "null"], initial: null}
  queue: {type: array, items: {type: string}, initial: []}
operations:
  take:
    input: {type: object, properties: {who: {type: string}}, required: [who], additionalProperties: false}
    effects:
      - 'seat = input.who if seat == null else seat'
      - 'queue = queue if seat == null else queue + [input.who]'
  free:
    input: {type: object, additionalProperties: false}
    requires: [{check: 'seat != null', error: {status: 409, message: nobody seated}}]
    effects:
      - 'seat = queue[0] if len(queue) > 0 else null'
      - 'queue = ([] if len(queue) < 2 else [queue[1]]) if len(queue) > 0 else queue'
"""


def test_a_condition_nested_in_a_way_through_another_counts_under_its_path(tmp_path: Path) -> None:
    """``len(queue) < 2`` failing is a state of its own where the outer condition holds (a
    second waiter left behind by a promotion): the nested condition is a branch a second time,
    guarded by the path to it, its outcomes counted only on that path and planned for with it."""
    import envfactory

    (tmp_path / "queue.yaml").write_text(QUEUE, encoding="utf-8")
    contract = envfactory.load(tmp_path / "queue.yaml")
    free = branches(contract.operations["free"], contract)
    assert [to_source_all(b.guard) for b in free] == [[], [], ["len(queue) > 0"]]
    inner = free[-1]
    assert inner.outcomes == ("free: condition 3 holds", "free: condition 3 fails")
    two = {"seat": "a", "queue": ["b", "c"]}
    assert inner.taken(two, {}) == "free: condition 3 fails"
    assert inner.taken({"seat": "a", "queue": ["b"]}, {}) == "free: condition 3 holds"
    assert inner.taken({"seat": "a", "queue": []}, {}) is None  # off its path: no outcome
    # the planner's goal carries the path: two waiters behind the seat, then the free
    goal = goal_of("free: condition 3 fails", contract)
    assert goal is not None
    (route,) = plan(contract, [goal], effort=10**9)
    assert route.operations == ("take", "take", "take", "free")


def to_source_all(exprs: Any) -> list[str]:
    from envfactory.contracts.printer import to_source

    return [to_source(e) for e in exprs]


TIPS = """\
envfactory: "1"
info: {title: Tips, version: "1"}
state:
  total: {type: integer, initial: 0}
operations:
  pay:
    input:
      type: object
      properties: {amount: {type: integer, minimum: 1}, tip: {type: integer, minimum: 1}}
      required: [amount]
      additionalProperties: false
    requires: [{check: 'total < 100', error: {status: 409, message: till full}}]
    effects: ['total = total + input.amount + (input.tip if "tip" in input else 0)']
"""


def test_a_valid_step_draws_again_for_a_way_through_the_effects_no_call_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An accepted draw that leaves the optional tip out takes a way already covered: the step
    draws again, and sends the draw with a tip; once that way is covered, the first accepted."""
    import envfactory

    (tmp_path / "tips.yaml").write_text(TIPS, encoding="utf-8")
    contract = envfactory.load(tmp_path / "tips.yaml")
    session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
    (pay,) = plans(session)
    assert all(b.drawn for b in branches(contract.operations["pay"], contract))  # the tip's presence
    case = Case(session, replay=True)
    case.send(contract.operations["pay"], {"amount": 1})  # the way without a tip is covered
    assert "pay: condition 1 fails" in session.outcomes
    session.publish()  # a round begins: its steps read the ways open then
    draws = iter([{"amount": 2}, {"amount": 3, "tip": 1}, {"amount": 4}, {"amount": 5, "tip": 1}])
    monkeypatch.setattr(Case, "draw", lambda self, plan, src, breaking: next(draws))
    case.valid(pay, Seeded(0))
    assert case.steps[-1].input == {"amount": 3, "tip": 1}
    assert "pay: condition 1 holds" in session.outcomes
    session.publish()
    case.valid(pay, Seeded(0))  # every way covered: the first accepted draw goes
    assert case.steps[-1].input == {"amount": 4}


def test_a_case_draws_the_same_calls_from_the_same_choices_within_a_round(tmp_path: Path) -> None:
    """Hypothesis replays a case's choices to shrink it and to see it fail again: the calls
    they draw may not depend on what other cases of the round covered since it began (a step
    that drew again for an open way, and not on the replay, was a flaky test case to it)."""
    import envfactory

    (tmp_path / "tips.yaml").write_text(TIPS, encoding="utf-8")
    contract = envfactory.load(tmp_path / "tips.yaml")
    for seed in range(6):
        session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
        (pay,) = plans(session)
        session.publish()

        def calls(session: Session = session, pay: Any = pay, seed: int = seed) -> list[Any]:
            case, src = Case(session, replay=True), Seeded(seed)
            for _ in range(6):
                case.valid(pay, src)
            return [step.input for step in case.steps]

        first = calls()
        assert "pay: accepted" in session.outcomes  # what the round's later cases see covered
        assert calls() == first
