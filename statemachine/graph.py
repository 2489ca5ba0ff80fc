"""The state graph: a contract compiled to a ``networkx.MultiDiGraph`` of abstract states.

Nodes are abstract states, valuations of the predicates of ``statemachine.abstraction``; node
attributes carry the valuation (``valuation``: predicate text -> bool), a ``label`` and whether the
node is ``initial``. Edges are operations, one per operation that can fire between two abstract
states, with the attributes ``operation`` and ``guard`` (the requires, as written). Z3 decides
every edge: it exists iff some well-formed concrete state of the source (its collections bounded
to ``slots`` entries, the contract's invariants holding) and some input satisfy the guard, and the
effects land in the target with the invariants still holding. Only states reachable from the
initial abstract state(s) are built.

From the graph: operations never enabled, dead-end states, shortest paths and an edge-covering
tour (see ``statemachine.reachability``).

Z3 and the encoding come from ``envfactory.solver.transition``, imported when ``compile`` runs:
the symbolic layer sits above this one, and only this entry point reaches up to it.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import networkx as nx

from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Contract
from envfactory.statemachine.abstraction import describe, predicates
from envfactory.trajectory import Trajectory

if TYPE_CHECKING:
    import z3

Valuation = tuple[bool, ...]


def guard_text(contract: Contract, operation: str) -> str:
    """The guard of an edge, as the contract writes it."""
    op = contract.operations[operation]
    parts = [c.source for c in op.requires]
    if not parts:
        return "true"
    return " and ".join(f"({p})" if len(parts) > 1 else p for p in parts)


def compile(
    contract: Contract,
    *,
    slots: int = 2,
    timeout: float = 30.0,
    max_nodes: int = 256,
) -> nx.MultiDiGraph:
    """The contract's state graph (see the module docstring).

    ``timeout`` bounds the whole construction; edges the solver could not decide in time are
    listed in the graph attribute ``undecided`` as ``(node, operation)`` pairs.
    """
    import z3

    from envfactory.solver import transition as X

    preds = predicates(contract)
    tr = X.Transition(contract, extra=[p.expr for p in preds])
    deadline = time.monotonic() + timeout
    pre = tr.fresh_state("g0", slots)
    post = tr.fresh_state("g1", slots)
    base = [pre.wf, post.wf, tr.invariants(pre), tr.invariants(post)]
    pre_bits = [tr.clause(p.expr, pre) for p in preds]
    post_bits = [tr.clause(p.expr, post) for p in preds]

    graph = nx.MultiDiGraph(
        contract=contract.title,
        predicates=[p.text for p in preds],
        slots=slots,
        undecided=[],
        truncated=False,
    )
    ids: dict[Valuation, str] = {}

    def node(values: Valuation, initial: bool = False) -> str:
        if values not in ids:
            ident = f"s{len(ids)}"
            ids[values] = ident
            graph.add_node(
                ident,
                valuation={p.text: v for p, v in zip(preds, values, strict=True)},
                label=describe(preds, values),
                initial=initial,
                explored=False,
            )
        elif initial:
            graph.nodes[ids[values]]["initial"] = True
        return ids[values]

    # the initial abstract state(s): one where the initial state is known, several where not
    start = z3.Solver()
    start.add(pre.wf, tr.initial(pre))
    if any(not var.known for var in contract.state.values()):
        start.add(tr.invariants(pre))  # open world: the unknown start keeps the invariants
    queue: deque[Valuation] = deque()
    for values in _enumerate(start, pre_bits, deadline):
        node(values, initial=True)
        queue.append(values)

    solvers: dict[str, tuple[z3.Solver, bool]] = {}
    for name, op in contract.operations.items():
        solver = z3.Solver()
        try:
            io = tr.step_vars(op, f"g.{name}")
            solver.add(*base, tr.step(op, pre, post, io))
            solvers[name] = (solver, True)
        except SolverError:
            solvers[name] = (solver, False)

    seen = set(queue)
    while queue:
        values = queue.popleft()
        source = ids[values]
        graph.nodes[source]["explored"] = True
        for name, (solver, usable) in solvers.items():
            if not usable:
                graph.graph["undecided"].append((source, name))
                continue
            solver.push()
            solver.add(*(b if v else z3.Not(b) for b, v in zip(pre_bits, values, strict=True)))
            try:
                for target in _enumerate(solver, post_bits, deadline):
                    graph.add_edge(
                        source, node(target), key=name, operation=name, guard=guard_text(contract, name)
                    )
                    if target not in seen:
                        if len(seen) >= max_nodes:
                            graph.graph["truncated"] = True  # more states than asked for
                            continue
                        seen.add(target)
                        queue.append(target)
            except _Undecided:
                graph.graph["undecided"].append((source, name))
            finally:
                solver.pop()
    return graph


class _Undecided(Exception):
    pass


def _enumerate(solver: z3.Solver, bits: list[z3.BoolRef], deadline: float) -> list[Valuation]:
    """Every valuation of ``bits`` the solver's constraints allow (blocking each one found)."""
    import z3

    found: list[Valuation] = []
    solver.push()
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Undecided
            solver.set("timeout", max(1, int(remaining * 1000)))
            result = solver.check()
            if result == z3.unsat:
                return found
            if result != z3.sat:
                raise _Undecided
            model = solver.model()
            values = tuple(bool(z3.is_true(model.eval(b, model_completion=True))) for b in bits)
            found.append(values)
            if not bits:
                return found
            solver.add(z3.Or(*(z3.Not(b) if v else b for b, v in zip(bits, values, strict=True))))
    finally:
        solver.pop()


def initial_nodes(graph: nx.MultiDiGraph) -> list[str]:
    return [n for n, data in graph.nodes(data=True) if data.get("initial")]


def never_enabled(graph: nx.MultiDiGraph, contract: Contract) -> list[str]:
    """Operations with no edge anywhere in the reachable graph (undecided ones are left out,
    and nothing is claimed of a graph cut short at ``max_nodes``)."""
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


def cover_trajectory(
    contract: Contract, graph: nx.MultiDiGraph, *, hops: int = 4, timeout: float = 30.0
) -> tuple[Trajectory, int]:
    """A valid trajectory from the initial state taking as many edges of ``graph`` as the solver
    finds concrete runs for (greedy, nearest edge first; see ``solver.bmc.cover``); seeds
    generation and fuzzing with one call sequence that touches every transition it can.
    Returns the trajectory and the number of edges it takes."""
    from envfactory.solver.bmc import cover

    by_text = {p.text: p.expr for p in predicates(contract)}

    def valuation(node: str) -> tuple[tuple[Any, bool], ...]:
        return tuple((by_text[t], v) for t, v in graph.nodes[node]["valuation"].items())

    edges = [(valuation(a), str(k), valuation(b)) for a, b, k in graph.edges(keys=True)]
    trajectory, taken = cover(contract, edges, hops=hops, timeout=timeout)
    return trajectory, len(taken)


__all__ = [
    "compile",
    "cover_trajectory",
    "dead_ends",
    "edge_tour",
    "guard_text",
    "initial_nodes",
    "never_enabled",
    "shortest_path",
]
