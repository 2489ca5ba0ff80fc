"""The state graph's shape, and what is read off a finished graph.

A contract's state graph is a ``networkx.MultiDiGraph``. Nodes are abstract states, valuations of
the predicates of ``statemachine.abstraction``; node attributes carry the valuation
(``valuation``: predicate text -> bool), a ``label``, whether the node is ``initial`` and whether
it was ``explored``. Edges are operations, one per operation that can fire between two abstract
states, keyed by the operation name, with the attributes ``operation`` and ``guard`` (the
requires, as written: ``guard_text``). Graph attributes: ``contract``, ``predicates``, ``slots``,
``undecided`` (``(node, operation)`` pairs the solver could not settle) and ``truncated``.

Building the graph means deciding every edge with Z3, which is solver work: it lives in
``solver.graph`` (``compile``, ``cover_trajectory``), one layer up. This module holds what needs
no solver: operations never enabled, dead-end states, shortest paths and an edge-covering tour
over a finished graph (export: ``statemachine.export``; findings for ``envfactory check``:
``solver.reachability``).

Imports the contracts layer only; never ``envfactory.solver`` or Z3.
"""

from __future__ import annotations

import itertools

import networkx as nx

from envfactory.contracts.model import Contract

Valuation = tuple[bool, ...]


def guard_text(contract: Contract, operation: str) -> str:
    """The guard of an edge, as the contract writes it."""
    op = contract.operations[operation]
    parts = [c.source for c in op.requires]
    if not parts:
        return "true"
    return " and ".join(f"({p})" if len(parts) > 1 else p for p in parts)


def initial_nodes(graph: nx.MultiDiGraph) -> list[str]:
    return [n for n, data in graph.nodes(data=True) if data.get("initial")]


def never_enabled(graph: nx.MultiDiGraph, contract: Contract) -> list[str]:
    """Operations with no edge anywhere in the reachable graph (undecided ones are left out,
    and nothing is claimed of a graph cut short at ``solver.graph.compile``'s ``max_nodes``)."""
    if graph.graph.get("truncated"):
        return []
    used = {data["operation"] for _, _, data in graph.edges(data=True)}
    undecided = {op for _, op in graph.graph.get("undecided", [])}
    return [name for name in contract.operations if name not in used and name not in undecided]


def dead_ends(graph: nx.MultiDiGraph) -> list[str]:
    """Reachable abstract states no operation leaves (of those explored, none undecided)."""
    undecided = {n for n, _ in graph.graph.get("undecided", [])}
    return [
        n
        for n, data in graph.nodes(data=True)
        if data.get("explored", True) and graph.out_degree(n) == 0 and n not in undecided
    ]


def shortest_path(graph: nx.MultiDiGraph, target: str) -> list[tuple[str, str, str]]:
    """The shortest edge path ``[(source, operation, target), ...]`` from an initial node."""
    best: list[tuple[str, str, str]] | None = None
    for start in initial_nodes(graph):
        try:
            nodes = nx.shortest_path(graph, start, target)
        except nx.NetworkXNoPath:
            continue
        path = []
        for a, b in itertools.pairwise(nodes):
            op = next(iter(graph.get_edge_data(a, b)))
            path.append((a, str(op), b))
        if best is None or len(path) < len(best):
            best = path
    if best is None:
        raise nx.NetworkXNoPath(f"{target} is not reachable")
    return best


def edge_tour(graph: nx.MultiDiGraph) -> list[tuple[str, str, str]]:
    """A walk from an initial node that takes every reachable edge at least once (greedy: go to
    the nearest edge not yet taken, take it, repeat). Seeds generation and fuzzing."""
    starts = initial_nodes(graph)
    if not starts:
        return []
    todo = {(a, k, b) for a, b, k in graph.edges(keys=True)}
    walk: list[tuple[str, str, str]] = []
    here = starts[0]
    while todo:
        lengths, paths = nx.single_source_dijkstra(graph, here)
        candidates = [(lengths[a], a, k, b) for a, k, b in todo if a in lengths]
        if not candidates:
            break
        _, a, k, b = min(candidates, key=lambda c: (c[0], c[1] != c[3], c[1], str(c[2]), c[3]))
        for x, y in zip(paths[a], paths[a][1:], strict=False):
            op = next(iter(graph.get_edge_data(x, y)))
            walk.append((x, str(op), y))
            todo.discard((x, op, y))
        walk.append((a, str(k), b))
        todo.discard((a, k, b))
        here = b
    return walk


__all__ = [
    "Valuation",
    "dead_ends",
    "edge_tour",
    "guard_text",
    "initial_nodes",
    "never_enabled",
    "shortest_path",
]
