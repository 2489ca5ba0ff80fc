"""`plan` and `prove`: known answers, and every trace re-checked by `verify` and concretely."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _graph_contracts import COUNTER, DOOR, example, write_contract

from envfactory.contracts.errors import ExpressionError, UsageError
from envfactory.solver.bmc import holds, plan, replay, resolve_goal
from envfactory.solver.induction import prove
from envfactory.trajectory import Trajectory, read_trajectories, write_trajectories
from envfactory.verification import verify


def _calls(traj: Trajectory) -> list[tuple[str, Any, Any, bool]]:
    return [(s.tool, s.input, s.output, s.has_output) for s in traj.steps]


@pytest.mark.parametrize(
    ("name", "goal", "depth", "tools"),
    [
        ("bank", "rich", 2, ["open", "deposit"]),
        ("bank", "two_accounts", 2, ["open", "open"]),
        ("petstore", "no_pets", 0, []),
        ("petstore", "adopted_something", 3, ["login", "addPet", "adopt"]),
        ("petstore", "len(pets) == 2 and user == null", 4, None),
    ],
)
def test_plan_known_answers(
    name: str, goal: str, depth: int, tools: list[str] | None, tmp_path: Path
) -> None:
    contract = example(name)
    result = plan(contract, goal, max_depth=5)
    assert result.status == "found" and result.depth == depth
    traj = result.trajectory
    assert traj is not None and len(traj.steps) == depth
    if tools is not None:
        assert [s.tool for s in traj.steps] == tools
    # written and read back, the plan verifies valid, and the goal holds at its end
    path = tmp_path / "plan.jsonl"
    write_trajectories(path, [traj])
    (back,) = list(read_trajectories(path))
    assert not isinstance(back, Exception)
    (verdict,) = list(verify(contract, [back]))
    assert verdict.verdict == "valid", verdict.message
    final = replay(contract, _calls(back)).states[-1]
    assert holds(resolve_goal(contract, goal), final)


def test_no_plan_within_depth(tmp_path: Path) -> None:
    counter = write_contract(tmp_path, "counter", COUNTER)
    assert plan(counter, "five", max_depth=1).status == "none"  # inc adds at most 3
    assert plan(counter, "five", max_depth=2).depth == 2
    door = write_contract(tmp_path, "door", DOOR)
    assert plan(door, "negative", max_depth=4).status == "none"
    assert [s.tool for s in plan(door, "smashed").trajectory.steps] == ["lock", "smash"]  # type: ignore[union-attr]


BROKEN_START = """
envfactory: "1"
info: {title: Broken start, version: "1"}
state:
  n: {type: integer, initial: -1}
operations:
  inc:
    input: {type: object}
    effects: [n = n + 1]
invariants: [n >= 0]
goals:
  two: n == 2
"""


def test_an_initial_state_that_breaks_an_invariant_is_named(tmp_path: Path) -> None:
    """No valid run starts from a rejected state: ``plan`` says why instead of "no plan up to
    depth 8", ``prove`` gives the empty counterexample, ``check`` warns, and ``generate`` and
    ``fuzz`` refuse (generate wrote trajectories that ``verify`` rejects at step 0)."""
    from envfactory.contracts.lint import lint
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import SimTarget
    from envfactory.statemachine.walk import generate

    contract = write_contract(tmp_path, "broken", BROKEN_START)
    result = plan(contract, "two")
    assert result.status == "none"
    assert (
        result.reason == "the initial state breaks invariant n >= 0, so no valid call sequence starts there"
    )
    assert plan(contract, "two", initial={"n": 0}).status == "found"
    proof = prove(contract)
    assert proof.status == "violated" and proof.counterexample is not None
    assert proof.counterexample.steps == ()
    assert [f.kind for f in lint(contract)] == ["initial_state_breaks_invariant"]
    with pytest.raises(UsageError, match="the initial state breaks invariant n >= 0"):
        next(generate(contract, 3))
    with pytest.raises(UsageError, match="the initial state breaks invariant n >= 0"):
        fuzz(contract, SimTarget(contract), max_examples=2)


def test_bad_goal_is_an_expression_error() -> None:
    with pytest.raises(ExpressionError, match="ballance"):
        plan(example("bank"), "ballance > 3")
    with pytest.raises(UsageError, match=r"no goal 'richer' \(its goals: rich, two_accounts\)"):
        plan(example("bank"), "richer")


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_bundled_invariants_are_proved(name: str) -> None:
    result = prove(example(name))
    assert result.status == "proved" and result.k == 1
    assert "proved (k = 1" in result.message()


def test_counterexample_to_contract_invariant(tmp_path: Path) -> None:
    counter = write_contract(tmp_path, "counter", COUNTER)
    result = prove(counter)
    assert result.status == "violated" and result.broken == "count >= 0"
    traj = result.counterexample
    assert traj is not None and [s.tool for s in traj.steps] == ["inc", "dec"]  # shortest: 1 then -1
    (verdict,) = list(verify(counter, [traj]))
    assert verdict.verdict == "invalid" and verdict.kind == "invariant" and verdict.step == 1
    checked = replay(counter, _calls(traj))
    assert checked.failed_step == 1 and checked.states[-1]["count"] < 0


def test_counterexample_to_given_invariant() -> None:
    bank = example("bank")
    result = prove(bank, "len(accounts) <= 1")
    assert result.status == "violated"
    traj = result.counterexample
    assert traj is not None and [s.tool for s in traj.steps] == ["open", "open"]
    (verdict,) = list(verify(bank, [traj]))
    assert verdict.verdict == "valid"  # every step keeps the contract ...
    final = replay(bank, _calls(traj)).states[-1]
    assert len(final["accounts"]) == 2  # ... and the last state breaks the property


def test_proved_and_unknown_given_invariants(tmp_path: Path) -> None:
    counter = write_contract(tmp_path, "counter", COUNTER)
    assert prove(counter, "all(items[k].v >= 0 for k in items)").status == "proved"
    unknown = prove(counter, "count < 100", depth=2)
    assert unknown.status == "unknown" and unknown.message().startswith("unknown up to depth 2")
    swap = write_contract(tmp_path, "swap", SWAP)
    # x == 0 holds everywhere but is not 1-inductive (y is free in the step case); it is 2-inductive
    result = prove(swap, "x == 0")
    assert result.status == "proved" and result.k == 2
    assert prove(swap, "x == 0", depth=1).status == "unknown"
    assert prove(swap, "y == 0 and x == 0").status == "proved"


SWAP = """
envfactory: "1"
info: {title: Swap, version: "1"}
state:
  x: {type: integer, initial: 0}
  y: {type: integer, initial: 0}
operations:
  swap:
    input: {type: object}
    effects: [x = y, y = x]
"""
