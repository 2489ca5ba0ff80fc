"""Bounded model checking: unroll the transition relation depth by depth, and plan with it.

``Unrolling`` keeps one incremental Z3 solver holding the initial state and the first ``d`` steps
(an operation selector per step, each operation with its own fresh input and output); callers add
what must hold on each state and ask about the last one. ``plan`` asks for the goal at depth
0, 1, 2, ... so the first plan found is a shortest one; it comes out as a trajectory with concrete
inputs and outputs, re-checked step by step against the concrete semantics before it is returned.

Imports the contracts layer, the trajectory format and ``solver.transition`` (with its
``states`` / ``symbolic``); nothing above.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError, SolverError, UsageError
from envfactory.contracts.evaluator import Env as ConcreteEnv
from envfactory.contracts.evaluator import compile_expr
from envfactory.contracts.model import Clause, Contract
from envfactory.contracts.semantics import Failure, Machine, broken_at_start
from envfactory.contracts.semantics import holds as clause_holds
from envfactory.contracts.values import FrozenMap, to_json
from envfactory.solver.effort import HANG_SECONDS, UNITS_PER_SECOND, Effort
from envfactory.solver.schema import LIST_ITEMS
from envfactory.solver.states import StepVars, SymState, formula, slots_needed
from envfactory.solver.symbolic import and_, evaluated, or_
from envfactory.solver.template import Template
from envfactory.solver.transition import Transition, state_predicate
from envfactory.trajectory import Step, Trajectory


class Unrolling:
    """States ``s0..sd`` linked by ``d`` steps, in one incremental solver."""

    def __init__(
        self,
        contract: Contract,
        *,
        slots: int | Mapping[str, int],
        initial: bool = True,
        overrides: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        effort: Effort | None = None,
        tag: str = "",
        extra: Sequence[Clause | ir.Expr] = (),
    ) -> None:
        self.contract = contract
        self.effort = effort
        """Where given, the checks spend Z3 resource units from it (deterministic) and
        ``timeout`` is only a guard."""
        most = slots if isinstance(slots, int) else max(slots.values(), default=0)
        # a list of unknown length holds up to as many items as a collection has slots, so that
        # ``values(c)`` of a full collection fits
        self.transition = Transition(contract, extra=extra, list_items=max(LIST_ITEMS, most))
        self.ops = list(contract.operations)
        self.slots = slots
        self.tag = tag
        self.solver = z3.Solver()
        self.template = Template(self.transition, slots, f"{tag}tpl")
        """Each step and the invariants encoded once, copied onto each state."""
        self.deadline = time.monotonic() + timeout
        first = self.transition.fresh_state(f"{tag}s0", slots)
        self.states: list[SymState] = [first]
        self.selectors: list[z3.ArithRef] = []
        self._model: z3.ModelRef | None = None
        self.skipped: dict[str, str] = {}
        """Operations outside the symbolic fragment (never chosen), with the reason."""
        self.io: list[dict[str, StepVars]] = []
        self.solver.add(first.wf)
        if initial:
            self.solver.add(self.transition.initial(first, overrides))

    @property
    def depth(self) -> int:
        return len(self.states) - 1

    def extend(self) -> SymState:
        """Add one step after the last state; return the new last state."""
        t = len(self.states)
        pre = self.states[-1]
        copied = self.template.copied
        post = self.transition.fresh_state(f"{self.tag}s{t}", self.slots)
        sel = z3.Int(f"{self.tag}op{t}")
        io: dict[str, StepVars] = {}
        choices = [z3.And(sel >= 0, sel < len(self.ops))]
        for i, name in enumerate(self.ops):
            op = self.contract.operations[name]
            try:
                vars_ = self.transition.step_vars(op, f"{self.tag}t{t}.{name}")
                step = self.template.step(op, pre, post, vars_)
            except SolverError as err:
                choices.append(sel != i)  # an operation outside the fragment is never chosen
                self.skipped.setdefault(name, err.message)
                continue
            io[name] = vars_
            choices.append(z3.Implies(sel == i, step))
        self.solver.add(post.wf, *choices)
        if self.effort is not None:
            self.effort.charge(self.template.copied - copied)
        self.states.append(post)
        self.selectors.append(sel)
        self.io.append(io)
        return post

    def invariants(self, state: SymState, clauses: Sequence[Clause | ir.Expr] | None = None) -> z3.BoolRef:
        """The contract's invariants (or ``clauses``) over one of this unrolling's states."""
        return self.template.invariants(state, clauses)

    def add(self, *formulas: z3.BoolRef) -> None:
        self.solver.add(*formulas)

    def check(self, *assumptions: z3.BoolRef, limit: float | None = None) -> z3.CheckSatResult:
        """Check with ``assumptions`` on top, each behind a fresh literal the check assumes (a
        push/pop around a deep unrolling of Z3 strings could take minutes in ``push``, out of
        reach of the time limit)."""
        remaining = self.deadline - time.monotonic()
        if limit is not None:
            remaining = min(remaining, limit)
        if remaining <= 0:
            return z3.unknown
        literals = []
        for wanted in assumptions:
            literal = z3.FreshBool("assume")
            self.solver.add(z3.Implies(literal, wanted))
            literals.append(literal)
        if self.effort is not None:
            units = None if limit is None else max(1, int(limit * UNITS_PER_SECOND))
            result = self.effort.check(self.solver, *literals, units=units)
        else:
            self.solver.set("timeout", max(1, int(remaining * 1000)))
            result = self.solver.check(*literals)
        self._model = self.solver.model() if result == z3.sat else None
        return result

    def calls(self, *assumptions: z3.BoolRef, polish: float = 2.0) -> list[tuple[str, Any, Any, bool]]:
        """The calls of the last satisfying model: (tool, input, output, has_output).

        With ``polish`` seconds, the same operations are solved again (under the same
        ``assumptions``) asking for printable strings; the first model stands if that fails.
        """
        names = self.operations()
        if polish > 0:
            chosen = [sel == self.ops.index(n) for sel, n in zip(self.selectors, names, strict=True)]
            wishes = [io[n].cosmetic for io, n in zip(self.io, names, strict=True)]
            first = self._model
            if self.check(*assumptions, *chosen, *wishes, limit=polish) != z3.sat:
                self._model = first
        calls = [io[name] for io, name in zip(self.io, names, strict=True)]
        read = self.transition.reader(
            self._model, [v for vars_ in calls for v in (vars_.input, vars_.output) if v is not None]
        )
        result = []
        for name, vars_ in zip(names, calls, strict=True):
            output = read(vars_.output) if vars_.output is not None else None
            result.append((name, read(vars_.input), output, True))
        return result

    def operations(self) -> list[str]:
        """The operations the last satisfying model chose, step by step."""
        assert self._model is not None
        return [self.ops[evaluated(self._model, sel).as_long()] for sel in self.selectors]

    def holds(self, formula: z3.BoolRef) -> bool:
        """Whether ``formula`` is true in the last satisfying model."""
        assert self._model is not None
        return bool(z3.is_true(self._model.eval(formula, model_completion=True)))

    def value(self, term: z3.ArithRef) -> int:
        """An integer term's value in the last satisfying model."""
        assert self._model is not None
        return int(evaluated(self._model, term).as_long())

    def inputs(self, extra: Any = None) -> list[Any]:
        """The inputs of the last satisfying model's calls, and then ``extra``'s value (the input
        variables of a call past the last, where given), all read together: a string the model
        gave two calls (a key made, then used) reads back as one text in both."""
        names = self.operations()
        assert self._model is not None
        values = [io[name].input for io, name in zip(self.io, names, strict=True)]
        if extra is not None:
            values.append(extra)
        outputs = [v for io, name in zip(self.io, names, strict=True) if (v := io[name].output) is not None]
        read = self.transition.reader(self._model, [*values, *outputs])
        return [read(value) for value in values]

    def unknown_initial(self) -> dict[str, Any] | None:
        """The model's values for state variables whose initial value is unknown (open world)."""
        assert self._model is not None
        unknown = [name for name, var in self.contract.state.items() if not var.known]
        if not unknown:
            return None
        values = self.states[0].values
        read = self.transition.reader(self._model, [values[name] for name in unknown])
        return {name: read(values[name]) for name in unknown}


# ------------------------------------------------------------------------------ replay


@attrs.frozen(slots=True)
class Replay:
    """A call sequence run through the concrete semantics: states, and the first failure."""

    states: tuple[FrozenMap, ...]
    failure: Failure | None = None
    failed_step: int | None = None


def replay(
    contract: Contract, calls: Sequence[tuple[str, Any, Any, bool]], initial: Mapping[str, Any] | None = None
) -> Replay:
    """Run every check of ``contracts.semantics`` on each call, as ``verify`` does."""
    machine = Machine(contract)
    state = machine.initial_state(initial)
    states = [state]
    for index, (tool, value, output, has_output) in enumerate(calls):
        failure = machine.check_tool(tool)
        op = contract.operations.get(tool)
        if failure is None and op is not None:
            failure = machine.check_input(op, value) or machine.check_requires(state, op, value)
            if failure is None:
                try:
                    post = machine.apply(state, op, value, output)
                except EvaluationError:
                    failure = machine.effect_failure(state, op, value, output)
                else:
                    if has_output:
                        failure = machine.check_output(op, output)
                    failure = failure or machine.check_ensures(post, op, value, output)
                    failure = failure or machine.check_invariants(post)
                    state = post
                    states.append(post)
        if failure is not None:
            return Replay(tuple(states), failure, index)
    return Replay(tuple(states))


def simulated(
    contract: Contract,
    calls: Sequence[tuple[str, Any, Any, bool]],
    initial: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    last_may_fail: bool = False,
) -> list[tuple[str, Any, Any, bool]] | None:
    """The same calls with the outputs the simulator gives (seeded Faker data where the contract
    leaves fields free), or None where that is not the same run: a call that reads its own output
    (a producer: the simulator would draw another id than the plan uses) or a call it rejects."""
    from envfactory.statemachine.simulator import Simulator

    if any(contract.operations[tool].reads_output for tool, *_ in calls):
        return None
    sim = Simulator(contract, seed=seed, initial=initial)
    result = []
    for index, (tool, value, _, _) in enumerate(calls):
        response = sim.call(tool, value)
        last = index == len(calls) - 1
        if not response.accepted or (response.failure is not None and not (last and last_may_fail)):
            return None
        result.append((tool, value, response.output, True))
    return result


def holds(clause: Clause, state: Mapping[str, Any]) -> bool:
    """A state predicate, concretely (undefined counts as false)."""
    return clause_holds(clause, ConcreteEnv(state))


def as_trajectory(
    contract: Contract,
    calls: Sequence[tuple[str, Any, Any, bool]],
    ident: str,
    meta: Mapping[str, Any],
    initial: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> Trajectory:
    steps = tuple(
        Step(tool=tool, input=value, output=output, has_output=has_output)
        for tool, value, output, has_output in calls
    )
    return Trajectory(
        id=ident, steps=steps, contract=Path(contract.path).name, seed=seed, initial=initial, meta=dict(meta)
    )


# ------------------------------------------------------------------------------- plan


@attrs.frozen(slots=True)
class PlanResult:
    """``status``: ``found`` (``trajectory`` is a shortest plan), ``none`` (no plan up to
    ``max_depth``) or ``unknown`` (time-out, or ``reason``)."""

    status: str
    goal: str
    max_depth: int
    depth: int | None = None
    trajectory: Trajectory | None = None
    reason: str | None = None
    seconds: float = 0.0


def resolve_goal(contract: Contract, goal: str) -> Clause:
    """A goal by name (``contract.goals``) or as an expression over the state."""
    if goal in contract.goals:
        return contract.goals[goal]
    if goal.isidentifier() and goal not in contract.state:
        names = ", ".join(contract.goals) or "none"
        raise UsageError(
            f"the contract has no goal {goal!r} (its goals: {names}); "
            f"or give an expression over its state ({', '.join(contract.state) or 'none'})"
        )
    return state_predicate(contract, goal, "goal")


def plan(
    contract: Contract,
    goal: str | Clause,
    *,
    max_depth: int = 8,
    timeout: float = 60.0,
    initial: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """The shortest call sequence from the initial state to a state where ``goal`` holds.

    Every step is valid under the contract (requires, schemas, ensures, invariants after it).
    """
    started = time.monotonic()
    clause = goal if isinstance(goal, Clause) else resolve_goal(contract, goal)
    text = clause.source
    broken = broken_at_start(contract, initial)
    if broken:
        # every path starts in a state the contract rejects: say so rather than "no plan"
        return PlanResult(
            "none",
            text,
            max_depth,
            reason=f"the initial state breaks invariant {broken[0].source}, so no valid call sequence starts there",
            seconds=time.monotonic() - started,
        )
    try:
        # one incremental unrolling, with slots enough for the deepest search, extended a step at
        # a time: the first depth where the goal can hold gives a shortest plan
        unrolling = Unrolling(
            contract,
            slots=slots_needed(contract, max_depth, start=initial),
            overrides=initial,
            timeout=timeout,
            extra=[clause],
        )
        tr = unrolling.transition
        unrolling.add(unrolling.invariants(unrolling.states[0]))
        for depth in range(max_depth + 1):
            if progress is not None:
                progress(depth)
            if depth > 0:
                unrolling.add(unrolling.invariants(unrolling.extend()))
            target = tr.clause(clause, unrolling.states[-1])
            result = unrolling.check(target)
            if result == z3.unknown:
                return PlanResult(
                    "unknown",
                    text,
                    max_depth,
                    depth,
                    reason=f"solver gave up at depth {depth} (time-out)",
                    seconds=time.monotonic() - started,
                )
            if result == z3.sat:
                calls = unrolling.calls(target)
                assumed = None if initial is not None else unrolling.unknown_initial()
                start = initial if initial is not None else assumed
                faked = simulated(contract, calls, start)
                if faked is not None:
                    checked = replay(contract, faked, start)
                    if checked.failure is None and holds(clause, checked.states[-1]):
                        calls = faked
                checked = replay(contract, calls, start)
                if checked.failure is not None or not holds(clause, checked.states[-1]):
                    why = checked.failure.message if checked.failure else "the goal does not hold concretely"
                    return PlanResult(
                        "unknown",
                        text,
                        max_depth,
                        depth,
                        reason=f"the symbolic plan does not replay concretely: {why}",
                        seconds=time.monotonic() - started,
                    )
                name = clause.name or "goal"
                traj = as_trajectory(
                    contract,
                    calls,
                    f"plan-{name}",
                    {"generator": "envfactory plan", "goal": text, "depth": depth},
                    initial=json_initial(contract, start),
                    seed=0,
                )
                return PlanResult("found", text, max_depth, depth, traj, seconds=time.monotonic() - started)
    except SolverError as err:
        return PlanResult("unknown", text, max_depth, reason=err.message, seconds=time.monotonic() - started)
    if unrolling.skipped:
        name, why = next(iter(unrolling.skipped.items()))
        return PlanResult(
            "unknown",
            text,
            max_depth,
            reason=f"no plan without {', '.join(unrolling.skipped)}, which the solver cannot model ({name}: {why})",
            seconds=time.monotonic() - started,
        )
    return PlanResult("none", text, max_depth, seconds=time.monotonic() - started)


Valuation = tuple[tuple[ir.Expr, bool], ...]
Edge = tuple[Valuation, str, Valuation]

COVER_UNITS = 300_000_000
"""Z3 resource units for one edge cover (a bundled contract's takes a few percent of it)."""


def cover(
    contract: Contract,
    edges: Sequence[Edge],
    *,
    hops: int = 4,
    max_steps: int = 60,
    units: int = COVER_UNITS,
    timeout: float = HANG_SECONDS,
    ident: str = "edge-cover",
) -> tuple[Trajectory, list[int]]:
    """One valid trajectory from the initial state that takes as many of ``edges`` as it can.

    An edge is (abstract state, operation, abstract state), each abstract state a tuple of
    (predicate, value) pairs as on the nodes of the state graph. Greedy: from where the run
    stands, the shortest stretch of at most ``hops`` free calls followed by one call taking an
    edge not yet taken (bounded model checking, as in ``plan``); repeat until every edge is
    taken, none is within reach, or ``max_steps`` calls or ``units`` of Z3 effort are spent
    (``timeout`` seconds guard it). Returns the trajectory and the indices of the edges it takes
    (the abstract graph over-approximates, so some edges of a graph may have no concrete run at
    all). The effort, not the clock, bounds it: the same trajectory on any machine.
    """
    effort = Effort(units, timeout)
    machine = Machine(contract)
    state = machine.initial_state()
    calls: list[tuple[str, Any, Any, bool]] = []
    taken: set[int] = set()
    while len(taken) < len(edges) and len(calls) < max_steps:
        if effort.spent:
            break
        stretch = _reach_edge(contract, state, edges, taken, hops, effort)
        if stretch is None:
            break
        checked = replay(contract, [*calls, *stretch])
        if checked.failure is not None:
            break
        before = len(calls)
        calls.extend(stretch)
        state = checked.states[-1]
        for index in range(before, len(calls)):
            pre, post = checked.states[index], checked.states[index + 1]
            for number, (a, op, b) in enumerate(edges):
                if op == calls[index][0] and _in(a, pre) and _in(b, post):
                    taken.add(number)
    faked = simulated(contract, calls)
    if faked is not None and replay(contract, faked).failure is None:
        calls = faked
    meta = {"generator": "envfactory graph cover", "edges": len(edges), "covered": len(taken)}
    return as_trajectory(contract, calls, ident, meta, seed=0), sorted(taken)


def _in(valuation: Valuation, state: Mapping[str, Any]) -> bool:
    for expr, value in valuation:
        try:
            truth = compile_expr(expr)(ConcreteEnv(state)) is True
        except EvaluationError:
            truth = False
        if truth != value:
            return False
    return True


def _reach_edge(
    contract: Contract,
    state: FrozenMap,
    edges: Sequence[Edge],
    taken: set[int],
    hops: int,
    effort: Effort,
) -> list[tuple[str, Any, Any, bool]] | None:
    """The shortest run from ``state`` whose last call takes an edge not yet taken."""
    start = {name: state[name] for name in state}
    unrolling = Unrolling(
        contract,
        slots=slots_needed(contract, hops + 1, start=start),
        overrides=start,
        timeout=effort.timeout,
        effort=effort,
        extra=[expr for a, _, b in edges for expr, _ in (*a, *b)],
    )
    tr = unrolling.transition
    ops = unrolling.ops

    def at(valuation: Valuation, sym: SymState) -> z3.BoolRef:
        parts = [tr.clause(expr, sym) for expr, _ in valuation]
        return formula(and_(*(p if v else z3.Not(p) for p, (_, v) in zip(parts, valuation, strict=True))))

    for _ in range(hops + 1):
        pre = unrolling.states[-1]
        post = unrolling.extend()
        unrolling.add(unrolling.invariants(post))
        sel = unrolling.selectors[-1]
        open_edges = [(a, op, b) for n, (a, op, b) in enumerate(edges) if n not in taken and op in ops]
        # loops first: an edge that leaves an abstract state may leave it for good
        for group in ([e for e in open_edges if e[0] == e[2]], [e for e in open_edges if e[0] != e[2]]):
            if not group:
                continue
            wanted = formula(
                or_(*(and_(sel == ops.index(op), at(a, pre), at(b, post)) for a, op, b in group))
            )
            result = unrolling.check(wanted)
            if result == z3.sat:
                return unrolling.calls(wanted, polish=0.5)
            if result == z3.unknown:
                return None
    return None


def json_initial(contract: Contract, initial: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A trajectory's ``initial``: collections as JSON objects with string keys."""
    if not initial:
        return None
    result: dict[str, Any] = {}
    for name, value in initial.items():
        if contract.state[name].collection and isinstance(value, Mapping):
            value = {str(key): item for key, item in value.items()}
        result[name] = to_json(value)
    return result


__all__ = [
    "PlanResult",
    "Replay",
    "Unrolling",
    "as_trajectory",
    "cover",
    "holds",
    "json_initial",
    "plan",
    "replay",
    "resolve_goal",
    "simulated",
]
