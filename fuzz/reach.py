"""Solver-directed reach: call sequences, planned by bounded model checking, to states where a
clause outcome random search never covered happens.

Steering (``steering.py``) draws each call so that the model accepts it, but it cannot plan: an
operation that needs a counter at 12, with another operation that resets the counter among the
choices, is reached by chance about once in 4^12 sequences. The contract's transition relation
knows the way, so for each clause outcome still uncovered after a share of the budget (an
operation never accepted; a ``requires`` never the one that refused, such as a move limit never
reached or a quantity never one past what is left), the BMC unrolling (``solver.bmc.Unrolling``)
is asked for the shortest sequence of valid calls that ends in it. The fuzzer then starts test
cases from those prefixes and goes on from there (``machine.Case``), valid and adversarial, as
from any other state: the call one past a limit is where off-by-one bugs answer 200. Where the
whole way from the initial state costs more than the run can spend, the last few calls are
planned from a state the search itself reached (``relay``).

Imports the solver layer (``solver.bmc``, ``solver.states``) and the contracts layer.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Contract
from envfactory.fuzz import branches, influence
from envfactory.fuzz.influence import Write
from envfactory.solver import deadline
from envfactory.solver.bmc import Unrolling
from envfactory.solver.effort import Effort

# imported with the fuzzer, not by its first plan: the Z3 objects these make as they load are
# then made before anything else, and a plan made in a worker forked later (``_apart``) came out
# otherwise in the first run of a process than in the runs after it (the library's ThirdBook,
# seed 1: other inputs on one of its routes, 7,390 calls against 7,407)
from envfactory.solver.fresh import start_afresh

MAX_DEPTH = 24
"""Longest prefix planned (its last call included)."""
EFFORT_PER_SECOND = 3_000_000
"""Z3 resource units (``rlimit``) the unrolling's checks spend in a CPU-second, about (measured
on the depot contract: 2.5-3.5 million)."""
COPY_UNITS = 30
"""Units charged for each constant a step of the unrolling copies (``Effort.per_copy``): what
encoding costs, in the units of ``EFFORT_PER_SECOND``. 4 to 22 microseconds a constant were
measured, about 10 on most contracts (a petstore step with room for 24 calls copies 38,000
constants in 0.15 s, a courier step 25,000 in 0.33 s). Without it, a run bounded by examples
waited for the encoding of every depth the checks were too cheap to end: 4.6 s with a tenth of
the default effort on the petstore, of which the checks took 0.8."""
HANG = 3600.0
"""The unrolling's own time limit: a guard only, the effort bounds the work."""

Prefix = tuple[str, ...]
"""The operations of a planned call sequence: one of the shortest, the same for the same goals
whatever else the process asked Z3 before (``plan``)."""


@attrs.frozen(slots=True)
class Route:
    """A planned prefix, with the input the solver's model gave each call: one way through the
    clauses (a login by the pull request's author, a branch named ``release/...``) that values
    drawn again for the same operations meet only by chance. The fuzzer sends an input as
    planned where its model still accepts it, and draws one where it does not (an id the
    target assigned otherwise)."""

    operations: Prefix
    inputs: tuple[Any, ...] = ()
    """One per operation (None for a relayed route's planned call whose model could not be
    read), or none where the model could not be read. The model's values may
    differ with what else the process asked Z3 before; the fuzzer plans in a worker that starts
    Z3 afresh (``plan_apart``), where they are the same for the same goals."""
    refused: bool = False
    """Whether the last call is one a ``requires`` refuses (the goal a limit, not an acceptance)."""
    goal: Goal | None = None
    """The goal it was planned for."""
    recorded: int = 0
    """Its first calls are a corpus entry (``relay``), sent as recorded: the state they reached
    is where the rest was planned from."""


Goal = tuple[str, int | None] | tuple[str, int | None, ir.Expr] | tuple[str, int | None, Write]
"""A clause outcome to plan for: the operation, and the index of the ``requires`` that fails
while the ones before it hold (None: the operation accepted), and where a third item is given,
in a state and with an input where that condition holds too: a way through its effects, or
a refusal where a mutant of the clause would let the call in (``branches.py``). With a
``Write`` third, the outcome holds because of an earlier call's write (``influence.py``)."""


def goal_of(outcome: str, contract: Contract | None = None) -> Goal | None:
    """The goal behind a clause outcome's name (``runner.clause_outcomes``); None for outcomes
    no state is needed for (a broken input schema). A condition's outcome needs the contract."""
    name, _, what = outcome.rpartition(": ")
    if what == "accepted":
        return name, None
    if contract is not None and (found := branches.find(contract, outcome)) is not None:
        branch, taken = found
        return name, branch.number - 1 if branch.refused else None, branch.condition(taken)
    if what.startswith("requires ") and what.endswith(" fails"):
        return name, int(what.split()[1]) - 1
    return None


def prefix_to(
    contract: Contract, operation: str, *, timeout: float, max_depth: int = MAX_DEPTH
) -> Prefix | None:
    """The shortest valid call sequence from the initial state whose last call is ``operation``
    accepted; None when there is none up to ``max_depth`` or the solver cannot say within
    ``timeout`` seconds' worth of effort."""
    found = plan(contract, [(operation, None)], effort=effort(timeout), max_depth=max_depth)
    return found[0].operations if found else None


def effort(seconds: float) -> int:
    """Z3 resource units for about ``seconds`` of solving on an ordinary machine."""
    return max(int(seconds * EFFORT_PER_SECOND), 1)


def plan(
    contract: Contract,
    goals: Iterable[Goal],
    *,
    effort: int,
    max_depth: int = MAX_DEPTH,
    report: Callable[[Route], None] | None = None,
    least: bool = True,
    per_copy: int = COPY_UNITS,
) -> list[Route]:
    """For each goal, the shortest valid call sequence that ends in it: its last call is the
    operation accepted, or refused by exactly the goal's ``requires`` (a counter at its limit, a
    quantity one past what is left), from a state only a chain of calls builds. One unrolling
    serves every goal: at each depth the goals still open are asked about its last state.
    ``report`` hears each prefix as it is found (the caller may stop the search at any time).

    The solver's work is bounded by ``effort``, Z3 resource units in all (deterministic, unlike a
    time limit: the same contract and goals give the same prefixes on a loaded machine, so the
    same seed gives the same run); the caller bounds the wall time.

    The model Z3 gives depends on what else the process asked it before, so with ``least`` each
    route is, of the shortest, the one whose operations come first in the contract's order
    (``_least``): the same in a notebook cell and after other tests. That costs checks (a third
    of the effort of an eleven-call route on the review board); a process whose solver state
    starts afresh (``plan_apart``'s worker) gets the same model for the same goals and plans
    with ``least=False``."""
    open_goals = [g for g in goals if g[0] in contract.operations]
    found: list[Route] = []
    _plan(contract, open_goals, found, _budget(effort, per_copy), max_depth, report, least)
    return found


def _budget(units: int, per_copy: int) -> Effort:
    """Every check charged what Z3 counted, no minimum (the same plans as before the one
    ``Effort`` of the solver layer served here too), and each step's encoding ``per_copy`` units
    a constant copied."""
    return Effort(units, timeout=HANG, least=0, per_copy=per_copy)


def _plan(
    contract: Contract,
    open_goals: list[Goal],
    found: list[Route],
    budget: Effort,
    max_depth: int,
    report: Callable[[Route], None] | None,
    least: bool,
    asked: int = 0,
) -> bool:
    """``plan``'s search, within ``budget``, moving each goal met from ``open_goals`` to
    ``found``; below ``asked`` calls the goals were asked already. False once the solver's
    effort is spent (or it cannot go on)."""
    from envfactory.solver.states import slots_needed

    sized = asked  # calls the previous stage's collections had room for: its answers up to them stand
    full = slots_needed(contract, max_depth)
    stages = [(r, d) for r, d in SLOT_STAGES if asked < r < max_depth and slots_needed(contract, r) != full]
    for room, deepest in [*stages, (max_depth, max_depth)]:
        try:
            unrolling = Unrolling(contract, slots=slots_needed(contract, room), timeout=HANG, effort=budget)
            _search(unrolling, open_goals, found, min(deepest, max_depth), sized, report, least)
        except _GaveUp:
            return False  # the solver's effort is spent
        except (SolverError, z3.Z3Exception):
            return False
        if not open_goals:
            break
        sized = room
    return True


SLOT_STAGES = ((4, 12), (8, 16))
"""(room, deepest): an unrolling whose collections have room for the records of ``room`` calls
searches up to ``deepest`` calls first; then one with more room searches again, past ``room``,
up to one with room for ``max_depth`` calls. A record per slot costs every step a frame
equation per field and list place (lists hold as many items as a collection has slots), so room
for 24 calls made one check of a nine-call plan on the review board cost more than 50 CPU-s
where room for 4 found it in 2.4: most prefixes create a few records and then act on them. A
plan found with less room is a real one (a write past the room is no transition). The stage of
room 8 serves ``stepwise``'s planning past its stones (from the sixth call on, past the first
stage): with room for 24 calls at once, the ledger's sixth deposit and fifth transfer (7 and 8
calls) took 12 million units, one sat check of seven calls seconds; with room for 8, 6 million.
A contract whose collections no call grows (or that has none) has one unrolling only."""


Parts = Literal["both", "stones", "near", "rounds", "deep"]
"""What of ``stepwise`` to run: all of it; up to its stepping stones ("stones": the plan up to
``STONE_DEPTH``, "near", then the relays on from the states its routes reach, "rounds"); or the
plan past them ("deep")."""
STONE_DEPTH = 5
"""Calls ``stepwise`` plans from the initial state before it plans on from the states its routes
reach."""
STONE_ROUNDS = 4
"""Times at most ``stepwise`` plans on from the states the routes it found last reach."""
STONE_STEP = 3
"""Calls ``stepwise`` plans past a stone, at most."""


def stepwise(
    contract: Contract,
    goals: Iterable[Goal],
    *,
    effort: int,
    report: Callable[[Route], None] | None = None,
    least: bool = True,
    per_copy: int = COPY_UNITS,
    parts: Parts = "both",
    near: Sequence[Route] = (),
) -> list[Route]:
    """For each goal, a valid call sequence that ends in it, found by stepping stones: ``plan``
    up to ``STONE_DEPTH`` calls from the initial state; then ``relay`` from the states its
    routes reach (``stones``), and again from the states the routes relayed reach, while it
    finds some; then ``plan`` on past ``STONE_DEPTH`` for the goals still open. One budget of
    effort serves them all.

    Each depth ``plan`` proves empty costs more than the one before, for every goal still
    asked: on the cloud set, a move (seven calls: two projects under two owners, an admin
    added, a VM created, started and stopped) came at 18 CPU-s of planning, asked among the
    other goals at every depth, where a six-call route to a refused move had reached two
    projects and a stopped VM at 5; from there, the two calls left took ``relay`` one more. A
    route through a stone is not always the shortest, and need not be: the fuzzer takes a route
    to reach a state, and shrinks what it finds there.

    ``parts``: "stones" stops before the plan past ``STONE_DEPTH``; "near" stops before the
    relays too, and "rounds" is those relays alone, on from the states the routes of a "near"
    call reach (``near``); "deep" is the plan past ``STONE_DEPTH`` alone (for the goals a
    "stones" call left open). Each part called alone has a budget of ``effort``."""
    open_goals = [g for g in goals if g[0] in contract.operations]
    found: list[Route] = []
    budget = _budget(effort, per_copy)
    if parts == "deep":
        _plan(contract, open_goals, found, budget, MAX_DEPTH, report, least, asked=STONE_DEPTH)
        return found
    if parts == "rounds":
        new = list(near)
    elif not _plan(contract, open_goals, found, budget, STONE_DEPTH, report, least) or parts == "near":
        return found
    else:
        new = list(found)
    for _ in range(STONE_ROUNDS):
        starts = stones(contract, new)
        if not open_goals or not starts:
            break
        before = len(found)
        _relay(contract, starts, open_goals, found, budget, STONE_STEP, report, least)
        new = found[before:]
        if budget.spent:
            return found
        if not new:
            break
    if open_goals and parts == "both":
        _plan(contract, open_goals, found, budget, MAX_DEPTH, report, least, asked=STONE_DEPTH)
    return found


def stones(contract: Contract, routes: Iterable[Route]) -> list[Start]:
    """The states ``routes`` reach (a refusal's: the state its refused call was sent in), each
    once, with the shortest calls to it, as starts for ``relay``. A route whose inputs the
    model could not give, or with a call whose effects read the target's output (an id it
    assigns), reaches no state known here."""
    from envfactory.contracts.semantics import Machine
    from envfactory.contracts.state import initial_state
    from envfactory.fuzz import oracle

    machine = Machine(contract)
    initial = initial_state(contract)
    reached: dict[Any, Start] = {}
    for route in routes:
        names = route.operations[:-1] if route.refused else route.operations
        if len(route.inputs) != len(route.operations):
            continue
        state: Any = initial
        calls: list[tuple[str, Any]] = []
        # the replay's own judgement (``Case.resume``): a call it would not send (no input), or
        # whose state comes from the target's output, reaches no state known here
        sent = list(
            itertools.takewhile(lambda call: call[1] is not None, zip(names, route.inputs, strict=False))
        )
        try:
            for call, (_, expect, after) in zip(
                sent, oracle.walk(machine, contract.operations, initial, sent)
            ):
                if not expect.accepted or after is None:
                    break
                state = after
                calls.append(call)
        except (TypeError, KeyError, ValueError):
            continue
        if len(calls) == len(names) and ((known := reached.get(state)) is None or len(known[0]) > len(calls)):
            reached[state] = (tuple(calls), state)
    return list(reached.values())


def plan_apart(
    contract: Contract,
    goals: Iterable[Goal],
    *,
    effort: int,
    seconds: float,
    report: Callable[[Route], None],
    starts: Callable[[], Sequence[Start]] | None = None,
    per_copy: int = COPY_UNITS,
    then: Callable[[], Sequence[Goal]] | None = None,
) -> None:
    """``stepwise`` in a worker forked for it and killed after ``seconds`` of wall time (a guard:
    the checks and, at ``per_copy`` units a constant, the encoding spend ``effort``; with
    ``per_copy`` 0, encoding is bounded by the guard alone), each route handed to ``report`` as
    it is found; then, for the goals it did not meet, ``relay`` in a second worker, from the states
    ``starts`` gives there (the search's corpus as it is by then), with ``RELAY_SHARE`` of the
    effort. Each worker starts its solver state afresh (``solver.fresh``), so the routes and
    their inputs are the same whatever this process asked Z3 before (the same seed makes the
    same calls in a new process and after other tests) without ``_least``'s checks, whose effort
    goes to deeper routes. Raises what ``plan`` raised.

    With ``then``, once ``goals`` are planned up to ``STONE_DEPTH`` calls, the goals ``then``
    gives (the influence goals the search has not met by then) on a read apt to be kept as a
    copy (``influence.kept``) are relayed from the corpus (those on one read of several as
    before the write first, ``Write.read``: asked with the rest, the relay met the easier ones
    and never the cloud's move), and only then are the stepping
    stones' relays run: those took until 14 to 17 s of a 20 s run on four of the held-out sets,
    and the stale reads planned after them came in its last seconds or not at all (the
    courier's StaleRoutes, the cloud's RoleAsAdded). Then the refusals a weak mutant of their
    clause lets through (``branches.statuses``, ``branches.afters``) are planned past the
    stones: a route to one ends in the very call an implementation with that mutant answers
    otherwise (the storefront's RefundBeforeCheck, eight calls). Then ``goals`` and the other
    goals of ``then`` are relayed; then ``goals`` are planned past the stones, and the goals of
    ``then`` stepwise, each phase with the effort its kind has."""
    wanted = list(goals)
    routes: list[Route] = []

    def heard(route: Route) -> None:
        routes.append(route)
        report(route)

    def left(asked: list[Goal]) -> list[Goal]:
        met = [route.goal for route in routes]
        return [goal for goal in asked if goal not in met]

    def planned(
        asked: list[Goal], parts: Parts = "both", units: int = effort, near: Sequence[Route] = ()
    ) -> None:
        rest = left(asked)
        if rest:
            _apart(
                lambda fresh, progress: stepwise(
                    contract,
                    rest,
                    effort=units,
                    report=progress,
                    least=not fresh,
                    per_copy=per_copy,
                    parts=parts,
                    near=near,
                ),
                seconds,
                heard,
            )

    def relayed(asked: list[Goal]) -> None:
        rest = left(asked)
        if rest and starts is not None:
            units = max(int(effort * RELAY_SHARE), 1)
            _apart(
                lambda fresh, progress: relay(
                    contract,
                    starts(),
                    rest,
                    effort=units,
                    report=progress,
                    least=not fresh,
                    per_copy=per_copy,
                ),
                seconds,
                heard,
            )

    if then is None:
        planned(wanted)
        relayed(wanted)
        return
    # the goals of ``then`` wait for the plan up to the stones only, not for the relays on from
    # them nor the deep plans
    planned(wanted, "near")
    near = list(routes)
    later = list(then())
    # one relay's effort meets few of the influence goals asked all at once: those on a read an
    # implementation is apt to keep a copy of are asked first, the others after the outcomes
    kept: list[Goal] = [g for g in later if influence.is_influence(g) and influence.kept(contract, g)]
    # of those, one read of several as before the write first: the shape of a copy kept
    # (``Write.read``), a few calls past the easier kept goals a relay of them all meets first
    relayed([g for g in kept if influence.is_influence(g) and g[2].read is not None])
    relayed(kept)
    planned(wanted, "rounds", near=near)
    # a refusal a weak mutant of the clause lets through ends in the very call an implementation
    # with that mutant answers otherwise: planned past the stones before the other relays
    mutants: list[Goal] = [
        g for g in wanted if len(g) == 3 and g[1] is not None and not influence.is_influence(g)
    ]
    planned(mutants, "deep", max(int(effort * MUTANT_SHARE), 1))
    relayed(wanted)
    relayed([goal for goal in later if goal not in kept])
    planned(wanted, "deep")
    planned(later)


def _apart(
    work: Callable[[bool, Callable[[Route], None]], object], seconds: float, report: Callable[[Route], None]
) -> None:
    """``work(fresh, progress)`` in a forked worker whose solver state starts afresh (``fresh``;
    where there is no fork, in this process, whose state stays)."""
    parent = os.getpid()

    def task(progress: Callable[[Route], None]) -> None:
        fresh = os.getpid() != parent
        if fresh:
            start_afresh()
        work(fresh, progress)

    # no collections in the worker: the same terms freed whatever the process did before
    deadline.bounded(task, seconds, progress=report, collect=False)


Start = tuple[Sequence[tuple[str, Any]], Mapping[str, Any]]
"""A state the search reached: the accepted calls that led there, and the model's state."""
RELAY_DEPTH = 4
"""Calls ``relay`` plans past a start, at most."""
RELAY_SHARE = 0.3
"""The share of the planner's effort that ``plan_apart`` gives ``relay`` after ``plan``."""
MUTANT_SHARE = 0.5
"""The share of the planner's effort that ``plan_apart`` gives the refusals a weak mutant lets
through past the stones: the storefront's eight-call cancel (``branches.afters``) took 10 to 15
million units of a run's 30, and a goal no state meets would otherwise hold the relays back for
all of them."""


def relay(
    contract: Contract,
    starts: Sequence[Start],
    goals: Iterable[Goal],
    *,
    effort: int,
    depth: int = RELAY_DEPTH,
    report: Callable[[Route], None] | None = None,
    least: bool = True,
    per_copy: int = COPY_UNITS,
) -> list[Route]:
    """For each goal, a route through one of the states the search reached: its calls, and then
    the shortest sequence of at most ``depth`` calls from there that ends in the goal.

    A goal ten calls from the initial state costs the planner more than a run has: each depth
    proven empty costs more than the one before (the auction's third extension of a lot, 53
    million units, where a run has 30). The search gets part of the way on its own (a lot
    extended once is a state it keeps, ``corpus.py``), and from there the goal is a few calls
    off: one unrolling whose first state is any of ``starts`` (which one is the solver's
    choice) asks the goals at each depth, as ``plan`` does from the initial state (``least``
    as there: of the shortest ways on, the least in the contract's order)."""
    open_goals = [g for g in goals if g[0] in contract.operations]
    found: list[Route] = []
    _relay(contract, starts, open_goals, found, _budget(effort, per_copy), depth, report, least)
    return found


def _relay(
    contract: Contract,
    starts: Sequence[Start],
    open_goals: list[Goal],
    found: list[Route],
    budget: Effort,
    depth: int,
    report: Callable[[Route], None] | None,
    least: bool,
) -> None:
    """``relay``'s search, within ``budget``, moving each goal met from ``open_goals`` to
    ``found``."""
    from envfactory.solver.states import slots_needed

    if not open_goals or not starts:
        return
    slots: dict[str, int] = {}
    for _, state in starts:
        for name, count in slots_needed(contract, depth, start=state).items():
            slots[name] = max(slots.get(name, 1), count)
    try:
        unrolling = Unrolling(contract, slots=slots, initial=False, timeout=HANG, effort=budget)
        which = z3.Int("relay.start")
        kept: list[Sequence[tuple[str, Any]]] = []
        options: list[z3.BoolRef] = []
        for calls, state in starts:
            try:
                pinned = unrolling.transition.initial(unrolling.states[0], state)
            except (SolverError, z3.Z3Exception):
                continue  # a value the solver does not carry
            options.append(z3.And(which == len(kept), pinned))
            kept.append(calls)
        if not kept:
            return
        unrolling.add(z3.Or(*options))

        def relayed(route: Route) -> None:
            calls = kept[unrolling.value(which)]  # the model that planned ``route`` chose it
            inputs = route.inputs or (None,) * len(route.operations)
            full = attrs.evolve(
                route,
                operations=(*(name for name, _ in calls), *route.operations),
                inputs=(*(value for _, value in calls), *inputs),
                recorded=len(calls),
            )
            found.append(full)
            if report is not None:
                report(full)

        _search(unrolling, open_goals, [], depth, 0, relayed, least)
    except (_GaveUp, SolverError, z3.Z3Exception):
        pass


def _search(
    unrolling: Unrolling,
    open_goals: list[Goal],
    found: list[Route],
    max_depth: int,
    sized: int,
    report: Callable[[Route], None] | None,
    least: bool,
) -> None:
    """Unroll up to ``max_depth`` calls, asking the open goals at each depth past ``sized`` calls
    (below them an earlier unrolling's answer stands); move each goal met to ``found``."""
    unrolling.add(unrolling.invariants(unrolling.states[0]))
    for depth in range(max_depth + 1):
        # refusals are asked of the state after ``depth`` calls; acceptances of the call after
        for accepted in (False, True):
            if accepted:
                if depth == max_depth:
                    break
                if unrolling.effort is not None and unrolling.effort.spent:
                    raise _GaveUp  # the depths where no goal can be asked spend it too
                unrolling.add(unrolling.invariants(unrolling.extend()))
            if unrolling.depth <= sized:
                continue
            pending = [g for g in open_goals if (g[1] is None) == accepted]
            asked = {g: w for g in pending if (w := _wanted(unrolling, g, depth)) is not None}
            # one question for all the goals still asked: most depths meet none, and one check
            # costs less than many (an unsatisfiable one most); its model tells which it met
            while asked and _check(unrolling, z3.Or(*(w[0] for w in asked.values()))) == z3.sat:
                held = [g for g, w in asked.items() if unrolling.holds(w[0])]
                for n, goal in enumerate(held or list(asked)):
                    route = _plan_one(
                        unrolling, goal, *asked.pop(goal), least=least, checked=n == 0 and bool(held)
                    )
                    if route is None:
                        continue
                    open_goals.remove(goal)
                    found.append(route)
                    if report is not None:
                        report(route)
        if not open_goals:
            return


class _GaveUp(Exception):
    """The solver answered ``unknown`` (its effort is spent)."""


def _check(unrolling: Unrolling, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
    """``unrolling.check`` within the effort left; raises ``_GaveUp`` once it is spent."""
    assert unrolling.effort is not None
    if unrolling.effort.spent:
        raise _GaveUp
    result = unrolling.check(*assumptions)
    if result == z3.unknown:
        raise _GaveUp
    return result


def _wanted(unrolling: Unrolling, goal: Goal, depth: int) -> tuple[z3.BoolRef, Any] | None:
    """``goal`` met at the unrolling's last state (a refusal) or by its last call (an
    acceptance), with the refused call's input variables (None for an acceptance); None where
    the solver cannot express it."""
    name, failing = goal[0], goal[1]
    if name in unrolling.skipped:
        return None
    if len(goal) == 3 and isinstance(goal[2], Write):  # narrows the goal for the rest
        return influence.wanted(unrolling, goal, depth)
    tr = unrolling.transition
    if failing is None:
        chosen = unrolling.selectors[-1] == unrolling.ops.index(name)
        if len(goal) == 2:
            return chosen, None
        try:  # the condition, of the last call's pre-state and input
            return z3.And(chosen, tr.clause(goal[2], unrolling.states[-2], unrolling.io[-1][name])), None
        except SolverError:
            return None
    op = unrolling.contract.operations[name]
    last = unrolling.states[-1]
    try:
        io = tr.step_vars(op, f"goal{depth}.{name}.{failing}")
        held = [tr.clause(c, last, io) for c in op.requires[:failing]]
        if len(goal) == 3:  # refused where a condition holds too (``branches.statuses``)
            held.append(tr.clause(goal[2], last, io))
        return z3.And(io.constraints, *held, z3.Not(tr.clause(op.requires[failing], last, io))), io.input
    except SolverError:
        return None  # a clause outside the symbolic fragment


def _plan_one(
    unrolling: Unrolling, goal: Goal, wanted: z3.BoolRef, refused: Any, *, least: bool, checked: bool = False
) -> Route | None:
    """A prefix that meets ``goal`` (``wanted``, of ``_wanted``) at this depth, the least with
    ``least``, with the inputs of the model that chose it (``refused``: the refused call's input
    variables); None if there is none (raises ``_GaveUp`` if the solver cannot say). With
    ``checked``, the unrolling's last model meets it already."""
    if not checked and _check(unrolling, wanted) != z3.sat:
        return None
    # ``_least`` leaves the model of its last check: the plan itself
    prefix = _least(unrolling, wanted) if least else tuple(unrolling.operations())
    inputs = _inputs(unrolling, refused)
    if goal[1] is None:
        return Route(prefix, inputs, goal=goal)
    return Route((*prefix, goal[0]), inputs, refused=True, goal=goal)


def _inputs(unrolling: Unrolling, refused: Any) -> tuple[Any, ...]:
    """The inputs of the unrolling's last model, the refused call's last where there is one;
    none where the model cannot be read back (a value outside what the reader knows)."""
    try:
        return tuple(unrolling.inputs(refused))
    except (SolverError, z3.Z3Exception, ValueError, TypeError, KeyError):
        return ()


def _least(unrolling: Unrolling, wanted: z3.BoolRef) -> Prefix:
    """Of the shortest plans, the one whose operations come first in the contract's order, step
    by step: the same plan however the solver's model happens to come out. The model itself
    depends on what else the process asked Z3 before (the same goals planned twice in one
    process came out as ``addBook, join, borrow`` and ``join, addBook, borrow``), so the same
    seed would make other calls after another test or notebook cell.

    Each step descends from the model's own choice: is there a plan with an operation earlier
    in the order here? One unsatisfiable check settles a step the model already chose least,
    where asking each earlier operation in turn cost one each (the dearest checks: it was half
    of all planning). Leaves the model of the plan chosen as the unrolling's last."""
    fixed: list[z3.BoolRef] = []
    chosen = _chosen(unrolling)
    current = True  # whether the last check's model is the one ``chosen`` was read from
    for step, selector in enumerate(unrolling.selectors):
        while chosen[step] > 0:
            current = _check(unrolling, wanted, *fixed, selector < chosen[step]) == z3.sat
            if not current:
                break
            chosen = _chosen(unrolling)
        fixed.append(selector == chosen[step])
    if not current and _check(unrolling, wanted, *fixed) != z3.sat:
        raise _GaveUp  # the solver's earlier answer was not to be had again
    return tuple(unrolling.ops[index] for index in chosen)


def _chosen(unrolling: Unrolling) -> list[int]:
    """The operation the unrolling's last model chose at each step, as an index in its order."""
    return [unrolling.ops.index(name) for name in unrolling.operations()]


def prefixes(contract: Contract, operations: Iterable[str], *, timeout: float) -> list[Prefix]:
    """A prefix to each of ``operations`` accepted that the solver finds within ``timeout``
    seconds' worth of effort."""
    found = plan(contract, [(name, None) for name in operations], effort=effort(timeout))
    return [route.operations for route in found]


__all__ = [
    "Goal",
    "Prefix",
    "Route",
    "Start",
    "goal_of",
    "plan",
    "plan_apart",
    "prefix_to",
    "prefixes",
    "relay",
    "stepwise",
    "stones",
]
