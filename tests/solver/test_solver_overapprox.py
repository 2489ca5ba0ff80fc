"""prove on contracts with lists (issue 18 item 2): list outputs are in the symbolic fragment;
output constraints outside it are left out (more behaviours, so a proof still holds, and the
report says so); counterexamples are replayed concretely."""

from __future__ import annotations

import envfactory
from envfactory.solver.bmc import plan
from envfactory.solver.induction import prove
from envfactory.statemachine.simulator import Simulator


def test_the_library_invariants_are_proved_with_its_list_output_encoded(library: envfactory.Contract) -> None:
    result = prove(library, timeout=120)
    assert result.status == "proved", result.message()
    assert result.dropped == ()  # len(output.books) and values(books) are in the fragment
    assert "lists of up to" in result.message()


def test_an_output_clause_outside_the_fragment_is_left_out_and_reported(tally: envfactory.Contract) -> None:
    result = prove(tally, timeout=120)
    assert result.status == "proved", result.message()
    assert result.dropped == ("peek: output.blob.size == n",)  # an untyped value's field
    assert "over-approximated: 1 output constraint" in result.message()


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


def test_plan_goes_through_an_operation_with_a_list_output(library: envfactory.Contract) -> None:
    result = plan(library, "len(books) == 2", max_depth=3, timeout=120)
    assert result.status == "found", result
    assert result.trajectory is not None and len(result.trajectory.steps) == 2
