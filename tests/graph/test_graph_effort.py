"""`check`'s reachability questions, the state graph and the edge cover are bounded by Z3 effort,
not by the clock (issue 19 item 1): on a machine where each solver call seems to take a whole
second they give the same answers. Before, each had wall-clock shares, and a busy machine
settled fewer questions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from _graph_contracts import COUNTER, DOOR, TRAP, example, write_contract

from envfactory.contracts.errors import SolverError
from envfactory.solver import effort
from envfactory.solver.graph import compile, cover_trajectory
from envfactory.solver.reachability import reachability_findings
from envfactory.verification import verify


def _slow_clock(monkeypatch: pytest.MonkeyPatch, step: float) -> None:
    """The clock moves ``step`` seconds at every reading, whatever the real time: the machine
    looks very slow, the same way on every run (these jobs read it a few hundred times)."""
    now = [time.monotonic()]

    def tick() -> float:
        now[0] += step
        return now[0]

    monkeypatch.setattr(time, "monotonic", tick)


def _findings(tmp_path: Path) -> list[tuple[str, str | None, str]]:
    found = []
    for name, text in (("door", DOOR), ("trap", TRAP), ("counter", COUNTER)):
        for finding in reachability_findings(write_contract(tmp_path, name, text)):
            found.append((finding.kind, finding.operation, finding.message))
    return found


def test_reachability_findings_do_not_depend_on_the_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    normal = _findings(tmp_path)
    assert {kind for kind, _, _ in normal} >= {"never_enabled", "unreachable_goal", "dead_end"}
    _slow_clock(monkeypatch, 1.0)  # the old shares (10 s for the graph) were ten readings here
    assert _findings(tmp_path) == normal


def test_graph_and_cover_do_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    contract = example("tickets")
    graph = compile(contract)
    _, taken = cover_trajectory(contract, graph)
    _slow_clock(monkeypatch, 1.0)
    slow_graph = compile(contract)
    assert sorted(slow_graph.edges(keys=True)) == sorted(graph.edges(keys=True))
    assert not slow_graph.graph["undecided"]
    # (Z3's models differ from one call to the next in one process, so the calls may too)
    slow_trajectory, slow_taken = cover_trajectory(contract, slow_graph)
    assert slow_taken == taken == graph.number_of_edges()
    (verdict,) = verify(contract, [slow_trajectory])
    assert verdict.verdict == "valid"


def test_an_exhausted_effort_leaves_edges_undecided_the_same_way_every_time() -> None:
    contract = example("bank")
    runs = [compile(contract, units=3 * effort.CHECK_UNITS) for _ in range(2)]
    assert runs[0].graph["undecided"] and runs[0].graph["undecided"] == runs[1].graph["undecided"]
    assert sorted(runs[0].edges(keys=True)) == sorted(runs[1].edges(keys=True))
    with pytest.raises(SolverError, match="effort"):
        compile(contract, units=1)


def test_too_many_initial_states_is_an_error_not_a_long_search(tmp_path: Path) -> None:
    contract = example("petstore")
    with pytest.raises(SolverError, match="more than 0"):
        compile(contract, max_initial=0)
