"""prove over-approximates soundly: output constraints outside the symbolic fragment are left
out (and the report says so), counterexamples are replayed concretely (issue 18 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.solver.bmc import plan
from envfactory.solver.induction import prove
from envfactory.statemachine.simulator import Simulator

LIBRARY = Path(__file__).parent / "contracts" / "library.yaml"


@pytest.fixture(scope="module")
def library() -> envfactory.Contract:
    return envfactory.load(LIBRARY)


def test_the_library_invariants_are_proved_despite_the_list_output(library: envfactory.Contract) -> None:
    result = prove(library, timeout=120)
    assert result.status == "proved", result.message()
    assert any(d.startswith("listBooks:") for d in result.dropped)
    assert "over-approximated" in result.message() and "listBooks" in result.message()


def test_the_three_book_counterexample_is_found_and_replays(library: envfactory.Contract) -> None:
    result = prove(library, "len(books) <= 2", timeout=120)
    assert result.status == "violated", result.message()
    traj = result.counterexample
    assert traj is not None and [s.tool for s in traj.steps] == ["addBook"] * 3
    sim = Simulator(library)
    for step in traj.steps:
        assert sim.call(step.tool, step.input).ok
    assert len(sim.state["books"]) == 3
    assert [r.verdict for r in envfactory.verify(library, [traj])] == ["valid"]


def test_plan_goes_through_an_operation_whose_ensures_is_left_out(library: envfactory.Contract) -> None:
    result = plan(library, "len(books) == 2", max_depth=3, timeout=120)
    assert result.status == "found", result
    assert result.trajectory is not None and len(result.trajectory.steps) == 2
