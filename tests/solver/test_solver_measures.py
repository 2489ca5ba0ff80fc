"""Ordering and measuring strings read abstractly (``solver.measures``): a contract that compares
dates kept as ISO texts, or the lengths of titles, plans in identities, not in Z3's string
theory, and every plan replays (the texts chosen keep the order and the lengths the model gave
their identities). Before, one such clause anywhere sent the whole contract to Z3 strings: the
planner found no route to any outcome of the dates in 15 CPU-seconds each; each now takes a
fraction of a second."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.semantics import Machine
from envfactory.fuzz import oracle
from envfactory.fuzz.reach import Route, goal_of, plan_apart
from envfactory.fuzz.runner import clause_outcomes
from envfactory.solver.bmc import Unrolling
from envfactory.solver.measures import Lengths, Ranks, text_rank
from envfactory.solver.symbolic import literal_id
from envfactory.solver.transition import Transition

DAY = "{type: string, pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'}"
STAYS = f"""
envfactory: "1"
info: {{title: Stays, version: "1"}}
state:
  stays:
    collection:
      key: {{type: string}}
      value:
        type: object
        properties: {{start: {{type: string}}, end: {{type: string}}, moves: {{type: integer}}}}
        required: [start, end, moves]
  opened: {{type: string, initial: "2026-01-01"}}
operations:
  book:
    input:
      type: object
      properties: {{id: {{type: string}}, start: {DAY}, end: {DAY}}}
      required: [id, start, end]
      additionalProperties: false
    requires:
      - {{check: 'not (input.id in stays)', error: {{status: 409, message: exists}}}}
      - {{check: 'input.start < input.end', error: {{status: 400, message: backwards}}}}
      - {{check: 'input.start >= opened', error: {{status: 400, message: before opening}}}}
    effects: ['stays[input.id] = {{"start": input.start, "end": input.end, "moves": 0}}']
  extend:
    input:
      type: object
      properties: {{id: {{type: string}}, end: {DAY}}}
      required: [id, end]
      additionalProperties: false
    requires:
      - {{check: 'input.id in stays', error: {{status: 404, message: no such stay}}}}
      - {{check: 'input.end > stays[input.id].end', error: {{status: 409, message: only later}}}}
      - {{check: 'stays[input.id].moves < 2', error: {{status: 429, message: too many}}}}
    effects:
      - 'stays[input.id].end = input.end'
      - 'stays[input.id].moves = stays[input.id].moves + 1'
  reopen:
    input: {{type: object, properties: {{day: {DAY}}}, required: [day], additionalProperties: false}}
    requires: [{{check: 'input.day > opened', error: {{status: 409, message: only later}}}}]
    effects: ['opened = input.day']
invariants:
  - 'all(s.start < s.end for s in values(stays))'
"""


@pytest.fixture(scope="module")
def stays(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path = Path(tmp_path_factory.mktemp("ranks")) / "stays.yaml"
    path.write_text(STAYS, encoding="utf-8")
    return envfactory.load(path)


def test_a_contract_that_orders_strings_keeps_the_abstract_reading(stays: envfactory.Contract) -> None:
    assert Transition(stays).atoms is not None


def routes_replay(contract: envfactory.Contract) -> dict[str, Route]:
    """A route to every clause outcome a state decides, planned as the fuzzer plans them (in a
    worker whose Z3 starts afresh: the same routes whatever this process asked Z3 before), each
    replayed through the contract: the calls before the last accepted, the last one as planned.
    The routes, by outcome."""
    machine = Machine(contract)
    wanted = {}
    for outcome in clause_outcomes(contract):
        goal = goal_of(outcome, contract)
        if goal is not None:  # an input schema failing has no state to reach
            wanted[goal] = outcome
    found: list[Route] = []
    plan_apart(contract, list(wanted), effort=30 * 10**6, seconds=300, report=found.append)
    planned = {wanted[route.goal]: route for route in found if route.goal in wanted}
    assert set(planned) == set(wanted.values())
    for outcome, route in planned.items():
        state = machine.initial_state()
        for at, (name, value) in enumerate(zip(route.operations, route.inputs, strict=True)):
            judged = oracle.judge(machine, state, contract.operations[name], value)
            if at == len(route.operations) - 1:
                assert judged.accepted != route.refused, (outcome, route)
            else:
                assert judged.accepted, (outcome, route, at)
                state = machine.apply(state, contract.operations[name], value)
    return planned


def test_every_clause_outcome_of_ordered_dates_is_planned_and_replays(stays: envfactory.Contract) -> None:
    routes = routes_replay(stays)
    assert len(routes) == 11
    # the third call of extend is refused: two later ends, each after the one before it
    route = routes["extend: requires 3 fails"]
    ends = [value["end"] for value in route.inputs]
    assert route.operations == ("book", "extend", "extend", "extend") and ends[0] < ends[1] < ends[2]


NOTES = """
envfactory: "1"
info: {title: Notes, version: "1"}
state:
  notes:
    collection:
      key: {type: string}
      value: {type: object, properties: {title: {type: string}, edits: {type: integer}}, required: [title, edits]}
operations:
  write:
    input: &note
      type: object
      properties: {id: {type: string}, title: {type: string, maxLength: 40}}
      required: [id, title]
      additionalProperties: false
    requires:
      - {check: 'not (input.id in notes)', error: {status: 409, message: exists}}
      - {check: 'len(input.title) > 0', error: {status: 400, message: empty}}
      - {check: 'len(input.title) <= 20', error: {status: 413, message: too long}}
    effects: ['notes[input.id] = {"title": input.title, "edits": 0}']
  retitle:
    input: *note
    requires:
      - {check: 'input.id in notes', error: {status: 404, message: missing}}
      - {check: 'len(input.title) > len(notes[input.id].title)', error: {status: 409, message: only longer}}
      - {check: 'notes[input.id].edits < 3', error: {status: 429, message: too many}}
    effects: ['notes[input.id].title = input.title', 'notes[input.id].edits = notes[input.id].edits + 1']
"""


def test_every_clause_outcome_of_measured_titles_is_planned_and_replays(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text(NOTES, encoding="utf-8")
    notes = envfactory.load(tmp_path / "notes.yaml")
    assert Transition(notes).atoms is not None
    routes = routes_replay(notes)
    assert len(routes) == 12
    retitles = routes["retitle: requires 3 fails"]
    assert retitles.operations == ("write", "retitle", "retitle", "retitle", "retitle")
    # too long, at the bound, past the schema's 40 characters never: the lengths are the model's
    assert 20 < len(routes["write: requires 3 fails"].inputs[-1]["title"]) <= 40
    assert len(routes["write: requires 3 at its bound"].inputs[-1]["title"]) == 20


def test_a_planner_started_afresh_measures_strings_too(tmp_path: Path) -> None:
    """The fuzzer plans in a worker whose Z3 context is new (``solver.fresh``): a measure made
    there must not hold a sort of the old context (it did, and the worker planned nothing)."""
    (tmp_path / "notes.yaml").write_text(NOTES, encoding="utf-8")
    notes = envfactory.load(tmp_path / "notes.yaml")
    found: list[Route] = []
    goal = goal_of("retitle: requires 3 fails", notes)
    assert goal is not None
    plan_apart(notes, [goal], effort=3 * 10**6, seconds=300, report=found.append)
    assert [route.operations for route in found] == [("write", "retitle", "retitle", "retitle", "retitle")]


@settings(max_examples=25)
@given(st.integers())
def test_a_fresh_string_has_a_length_of_one_or_more(free: int) -> None:
    """The empty string is a literal: two fresh strings of length 0 would be one text."""
    length = z3.simplify(Lengths().fresh(z3.IntVal(free))).as_long()
    assert length >= 1


@given(st.text(max_size=12), st.text(max_size=12))
@example("a", "a\x00")
@example("ab", "b")
def test_the_rank_of_a_text_keeps_the_order_of_texts(a: str, b: str) -> None:
    assert (text_rank(a) < text_rank(b)) == (a < b)
    assert (text_rank(a) == text_rank(b)) == (a == b)


@settings(max_examples=25)
@given(st.lists(st.text(alphabet="ab\x00", max_size=3), max_size=3))
def test_ranks_order_strings_strictly_and_totally(literals: list[str]) -> None:
    """Over fresh identities and literals alike, whatever ranks a model picks: never both ways,
    one way unless equal, and transitive; and two literals in the order of their texts."""
    ranks = Ranks()
    ranks.texts = frozenset(literals)  # as a contract's own (the suite registers thousands)
    a, b, c = z3.Ints("a b c")
    known = [literal_id(text) for text in literals]
    solver = z3.Solver()
    for x, y in ((a, b), (b, c), (a, c)):
        solver.push()
        both = z3.And(ranks.less(x, y), ranks.less(y, x))
        neither = z3.And(x != y, z3.Not(ranks.less(x, y)), z3.Not(ranks.less(y, x)))
        solver.add(z3.Or(both, neither))
        assert solver.check() == z3.unsat
        solver.pop()
    solver.add(ranks.less(a, b), ranks.less(b, c), z3.Not(ranks.less(a, c)))
    assert solver.check() == z3.unsat
    for x, text_x in zip(known, literals, strict=True):
        for y, text_y in zip(known, literals, strict=True):
            assert ranks.less(x, y) == (text_x < text_y)
            pinned = z3.Solver()
            pinned.add(a == x, b == y, ranks.less(a, b) != (text_x < text_y))
            assert pinned.check() == z3.unsat


def test_another_contracts_literal_is_any_string_to_this_one(tmp_path: Path) -> None:
    """Measures look up only the contract's own literals (another contract's, registered in the
    same process, would lengthen every chain), so an identity the model takes from another
    contract's literal has a free length here: its text is drawn with that length, not read as
    the other contract's (the suite once planned a title of 34 characters at a bound of 20)."""
    foreign = literal_id("verification_document_not_readable")
    (tmp_path / "notes.yaml").write_text(NOTES, encoding="utf-8")
    notes = envfactory.load(tmp_path / "notes.yaml")
    unrolling = Unrolling(notes, slots=1)
    unrolling.extend()
    _, title = unrolling.io[0]["write"].input.get("title")
    chosen = unrolling.selectors[0] == unrolling.ops.index("write")
    assert unrolling.check(chosen, title.t == foreign) == z3.sat
    ((name, value, _, _),) = unrolling.calls(polish=0)
    assert name == "write" and 0 < len(value["title"]) <= 20
