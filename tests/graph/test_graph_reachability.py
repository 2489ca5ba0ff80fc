"""Reachability findings for `envfactory check`, and the explicit-state baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from _graph_contracts import COUNTER, DOOR, TRAP, example, write_contract

from envfactory.solver.bmc import holds, resolve_goal
from envfactory.solver.reachability import reachability_findings
from envfactory.statemachine.reachability import explicit_bfs, input_domain


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_bundled_contracts_have_no_reachability_findings(name: str) -> None:
    assert reachability_findings(example(name)) == []


def test_findings_on_small_contracts(tmp_path: Path) -> None:
    door = write_contract(tmp_path, "door", DOOR)
    found = {(f.kind, f.operation) for f in reachability_findings(door)}
    assert ("never_enabled", "repair") in found
    kinds = [f.kind for f in reachability_findings(door)]
    assert kinds.count("unreachable_goal") == 1  # "negative" (uses < 0); "smashed" is reachable
    trap = write_contract(tmp_path, "trap", TRAP)
    assert [f.kind for f in reachability_findings(trap)] == ["dead_end"]
    counter = write_contract(tmp_path, "counter", COUNTER)
    (finding,) = reachability_findings(counter)
    assert finding.kind == "non_inductive_invariant" and finding.operation == "dec"
    assert finding.to_json()["location"].endswith("counter.yaml:21:5")


def test_explicit_bfs_agrees_with_known_answers(tmp_path: Path) -> None:
    counter = write_contract(tmp_path, "counter", COUNTER)
    goal = resolve_goal(counter, "five")
    domain = input_domain(counter, ints=(0, 1, 2, 3))
    assert domain["inc"] == [{"by": 1}, {"by": 2}, {"by": 3}]
    search = explicit_bfs(counter, lambda s: holds(goal, s), domain, max_depth=4)
    assert search.depth == 2 and not search.cut
    assert sum(call[1]["by"] for call in search.path or ()) == 5
    bank = example("bank")
    domain = input_domain(bank, ints=(0, 300, 500), strings=("AA00",))
    rich = explicit_bfs(bank, lambda s: holds(bank.goals["rich"], s), domain, max_depth=3)
    assert rich.depth == 2
    cut = explicit_bfs(bank, lambda s: False, domain, max_depth=10, max_states=50)
    assert cut.cut and cut.path is None


def test_a_warning_parenthesises_an_or_among_several_requires(tmp_path: Path) -> None:
    """``uses < 0 or broken and open`` would read as ``uses < 0 or (broken and open)``."""
    text = DOOR.replace(
        "requires: [broken and not open and uses < 0]", "requires: ['uses < 0 or uses < -1', broken]"
    )
    door = write_contract(tmp_path, "door", text)
    (warning,) = [f for f in reachability_findings(door) if f.kind == "never_enabled"]
    assert warning.message.endswith("satisfies its requires ((uses < 0 or uses < -1) and broken)")


ROOMS = """
envfactory: "1"
info: {title: Rooms, version: "1"}
state:
  rooms:
    collection:
      key: {type: string}
      value: {type: object, properties: {size: {type: integer}}, required: [size]}
operations:
  make:
    input: {type: object, properties: {room: {type: string}}, required: [room], additionalProperties: false}
    requires: [{check: 'not (input.room in rooms)', error: {status: 409, message: exists}}]
    effects: ['rooms[input.room] = {"size": 1}']
  merge:
    input:
      type: object
      properties: {a: {type: string}, b: {type: string}, c: {type: string}}
      required: [a, b, c]
      additionalProperties: false
    requires:
      - check: 'input.a in rooms and input.b in rooms and input.c in rooms and input.a != input.b and input.b != input.c and input.a != input.c'
        error: {status: 404, message: three rooms}
    effects: ['rooms[input.a].size = 3']
  shrink:
    input: {type: object, properties: {room: {type: string}}, required: [room], additionalProperties: false}
    requires: [{check: 'input.room in rooms and rooms[input.room].size < 0', error: {status: 409, message: never}}]
    effects: ['rooms[input.room].size = 0']
invariants: ['all(rooms[r].size >= 1 for r in rooms)']
"""


def test_an_operation_that_needs_more_entries_than_the_graph_has_is_not_called_never_enabled(
    tmp_path: Path,
) -> None:
    """Three distinct rooms are more than the graph's two entries per collection: the graph has
    no edge for ``merge``, which three calls reach. ``shrink`` needs a size below zero, which
    no state where the invariant holds has, at any size: that warning stands."""
    rooms = write_contract(tmp_path, "rooms", ROOMS)
    found = {f.operation: f for f in reachability_findings(rooms) if f.operation}
    assert found["merge"].kind == "needs_room" and found["merge"].severity == "info"
    assert "at most 2 entries per collection" in found["merge"].message
    assert found["shrink"].kind == "never_enabled" and found["shrink"].severity == "warning"
