"""A ``requires`` at its bound (``branches.bounds``): the last value a numeric comparison lets
through is a clause outcome of its own, counted, and planned for, where an implementation that
counts one short refuses and no refusal shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.contracts.model import Contract
from envfactory.contracts.printer import to_source
from envfactory.contracts.semantics import Machine
from envfactory.fuzz import oracle
from envfactory.fuzz.branches import bounds, conditions, find
from envfactory.fuzz.reach import goal_of, plan
from envfactory.fuzz.runner import Session, clause_outcomes
from envfactory.fuzz.targets import open_target

SHELF = """
envfactory: "1"
info: {title: Shelf, version: "1"}
state:
  boxes:
    collection:
      key: {type: string}
      value:
        type: object
        properties: {items: {type: integer}, locked: {type: boolean}, label: {type: string}}
        required: [items, locked, label]
operations:
  make:
    input: {type: object, properties: {box: {type: string}}, required: [box], additionalProperties: false}
    requires: [{check: 'not (input.box in boxes)', error: {status: 409, message: exists}}]
    effects: ['boxes[input.box] = {"items": 0, "locked": false, "label": input.box}']
  put:
    input:
      type: object
      properties: {box: {type: string}, n: {type: integer, minimum: 1, maximum: 3}}
      required: [box, n]
      additionalProperties: false
    requires:
      - {check: 'input.box in boxes', error: {status: 404, message: no such box}}
      - {check: 'boxes[input.box].items + input.n <= 3', error: {status: 413, message: full}}
    effects: ['boxes[input.box].items = boxes[input.box].items + input.n']
  take:
    input:
      type: object
      properties: {box: {type: string}, n: {type: integer, minimum: 1, maximum: 3}}
      required: [box, n]
      additionalProperties: false
    requires:
      - {check: 'input.box in boxes', error: {status: 404, message: no such box}}
      - {check: 'not (boxes[input.box].items < input.n)', error: {status: 409, message: too few}}
    effects: ['boxes[input.box].items = boxes[input.box].items - input.n']
  move:
    input:
      type: object
      properties: {source: {type: string}, target: {type: string}}
      required: [source, target]
      additionalProperties: false
    requires:
      - {check: 'input.source in boxes and input.target in boxes and input.source != input.target', error: {status: 404, message: no such box}}
      - check: 'boxes[input.target].locked or boxes[input.target].items + boxes[input.source].items < 4'
        error: {status: 413, message: no room}
    effects:
      - 'boxes[input.target].items = boxes[input.target].items + boxes[input.source].items'
      - 'boxes[input.source].items = 0'
"""


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Contract:
    path = Path(tmp_path_factory.mktemp("shelf")) / "shelf.yaml"
    path.write_text(SHELF, encoding="utf-8")
    return envfactory.load(path)


def test_each_numeric_comparison_of_a_requires_has_an_outcome_at_its_bound(shelf: Contract) -> None:
    outcomes = [o for o in clause_outcomes(shelf) if "bound" in o]
    assert outcomes == [
        "put: requires 2 at its bound",
        "take: requires 2 at its bound",
        "move: requires 2 at its bound",
    ]
    ((put,), (take,), (move,)) = (bounds(shelf.operations[n], shelf) for n in ("put", "take", "move"))
    # `<=`: the sides equal; `not <`: the sides equal too; `<` of integers: one short of it
    assert to_source(put.parts[0]) == "boxes[input.box].items + input.n == 3"
    assert to_source(take.parts[0]) == "boxes[input.box].items == input.n"
    assert to_source(move.parts[0]) == "boxes[input.target].items + boxes[input.source].items + 1 == 4"
    # through an `or`, the comparison decides the clause only where the other way fails
    assert [to_source(g) for g in move.guard] == ["not boxes[input.target].locked"]
    assert not put.guard and not take.guard
    assert find(shelf, "put: requires 2 at its bound") == (put, "put: requires 2 at its bound")
    assert find(shelf, "put: requires 2 fails") is None  # a refusal is no condition


ORDERS = """
envfactory: "1"
info: {title: Orders, version: "1"}
state: {label: {type: string, initial: "a"}, weight: {type: number, initial: 0}}
operations:
  ship:
    input: {type: object, properties: {kg: {type: number}}, required: [kg], additionalProperties: false}
    requires:
      - {check: 'label < "z"', error: {status: 409, message: strings have no bound}}
      - {check: 'weight + input.kg < 10', error: {status: 413, message: between numbers no next one}}
      - {check: 'weight + input.kg <= 10.5', error: {status: 413, message: but an equality}}
    effects: ['weight = weight + input.kg']
"""


def test_a_bound_is_of_integers_or_an_equality_of_numbers(tmp_path: Path) -> None:
    (tmp_path / "orders.yaml").write_text(ORDERS, encoding="utf-8")
    orders = envfactory.load(tmp_path / "orders.yaml")
    (bound,) = bounds(orders.operations["ship"], orders)
    assert bound.outcomes == ("ship: requires 3 at its bound",)
    assert to_source(bound.parts[0]) == "weight + input.kg == 10.5"


def test_a_call_accepted_at_the_bound_covers_it_and_one_short_of_it_does_not(shelf: Contract) -> None:
    (put,) = bounds(shelf.operations["put"], shelf)
    state = {"boxes": {"a": {"items": 1, "locked": False, "label": "a"}}}
    assert put.taken(state, {"box": "a", "n": 2}) == "put: requires 2 at its bound"
    assert put.taken(state, {"box": "a", "n": 1}) is None  # no outcome of its own: not a way
    (move,) = bounds(shelf.operations["move"], shelf)
    boxes = {
        "a": {"items": 1, "locked": False, "label": "a"},
        "b": {"items": 2, "locked": False, "label": "b"},
    }
    assert move.taken({"boxes": boxes}, {"source": "a", "target": "b"}) == "move: requires 2 at its bound"
    locked = {**boxes, "b": {**boxes["b"], "locked": True}}
    assert move.taken({"boxes": locked}, {"source": "a", "target": "b"}) is None  # the lock let it in
    session = Session(shelf, open_target("sim", shelf), mode="valid", time_budget=None)
    assert all(b in conditions(shelf.operations["put"], shelf) for b in session.open_branches["put"])
    machine = Machine(shelf)
    pre = machine.apply(session.initial, shelf.operations["make"], {"box": "a"})
    for n, covered in ((2, False), (3, True)):
        value = {"box": "a", "n": n}
        session.outcome(
            shelf.operations["put"], oracle.judge(machine, pre, shelf.operations["put"], value), pre, value
        )
        assert ("put: requires 2 at its bound" in session.outcomes) is covered
    assert session.open_branches["put"] == ()  # covered: no longer evaluated


def test_the_solver_plans_a_route_that_ends_at_a_bound(shelf: Contract) -> None:
    """The bound of a move is two boxes whose items add up to three, moved together: a route to
    the move's refusal needs four, and passes no move at three."""
    goal = goal_of("move: requires 2 at its bound", shelf)
    assert goal is not None and goal[:2] == ("move", None)
    (route,) = plan(shelf, [goal], effort=10**9)
    assert route.operations[-1] == "move" and not route.refused
    machine = Machine(shelf)
    state = machine.initial_state()
    for name, value in zip(route.operations[:-1], route.inputs[:-1], strict=True):
        assert oracle.judge(machine, state, shelf.operations[name], value).accepted
        state = machine.apply(state, shelf.operations[name], value)
    (move,) = bounds(shelf.operations["move"], shelf)
    assert oracle.judge(machine, state, shelf.operations["move"], route.inputs[-1]).accepted
    assert move.taken(state, route.inputs[-1]) == "move: requires 2 at its bound"
