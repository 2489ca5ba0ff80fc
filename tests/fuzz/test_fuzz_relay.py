"""Routes relayed through states the search reached (``reach.relay``): the solver plans the last
few calls from a corpus entry's state where planning all of them from the start costs more than
a run has."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.semantics import Machine
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz import oracle, reach
from envfactory.fuzz.branches import branches
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.reach import (
    STONE_DEPTH,
    Goal,
    Parts,
    Route,
    goal_of,
    plan,
    plan_apart,
    relay,
    stepwise,
    stones,
)
from envfactory.fuzz.runner import RELAY_RECORDS, Session, clause_outcomes, relay_starts
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Seeded
from punch_card import PAST_CAP, PUNCH, punch_session

SMALL_EFFORT = 100_000
"""Z3 resource units: a hundredth of what planning the nine calls from the start takes (2.8
million), fifteen times what the last call from a reached state takes (6,000)."""


def _calls(card: str, punches: int) -> list[tuple[str, Any]]:
    return [("issue", {"card": card}), *[("punch", {"card": card})] * punches]


def _reached(calls: Sequence[tuple[str, Any]]) -> FrozenMap:
    machine = Machine(PUNCH)
    state = machine.initial_state()
    for name, value in calls:
        state = machine.apply(state, PUNCH.operations[name], value)
    return state


def test_a_relay_reaches_from_a_state_the_search_reached_a_goal_too_dear_from_the_start() -> None:
    goal = goal_of(PAST_CAP, PUNCH)
    assert goal is not None
    assert plan(PUNCH, [goal], effort=SMALL_EFFORT) == []  # nine calls from the start: out of reach
    near, far = _calls("a", 7), _calls("b", 1)  # card a had its free coffee and is full again
    (route,) = relay(PUNCH, [(far, _reached(far)), (near, _reached(near))], [goal], effort=SMALL_EFFORT)
    # the solver chose the start one call from the goal (from the other it is seven)
    assert route.recorded == len(near) and route.goal == goal and not route.refused
    assert route.operations == (*(name for name, _ in near), "punch")
    assert list(route.inputs[: route.recorded]) == [value for _, value in near]
    (branch,) = branches(PUNCH.operations["punch"], PUNCH)
    assert branch.taken(_reached(near), route.inputs[-1]) == PAST_CAP


def test_planning_apart_relays_the_goals_the_planner_could_not_afford() -> None:
    goal = goal_of(PAST_CAP, PUNCH)
    accepted = goal_of("punch: accepted", PUNCH)
    assert goal is not None and accepted is not None
    near = _calls("a", 7)
    asked: list[int] = []

    def starts() -> list[tuple[Any, FrozenMap]]:
        asked.append(1)
        return [(near, _reached(near))]

    routes: list[Route] = []
    plan_apart(PUNCH, [accepted, goal], effort=SMALL_EFFORT, seconds=600, report=routes.append, starts=starts)
    # two calls from the start for the one, a relay for the other; the relay's starts are read
    # in its own worker, after the planner's
    assert [(r.goal, r.recorded, len(r.operations)) for r in routes] == [(accepted, 0, 2), (goal, 8, 9)]
    assert asked == []


def test_a_relay_has_nothing_to_offer_past_its_depth() -> None:
    goal = goal_of(PAST_CAP, PUNCH)
    assert goal is not None
    far = _calls("b", 1)
    assert relay(PUNCH, [(far, _reached(far))], [goal], effort=10**9, depth=4) == []
    assert relay(PUNCH, [(far, _reached(far))], [goal], effort=10**9, depth=7) != []


def test_a_case_replays_a_relayed_route_as_recorded_and_takes_the_way_it_was_planned_for() -> None:
    session = punch_session("Punch")
    goal = goal_of(PAST_CAP, PUNCH)
    assert goal is not None
    near = _calls("a", 7)
    (route,) = relay(PUNCH, [(near, _reached(near))], [goal], effort=SMALL_EFFORT)
    for seed in range(4):  # planned inputs or drawn ones: the recorded calls are sent as recorded
        case = Case(session)
        case.follow(plans(session), route, Seeded(seed))
        assert case.accepted[: route.recorded] == near
    assert PAST_CAP in session.outcomes


def test_the_relay_starts_from_the_ends_of_the_corpus_entries_the_rarest_first() -> None:
    session = punch_session("Punch")
    ops = PUNCH.operations
    for card, punches in (("a", 2), ("b", RELAY_RECORDS)):
        case = Case(session)
        for name, value in _calls(card, punches):
            case.send(ops[name], value)
    case = Case(session)
    for index in range(RELAY_RECORDS + 1):  # entries with more cards than a start may hold
        case.send(ops["issue"], {"card": f"c{index}"})
    entries = session.corpus.entries
    starts = relay_starts(session)
    assert starts and len(starts) < len(entries)
    for calls, state in starts:
        assert calls in entries and state == _reached(calls)
        assert len(state["cards"]) <= RELAY_RECORDS
    chosen = [calls for calls, _ in starts]
    assert chosen == [entry for entry, _ in session.corpus.rarest() if entry in chosen]


OUTCOMES = ("punch: accepted", "punch: requires 1 fails", "punch: condition 1 holds", PAST_CAP)


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 9)), min_size=1, max_size=3),
    st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=4, unique=True),
)
def test_a_relayed_route_runs_through_the_contract_to_the_outcome_it_was_planned_for(
    cards: list[tuple[str, int]], outcomes: list[str]
) -> None:
    """Whatever the starts and the goals: each route the relay gives is its start's calls and
    then calls the contract accepts, whose last takes the outcome it was planned for (the
    refused call of a ``requires`` outcome refused by exactly that clause)."""
    starts = [(calls, _reached(calls)) for card, punches in cards if (calls := _calls(card, punches))]
    goals = {goal: outcome for outcome in outcomes if (goal := goal_of(outcome, PUNCH)) is not None}
    machine = Machine(PUNCH)
    (branch,) = branches(PUNCH.operations["punch"], PUNCH)
    routes = relay(PUNCH, starts, list(goals), effort=10**8, depth=3)
    met = {goals[route.goal] for route in routes if route.goal in goals}
    # a punch of a card any start has, and of one it has not, are one call on from every start
    assert {"punch: accepted", "punch: requires 1 fails"} & set(outcomes) <= met
    for route in routes:
        assert route.goal in goals and route.recorded > 0
        assert any(list(route.inputs[: route.recorded]) == [v for _, v in calls] for calls, _ in starts)
        state = machine.initial_state()
        steps = list(zip(route.operations, route.inputs, strict=True))
        for name, value in steps[:-1]:
            expect = oracle.judge(machine, state, PUNCH.operations[name], value)
            assert expect.accepted and expect.post is not None
            state = expect.post
        name, value = steps[-1]
        expect = oracle.judge(machine, state, PUNCH.operations[name], value)
        outcome = goals[route.goal]
        if route.refused:
            assert not expect.accepted and outcome == f"{name}: requires 1 fails"
        else:
            assert expect.accepted
            assert outcome == f"{name}: accepted" or branch.taken(state, value) == outcome


def test_a_state_the_target_gave_ids_to_is_a_start_too() -> None:
    """An imported API's create keeps the record under the id the target returns (its effect
    reads the output), so the model alone cannot replay the calls to their state: the corpus
    keeps the state each entry reached, and the relay starts from it."""
    pets = envfactory.load(Path(__file__).resolve().parents[1] / "simulator" / "pets_openapi.yaml")
    assert pets.operations["createPet"].reads_output
    session = Session(pets, open_target("sim", pets), mode="valid", time_budget=None)
    case = Case(session)
    for name in ("rex", "tom"):
        case.send(pets.operations["createPet"], {"name": name})
    by_length = {len(calls): state for calls, state in relay_starts(session)}
    assert by_length[2] == case.state  # the ids the target returned, as the case holds them
    assert sorted(pet["name"] for pet in by_length[2]["pets"].values()) == ["rex", "tom"]


LADDER = """
envfactory: "1"
info: {title: Ladder, version: "1"}
state:
  rungs:
    collection:
      key: {type: string}
      value:
        type: object
        properties: {a: {type: integer}, b: {type: integer}, c: {type: integer}, d: {type: integer}}
        required: [a, b, c, d]
operations:
  make:
    input: {type: object, properties: {name: {type: string}}, required: [name], additionalProperties: false}
    requires: [{check: 'not (input.name in rungs)', error: {status: 409, message: exists}}]
    effects: ['rungs[input.name] = {"a": 0, "b": 0, "c": 0, "d": 0}']
""" + "".join(
    f"""  {rung}:
    input: {{type: object, properties: {{name: {{type: string}}}}, required: [name], additionalProperties: false}}
    requires:
      - {{check: 'input.name in rungs', error: {{status: 404, message: none}}}}
      - {{check: '{below}', error: {{status: 409, message: the rung below first}}}}
      - {{check: 'rungs[input.name].{rung} < 2', error: {{status: 429, message: twice}}}}
    effects: ['rungs[input.name].{rung} = rungs[input.name].{rung} + 1']
"""
    for rung, below in (
        ("a", "true"),
        ("b", "rungs[input.name].a == 2"),
        ("c", "rungs[input.name].b == 2"),
        ("d", "rungs[input.name].c == 2"),
    )
)
LADDER_EFFORT = 3_000_000
"""Z3 resource units: a third of what ``plan`` takes to reach the last rung's limit from the start
with the other goals (9.4 million), twice what ``stepwise`` takes (1.3 million)."""


def test_stepping_stones_reach_what_planning_from_the_start_cannot_afford(tmp_path: Path) -> None:
    """The top rung's limit is ten calls from the start (a rung made, each rung climbed twice,
    the fourth once more). ``plan`` asks every goal at every depth, and each depth it proves
    empty costs more than the one before; ``stepwise`` plans five calls from the start and goes
    on from the states its routes reach, a few calls at a time."""
    (tmp_path / "ladder.yaml").write_text(LADDER, encoding="utf-8")
    ladder = envfactory.load(tmp_path / "ladder.yaml")
    goals = [g for o in clause_outcomes(ladder) if (g := goal_of(o, ladder)) is not None]
    top = ("d", 2)  # the third requires of `d` fails: climbed twice
    assert top in goals
    assert top not in {route.goal for route in plan(ladder, goals, effort=LADDER_EFFORT)}
    routes = stepwise(ladder, goals, effort=LADDER_EFFORT)
    (last,) = [route for route in routes if route.goal == top]
    assert last.recorded >= STONE_DEPTH - 1 and last.refused  # through a stone
    machine = Machine(ladder)
    state = machine.initial_state()
    for name, value in zip(last.operations[:-1], last.inputs[:-1], strict=True):
        expect = oracle.judge(machine, state, ladder.operations[name], value)
        assert expect.accepted and expect.post is not None
        state = expect.post
    refused = oracle.judge(machine, state, ladder.operations["d"], last.inputs[-1])
    assert not refused.accepted and refused.clause == ladder.operations["d"].requires[2]
    # and every other goal on the way, but the refusal by `a`'s `true`
    assert {route.goal for route in routes} == set(goals) - {("a", 1)}


def test_the_stones_split_in_two_parts_plan_what_they_plan_together(tmp_path: Path) -> None:
    """``plan_apart`` runs the plan up to the stones' depth ("near") and the relays on from the
    states its routes reach ("rounds") as two phases, with another phase between them: given the
    near part's routes, the rounds find what the whole "stones" part finds, the top rung's limit
    through a stone among them. Each part in a worker started afresh, as the fuzzer plans: the
    same questions get the same models there."""
    (tmp_path / "ladder.yaml").write_text(LADDER, encoding="utf-8")
    ladder = envfactory.load(tmp_path / "ladder.yaml")
    goals = [g for o in clause_outcomes(ladder) if (g := goal_of(o, ladder)) is not None]

    def apart(goals: list[Goal], parts: Parts, near: Sequence[Route] = ()) -> list[Route]:
        heard: list[Route] = []
        reach._apart(
            lambda fresh, progress: stepwise(
                ladder, goals, effort=LADDER_EFFORT, report=progress, least=not fresh, parts=parts, near=near
            ),
            300,
            heard.append,
        )
        return heard

    whole = apart(goals, "stones")
    near = apart(goals, "near")
    # a refusal's route is the calls to the state it is asked of, and the refused call
    assert all(len(route.operations) - route.refused <= STONE_DEPTH for route in near)
    rounds = apart([g for g in goals if g not in {route.goal for route in near}], "rounds", near)
    assert ("d", 2) in {route.goal for route in rounds}
    assert [*near, *rounds] == whole
    # with no routes to go on from, the rounds plan nothing
    assert apart(goals, "rounds") == []


PAST_STONES_EFFORT = 9_000_000
"""Z3 resource units: half again what the two ledger goals below take planned past the stones
with room for eight calls first (about 6 million), three quarters of what they took with room
for the whole depth at once (about 12 million)."""


def test_past_the_stones_the_planner_makes_room_for_a_few_calls_first() -> None:
    """Two ledger goals beyond ``stepwise``'s first five calls: a sixth deposit refused (seven
    calls) and a fifth transfer refused (eight). Planned past the stones with collections that
    had room for 24 calls, each check of a seven-call unrolling cost seconds (24 slots a
    collection, each with its frame equations at every step); room for eight calls first
    (``SLOT_STAGES``) finds both with the effort one of them took."""
    ledger = envfactory.load(Path(__file__).resolve().parent / "impls" / "ledger.yaml")
    goals = [("transfer", 5), ("deposit", 2)]
    found: list[Route] = []
    # in a worker started afresh, as the fuzzer plans: the units Z3 counts do not depend on
    # what this process asked it before
    plan_apart(ledger, goals, effort=PAST_STONES_EFFORT, seconds=300, report=found.append)
    assert sorted((route.goal, len(route.operations)) for route in found) == [
        (("deposit", 2), 7),
        (("transfer", 5), 8),
    ]


def test_a_stone_is_a_state_a_route_reaches_once_with_the_shortest_calls_to_it() -> None:
    issue, punch = ("issue", {"card": "a"}), ("punch", {"card": "a"})
    routes = [
        Route(("issue", "punch", "punch"), ({"card": "a"},) * 3),
        Route(("issue", "punch"), ({"card": "a"},) * 2),
        Route(("issue", "punch", "punch"), ({"card": "a"},) * 3),  # the same state again
        Route(("punch",), ({"card": "x"},), refused=True),  # the initial state, where it is refused
        Route(("issue", "punch"), ()),  # no inputs: no state known
        Route(("issue", "punch"), ({"card": "b"}, None)),  # one input unread: no state known
    ]
    found = stones(PUNCH, routes)
    assert [calls for calls, _ in found] == [(issue, punch, punch), (issue, punch), ()]
    assert [state for _, state in found] == [
        _reached([issue, punch, punch]),
        _reached([issue, punch]),
        _reached([]),
    ]


def test_a_case_takes_the_routes_the_latest_adoption_brought_one_time_in_two() -> None:
    """Routes planned late (beside the search, the influence goals come last) have fewer cases
    left: half the cases that follow a route take one of those the latest adoption brought."""
    session = punch_session("Punch")
    old = [Route(("issue",), goal=("issue", None)), Route(("issue", "punch"), goal=("punch", None))]
    new = Route(("issue", "punch", "punch"), goal=("punch", 0))
    session.planned = list(old)
    session.adopt_prefixes()
    assert session.fresh == 2  # all of them: one adoption, and the choice is uniform
    session.planned.append(new)
    session.adopt_prefixes()
    assert session.fresh == 1 and session.prefixes[-1] is new
    taken = [Case(session)._prefix(Seeded(seed)) for seed in range(600)]
    share = taken.count(new) / len(taken)
    assert 0.58 < share < 0.75, share  # a half, and a third of the other half
