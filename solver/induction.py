"""k-induction over the contract's invariants (or one given), with Z3.

For k = 1, 2, ... up to the depth asked:

* base: no path of k-1 or fewer valid steps from the initial state reaches a state that breaks
  the property (bounded model checking; the first path found is a shortest counterexample);
* step: no k valid steps from *any* well-formed state, the property holding on the first k states,
  reach a state that breaks it. Unsatisfiable: the property is proved, with this k.

A *valid* step is one ``verify`` accepts: schemas, requires, ensures, and the contract's own
invariants after it. So the contract's invariants are assumed along every path, and a property
given with ``--invariant`` is proved relative to them. Collections are bounded to K key slots in
the step case (the small-model bound, reported with the proof); the base case sizes them so that
no path of the explored depth overflows.

Imports the contracts layer, the trajectory format and ``solver.bmc`` / ``solver.transition`` /
``solver.states``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import attrs
import z3

from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Clause, Contract
from envfactory.solver.bmc import Unrolling, as_trajectory, holds, json_initial, replay, simulated
from envfactory.solver.effort import Effort
from envfactory.solver.states import slots_needed
from envfactory.solver.transition import state_predicate
from envfactory.trajectory import Trajectory


@attrs.frozen(slots=True)
class ProofResult:
    """``status``: ``proved`` (by ``k``-induction), ``violated`` (``counterexample`` is a shortest
    trajectory whose last state breaks ``broken``), or ``unknown`` (``reason``)."""

    status: str
    property: str
    depth: int
    k: int | None = None
    counterexample: Trajectory | None = None
    broken: str | None = None
    reason: str | None = None
    slots: int = 0
    lists: int = 0
    """Capacity of the lists of unknown length in the step case (0: none)."""
    seconds: float = 0.0
    dropped: tuple[str, ...] = ()
    """Output constraints (``op: clause``) left out as outside the symbolic fragment: the proof
    is over a relation with more behaviours than the contract's, so it still holds."""

    def message(self) -> str:
        if self.status == "proved" and self.k == 0:
            return "proved (nothing to prove: the contract declares no invariants)"
        if self.status == "proved":
            bound = f"collections of up to {self.slots} entries"
            if self.lists:
                bound += f", lists of up to {self.lists} items"
            text = f"proved (k = {self.k}; {bound} in the step case)"
            if self.dropped:
                text += (
                    f"; over-approximated: {len(self.dropped)} output constraint"
                    f"{'' if len(self.dropped) == 1 else 's'} outside the solver's fragment left out"
                    f" ({'; '.join(self.dropped)})"
                )
            return text
        if self.status == "violated":
            steps = len(self.counterexample.steps) if self.counterexample is not None else 0
            return f"violated: {self.broken!r} breaks after {steps} step{'' if steps == 1 else 's'}"
        return f"unknown up to depth {self.depth}" + (f": {self.reason}" if self.reason else "")


def _property(contract: Contract, invariant: str | Clause | None) -> tuple[list[Clause], bool]:
    """The clauses to prove, and whether they are the contract's own invariants."""
    if invariant is None:
        return list(contract.invariants), True
    if isinstance(invariant, Clause):
        return [invariant], False
    return [state_predicate(contract, invariant, "invariant")], False


def base_case(
    contract: Contract,
    prop: Sequence[Clause],
    own: bool,
    depth: int,
    deadline: float,
    unrolling: Unrolling | None = None,
    slots: int | Mapping[str, int] | None = None,
    effort: Effort | None = None,
) -> tuple[str, Unrolling]:
    """Is there a path of exactly ``depth`` valid steps whose last state breaks ``prop``?

    ``unrolling``: the one this returned for a smaller depth, extended here instead of unrolled
    afresh (``prove`` goes through k = 0, 1, 2, ... on one incremental solver, as ``plan`` does);
    ``slots``: the collection slots a new one gets (enough for the deepest depth asked)."""
    if unrolling is None:
        unrolling = Unrolling(
            contract,
            slots=slots if slots is not None else slots_needed(contract, depth),
            timeout=max(0.0, deadline - time.monotonic()),
            effort=effort,
            extra=prop,
        )
        if any(not var.known for var in contract.state.values()):
            # open world: the server's unknown starting state is assumed to keep the invariants
            unrolling.add(unrolling.invariants(unrolling.states[0]))
    while unrolling.depth < depth:
        previous = unrolling.states[-1]
        unrolling.add(unrolling.invariants(previous), unrolling.invariants(previous, prop))
        unrolling.extend()
    last = unrolling.states[-1]
    bad = z3.Not(unrolling.invariants(last, prop))
    extra = [] if own else [unrolling.invariants(last)]
    result = unrolling.check(bad, *extra)
    return str(result), unrolling


def step_case(
    contract: Contract,
    prop: Sequence[Clause],
    own: bool,
    k: int,
    slots: int,
    deadline: float,
    dropped: dict[str, str] | None = None,
    bounded: set[int] | None = None,
    unrolling: Unrolling | None = None,
    effort: Effort | None = None,
) -> tuple[str, Unrolling]:
    """Can ``k`` valid steps from any state, ``prop`` holding on the first ``k``, break it?
    (``unrolling``: the one this returned for a smaller ``k``, extended here.)"""
    if unrolling is None:
        unrolling = Unrolling(
            contract,
            slots=slots,
            initial=False,
            timeout=max(0.0, deadline - time.monotonic()),
            effort=effort,
            tag="i",
            extra=prop,
        )
    tr = unrolling.transition
    while unrolling.depth < k:
        previous = unrolling.states[-1]
        unrolling.add(unrolling.invariants(previous), unrolling.invariants(previous, prop))
        unrolling.extend()
    last = unrolling.states[-1]
    extra = [] if own else [unrolling.invariants(last)]
    if dropped is not None:
        dropped.update(tr.dropped)
    if bounded is not None:
        bounded.update(tr.bounded)
    return str(unrolling.check(z3.Not(unrolling.invariants(last, prop)), *extra)), unrolling


def prove(
    contract: Contract,
    invariant: str | Clause | None = None,
    *,
    depth: int = 4,
    slots: int = 3,
    timeout: float = 60.0,
    effort: Effort | None = None,
    progress: Callable[[int], None] | None = None,
) -> ProofResult:
    """Prove the contract's invariants (or ``invariant``) by k-induction, k <= ``depth``.

    With ``effort``, the checks spend its Z3 resource units and ``timeout`` is only a guard."""
    started = time.monotonic()
    deadline = started + timeout
    prop, own = _property(contract, invariant)
    text = " and ".join(c.source for c in prop) if prop else "true"

    dropped: dict[str, str] = {}
    bounded: set[int] = set()

    def done(status: str, **kw: object) -> ProofResult:
        return ProofResult(
            status,
            text,
            depth,
            slots=slots,
            lists=max(bounded, default=0),
            seconds=time.monotonic() - started,
            dropped=tuple(sorted(dropped)),
            **kw,  # type: ignore[arg-type]
        )

    if not prop:
        return done("proved", k=0)
    undecided: str | None = None
    base_run: Unrolling | None = None  # one incremental unrolling each, extended a step per k
    step_run: Unrolling | None = None
    try:
        for k in range(0, depth + 1):
            if progress is not None:
                progress(k)
            base, unrolling = base_case(
                contract, prop, own, k, deadline, base_run, slots_needed(contract, depth), effort
            )
            base_run = unrolling
            dropped.update(unrolling.transition.dropped)
            if base == "sat":
                return _counterexample(contract, prop, own, unrolling, done)
            if unrolling.skipped:
                name, why = next(iter(unrolling.skipped.items()))
                return done("unknown", reason=f"the solver cannot model {name}: {why}")
            if base == "unknown":
                return done("unknown", reason=f"solver gave up on paths of {k} steps (time-out)")
            if k == 0 or undecided is not None:
                continue
            step, step_run = step_case(
                contract, prop, own, k, slots, deadline, dropped, bounded, step_run, effort
            )
            if step == "unsat":
                return done("proved", k=k)
            if step == "unknown":
                undecided = f"solver gave up on the {k}-induction step (time-out)"
    except SolverError as err:
        return done("unknown", reason=err.message)
    return done("unknown", reason=undecided)


def _counterexample(
    contract: Contract,
    prop: Sequence[Clause],
    own: bool,
    unrolling: Unrolling,
    done: Callable[..., ProofResult],
) -> ProofResult:
    tr = unrolling.transition
    last = unrolling.states[-1]
    bad = z3.Not(unrolling.invariants(last, prop))
    calls = unrolling.calls(bad, *([] if own else [unrolling.invariants(last)]))
    assumed = unrolling.unknown_initial()
    checked = replay(contract, calls, assumed)
    faked = simulated(contract, calls, assumed, last_may_fail=own)
    if faked is not None:
        again = replay(contract, faked, assumed)
        same_run = again.states == checked.states and again.failed_step == checked.failed_step
        if same_run or tr.dropped:
            # the simulator's outputs: the same run with realistic data, or (where output
            # constraints were left out) outputs that keep them; the replay below decides
            calls, checked = faked, again
    final = checked.states[-1]
    broken = next((c for c in prop if not holds(c, final)), None)
    if own:
        ok = (
            checked.failure is not None
            and checked.failed_step == len(calls) - 1
            and checked.failure.kind == "invariant"
        )
        if ok and checked.failure is not None and checked.failure.clause is not None:
            broken = checked.failure.clause
        if not calls:  # the initial state itself breaks an invariant
            ok = broken is not None
    else:
        ok = checked.failure is None and broken is not None
    if not ok or broken is None:
        why = checked.failure.message if checked.failure is not None else "the property holds concretely"
        return done("unknown", reason=f"the symbolic counterexample does not replay concretely: {why}")
    traj = as_trajectory(
        contract,
        calls,
        "counterexample",
        {"generator": "envfactory prove", "invariant": broken.source, "depth": len(calls)},
        initial=json_initial(contract, assumed),
        seed=0,
    )
    return done("violated", counterexample=traj, broken=broken.source, k=None)


__all__ = ["ProofResult", "base_case", "prove", "step_case"]
