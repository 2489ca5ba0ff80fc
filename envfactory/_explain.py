"""Explaining a failed step to a person: the clause's culprit values, and one sentence naming
the concrete state locations it read and the step that last wrote each of them.

Failures are rare, so nothing here runs in the verifier's hot loop: provenance is recomputed on
demand by replaying the steps before the failing one (``replay``), with the reference interpreter
(``envfactory.contracts.interpreter``) giving the sub-expression values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from envfactory._fastpath import Run, apply_effects, failing
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.explain import FACTS, Path, Provenance, clause_facts, describe, facts_of, trim
from envfactory.contracts.model import Clause, Operation
from envfactory.contracts.semantics import Failure
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as value_to_json
from envfactory.trajectory import BROKEN_ARGUMENTS, Trajectory

if TYPE_CHECKING:
    from envfactory.verification import Verifier


Writes = dict[Path, tuple[int, str]]
"""Which step last wrote each state location, and how (``set`` or ``deleted``)."""


def explain_failure(
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
            facts = facts_of(failure.effect.target.key, Env(state, value_in, output), _origin(writes, traj))
            if facts:
                text += "; " + "; ".join(facts)
        return prefix + text, values
    env = Env(env_state, value_in, output if failure.kind == "postcondition" else None)
    if failure.kind == "invariant":
        env = Env(env_state)
    subject = {
        "precondition": f"{op.name} requires",
        "postcondition": f"{op.name} ensures",
        "invariant": f"after {op.name}, invariant",
    }.get(failure.kind, failure.kind)
    sentence, values, _ = describe(clause, env, subject, _origin(writes, traj))
    if failure.message and "(a rejection needs" in failure.message:
        sentence += failure.message[failure.message.index(" (a rejection needs") :]
    return prefix + sentence, values


def explain_initial(clause: Clause, state: FrozenMap, traj: Trajectory) -> tuple[str, dict[str, Any]]:
    """Why an invariant is false in a trajectory's initial state: the detail and the values."""
    from envfactory.contracts.interpreter import explain

    values, reason = explain(clause.expr, Env(state))
    facts = [] if reason is None else [reason]
    facts.extend(clause_facts(clause.expr, Env(state), _origin({}, traj)))
    return "; ".join(dict.fromkeys(facts[:FACTS])) or "it is false", trim(values)


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
    """The pre-state of step ``upto`` and who wrote what, replaying the steps that were accepted
    (in place on one ``Run``, as the verifier ran them: no copy of the state per step).

    Without ``--allow-rejected`` the concrete run stops at the first step it does not accept, so
    every step before ``upto`` was accepted and only their effects are replayed; with it, each
    step is checked again to tell the rejected ones."""
    machine = verifier.machine
    run = Run(machine.initial_state(traj.initial))
    writes: Writes = {}
    recheck = verifier.allow_rejected
    for j, step in enumerate(traj.steps[:upto]):
        plan = verifier.plans.get(step.tool)
        if plan is None:
            continue
        op = plan.op
        if recheck:
            if op.input_validator is not None and not op.input_validator.is_valid(step.input):
                continue
            if step.meta is not None and BROKEN_ARGUMENTS in step.meta:
                continue
            if failing(plan.requires, Env(run.state, step.input)):
                continue
            if step.status is not None and step.status >= 500:
                continue
        try:
            _note(verifier, op, run, step.input, step.output, j, writes)
        except EvaluationError:
            run.rollback()
    return run.state, writes


def _record(
    verifier: Verifier, op: Operation, state: FrozenMap, value: Any, output: Any, j: int, writes: Writes
) -> FrozenMap:
    """``op``'s post-state from ``state`` (left as it is), noting in ``writes`` what it wrote."""
    run = Run(state)
    _note(verifier, op, run, value, output, j, writes)
    return run.state


def _note(
    verifier: Verifier, op: Operation, run: Run, value: Any, output: Any, j: int, writes: Writes
) -> None:
    """Apply ``op``'s effects to ``run`` and note in ``writes`` the locations they wrote at step ``j``."""
    effects = verifier.plans[op.name].effects
    keyed: list[tuple[str, Any]] = []  # the keys written, in the effects' order
    apply_effects(effects, run, Env(run.state, value, output), keyed)
    keys = iter(keyed)
    for w in effects:
        path: Path = (w.var,)
        if w.key is not None:
            path = (w.var, ("key", next(keys)[1]), *(("field", f) for f in w.fields))
        if len(writes) < _MAX_WRITES:  # the older writes under ``path`` are forgotten
            if len(path) < verifier.deepest_write:
                for old in [p for p in writes if p[: len(path)] == path]:
                    del writes[old]
            else:  # no write is longer: at most ``path`` itself
                writes.pop(path, None)
        writes[path] = (j, "deleted" if w.value is None else "set")


_MAX_WRITES = 4096
"""Beyond this many written locations, provenance keeps the older entries too (bounded work)."""


def _origin(writes: Writes, traj: Trajectory) -> Provenance:
    """Which step last wrote a location (``, set at step 2``), else where its value came from."""

    def origin(path: Path) -> str:
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

    return origin
