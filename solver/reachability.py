"""Reachability findings: what ``envfactory check`` adds to the lint findings.

``reachability_findings(contract)`` reports operations never enabled from the initial state
(or only in states larger than the graph's),
dead-end abstract states, goals that can never be reached, and invariants that are not inductive
(an operation can break them from a state where every invariant holds). Each is a question to Z3:
the first two are read off the state graph that ``solver.graph`` builds, the last two are a
k-induction proof (``solver.induction``) and a one-step unrolling (``solver.bmc``). That is why
they live in the solver layer; the solver-free explicit-state search stays in
``statemachine.reachability``.

Imports the contracts layer, ``statemachine.graph`` and the solver layer; nothing above.
"""

from __future__ import annotations

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.lint import Finding
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.solver.bmc import Unrolling
from envfactory.solver.effort import HANG_SECONDS, Effort
from envfactory.solver.graph import compile as compile_graph
from envfactory.solver.induction import prove
from envfactory.statemachine.graph import dead_ends, never_enabled

REACH_UNITS = 200_000_000
"""Z3 resource units for all of ``check``'s questions (the bundled contracts take under 1%)."""
GRAPH_SLOTS = 2
"""Entries per collection in the graph's states (``solver.graph.compile``'s default)."""
ROOM_SLOTS = 4
"""Entries per collection an operation the graph never enables is tried with once more."""


def reachability_findings(
    contract: Contract, *, units: int = REACH_UNITS, timeout: float = HANG_SECONDS
) -> list[Finding]:
    """Reachability findings, in a stable order (see the module docstring).

    Every question has a share of ``units`` of Z3 effort, not of the clock, so that the findings
    are the same on a busy machine as on an idle one (the graph half, the relaxed graph and the
    operations tried with more room an eighth each, the goals and invariants the last quarter
    between them); one the solver cannot
    settle in its share gives no finding. ``timeout`` seconds guard each question.
    """
    findings: list[Finding] = []
    try:
        graph = compile_graph(contract, units=units // 2, timeout=timeout)
    except SolverError:
        graph = None
    if graph is not None:
        never = never_enabled(graph, contract)
        unmet = _ensures_never_met(contract, never, Effort(units // 8, timeout))
        room = Effort(units // 8, timeout)
        for name in never:
            op = contract.operations[name]
            if name not in unmet and _needs_room(contract, name, room):
                findings.append(
                    Finding(
                        "needs_room",
                        "info",
                        f"operation {name!r} is enabled in no state with at most {GRAPH_SLOTS} entries per "
                        f"collection, the states `envfactory graph` draws, but is with {ROOM_SLOTS}: the "
                        f"graph does not show it",
                        op.loc,
                        name,
                    )
                )
                continue
            if name in unmet:
                findings.append(
                    Finding(
                        "ensures_never_met",
                        "warning",
                        f"operation {name!r} can never succeed: its requires hold in some reachable state, "
                        f"but no response then satisfies its ensures ({_ensures_text(op)})",
                        op.ensures[0].loc,
                        name,
                    )
                )
                continue
            findings.append(
                Finding(
                    "never_enabled",
                    "warning",
                    f"operation {name!r} can never be enabled from the initial state: no reachable state "
                    f"satisfies its requires ({_requires_text(op)})",
                    op.loc,
                    name,
                )
            )
        for node in dead_ends(graph):
            label = graph.nodes[node]["label"]
            findings.append(
                Finding(
                    "dead_end",
                    "warning",
                    f"abstract state {node} ({label}) is reachable but no operation is enabled there",
                )
            )
    questions = len(contract.goals) + len(contract.invariants)
    share = units // 4 // max(1, questions)
    for name, goal in contract.goals.items():
        if _goal_unreachable(contract, goal, Effort(share, timeout)):
            findings.append(
                Finding(
                    "unreachable_goal",
                    "warning",
                    f"goal {name!r} ({goal.source}) can never be reached: its negation is an inductive invariant",
                    goal.loc,
                )
            )
    for clause in contract.invariants:
        breaker = _breaks_invariant(contract, clause, Effort(share, timeout))
        if breaker is not None:
            findings.append(
                Finding(
                    "non_inductive_invariant",
                    "warning",
                    f"invariant {clause.source!r} is not inductive: {breaker} can break it from a state where "
                    "every invariant holds (such calls are rejected as invalid)",
                    clause.loc,
                    breaker,
                )
            )
    return findings


def _requires_text(op: Operation) -> str:
    return _conjunction(op.requires) or "true"


def _ensures_text(op: Operation) -> str:
    return _conjunction(op.ensures)


def _conjunction(clauses: tuple[Clause, ...]) -> str:
    """The clauses joined with ``and``, an ``or`` or a conditional among several parenthesised
    (``a or b and c`` would read as ``a or (b and c)``)."""
    if len(clauses) < 2:
        return " and ".join(c.source for c in clauses)
    return " and ".join(f"({c.source})" if _loose(c.expr) else c.source for c in clauses)


def _loose(expr: ir.Expr) -> bool:
    """Whether an expression binds more loosely than ``and`` (an ``or``, a conditional)."""
    return isinstance(expr, ir.IfExp) or (isinstance(expr, ir.BoolOp) and expr.op == "or")


def _ensures_never_met(contract: Contract, names: list[str], effort: Effort) -> set[str]:
    """Of the operations with no edge, those that gain one once their ensures are dropped: their
    requires can hold, and it is the ensures that no response meets (so the warning names them).
    One more graph, built only when some never-enabled operation has ensures."""
    suspects = [name for name in names if contract.operations[name].ensures]
    if not suspects:
        return set()
    operations = dict(contract.operations)
    for name in suspects:
        operations[name] = attrs.evolve(operations[name], ensures=())
    try:
        relaxed = compile_graph(
            attrs.evolve(contract, operations=operations), units=effort.units, timeout=effort.timeout
        )
    except SolverError:
        return set()
    return set(suspects) - set(never_enabled(relaxed, contract))


def _needs_room(contract: Contract, name: str, effort: Effort) -> bool:
    """Whether the graph's bound is what keeps ``name`` from being enabled: from some state
    where every invariant holds, it can be called with ``ROOM_SLOTS`` entries per collection
    and not with ``GRAPH_SLOTS`` (a move between two projects by a member of both: three
    members). An operation no state enables at either size (a count below zero) is a real
    never-enabled one, and the warning stands."""

    def callable_with(slots: int) -> bool | None:
        try:
            unrolling = Unrolling(
                contract, slots=slots, initial=False, timeout=effort.timeout, effort=effort, tag=f"r{slots}"
            )
            unrolling.add(unrolling.invariants(unrolling.states[0]))
            unrolling.extend()
            result = unrolling.check(unrolling.selectors[0] == unrolling.ops.index(name))
        except SolverError:
            return None
        return None if result == z3.unknown else result == z3.sat

    return callable_with(GRAPH_SLOTS) is False and callable_with(ROOM_SLOTS) is True


def _goal_unreachable(contract: Contract, goal: Clause, effort: Effort) -> bool:
    negation = Clause(ir.Unary("not", goal.expr), f"not ({goal.source})", goal.loc, "invariant")
    try:
        result = prove(contract, negation, depth=2, timeout=effort.timeout, effort=effort)
    except SolverError:
        return False
    return result.status == "proved"


def _breaks_invariant(contract: Contract, clause: Clause, effort: Effort) -> str | None:
    """An operation that can take a state where every invariant holds to one breaking ``clause``."""
    try:
        unrolling = Unrolling(
            contract, slots=2, initial=False, timeout=effort.timeout, effort=effort, tag="n", extra=[clause]
        )
        tr = unrolling.transition
        unrolling.add(unrolling.invariants(unrolling.states[0]))
        unrolling.extend()
        if unrolling.check(z3.Not(tr.clause(clause, unrolling.states[1]))) != z3.sat:
            return None
        return unrolling.calls(polish=0)[0][0]
    except SolverError:
        return None


__all__ = ["reachability_findings"]
