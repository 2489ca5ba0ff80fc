"""A write through a key of several kinds (``solver.maps.present_key``, ``_write_key``): a key
chosen by a condition (``input.b if "b" in input else input.a``) and a nullable field used as a
key (``owners[items[input.i].owner]``) are in the solver's fragment where the write is a field
updated or a delete (defined only where the key names a record), so the planner reaches the
operations that make them: planned routes verify against the concrete semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.solver.bmc import Unrolling, plan

BOXES = """
envfactory: "1"
state:
  boxes:
    collection:
      key: {type: string}
      value: {type: object, properties: {n: {type: integer}}, required: [n]}
  owners:
    collection:
      key: {type: string}
      value: {type: object, properties: {done: {type: integer}}, required: [done]}
  items:
    collection:
      key: {type: integer}
      value: {type: object, properties: {owner: {type: [string, "null"]}}, required: [owner]}
operations:
  make:
    input: {type: object, properties: {a: {type: string}}, required: [a], additionalProperties: false}
    requires: ['not (input.a in boxes)']
    effects: ['boxes[input.a] = {"n": 0}']
  bump:
    # into b where given, else into a; a must be untouched, so a second bump of one box comes
    # through another's b
    input:
      type: object
      properties: {a: {type: string}, b: {type: string}}
      required: [a]
      additionalProperties: false
    requires:
      - 'input.a in boxes and boxes[input.a].n == 0'
      - 'not ("b" in input) or input.b in boxes'
    effects:
      - 'boxes[input.b if "b" in input else input.a].n = boxes[input.b if "b" in input else input.a].n + 1'
  join:
    input: {type: object, properties: {o: {type: string}}, required: [o], additionalProperties: false}
    requires: ['not (input.o in owners)']
    effects: ['owners[input.o] = {"done": 0}']
  item:
    input:
      type: object
      properties: {i: {type: integer}, o: {type: [string, "null"]}}
      required: [i, o]
      additionalProperties: false
    requires: ['not (input.i in items)', 'input.o == null or input.o in owners']
    effects: ['items[input.i] = {"owner": input.o}']
  credit:
    input: {type: object, properties: {i: {type: integer}}, required: [i], additionalProperties: false}
    requires: ['input.i in items and items[input.i].owner != null and items[input.i].owner in owners']
    effects: ['owners[items[input.i].owner].done = owners[items[input.i].owner].done + 1']
  leave:
    input: {type: object, properties: {i: {type: integer}}, required: [i], additionalProperties: false}
    requires: ['input.i in items and items[input.i].owner != null and items[input.i].owner in owners']
    effects: ['del owners[items[input.i].owner]']
"""


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path = Path(tmp_path_factory.mktemp("boxes")) / "boxes.yaml"
    path.write_text(BOXES, encoding="utf-8")
    return envfactory.load(path)


def test_every_operation_is_in_the_fragment(boxes: envfactory.Contract) -> None:
    unrolling = Unrolling(boxes, slots=2)
    unrolling.extend()
    assert unrolling.skipped == {}


@pytest.mark.parametrize(
    ("goal", "steps"),
    [
        # two boxes, one bumped on its own and then through the other's b
        ("any(boxes[x].n == 2 for x in boxes)", 4),
        # an owner, an item of theirs, a credit through the item's owner
        ("any(owners[o].done == 1 for o in owners)", 3),
        # an item whose owner left: the delete went through the nullable field
        ("any(items[i].owner != null and not (items[i].owner in owners) for i in items)", 3),
    ],
)
def test_a_planned_route_through_such_a_key_verifies(
    boxes: envfactory.Contract, goal: str, steps: int
) -> None:
    result = plan(boxes, goal, max_depth=5, timeout=120)
    assert result.status == "found" and result.trajectory is not None, result
    assert len(result.trajectory.steps) == steps
    assert [r.verdict for r in envfactory.verify(boxes, [result.trajectory])] == ["valid"]
