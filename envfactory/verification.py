"""Trajectory verification: one verdict per trajectory, checked step by step.

The concrete path runs each step through the contract's checks in the order of
``envfactory.contracts.semantics`` (unknown_tool, input_schema, precondition, the effects,
output_schema, postcondition, invariant) with compiled closures and compiled schema validators.
Only trajectories that hold unknown values (holes, outputs that later checks read, an unknown
open-world initial state) go to Z3 (``envfactory.solver.feasibility.decide``), imported lazily so
that concrete verification never pays for it; before it, candidate completions are run
concretely (``_guessed``): one that verifies shows the trajectory feasible, and one that fails on a
check no hole decides shows it invalid there whatever the holes are (``statemachine.taint``). A failure is explained in one sentence that names
the concrete state locations it read and the step that last wrote them (``explain_failure``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NoReturn

import attrs
import msgspec
import orjson

from envfactory._completion import candidates, hole_names
from envfactory._explain import explain_failure, explain_initial
from envfactory._fastpath import (
    NO_OUTPUT,
    SCHEMA_TRIPS,
    UNDEFINED,
    Invariant,
    Plan,
    Run,
    Write,
    apply_effects,
    broken_invariant,
    collection_vars,
    complete_output,
    failing,
    holds,
    invariants_of,
    monotone_rechecks,
    raw_test,
    rechecks,
)
from envfactory.contracts import ir
from envfactory.contracts.codegen import StepSpec, all_true, step_checker
from envfactory.contracts.errors import EnvfactoryError, EvaluationError, SolverError, TrajectoryError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.semantics import Failure, Machine
from envfactory.contracts.values import FrozenMap
from envfactory.statemachine.taint import prove_failure
from envfactory.trajectory import (
    BROKEN_ARGUMENTS,
    UNSET,
    Step,
    Trajectory,
    completion_message,
    fill_holes,
    iter_holes,
)

VERDICTS = ("valid", "invalid", "feasible", "unknown", "unreadable")
RESULT_FIELDS = (
    "id",
    "verdict",
    "step",
    "kind",
    "operation",
    "clause",
    "location",
    "message",
    "values",
    "witness",
    "core",
)


class Result(msgspec.Struct, frozen=True):
    """The verdict on one trajectory, and for a broken one the first failing step explained.

    ``to_json`` is the stable document of ``envfactory verify --format json``; ``seconds``,
    ``steps`` and ``source`` ride along for reports but are left out of it (they are not
    deterministic, or not about the verdict).

    A frozen ``msgspec.Struct``, not an attrs class as the other models: one is made per
    trajectory, and a frozen attrs instance of these fourteen fields took 2.3 us to build, a
    tenth of verifying a short trajectory (this takes 0.2 us). Change it with ``replace``.
    """

    id: str
    verdict: str
    step: int | None = None
    kind: str | None = None
    operation: str | None = None
    clause: str | None = None
    location: str | None = None
    message: str = ""
    values: Mapping[str, Any] = msgspec.field(default_factory=dict)
    witness: Mapping[str, Any] | None = None
    core: list[Any] | None = None
    seconds: float = 0.0
    steps: int = 0
    source: str | None = None

    @property
    def ok(self) -> bool:
        return self.verdict in ("valid", "feasible")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "step": self.step,
            "kind": self.kind,
            "operation": self.operation,
            "clause": self.clause,
            "location": self.location,
            "message": self.message,
            "values": _jsonable(self.values),
            "witness": _jsonable(self.witness) if self.witness is not None else None,
            "core": _jsonable(self.core) if self.core is not None else None,
        }


def _jsonable(value: Any) -> Any:
    """Plain JSON: string keys everywhere, persistent maps as objects, tuples as lists."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def unreadable(err: TrajectoryError) -> Result:
    """The result standing for a trajectory that could not be read (exit code 2)."""
    where = str(err.location) if err.location is not None else None
    return Result(
        id=where or "<unreadable>",
        verdict="unreadable",
        location=where,
        message=err.message,
        source=where,
    )


def verify(
    contract: Contract,
    trajectories: Iterable[Trajectory | TrajectoryError],
    *,
    allow_rejected: bool = False,
    timeout: float = 5.0,
) -> Iterator[Result]:
    """One ``Result`` per trajectory, in order, streamed; unreadable items become ``unreadable``."""
    verifier = Verifier(contract, allow_rejected=allow_rejected, timeout=timeout)
    for item in trajectories:
        if isinstance(item, TrajectoryError):
            yield unreadable(item)
        else:
            yield verifier.check(item)


# ------------------------------------------------------------------------------------ the engine


GUESSED_STEPS = 1000
"""Steps the search for a completion from known values may run before Z3 is asked instead."""
GUESSED_SHARE = 0.25
"""Share of the time limit the search may take at most (on states so large that 1,000 steps are
slow), before Z3 gets the trajectory with its own full limit."""
GUESSED_COMBINATIONS = 64
"""Value combinations tried at one step whose holes are all new."""
PROOF_TRIES = 8
"""Failing completions the search runs with taint tracked (``_proved``), each failing further
than the last and at a step holding no hole (where a wrong value fails, not every value),
before the solver decides instead."""


_TRIPS = (EnvfactoryError, ArithmeticError, TypeError, ValueError, KeyError, AttributeError, RecursionError)
"""What a check may raise on values it cannot take (a report of the failure, or a proof, is
then given up, never the other trajectories' results)."""


class _Symbolic(Exception):
    """Raised by the concrete run when the rest of the trajectory needs Z3."""

    def __init__(
        self, index: int, reason: str, run: Run | None = None, completed: dict[int, Any] | None = None
    ) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason
        self.state = run.state if run is not None else None  # the concrete state before step ``index``
        self.completed = completed or {}  # outputs the concrete run completed before it


class _Broken(Exception):
    """Raised by the concrete run at the first failing step."""

    def __init__(self, index: int, op: Operation | None, failure: Failure) -> None:
        super().__init__(failure.message)
        self.index = index
        self.op = op
        self.failure = failure


_STATELESS = frozenset({"unknown_tool", "input_schema", "output_schema"})
"""Check kinds that read no state: their failures stand even when the initial state is unknown."""


def _effect_failure(
    machine: Machine, state: FrozenMap, op: Operation, value: Any, output: Any, err: EvaluationError
) -> Failure:
    """``Machine.effect_failure``'s explanation, or this error's own when it has none."""
    try:
        return machine.effect_failure(state, op, value, output)
    except Exception:  # the machine may not know this undefined case (an unhashable key)
        effect = op.effects[0] if op.effects else None
        return Failure(
            "precondition",
            f"{op.name}: an effect is undefined here: {err.message}",
            effect=effect,
            reason=err.message,
        )


def _surely(check: Callable[[Env], bool] | None, env: Env) -> bool:
    """Whether the generated checker settles that every clause holds; when it is not sure (or a
    closure it defers to raises), the clauses' closures run one by one and explain."""
    if check is None:
        return False
    try:
        return check(env) is True
    except Exception:
        return False


def step_spec(plan: Plan, collections: frozenset[str]) -> StepSpec:
    """What the generated checker of ``plan``'s whole step checks (``contracts.codegen.step_checker``):
    the invariants re-checked per key where ``plan.monotone`` allows it, under its guards."""
    checks, guards = plan.monotone if plan.monotone is not None else (plan.invariants, ())
    return StepSpec(
        requires=tuple(c.expr for c in plan.requires),
        effects=tuple(plan.op.effects),
        ensures=tuple(c.expr for c in plan.ensures),
        rechecks=tuple((r.invariant.clause.expr, r.per_key is not None) for r in checks),
        guards=guards,
        input_test=plan.input_valid,
        output_test=plan.output_valid,
        needs_output=plan.reads_output or bool(plan.output_ensures),
        collections=collections,
    )


def _with_step(plan: Plan, collections: frozenset[str]) -> Plan:
    """``plan`` with the generated checker of its whole step, when the generator covers the
    operation (not when an effect's value may hold a state collection: ``Write.unshare``)."""
    if any(w.unshare for w in plan.effects):
        return plan
    return attrs.evolve(plan, step=step_checker(step_spec(plan, collections)))


def _reads_output(clause: Clause) -> bool:
    return "output" in ir.free_names(clause.expr)


class Verifier:
    """Verifies trajectories against one contract; reusable, not thread-safe."""

    def __init__(self, contract: Contract, *, allow_rejected: bool = False, timeout: float = 5.0) -> None:
        self.contract = contract
        self.allow_rejected = allow_rejected
        self.timeout = timeout
        self.machine = Machine(contract)
        self._initial: FrozenMap | None = None
        self._initial_ok = False
        # the initial state when a trajectory without one starts from it closed-world with every
        # invariant holding: ``check``'s short way (set by the first such trajectory's full run)
        self._plain: FrozenMap | None = None
        self._solver: Any = None  # envfactory.solver.deadline.Worker, started at the first need
        keyed_vars = collection_vars(contract)
        self.invariants: tuple[Invariant, ...] = invariants_of(contract)
        self.plans: dict[str, Plan] = {
            name: _with_step(
                Plan(
                    op=op,
                    requires=tuple(op.requires),
                    ensures=tuple(op.ensures),
                    output_ensures=tuple(c for c in op.ensures if _reads_output(c)),
                    has_effects=bool(op.effects),
                    reads_output=op.reads_output,
                    effects=tuple(Write.of(e, keyed_vars) for e in op.effects),
                    invariants=rechecks(self.invariants, op),
                    monotone=monotone_rechecks(rechecks(self.invariants, op), op),
                    requires_fns=tuple(c.fn for c in op.requires),
                    ensures_fns=tuple(c.fn for c in op.ensures),
                    input_valid=raw_test(op.input_validator),
                    output_valid=raw_test(op.output_validator),
                    requires_all=all_true([c.expr for c in op.requires]),
                    ensures_all=all_true([c.expr for c in op.ensures]),
                ),
                keyed_vars,
            )
            for name, op in contract.operations.items()
        }
        # the longest state location an effect writes (``(var, key, field...)``): explanations
        # look for older writes under a location only when it is shorter (``_explain._note``)
        self.deepest_write = max(
            (1 if w.key is None else 2 + len(w.fields) for p in self.plans.values() for w in p.effects),
            default=1,
        )

    # -- entry point ------------------------------------------------------------------------------

    def check(self, traj: Trajectory) -> Result:
        start = time.perf_counter()
        plain = self._plain
        if plain is not None and traj.initial is None:
            wire = getattr(traj.steps, "wire", None)  # a line the fast decoder read: no hole
            if wire is not None:  # the common case, in short: every step settled by its checker
                run = Run(plain)
                if _settled(self.plans, wire, run, Env(run.state), True) == len(wire):
                    seconds = time.perf_counter() - start
                    return Result(traj.id, "valid", seconds=seconds, steps=len(wire), source=str(traj.source))
        try:
            result = self._check(traj)
        except RecursionError:
            result = Result(id=traj.id, verdict="unknown", message="the trajectory nests too deeply to check")
        except (EnvfactoryError, ArithmeticError, TypeError, ValueError, KeyError, AttributeError) as err:
            # never lose the other trajectories' results to one that trips an internal error
            result = Result(
                id=traj.id,
                verdict="unknown",
                message=f"internal error while checking this trajectory ({type(err).__name__}: {err}); please report it",
            )
        seconds = time.perf_counter() - start
        if result is None:  # valid: the common case, built once
            return Result(traj.id, "valid", seconds=seconds, steps=len(traj.steps), source=str(traj.source))
        r = result  # positional copy: attrs.evolve costs more than the check of a short trajectory
        return Result(
            r.id,
            r.verdict,
            r.step,
            r.kind,
            r.operation,
            r.clause,
            r.location,
            r.message,
            r.values,
            r.witness,
            r.core,
            seconds,
            len(traj.steps),
            str(traj.source),
        )

    def _check(self, traj: Trajectory) -> Result | None:
        """The result, or None for a valid trajectory."""
        holes = _may_hold_holes(traj)
        if holes and _initial_has_holes(traj):
            return self._undecided(traj, 0, "the initial state holds unknown values")
        try:
            if traj.initial is None:
                if self._initial is None:
                    self._initial = self.machine.initial_state(None)
                state = self._initial
            else:
                state = self.machine.initial_state(traj.initial)
        except EnvfactoryError as err:
            where = str(traj.source)
            return Result(
                id=traj.id,
                verdict="unreadable",
                location=where,
                message=f"trajectory {traj.id!r}: its initial state does not fit the contract: {err.message}",
            )
        open_world = len(state) < len(self.contract.state)
        if self.invariants and not open_world:
            broken_initially = self._initial_failure(traj, state)
            if broken_initially is not None:
                return broken_initially
        if traj.initial is None and not open_world:
            self._plain = state
        try:
            witness = self._run(traj, state, holes)
        except _Broken as broken:
            if open_world and broken.failure.kind not in _STATELESS:
                return self._undecided(traj, broken.index, "the initial state is unknown (open world)")
            return self._invalid(traj, broken)
        except _Symbolic as need:
            if open_world:
                return self._undecided(traj, need.index, need.reason)
            return self._undecided(traj, need.index, need.reason, need.state, need.completed)
        if witness:
            return Result(
                id=traj.id,
                verdict="feasible",
                message=f"unknown outputs completed at step(s) {', '.join(str(i) for i in witness)}",
                witness={"holes": {}, "outputs": witness, "initial": {}, "assumptions": []},
            )
        return None

    def _initial_failure(self, traj: Trajectory, state: FrozenMap) -> Result | None:
        """An invalid result when the initial state already breaks an invariant."""
        if traj.initial is None and self._initial_ok:
            return None
        env = Env(state)
        for inv in self.invariants:
            if holds(inv.clause, env):
                continue
            clause = inv.clause
            detail, values = explain_initial(clause, state, traj)
            return Result(
                id=traj.id,
                verdict="invalid",
                step=0,
                kind="invariant",
                operation=traj.steps[0].tool if traj.steps else None,
                clause=clause.source,
                location=str(clause.loc),
                message=f"the initial state breaks invariant {clause.source}: {detail}",
                values=values,
            )
        if traj.initial is None:
            self._initial_ok = True
        return None

    # -- the concrete run ---------------------------------------------------------------------------

    def _run(
        self,
        traj: Trajectory,
        state: FrozenMap,
        holes: bool,
        run: Run | None = None,
        completed: dict[int, Any] | None = None,
    ) -> dict[int, Any]:
        """Run every step concretely; raise ``_Broken`` or ``_Symbolic``; return synthesized outputs.
        ``run`` (a new ``Run`` of ``state`` when None) is changed in place, step by step, and so is
        ``completed`` (the synthesized outputs, also those before a step that breaks).

        The hot loop: the common case of each check is inline, every failure goes to a helper.
        """
        plans = self.plans
        allow_rejected = self.allow_rejected
        if completed is None:
            completed = {}
        if run is None:
            run = Run(state)  # ``env`` reads it throughout
        state = run.state
        env = Env(state)
        fast = not holes
        steps = traj.steps
        start = 0
        if fast:  # the common case: every step settled by its generated checker, no Step made
            wire = getattr(steps, "wire", None)
            start = (
                _settled(self.plans, steps, run, env)
                if wire is None
                else _settled(self.plans, wire, run, env, True)
            )
            if start == len(steps):
                return completed
        for index, step in enumerate(steps[start:] if start else steps, start):
            plan = plans.get(step.tool)
            if fast and index > start and plan is not None and plan.step is not None and step.meta is None:
                status = step.status
                if status is None or status < 400:
                    env.input = step.input
                    env.output = step.output
                    try:
                        if plan.step(env, run, step.has_output) is True:
                            continue
                    except Exception:  # a closure or schema test it defers to raised: not sure
                        pass
            if plan is None:
                if allow_rejected and _is_4xx(step.status):
                    continue
                failure = self.machine.check_tool(step.tool)
                assert failure is not None
                raise _Broken(index, None, failure)
            value = step.input
            if holes and step.has_holes:
                raise _Symbolic(index, f"step {index} ({step.tool}) holds unknown values", run, completed)
            test = plan.input_valid
            valid: Any = True
            if test is not None:
                try:
                    valid = test(value)
                except SCHEMA_TRIPS:
                    valid = False
            if not valid or (step.meta is not None and BROKEN_ARGUMENTS in step.meta):
                if allow_rejected and _is_4xx(step.status):
                    continue
                raise _Broken(index, plan.op, self._input_failure(plan.op, step))
            env.input = value
            env.output = None
            rejected = False
            for fn in () if _surely(plan.requires_all, env) else plan.requires_fns:
                try:
                    if fn(env) is True:
                        continue
                except UNDEFINED:
                    pass
                self._forbidden(index, step, plan, state, env)  # raises unless a rejection
                rejected = True
                break
            if rejected:
                continue
            # the call is permitted: effects, status, output, ensures, invariants
            has_output = step.has_output
            output = step.output if has_output else None
            if plan.reads_output and not has_output:
                raise _Symbolic(
                    index,
                    f"step {index} ({step.tool}) has no recorded output, and its effects read it",
                    run,
                    completed,
                )
            keyed: list[tuple[str, Any]] = []
            if plan.has_effects:
                env.output = output
                try:
                    apply_effects(plan.effects, run, env, keyed)
                except EvaluationError as err:
                    run.rollback()
                    if allow_rejected and _is_4xx(step.status):
                        continue
                    failure = _effect_failure(self.machine, state, plan.op, value, output, err)
                    raise _Broken(index, plan.op, failure) from None
            status = step.status
            if status is not None and status >= 400:
                if status >= 500 and allow_rejected:
                    if plan.has_effects:
                        run.rollback()
                    continue  # the server failed: with --allow-rejected, a call that changed nothing
                raise _Broken(index, plan.op, _unexpected_status(plan.op, status))
            if has_output:
                test = plan.output_valid
                if test is not None:
                    try:
                        valid = test(output)
                    except SCHEMA_TRIPS:
                        valid = False
                    if not valid:
                        failure = self.machine.check_output(plan.op, output) or Failure(
                            "output_schema", "bad output"
                        )
                        raise _Broken(index, plan.op, failure)
            elif plan.output_ensures:
                output = complete_output(plan, state, value)
                if output is NO_OUTPUT:
                    if plan.has_effects:
                        run.rollback()  # Z3 starts from the state before this step
                    raise _Symbolic(
                        index,
                        f"step {index} ({step.tool}) has no recorded output, and its ensures constrain it",
                        run,
                        completed,
                    )
                completed[index] = output
            if plan.ensures_fns:
                env.output = output
                for i, fn in enumerate(() if _surely(plan.ensures_all, env) else plan.ensures_fns):
                    try:
                        if fn(env) is True:
                            continue
                    except UNDEFINED:
                        pass
                    self._broken_ensures(index, plan, plan.ensures[i], state, value, output)
            if plan.invariants:  # only operations with effects have any (``rechecks``)
                inv = broken_invariant(plan, state, keyed, env)
                if inv is not None:
                    self._broken_invariant(index, plan, inv, state)
        return completed

    def _input_failure(self, op: Operation, step: Step) -> Failure:
        failure = self.machine.check_input(op, step.input) or Failure(
            "input_schema", f"{op.name}: input is invalid"
        )
        return _with_argument_reason(failure, step)

    def _forbidden(self, index: int, step: Step, plan: Plan, state: FrozenMap, env: Env) -> None:
        """A requires is false: return when ``--allow-rejected`` counts the call as a rejection,
        raise ``_Broken`` otherwise."""
        op = plan.op
        false = failing(plan.requires, env)
        # the sentence is written by ``explain_failure`` (``_invalid``), with provenance: this
        # message is only its fallback
        failure = Failure(
            "precondition",
            f"{op.name} requires {false[0].source}, but it does not hold here",
            clause=false[0],
        )
        if self.allow_rejected and _rejection_matches(step.status, false):
            return
        raise _Broken(index, op, _rejection_note(failure, step, false, self.allow_rejected))

    def _broken_ensures(
        self, index: int, plan: Plan, clause: Clause, post: FrozenMap, value: Any, output: Any
    ) -> NoReturn:
        """Raise for the first ensures that does not hold (explained by ``_invalid``)."""
        message = f"{plan.op.name} ensures {clause.source}, but it does not hold here"
        raise _Broken(index, plan.op, Failure("postcondition", message, clause=clause))

    def _broken_invariant(self, index: int, plan: Plan, inv: Invariant, post: FrozenMap) -> NoReturn:
        """Raise for an invariant the step broke (``broken_invariant`` re-checks only what the
        operation's ``rechecks`` name, sound because they held before the step; the initial state
        is checked whole by ``_initial_failure``). It is the first the whole state breaks, in the
        contract's order, since the others held before and were not touched."""
        message = f"invariant {inv.clause.source} does not hold after {plan.op.name}"
        raise _Broken(index, plan.op, Failure("invariant", message, clause=inv.clause))

    # -- results ------------------------------------------------------------------------------------

    def _invalid(self, traj: Trajectory, broken: _Broken) -> Result:
        failure = broken.failure
        try:
            message, values = explain_failure(self, traj, broken.index, broken.op, failure)
        except _TRIPS:
            message, values = f"step {broken.index}: {failure.message}", dict(failure.values)
        location = failure.location
        if location is None and broken.op is not None:
            location = broken.op.loc
        return Result(
            id=traj.id,
            verdict="invalid",
            step=broken.index,
            kind=failure.kind,
            operation=broken.op.name if broken.op is not None else traj.steps[broken.index].tool,
            clause=failure.clause_text,
            location=str(location) if location is not None else None,
            message=message,
            values=values,
        )

    def _undecided(
        self,
        traj: Trajectory,
        index: int,
        reason: str,
        state: FrozenMap | None = None,
        completed: dict[int, Any] | None = None,
    ) -> Result:
        """The concrete run cannot decide from step ``index`` on: ask Z3 (from ``state``, the
        concrete state before that step, when the run knows it whole), and when Z3 cannot
        answer either, look for a step that breaks whatever the unknown values are. Values the
        trajectory or the state already shows are tried concretely first (``_guessed``)."""
        result = None
        if state is not None and traj.steps[index].has_holes:
            result = self._guessed(traj, index, state)
        if result is None:
            # the solver starts at ``index`` from ``state``, but replays its completion from the
            # first step: the outputs the concrete run completed before ``index`` go with it
            # (without them the replay failed at the first step without an output, "unknown")
            solved = traj
            if completed and state is not None:
                solved = attrs.evolve(
                    traj,
                    steps=tuple(
                        attrs.evolve(step, output=completed[i], has_output=True)
                        if i in completed and i < index
                        else step
                        for i, step in enumerate(traj.steps)
                    ),
                )
            result = self._symbolic(solved, reason, index, state)
        if completed and result.witness is not None and isinstance(result.witness.get("outputs"), dict):
            outputs = {**completed, **result.witness["outputs"]}
            result = msgspec.structs.replace(
                result, witness={**result.witness, "outputs": dict(sorted(outputs.items()))}
            )
        if result.verdict != "unknown":
            return result
        broken = self._stateless_failure(traj, index)
        if broken is None:
            return result
        invalid = self._invalid(traj, broken)
        if broken.index == index:
            return invalid
        undecided = (
            f"step {index} is" if broken.index == index + 1 else f"steps {index}-{broken.index - 1} are"
        )
        return msgspec.structs.replace(
            invalid,
            message=f"{invalid.message} (whatever the unknown values are; {undecided} undecided, so the "
            f"first failing step may be earlier: {result.message})",
        )

    def _guessed(self, traj: Trajectory, index: int, state: FrozenMap) -> Result | None:
        """A feasible result when values from ``_completion.candidates`` fill the holes so that
        every step from ``index`` (the first with a hole, before which the concrete run left
        ``state``) passes the concrete checks; None when the search, depth first and bounded by
        ``GUESSED_STEPS`` steps run, finds none (then Z3 decides). Sound: the verdict is a
        concrete run of the completed trajectory, the same run a trajectory without holes gets."""
        if GUESSED_STEPS <= 0:
            return None
        steps = traj.steps
        holes_at = hole_names(steps, index)
        if index not in holes_at:
            return None
        pools = candidates(self.contract, steps, index, state)
        budget = GUESSED_STEPS
        ends = [*sorted(holes_at)[1:], len(steps)]  # each segment runs up to the next new hole
        pending: list[tuple[int, FrozenMap, dict[str, Any], dict[int, Any]]] = []

        def branch(at: int, before: FrozenMap, values: dict[str, Any], outputs: dict[int, Any]) -> None:
            """Queue the completions that give the holes first met at step ``at`` their values."""
            new = holes_at[at]
            tries = list(itertools.islice(itertools.product(*(pools[n] for n in new)), GUESSED_COMBINATIONS))
            for t in reversed(tries):
                pending.append((at, before, {**values, **dict(zip(new, t, strict=True))}, outputs))

        branch(index, state, {}, {})
        deepest, proofs = -1, 0  # the furthest failing step a completion reached; proofs tried
        give_up = time.monotonic() + self.timeout * GUESSED_SHARE  # a hang guard: steps can be slow
        while pending and budget > 0 and time.monotonic() < give_up:
            start, before, values, outputs = pending.pop()
            end = next(e for e in ends if e > start)
            segment = _filled(steps[start:end], values)
            run = Run(before)
            done: dict[int, Any] = {}
            try:  # every hole of the segment has its value: the concrete run's fast path
                self._run(attrs.evolve(traj, steps=segment), before, False, run, done)
            except _Broken as broken:
                budget -= broken.index + 1
                at = start + broken.index
                if at > deepest and proofs < PROOF_TRIES and not steps[at].has_holes:
                    deepest, proofs = at, proofs + 1
                    opened = {**outputs, **{start + i: output for i, output in done.items()}}
                    proved = self._proved(traj, index, state, values, end, opened)
                    if proved is not None:
                        return proved
                continue
            except _Symbolic:
                return None  # a step's output is unknown and needed: Z3's part
            except (EnvfactoryError, ArithmeticError, TypeError, ValueError, KeyError, AttributeError):
                budget -= len(segment)  # a value the checks trip on (as ``check`` reports): not this one
                continue
            budget -= len(segment)
            outputs = {**outputs, **{start + i: output for i, output in done.items()}}
            if end < len(steps):
                branch(end, run.state, values, outputs)
                continue
            holes = {name: values[name] for found in holes_at.values() for name in found}
            witness = {"holes": holes, "outputs": outputs, "initial": {}, "assumptions": []}
            return Result(
                id=traj.id,
                verdict="feasible",
                message=completion_message(holes, len(outputs)),
                witness=witness,
            )
        return None

    def _proved(
        self,
        traj: Trajectory,
        index: int,
        state: FrozenMap,
        values: dict[str, Any],
        end: int,
        outputs: Mapping[int, Any],
    ) -> Result | None:
        """An invalid result when the completion giving the holes ``values`` (all those of steps
        ``index`` to ``end``) and the open outputs the run synthesized ``outputs`` fails on a
        check that reads nothing the unknowns decide, so that every completion fails there
        (``statemachine.taint``): the solver's verdict for a check that fails whatever the
        unknowns are, without the solver. None when the run cannot vouch."""
        steps = traj.steps
        filled = [
            attrs.evolve(step, output=outputs[i], has_output=True) if i in outputs else step
            for i, step in enumerate(_filled(steps[index:end], values), index)
        ]
        completed = attrs.evolve(traj, steps=(*steps[:index], *filled))
        try:
            found = prove_failure(
                self.machine, completed, steps, self.allow_rejected, start=index, state=state
            )
        except _TRIPS:
            return None
        if found is None or found.failure is None or found.step is None:
            return None
        failure = found.failure
        location = failure.location
        return Result(
            id=traj.id,
            verdict="invalid",
            step=found.step,
            kind=failure.kind,
            operation=steps[found.step].tool,
            clause=failure.clause_text,
            location=str(location) if location is not None else None,
            message=failure.message,
        )

    def _stateless_failure(self, traj: Trajectory, start: int) -> _Broken | None:
        """The first step from ``start`` on that fails a check reading no state (unknown tool,
        input or output schema), so fails in every completion of the unknown values; None if
        there is none. Steps answered with an error status are passed over: whether they were
        rejections depends on the state."""
        machine = self.machine
        for index in range(start, len(traj.steps)):
            step = traj.steps[index]
            rejected = self.allow_rejected and _is_4xx(step.status)
            op = self.contract.operations.get(step.tool)
            if op is None:
                failure = machine.check_tool(step.tool)
                if failure is not None and not rejected:
                    return _Broken(index, None, failure)
                continue
            if not _holds_holes(step.input) and (
                machine.check_input(op, step.input) is not None
                or (step.meta is not None and BROKEN_ARGUMENTS in step.meta)
            ):
                if not rejected:
                    return _Broken(index, op, self._input_failure(op, step))
                continue
            if step.status is not None and step.status >= 400:
                continue
            if step.has_output and not _holds_holes(step.output):
                failure = machine.check_output(op, step.output)
                if failure is not None:
                    return _Broken(index, op, failure)
        return None

    def _symbolic(
        self, traj: Trajectory, reason: str, start: int = 0, state: FrozenMap | None = None
    ) -> Result:
        try:
            from envfactory.solver.deadline import Stopped, Worker
            from envfactory.solver.feasibility import decide
        except ImportError as err:
            return Result(
                id=traj.id,
                verdict="unknown",
                message=f"{reason}; symbolic verification is not available ({err})",
            )
        try:
            if self._solver is None:  # a worker killed at the deadline: Z3's limits are cooperative
                contract = self.contract
                self._solver = Worker(
                    lambda job: decide(
                        contract, job[0], timeout=job[1], allow_rejected=job[2], start=job[3], state=job[4]
                    )
                )
            verdict = self._solver.call((traj, self.timeout, self.allow_rejected, start, state), self.timeout)
        except SolverError as err:
            return Result(id=traj.id, verdict="unknown", message=f"{reason}; {err.message}")
        except EnvfactoryError as err:
            return Result(id=traj.id, verdict="unknown", message=f"{reason}; {err}")
        except Exception as err:  # a solver bug must not lose the other trajectories' results
            return Result(
                id=traj.id,
                verdict="unknown",
                message=f"{reason}; the solver failed ({type(err).__name__}: {err}); please report it",
            )
        if isinstance(verdict, Stopped):
            return Result(id=traj.id, verdict="unknown", message=f"{reason}; {verdict.message}")
        return Result(
            id=traj.id,
            verdict=verdict.verdict,
            step=verdict.step,
            kind=verdict.kind if verdict.verdict == "invalid" else None,
            operation=getattr(verdict, "operation", None),
            clause=getattr(verdict, "clause", None),
            location=getattr(verdict, "location", None),
            message=verdict.message or reason,
            witness=verdict.witness,
            core=list(verdict.core) if verdict.core is not None else None,
        )


# ------------------------------------------------------------------------------------- helpers


def _settled(plans: Mapping[str, Plan], steps: Iterable[Any], run: Run, env: Env, wire: bool = False) -> int:
    """How many steps, from the first, the operations' generated checkers settle (each sure that
    its step passes every check, its effects written into ``run``); the verifier's full loop
    takes over at the first they do not. ``steps`` are ``Step`` models or, with ``wire``, the
    decoded structs (``trajectory._wire.WireStep``), which read alike but for ``has_output``, a
    property there: the test it makes is written out here, once per step of every file read."""
    index = 0
    unset = UNSET
    for step in steps:
        plan = plans.get(step.tool)
        if plan is None or step.meta is not None:
            return index
        check = plan.step
        status = step.status
        if check is None or (status is not None and status >= 400):
            return index
        output = step.output
        env.input = step.input
        env.output = output
        try:
            if check(env, run, output is not unset if wire else step.has_output) is not True:
                return index
        except Exception:  # a closure or schema test it defers to raised: not sure
            return index
        index += 1
    return index


def _filled(steps: Iterable[Step], values: Mapping[str, Any]) -> tuple[Step, ...]:
    """``steps`` with their holes given ``values``."""
    return tuple(
        attrs.evolve(step, input=fill_holes(step.input, values), output=fill_holes(step.output, values))
        if step.has_holes
        else step
        for step in steps
    )


def _may_hold_holes(traj: Trajectory) -> bool:
    """Whether a trajectory holds a ``Hole``: one C-speed serialization in the common case (the
    reader knows it for steps it streams from a file, which are never held all at once)."""
    known = getattr(traj.steps, "may_hold_holes", None)
    if known is not None:
        return bool(known) or _initial_has_holes(traj)
    try:
        orjson.dumps([traj.initial, [(s.input, s.output) for s in traj.steps]])
    except TypeError:
        return traj.has_holes
    return False


def _initial_has_holes(traj: Trajectory) -> bool:
    return traj.initial is not None and _holds_holes(traj.initial)


def _holds_holes(value: Any) -> bool:
    return next(iter_holes(value), None) is not None


def _explained(explain: Any, args: tuple[Any, ...], fallback: Failure) -> Failure:
    """The machine's explanation of a failure, or ``fallback`` when it has none or trips."""
    try:
        failure: Failure | None = explain(*args)
        return failure or fallback
    except UNDEFINED:
        return fallback


def _unexpected_status(op: Operation, status: int) -> Failure:
    return Failure(
        "postcondition",
        f"{op.name} is permitted here (every requires holds), so it must succeed, "
        f"but it was answered with status {status}",
    )


def _is_4xx(status: int | None) -> bool:
    return status is not None and 400 <= status < 500


def _rejection_matches(status: int | None, false: list[Clause]) -> bool:
    """A forbidden call answered with one of its false clauses' error status (any 4xx without one)."""
    if status is None:
        return False
    for clause in false:
        if clause.error is not None:
            if status == clause.error.status:
                return True
        elif 400 <= status < 500:
            return True
    return False


def _rejection_note(failure: Failure, step: Step, false: list[Clause], allow_rejected: bool) -> Failure:
    """Under ``--allow-rejected``, say why a recorded status did not count as the rejection."""
    if not allow_rejected:
        return failure
    wanted = sorted({c.error.status for c in false if c.error is not None})
    want = " or ".join(str(s) for s in wanted) if wanted else "a 4xx status"
    if step.status is None or step.status < 400:
        got = "recorded as a success" if step.status is not None else "recorded without a status"
    else:
        got = f"answered with status {step.status}"
    note = f" (a rejection needs {want}; this call was {got})"
    return attrs.evolve(failure, message=failure.message + note)


def _with_argument_reason(failure: Failure, step: Step) -> Failure:
    reason = (step.meta or {}).get(BROKEN_ARGUMENTS)
    if not reason:
        return failure
    return attrs.evolve(failure, message=f"{failure.message} (the arguments could not be decoded: {reason})")


__all__ = ["RESULT_FIELDS", "VERDICTS", "Result", "Verifier", "unreadable", "verify"]
