"""The state graph: known answers on bundled and small contracts, and its exports."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import networkx as nx
import pytest
from _graph_contracts import DOOR, TRAP, example, write_contract

from envfactory.errors import UsageError
from envfactory.solver.graph import compile, cover_trajectory
from envfactory.statemachine import export
from envfactory.statemachine.abstraction import predicates
from envfactory.statemachine.graph import (
    dead_ends,
    edge_tour,
    initial_nodes,
    never_enabled,
    shortest_path,
)


def _valuations(graph: nx.MultiDiGraph) -> dict[str, dict[str, bool]]:
    return {n: d["valuation"] for n, d in graph.nodes(data=True)}


def _node(graph: nx.MultiDiGraph, **truth: bool) -> str:
    for node, values in _valuations(graph).items():
        if all(values[k] == v for k, v in truth.items()):
            return node
    raise AssertionError(f"no node with {truth}")


def test_petstore_graph_known_answer() -> None:
    contract = example("petstore")
    graph = compile(contract)
    assert [p.text for p in predicates(contract)] == ["len(pets) > 0", "user != null"]
    assert graph.number_of_nodes() == 4  # every combination of "logged in" and "has pets" is reachable
    (start,) = initial_nodes(graph)
    assert graph.nodes[start]["valuation"] == {"len(pets) > 0": False, "user != null": False}
    # logged out with no pets: only login and countPets can fire
    assert {d["operation"] for _, _, d in graph.out_edges(start, data=True)} == {"login", "countPets"}
    logged_in = _node(graph, **{"user != null": True, "len(pets) > 0": False})
    with_pets = _node(graph, **{"user != null": True, "len(pets) > 0": True})
    assert graph.has_edge(logged_in, with_pets, key="addPet")
    assert graph.has_edge(with_pets, logged_in, key="adopt")  # adopting the only pet
    assert not graph.has_edge(start, with_pets)
    guard = graph.get_edge_data(logged_in, with_pets, key="addPet")["guard"]
    assert "user != null" in guard and "not (input.id in pets)" in guard
    assert never_enabled(graph, contract) == [] and dead_ends(graph) == []


def test_bank_graph_and_shortest_path() -> None:
    contract = example("bank")
    graph = compile(contract)
    assert graph.number_of_nodes() == 2
    start = initial_nodes(graph)[0]
    nonempty = _node(graph, **{"len(accounts) > 0": True})
    ops_from_start = {d["operation"] for _, _, d in graph.out_edges(start, data=True)}
    assert ops_from_start == {"open"}  # every other operation needs an account
    assert graph.has_edge(nonempty, start, key="close")
    assert [op for _, op, _ in shortest_path(graph, nonempty)] == ["open"]


def test_never_enabled_and_dead_end(tmp_path: Path) -> None:
    door = write_contract(tmp_path, "door", DOOR)
    graph = compile(door)
    assert never_enabled(graph, door) == ["repair"]  # needs uses < 0, which no reachable state has
    trap = write_contract(tmp_path, "trap", TRAP)
    graph = compile(trap)
    ends = dead_ends(graph)
    assert len(ends) == 1
    assert graph.nodes[ends[0]]["valuation"]["done == true"] is True


def test_edge_tour_covers_every_edge(tmp_path: Path) -> None:
    contract = example("petstore")
    graph = compile(contract)
    tour = edge_tour(graph)
    assert {(a, k, b) for a, k, b in tour} == {(a, k, b) for a, b, k in graph.edges(keys=True)}
    start = initial_nodes(graph)[0]
    assert tour[0][0] == start
    for (_, _, b), (a, _, _) in itertools.pairwise(tour):
        assert a == b  # a walk: each edge starts where the last one ended


def test_exports(tmp_path: Path) -> None:
    graph = compile(example("petstore"))
    export.write(graph, tmp_path / "g.json")
    data = json.loads((tmp_path / "g.json").read_text())
    assert len(data["nodes"]) == 4 and len(data["edges"]) == graph.number_of_edges()
    assert {e["operation"] for e in data["edges"]} >= {"login", "addPet", "adopt"}
    export.write(graph, tmp_path / "g.dot")
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith('digraph "Pet store"') and dot.count("->") == graph.number_of_edges()
    assert "peripheries=2" in dot  # the initial state
    export.write(graph, tmp_path / "g.mmd")
    mermaid = (tmp_path / "g.mmd").read_text()
    assert mermaid.startswith("flowchart LR") and mermaid.count("-->") == graph.number_of_edges()
    assert "len(pets) #gt; 0" in mermaid


def test_image_export_without_graphviz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = compile(example("bank"))
    monkeypatch.setattr(export.shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="Graphviz"):
        export.write(graph, tmp_path / "g.svg")
    with pytest.raises(UsageError, match=r"\.json"):
        export.write(graph, tmp_path / "g.txt")


def test_a_truncated_graph_claims_nothing() -> None:
    contract = example("petstore")
    graph = compile(contract, max_nodes=2)
    assert graph.graph["truncated"] is True
    unexplored = [n for n, d in graph.nodes(data=True) if not d["explored"]]
    assert unexplored and all(graph.out_degree(n) == 0 for n in unexplored)
    assert dead_ends(graph) == [] and never_enabled(graph, contract) == []


def test_labels_are_escaped_for_each_format() -> None:
    graph = nx.MultiDiGraph(contract='evil "title"\n')
    graph.add_node('a"b', label='x == "y" | z > 1 # q', initial=True)
    graph.add_node("c", label="plain", initial=False)
    graph.add_edge('a"b', "c", key="op", operation='op"]; x -> y; ["', guard="true")
    dot = export.to_dot(graph)
    assert 'digraph "evil \\"title\\"\\n"' in dot
    assert '"a\\"b"' in dot and 'label="op\\"]; x -> y; [\\""' in dot
    mermaid = export.to_mermaid(graph)
    body = mermaid.splitlines()
    assert len(body) == 4  # header, two nodes, one edge: nothing broke out of its label
    assert '"' not in body[3].split("|")[1].strip('"') and "#quot;" in body[3]
    assert "#124;" in body[1] and "#35; q" in body[1]


@pytest.mark.parametrize("name", ["tickets"])
def test_cover_trajectory_takes_every_edge_and_verifies(name: str) -> None:
    from envfactory.solver.bmc import replay
    from envfactory.statemachine.abstraction import valuation
    from envfactory.verification import verify

    contract = example(name)
    graph = compile(contract)
    trajectory, taken = cover_trajectory(contract, graph)
    assert taken == graph.number_of_edges()
    (verdict,) = list(verify(contract, [trajectory]))
    assert verdict.verdict == "valid"
    # replayed concretely, the run's abstract transitions are exactly the graph's edges
    states = replay(contract, [(s.tool, s.input, s.output, s.has_output) for s in trajectory.steps]).states
    preds = predicates(contract)
    node_of = {tuple(d["valuation"].values()): n for n, d in graph.nodes(data=True)}
    walked = {
        (node_of[valuation(preds, a)], step.tool, node_of[valuation(preds, b)])
        for step, a, b in zip(trajectory.steps, states, states[1:], strict=False)
    }
    assert walked == {(a, k, b) for a, b, k in graph.edges(keys=True)}
