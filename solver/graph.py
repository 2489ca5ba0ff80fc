"""The state graph built by Z3: ``compile`` decides every edge, ``cover_trajectory`` runs them.

The graph's shape (abstract states valued by the predicates of ``statemachine.abstraction``,
operations as edges) and everything read off a finished graph (``never_enabled``, ``dead_ends``,
``shortest_path``, ``edge_tour``, export) live in ``statemachine.graph`` and
``statemachine.export``, which need no solver. Deciding whether an edge exists is a satisfiability
question over the symbolic transition relation, so the construction lives here, in the solver
layer, above the state-machine layer it fills in: an edge exists iff some well-formed concrete
state of the source (its collections bounded to ``slots`` entries, the contract's invariants
holding) and some input satisfy the guard, and the effects land in the target with the
invariants still holding. Only states reachable from the initial abstract state(s) are built.

Imports the contracts layer, ``statemachine.abstraction`` / ``statemachine.graph``, the
trajectory format and ``solver.transition`` / ``solver.bmc``; nothing above.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import networkx as nx
import z3

from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Contract
from envfactory.solver.bmc import cover
from envfactory.solver.effort import HANG_SECONDS, Effort
from envfactory.solver.symbolic import evaluated
from envfactory.solver.transition import Transition
from envfactory.statemachine.abstraction import describe, predicates
from envfactory.statemachine.graph import Valuation, guard_text
from envfactory.trajectory import Trajectory

GRAPH_UNITS = 100_000_000
"""Z3 resource units for building one graph (the bundled contracts take well under 1%)."""


def compile(
    contract: Contract,
    *,
    slots: int = 2,
    units: int = GRAPH_UNITS,
    timeout: float = HANG_SECONDS,
    max_nodes: int = 256,
    max_initial: int = 32,
) -> nx.MultiDiGraph:
    """The contract's state graph (see the module docstring and ``statemachine.graph``).

    ``units`` of Z3 effort bound the whole construction (the same graph on any machine, however
    busy), ``timeout`` seconds guard it; edges the solver could not decide within them are
    listed in the graph attribute ``undecided`` as ``(node, operation)`` pairs. More than
    ``max_initial`` initial abstract states (an open world with many predicates, where the
    start can be any combination of them) is an error: the graph could not even be started.
    """
    preds = predicates(contract)
    tr = Transition(contract, extra=[p.expr for p in preds], unread_outputs=False)
    effort = Effort(units, timeout)
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
    try:
        initial_states = _enumerate(start, pre_bits, effort, max_initial)
    except _Undecided as why:  # not even the start could be told apart: no graph, not a crash
        raise SolverError(f"the initial abstract states could not be enumerated: {why}") from None
    for values in initial_states:
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
                for target in _enumerate(solver, post_bits, effort):
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


def _enumerate(
    solver: z3.Solver, bits: list[z3.BoolRef], effort: Effort, most: int | None = None
) -> list[Valuation]:
    """Every valuation of ``bits`` the solver's constraints allow (blocking each one found); more
    than ``most`` of them, or a check left unknown, is ``_Undecided``."""
    found: list[Valuation] = []
    solver.push()
    try:
        while True:
            result = effort.check(solver)
            if result == z3.unsat:
                return found
            if result != z3.sat:
                raise _Undecided(
                    "the solver's effort budget ran out" if effort.spent else solver.reason_unknown()
                )
            if most is not None and len(found) >= most:
                raise _Undecided(f"there are more than {most}")
            model = solver.model()
            values = tuple(bool(z3.is_true(evaluated(model, b))) for b in bits)
            found.append(values)
            if not bits:
                return found
            solver.add(z3.Or(*(z3.Not(b) if v else b for b, v in zip(bits, values, strict=True))))
    finally:
        solver.pop()


def cover_trajectory(
    contract: Contract, graph: nx.MultiDiGraph, *, hops: int = 4, timeout: float = HANG_SECONDS
) -> tuple[Trajectory, int]:
    """A valid trajectory from the initial state taking as many edges of ``graph`` as the solver
    finds concrete runs for (greedy, nearest edge first; see ``solver.bmc.cover``); seeds
    generation and fuzzing with one call sequence that touches every transition it can.
    Returns the trajectory and the number of edges it takes."""
    by_text = {p.text: p.expr for p in predicates(contract)}

    def valuation(node: str) -> tuple[tuple[Any, bool], ...]:
        return tuple((by_text[t], v) for t, v in graph.nodes[node]["valuation"].items())

    edges = [(valuation(a), str(k), valuation(b)) for a, b, k in graph.edges(keys=True)]
    trajectory, taken = cover(contract, edges, hops=hops, timeout=timeout)
    return trajectory, len(taken)


__all__ = ["compile", "cover_trajectory"]
