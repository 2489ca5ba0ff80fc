"""Trajectory verification: one verdict per trajectory, checked step by step.

The concrete path runs each step through the contract's checks in the order of
``envfactory.contracts.semantics`` (unknown_tool, input_schema, precondition, the effects,
output_schema, postcondition, invariant) with compiled closures and compiled schema validators.
Only trajectories that hold unknown values (holes, outputs that later checks read, an unknown
open-world initial state) go to Z3 (``envfactory.solver.feasibility.decide``), imported lazily so
that concrete verification never pays for it. A failure is explained in one sentence that names
the concrete state locations it read and the step that last wrote them (``_explain``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs
import orjson

from envfactory.contracts import ir
from envfactory.contracts.errors import EnvfactoryError, EvaluationError, SolverError, TrajectoryError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.parser import Effect
from envfactory.contracts.semantics import Failure, Machine
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as value_to_json
from envfactory.trajectory import Step, Trajectory

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
INVALID_ARGUMENTS = "invalid_arguments"
"""Step ``meta`` key set by the importers when an agent's arguments could not be decoded."""


@attrs.frozen(slots=True)
class Result:
    """The verdict on one trajectory, and for a broken one the first failing step explained.

    ``to_json`` is the stable document of ``envfactory verify --format json``; ``seconds``,
    ``steps`` and ``source`` ride along for reports but are left out of it (they are not
    deterministic, or not about the verdict).
    """

    id: str
    verdict: str
    step: int | None = None
    kind: str | None = None
    operation: str | None = None
    clause: str | None = None
    location: str | None = None
    message: str = ""
    values: Mapping[str, Any] = attrs.field(factory=dict)
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


class _Symbolic(Exception):
    """Raised by the concrete run when the rest of the trajectory needs Z3."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Broken(Exception):
    """Raised by the concrete run at the first failing step."""

    def __init__(self, index: int, op: Operation | None, failure: Failure) -> None:
        super().__init__(failure.message)
        self.index = index
        self.op = op
        self.failure = failure


@attrs.frozen(slots=True)
class _Plan:
    """Per operation, what the hot loop needs, computed once."""

    op: Operation
    requires: tuple[Clause, ...]
    ensures: tuple[Clause, ...]
    output_ensures: tuple[Clause, ...]  # the ensures that read ``output``
    has_effects: bool
    reads_output: bool
    writes: tuple[str, ...]
    effects: tuple[_Write, ...]
    whole_writes: frozenset[str]  # variables an effect replaces whole
    invariants: tuple[_Invariant, ...]  # the invariants that read a variable this operation writes


_STATELESS = frozenset({"unknown_tool", "input_schema", "output_schema"})
"""Check kinds that read no state: their failures stand even when the initial state is unknown."""

_CHANGED = "\x00changed"
"""A state name no contract can declare: the keys a step wrote, for incremental invariants."""


@attrs.frozen(slots=True)
class _Invariant:
    """An invariant, the state it reads, and for ``all(body for k in c)`` whose body reads ``c``
    only at ``c[k]``: ``(c, the same quantifier compiled over the written keys)``."""

    clause: Clause
    reads: frozenset[str]
    per_key: tuple[str, Any] | None


class _Write:
    """One effect compiled for ``_apply``: the target's variable, key and fields, and the value."""

    __slots__ = ("fields", "key", "value", "var")

    def __init__(self, var: str, key: Any, fields: tuple[str, ...], value: Any) -> None:
        self.var = var
        self.key = key
        self.fields = fields
        self.value = value  # None: ``del``

    @classmethod
    def of(cls, effect: Effect) -> _Write:
        target = effect.target
        key = compile_expr(target.key) if target.key is not None else None
        value = compile_expr(effect.value) if effect.value is not None else None
        return cls(target.var, key, target.fields, value)


def _apply(
    writes: tuple[_Write, ...], state: FrozenMap, env: Env, keyed: list[tuple[str, Any]] | None = None
) -> FrozenMap:
    """``Machine.apply`` with one copy of the state and of each written collection per step.

    Every key and value is evaluated on the pre-state first (effects are simultaneous), then
    written in order into fresh copies; raises ``EvaluationError`` exactly where ``Machine.apply``
    does (the caller asks ``Machine.effect_failure`` for the explanation). ``keyed`` collects the
    ``(collection, key)`` pairs written, for incremental invariant checks.
    """
    planned = [
        (w, w.key(env) if w.key is not None else None, w.value(env) if w.value is not None else None)
        for w in writes
    ]
    setitem = dict.__setitem__
    new = FrozenMap(state)
    fresh: dict[str, FrozenMap] = {}
    for w, key, value in planned:
        var = w.var
        if w.key is None:
            setitem(new, var, value)
            fresh.pop(var, None)
            continue
        if key.__class__ is not str and key.__class__ is not int and not _is_key(key):
            raise EvaluationError(f"{var} is keyed by scalars, but the key is {_kind(key)}")
        if keyed is not None:
            keyed.append((var, key))
        collection = fresh.get(var)
        if collection is None:
            try:
                current = new[var]
            except KeyError:
                raise EvaluationError(f"state variable {var!r} has no value") from None
            if not isinstance(current, FrozenMap):
                raise EvaluationError(f"{var} is not a collection")
            collection = FrozenMap(current)
            fresh[var] = collection
            setitem(new, var, collection)
        if w.value is None:
            if key not in collection:
                raise EvaluationError(f"del {var}[{key!r}]: there is no such key")
            dict.__delitem__(collection, key)
        elif w.fields:
            if key not in collection:
                raise EvaluationError(f"{var} has no key {key!r}")
            setitem(collection, key, _set_fields(collection[key], w.fields, value))
        else:
            setitem(collection, key, value)
    return new


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


def _is_key(key: Any) -> bool:
    return key is None or isinstance(key, str | int | float | bool)


def _kind(value: Any) -> str:
    return (
        "a list"
        if isinstance(value, list)
        else "a record"
        if isinstance(value, dict)
        else type(value).__name__
    )


def _set_fields(record: Any, fields: tuple[str, ...], value: Any) -> Any:
    if not isinstance(record, dict):
        raise EvaluationError(f"not a record, so .{fields[0]} cannot be set")
    updated = dict(record)
    head = fields[0]
    updated[head] = _set_fields(record.get(head), fields[1:], value) if len(fields) > 1 else value
    return updated


def _per_key(clause: Clause) -> tuple[str, Any] | None:
    node = clause.expr
    if not (
        isinstance(node, ir.Quant)
        and node.kind == "all"
        and node.cond is None
        and isinstance(node.domain, ir.Name)
        and ir.free_names(node) == {node.domain.id}
    ):
        return None
    coll, var = node.domain.id, node.var
    uses = [n for n in ir.walk(node.body) if isinstance(n, ir.Name) and n.id == coll]
    indexed = [
        n
        for n in ir.walk(node.body)
        if isinstance(n, ir.Index)
        and isinstance(n.obj, ir.Name)
        and n.obj.id == coll
        and isinstance(n.key, ir.Name)
        and n.key.id == var
    ]
    if len(uses) != len(indexed) or any(isinstance(n, ir.Quant) for n in ir.walk(node.body)):
        return None
    probe = ir.Quant("all", var, ir.Name(_CHANGED), node.body)
    return coll, compile_expr(probe)


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
        self.invariants: tuple[_Invariant, ...] = tuple(
            _Invariant(c, ir.free_names(c.expr) & frozenset(contract.state), _per_key(c))
            for c in contract.invariants
        )
        self.plans: dict[str, _Plan] = {
            name: _Plan(
                op=op,
                requires=tuple(op.requires),
                ensures=tuple(op.ensures),
                output_ensures=tuple(c for c in op.ensures if _reads_output(c)),
                has_effects=bool(op.effects),
                reads_output=op.reads_output,
                writes=tuple(sorted(op.writes)),
                effects=tuple(_Write.of(e) for e in op.effects),
                whole_writes=frozenset(e.target.var for e in op.effects if e.target.key is None),
                invariants=tuple(i for i in self.invariants if not i.reads.isdisjoint(op.writes)),
            )
            for name, op in contract.operations.items()
        }

    # -- entry point ------------------------------------------------------------------------------

    def check(self, traj: Trajectory) -> Result:
        start = time.perf_counter()
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
        return attrs.evolve(
            result,
            seconds=time.perf_counter() - start,
            steps=len(traj.steps),
            source=str(traj.source),
        )

    def _check(self, traj: Trajectory) -> Result:
        holes = _may_hold_holes(traj)
        if holes and _initial_has_holes(traj):
            return self._symbolic(traj, "the initial state holds unknown values")
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
        try:
            witness = self._run(traj, state, holes)
        except _Broken as broken:
            if open_world and broken.failure.kind not in _STATELESS:
                return self._symbolic(traj, "the initial state is unknown (open world)")
            return self._invalid(traj, broken)
        except _Symbolic as need:
            return self._symbolic(traj, need.reason)
        if witness:
            return Result(
                id=traj.id,
                verdict="feasible",
                message=f"unknown outputs completed at step(s) {', '.join(str(i) for i in witness)}",
                witness={"holes": {}, "outputs": witness, "initial": {}, "assumptions": []},
            )
        return Result(id=traj.id, verdict="valid")

    def _initial_failure(self, traj: Trajectory, state: FrozenMap) -> Result | None:
        """An invalid result when the initial state already breaks an invariant."""
        if traj.initial is None and self._initial_ok:
            return None
        env = Env(state)
        for inv in self.invariants:
            if _holds(inv.clause, env):
                continue
            from envfactory.contracts.interpreter import explain

            clause = inv.clause
            values, reason = explain(clause.expr, env)
            facts = [] if reason is None else [reason]
            for leaf, bound in _leaves(clause.expr, Env(state)):
                leaf_env = Env(state)
                leaf_env.locals.update(bound)
                facts.extend(_facts_of(leaf, leaf_env, {}, traj))
            detail = "; ".join(dict.fromkeys(facts[:4])) or "it is false"
            return Result(
                id=traj.id,
                verdict="invalid",
                step=0,
                kind="invariant",
                operation=traj.steps[0].tool if traj.steps else None,
                clause=clause.source,
                location=str(clause.loc),
                message=f"the initial state breaks invariant {clause.source}: {detail}",
                values=_trim(values),
            )
        if traj.initial is None:
            self._initial_ok = True
        return None

    # -- the concrete run ---------------------------------------------------------------------------

    def _run(self, traj: Trajectory, state: FrozenMap, holes: bool) -> dict[int, Any]:
        """Run every step concretely; raise ``_Broken`` or ``_Symbolic``; return synthesized outputs."""
        plans = self.plans
        machine = self.machine
        allow_rejected = self.allow_rejected
        completed: dict[int, Any] = {}
        env = Env(state)
        for index, step in enumerate(traj.steps):
            plan = plans.get(step.tool)
            if plan is None:
                failure = machine.check_tool(step.tool)
                assert failure is not None
                if allow_rejected and _is_4xx(step.status):
                    continue
                raise _Broken(index, None, failure)
            op = plan.op
            value = step.input
            if holes and step.has_holes:
                raise _Symbolic(f"step {index} ({step.tool}) holds unknown values")
            validator = op.input_validator
            if (validator is not None and not validator.is_valid(value)) or (
                step.meta is not None and INVALID_ARGUMENTS in step.meta
            ):
                failure = machine.check_input(op, value) or Failure(
                    "input_schema", f"{op.name}: input is invalid"
                )
                failure = _with_argument_reason(failure, step)
                if allow_rejected and _is_4xx(step.status):
                    continue
                raise _Broken(index, op, failure)
            env.state = state
            env.input = value
            env.output = None
            for clause in plan.requires:
                try:
                    if clause.fn(env) is True:
                        continue
                except _UNDEFINED:
                    pass
                failing = _failing(plan.requires, env)
                failure = _explained(
                    machine.check_requires,
                    (state, op, value),
                    Failure(
                        "precondition",
                        f"{op.name} requires {failing[0].source}, but it is undefined here",
                        clause=failing[0],
                    ),
                )
                if allow_rejected and _rejection_matches(step.status, failing):
                    break
                raise _Broken(index, op, _rejection_note(failure, step, failing, allow_rejected))
            else:
                state = self._after(index, step, plan, state, env, completed)
        return completed

    def _after(
        self, index: int, step: Step, plan: _Plan, state: FrozenMap, env: Env, completed: dict[int, Any]
    ) -> FrozenMap:
        """The rest of a permitted step: effects, output checks, invariants; the post-state."""
        op = plan.op
        machine = self.machine
        value = step.input
        has_output = step.has_output
        output = step.output if has_output else None
        if plan.reads_output and not has_output:
            raise _Symbolic(f"step {index} ({step.tool}) has no recorded output, and its effects read it")
        keyed: list[tuple[str, Any]] = []
        if plan.has_effects:
            try:
                env.state = state
                env.output = output
                post = _apply(plan.effects, state, env, keyed)
            except EvaluationError as err:
                failure = _effect_failure(machine, state, op, value, output, err)
                if self.allow_rejected and _is_4xx(step.status):
                    return state
                raise _Broken(index, op, failure) from None
        else:
            post = state
        status = step.status
        if status is not None and status >= 400:
            if status >= 500 and self.allow_rejected:
                return state  # the server failed: with --allow-rejected, a call that changed nothing
            raise _Broken(
                index,
                op,
                Failure(
                    "postcondition",
                    f"{op.name} is permitted here (every requires holds), so it must succeed, "
                    f"but it was answered with status {status}",
                ),
            )
        if has_output:
            out_validator = op.output_validator
            if out_validator is not None and not out_validator.is_valid(output):
                failure = machine.check_output(op, output) or Failure("output_schema", "bad output")
                raise _Broken(index, op, failure)
        elif plan.output_ensures:
            output = _complete_output(plan, post, value)
            if output is _NO_OUTPUT:
                raise _Symbolic(
                    f"step {index} ({step.tool}) has no recorded output, and its ensures constrain it"
                )
            completed[index] = output
        if plan.ensures:
            env.state = post
            env.output = output
            for clause in plan.ensures:
                try:
                    if clause.fn(env) is True:
                        continue
                except _UNDEFINED:
                    pass
                failure = _explained(
                    machine.check_ensures,
                    (post, op, value, output),
                    Failure(
                        "postcondition",
                        f"{op.name} ensures {clause.source}, but it is undefined here",
                        clause=clause,
                    ),
                )
                raise _Broken(index, op, failure)
        if plan.invariants and post is not state:
            env.output = output
            self._check_invariants(index, plan, state, post, keyed)
        return post

    def _check_invariants(
        self, index: int, plan: _Plan, pre: FrozenMap, post: FrozenMap, keyed: list[tuple[str, Any]]
    ) -> None:
        """Invariants after a step: only those reading a changed variable, and for ``all(...)``
        over a collection only at the keys the step wrote. Sound because they held before the step
        (the initial state is checked whole by ``_initial_failure``)."""
        post_env: Env | None = None
        for inv in plan.invariants:
            for var in inv.reads:
                if post.get(var) is not pre.get(var):
                    break
            else:
                continue
            if inv.per_key is not None:
                coll, probe = inv.per_key
                if coll not in plan.whole_writes:
                    items = post.get(coll)
                    if isinstance(items, FrozenMap):
                        keys = [k for v, k in keyed if v == coll and k in items]
                        try:
                            if probe(Env({coll: items, _CHANGED: keys})) is True:
                                continue
                        except _UNDEFINED:
                            pass
            if post_env is None:
                post_env = Env(post)
            if not _holds(inv.clause, post_env):
                failure = _explained(
                    self.machine.check_invariants,
                    (post,),
                    Failure(
                        "invariant", f"invariant {inv.clause.source} is undefined here", clause=inv.clause
                    ),
                )
                raise _Broken(index, plan.op, failure)

    # -- results ------------------------------------------------------------------------------------

    def _invalid(self, traj: Trajectory, broken: _Broken) -> Result:
        failure = broken.failure
        try:
            message, values = _explain(self, traj, broken.index, broken.op, failure)
        except (
            EnvfactoryError,
            ArithmeticError,
            TypeError,
            ValueError,
            KeyError,
            AttributeError,
            RecursionError,
        ):
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

    def _symbolic(self, traj: Trajectory, reason: str) -> Result:
        try:
            from envfactory.solver.feasibility import decide
        except ImportError as err:
            return Result(
                id=traj.id,
                verdict="unknown",
                message=f"{reason}; symbolic verification is not available ({err})",
            )
        try:
            verdict = decide(self.contract, traj, timeout=self.timeout, allow_rejected=self.allow_rejected)
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


def _may_hold_holes(traj: Trajectory) -> bool:
    """Whether a trajectory holds a ``Hole``: one C-speed serialization in the common case."""
    try:
        orjson.dumps([traj.initial, [(s.input, s.output) for s in traj.steps]])
    except TypeError:
        return traj.has_holes
    return False


def _initial_has_holes(traj: Trajectory) -> bool:
    from envfactory.trajectory import iter_holes

    return next(iter_holes(traj.initial), None) is not None


_UNDEFINED = (EvaluationError, TypeError)
"""What a clause raises where it is undefined (TypeError: an unhashable key read by the evaluator)."""


def _explained(explain: Any, args: tuple[Any, ...], fallback: Failure) -> Failure:
    """The machine's explanation of a failure, or ``fallback`` when it has none or trips."""
    try:
        failure: Failure | None = explain(*args)
        return failure or fallback
    except _UNDEFINED:
        return fallback


def _holds(clause: Clause, env: Env) -> bool:
    try:
        return clause.fn(env) is True
    except _UNDEFINED:
        return False


def _failing(clauses: tuple[Clause, ...], env: Env) -> list[Clause]:
    """The clauses that are false (or undefined) in ``env``; empty in the common case."""
    bad: list[Clause] | None = None
    for clause in clauses:
        try:
            if clause.fn(env) is True:
                continue
        except _UNDEFINED:
            pass
        if bad is None:
            bad = []
        bad.append(clause)
    return bad or []


def _is_4xx(status: int | None) -> bool:
    return status is not None and 400 <= status < 500


def _rejection_matches(status: int | None, failing: list[Clause]) -> bool:
    """A forbidden call answered with one of its false clauses' error status (any 4xx without one)."""
    if status is None:
        return False
    for clause in failing:
        if clause.error is not None:
            if status == clause.error.status:
                return True
        elif 400 <= status < 500:
            return True
    return False


def _rejection_note(failure: Failure, step: Step, failing: list[Clause], allow_rejected: bool) -> Failure:
    """Under ``--allow-rejected``, say why a recorded status did not count as the rejection."""
    if not allow_rejected:
        return failure
    wanted = sorted({c.error.status for c in failing if c.error is not None})
    want = " or ".join(str(s) for s in wanted) if wanted else "a 4xx status"
    if step.status is None or step.status < 400:
        got = "recorded as a success" if step.status is not None else "recorded without a status"
    else:
        got = f"answered with status {step.status}"
    note = f" (a rejection needs {want}; this call was {got})"
    return attrs.evolve(failure, message=failure.message + note)


def _with_argument_reason(failure: Failure, step: Step) -> Failure:
    reason = (step.meta or {}).get(INVALID_ARGUMENTS)
    if not reason:
        return failure
    return attrs.evolve(failure, message=f"{failure.message} (the arguments could not be decoded: {reason})")


class _NoOutput:
    pass


_NO_OUTPUT: Any = _NoOutput()


def _complete_output(plan: _Plan, post: FrozenMap, value: Any) -> Any:
    """An output the ensures fix by equalities (``output.f == e``), if it satisfies everything.

    This decides the common case of a missing response without Z3: when the ensures pin every
    field they read and the result validates, the step is satisfiable with that response.
    """
    from envfactory.contracts.interpreter import evaluate

    env = Env(post, value)
    assigned: dict[tuple[str, ...], Any] = {}
    try:
        for clause in plan.output_ensures:
            _collect_equalities(clause.expr, env, assigned, evaluate)
    except (_Unsolvable, EvaluationError):
        return _NO_OUTPUT
    if not assigned:
        return _NO_OUTPUT
    output: Any
    if () in assigned:
        if len(assigned) > 1:
            return _NO_OUTPUT
        output = assigned[()]
    else:
        output = {}
        for path, item in assigned.items():
            node = output
            for part in path[:-1]:
                nxt = node.setdefault(part, {})
                if not isinstance(nxt, dict):
                    return _NO_OUTPUT
                node = nxt
            node[path[-1]] = item
    output = value_to_json(output)
    validator = plan.op.output_validator
    if validator is not None and not validator.is_valid(output):
        return _NO_OUTPUT
    env = Env(post, value, output)
    if _failing(plan.ensures, env):
        return _NO_OUTPUT
    return output


class _Unsolvable(Exception):
    pass


def _output_path(node: ir.Expr) -> tuple[str, ...] | None:
    if isinstance(node, ir.Name):
        return () if node.id == "output" else None
    if isinstance(node, ir.Attr):
        inner = _output_path(node.obj)
        return None if inner is None else (*inner, node.name)
    if isinstance(node, ir.Index) and isinstance(node.key, ir.Const) and isinstance(node.key.value, str):
        inner = _output_path(node.obj)
        return None if inner is None else (*inner, node.key.value)
    return None


def _collect_equalities(node: ir.Expr, env: Env, out: dict[tuple[str, ...], Any], evaluate: Any) -> None:
    if isinstance(node, ir.BoolOp) and node.op == "and":
        for operand in node.operands:
            _collect_equalities(operand, env, out, evaluate)
        return
    if isinstance(node, ir.Compare) and node.op == "==":
        for side, other in ((node.left, node.right), (node.right, node.left)):
            path = _output_path(side)
            if path is not None and "output" not in ir.free_names(other):
                value = evaluate(other, env)
                if path in out and out[path] != value:
                    raise _Unsolvable
                out[path] = value
                return
    if "output" in ir.free_names(node):
        raise _Unsolvable


def show_value(value: Any) -> str:
    """A value as it reads in a sentence: strings quoted like Python, the rest as JSON."""
    import json

    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value_to_json(value), ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --------------------------------------------------------------------------- explaining failures

Path = tuple[Any, ...]
"""A concrete state location: ``(var, ("key", k), ("field", f), ...)``."""
Writes = dict[Path, tuple[int, str]]
"""Which step last wrote each state location, and how (``set`` or ``deleted``)."""


def _explain(
    verifier: Verifier, traj: Trajectory, index: int, op: Operation | None, failure: Failure
) -> tuple[str, dict[str, Any]]:
    """The failure's sentence and the values that made it fail.

    Failures are rare, so the provenance of every state location is recomputed here by replaying
    the steps before the failing one, which keeps the hot loop free of bookkeeping.
    """
    step = traj.steps[index]
    prefix = f"step {index}: "
    if failure.kind in ("unknown_tool", "input_schema", "output_schema") or op is None:
        values: dict[str, Any] = {}
        if failure.kind in ("input_schema", "output_schema"):
            root = "input" if failure.kind == "input_schema" else "output"
            found, value = _at_path(step.input if root == "input" else step.output, failure.path)
            if found:
                values[root + _json_path(failure.path)] = value_to_json(value)
        return prefix + failure.message, values
    state, writes = _replay(verifier, traj, index)
    value_in = step.input
    output = step.output if step.has_output else None
    env_state = state
    if failure.kind in ("postcondition", "invariant") and failure.clause is not None:
        env_state = _record(verifier, op, state, value_in, output, index, writes)
    clause = failure.clause
    if clause is None:  # an undefined effect, or a permitted call answered with an error
        values = dict(failure.values)
        text = failure.message
        if failure.effect is not None:
            facts = _facts_of(failure.effect.target.key, Env(state, value_in, output), writes, traj)
            if facts:
                text += "; " + "; ".join(facts)
        return prefix + text, values
    from envfactory.contracts.interpreter import explain

    env = Env(env_state, value_in, output if failure.kind == "postcondition" else None)
    if failure.kind == "invariant":
        env = Env(env_state)
    values, reason = explain(clause.expr, env)
    values = _trim(values)
    facts = []
    for leaf, bound in _leaves(clause.expr, Env(env.state, env.input, env.output)):
        leaf_env = Env(env.state, env.input, env.output)
        leaf_env.locals.update(bound)
        facts.extend(_facts_of(leaf, leaf_env, writes, traj))
        if len(facts) >= 4:
            break
    subject = {
        "precondition": f"{op.name} requires",
        "postcondition": f"{op.name} ensures",
        "invariant": f"after {op.name}, invariant",
    }.get(failure.kind, failure.kind)
    mark = " (inferred)" if clause.inferred else ""
    details = []
    if reason is not None:
        details.append(reason)
    details.extend(dict.fromkeys(facts[:4]))
    detail = "; ".join(details) if details else "it is false"
    sentence = f"{subject} {clause.source}{mark}, but {detail}"
    if failure.message and "(a rejection needs" in failure.message:
        sentence += failure.message[failure.message.index(" (a rejection needs") :]
    return prefix + sentence, values


def _trim(values: dict[str, Any]) -> dict[str, Any]:
    """Leave out a whole collection or record when a part of it is shown."""
    keys = list(values)
    return {
        k: v
        for k, v in values.items()
        if not (isinstance(v, dict) and any(o != k and o.startswith((k + "[", k + ".")) for o in keys))
    }


def _json_path(path: Iterable[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _at_path(value: Any, path: Iterable[Any]) -> tuple[bool, Any]:
    for part in path:
        if (isinstance(value, dict) and part in value) or (
            isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        ):
            value = value[part]
        else:
            return False, None
    return True, value


def _replay(verifier: Verifier, traj: Trajectory, upto: int) -> tuple[FrozenMap, Writes]:
    """The pre-state of step ``upto`` and who wrote what, replaying the steps that were accepted."""
    machine = verifier.machine
    state = machine.initial_state(traj.initial)
    writes: Writes = {}
    for j, step in enumerate(traj.steps[:upto]):
        plan = verifier.plans.get(step.tool)
        if plan is None:
            continue
        op = plan.op
        if op.input_validator is not None and not op.input_validator.is_valid(step.input):
            continue
        if step.meta is not None and INVALID_ARGUMENTS in step.meta:
            continue
        if _failing(plan.requires, Env(state, step.input)):
            continue
        if verifier.allow_rejected and step.status is not None and step.status >= 500:
            continue
        try:
            state = _record(verifier, op, state, step.input, step.output, j, writes)
        except EvaluationError:
            continue
    return state, writes


def _record(
    verifier: Verifier, op: Operation, state: FrozenMap, value: Any, output: Any, j: int, writes: Writes
) -> FrozenMap:
    """Apply ``op``'s effects and note in ``writes`` the locations they wrote at step ``j``."""
    env = Env(state, value, output)
    effects = verifier.plans[op.name].effects
    post = _apply(effects, state, env)
    for w in effects:
        path: Path = (w.var,)
        if w.key is not None:
            path = (w.var, ("key", w.key(env)), *(("field", f) for f in w.fields))
        if len(writes) < _MAX_WRITES:
            for old in [p for p in writes if p[: len(path)] == path]:
                del writes[old]
        writes[path] = (j, "deleted" if w.value is None else "set")
    return post


_MAX_WRITES = 4096
"""Beyond this many written locations, provenance keeps the older entries too (bounded work)."""


def _truthy(node: ir.Expr, env: Env) -> bool:
    from envfactory.contracts.interpreter import evaluate

    try:
        return evaluate(node, env) is True
    except EvaluationError:
        return False


def _leaves(node: ir.Expr, env: Env) -> list[tuple[ir.Expr, dict[str, Any]]]:
    """The parts of a false clause that make it false, each with the quantifier bindings in force."""
    from envfactory.contracts.interpreter import evaluate

    out: list[tuple[ir.Expr, dict[str, Any]]] = []
    if isinstance(node, ir.BoolOp):
        if node.op == "and":
            for operand in node.operands:
                if not _truthy(operand, env):
                    return _leaves(operand, env)
        else:
            for operand in node.operands:
                out.extend(_leaves(operand, env))
            return out
    if isinstance(node, ir.Call) and node.func == "implies":
        return _leaves(node.args[1], env)
    if isinstance(node, ir.IfExp):
        return _leaves(node.body if _truthy(node.test, env) else node.orelse, env)
    if isinstance(node, ir.Quant) and node.kind == "all":
        try:
            domain = evaluate(node.domain, env)
        except EvaluationError:
            return [(node, dict(env.locals))]
        items = (
            list(domain.keys()) if isinstance(domain, dict) else domain if isinstance(domain, list) else []
        )
        for item in items:
            inner = Env(env.state, env.input, env.output)
            inner.locals.update(env.locals)
            inner.locals[node.var] = item
            if node.cond is not None and not _truthy(node.cond, inner):
                continue
            if not _truthy(node.body, inner):
                return _leaves(node.body, inner)
        return [(node, dict(env.locals))]
    return [(node, dict(env.locals))]


def _is_chain(node: ir.Expr) -> bool:
    if isinstance(node, ir.Name):
        return True
    if isinstance(node, ir.Attr | ir.Index):
        return _is_chain(node.obj)
    return False


def _atoms(node: ir.Expr, bound: Iterable[str]) -> list[ir.Expr]:
    """The values a reader needs to see: maximal access chains, ``len()``s and quantifiers."""
    names = set(bound)
    if isinstance(node, ir.Const | ir.ListLit | ir.RecordLit):
        return []
    if isinstance(node, ir.Name) and (node.id in names):
        return []
    if _is_chain(node) or isinstance(node, ir.Quant) or (isinstance(node, ir.Call) and node.func == "len"):
        return [node]
    atoms: list[ir.Expr] = []
    for child in ir.children(node):
        atoms.extend(_atoms(child, names))
    return atoms


def _state_path(node: ir.Expr, env: Env) -> Path | None:
    """The concrete state location an access chain reads, or None when it does not read state."""
    from envfactory.contracts.interpreter import evaluate

    if isinstance(node, ir.Name):
        if node.id in ("input", "output") or node.id in env.locals:
            return None
        return (node.id,)
    if isinstance(node, ir.Attr):
        inner = _state_path(node.obj, env)
        return None if inner is None else (*inner, ("field", node.name))
    if isinstance(node, ir.Index):
        inner = _state_path(node.obj, env)
        if inner is None:
            return None
        try:
            key = evaluate(node.key, env)
        except EvaluationError:
            return None
        part = ("key", key) if len(inner) == 1 else ("field", key) if isinstance(key, str) else ("key", key)
        return (*inner, part)
    return None


def show_path(path: Path) -> str:
    """``accounts['AA01'].balance``: a concrete state location as a person reads it."""
    text = str(path[0])
    for kind, part in path[1:]:
        text += f".{part}" if kind == "field" and isinstance(part, str) else f"[{show_value(part)}]"
    return text


def _provenance(path: Path, writes: Writes, traj: Trajectory) -> str:
    best: tuple[int, str] | None = None
    for written, (j, how) in writes.items():
        n = min(len(written), len(path))
        if written[:n] == path[:n] and (best is None or j > best[0]):
            best = (j, how if len(written) <= len(path) else "changed")
    if best is not None:
        return f", {best[1]} at step {best[0]}"
    if traj.initial is not None and path[0] in traj.initial:
        return ", from the trajectory's initial state"
    return ", its initial value"


def _facts_of(node: ir.Expr | None, env: Env, writes: Writes, traj: Trajectory) -> list[str]:
    """Sentences like ``books[1].holder is 'ann', set at step 2`` for the atoms of ``node``."""
    from envfactory.contracts.interpreter import evaluate

    if node is None:
        return []
    facts: list[str] = []
    if isinstance(node, ir.Compare) and node.op in ("in", "not in") and _is_chain(node.right):
        container = _state_path(node.right, env)
        if container is not None:
            try:
                key = evaluate(node.left, env)
                present = key in evaluate(node.right, env)
            except (EvaluationError, TypeError):
                present = None
            if present is not None:
                where = show_path(container)
                own = _provenance((*container, ("key", key)), writes, traj) if present or writes else ""
                if present:
                    facts.append(f"{where} has key {show_value(key)}{own}")
                else:
                    facts.append(f"{where} has no key {show_value(key)}{own if 'deleted' in own else ''}")
                if not isinstance(node.left, ir.Const):
                    facts.extend(_facts_of(node.left, env, writes, traj))
                return facts
    for atom in _atoms(node, env.locals):
        try:
            value = evaluate(atom, env)
        except EvaluationError as err:
            facts.append(f"{_show_atom(atom, env)} is undefined ({err.message})")
            continue
        path = _state_path(atom, env)
        if path is not None:
            facts.append(f"{show_path(path)} is {show_value(value)}{_provenance(path, writes, traj)}")
        else:
            facts.append(f"{_show_atom(atom, env)} is {show_value(value)}")
    return facts


def _show_atom(atom: ir.Expr, env: Env) -> str:
    from envfactory.contracts.printer import to_source

    path = _state_path(atom, env)
    return show_path(path) if path is not None else to_source(atom)


__all__ = ["RESULT_FIELDS", "VERDICTS", "Result", "Verifier", "unreadable", "verify"]
