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
