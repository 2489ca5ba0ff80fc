"""Explaining a failed step to a person: the clause's culprit values, and one sentence naming
the concrete state locations it read and the step that last wrote each of them.

Failures are rare, so nothing here runs in the verifier's hot loop: provenance is recomputed on
demand by replaying the steps before the failing one (``replay``), with the reference interpreter
(``envfactory.contracts.interpreter``) giving the sub-expression values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from envfactory._fastpath import applied, failing
from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Clause, Operation
from envfactory.contracts.semantics import Failure
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as value_to_json
from envfactory.importers import BROKEN_ARGUMENTS
from envfactory.trajectory import Trajectory

if TYPE_CHECKING:
    from envfactory.verify import Verifier


def show_value(value: Any) -> str:
    """A value as it reads in a sentence: strings quoted like Python, the rest as JSON."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value_to_json(value), ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


Path = tuple[Any, ...]
"""A concrete state location: ``(var, ("key", k), ("field", f), ...)``."""
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
            facts = facts_of(failure.effect.target.key, Env(state, value_in, output), writes, traj)
            if facts:
                text += "; " + "; ".join(facts)
        return prefix + text, values
    from envfactory.contracts.interpreter import explain

    env = Env(env_state, value_in, output if failure.kind == "postcondition" else None)
    if failure.kind == "invariant":
        env = Env(env_state)
    values, reason = explain(clause.expr, env)
    values = trim(values)
    facts = []
    for leaf, bound in leaves(clause.expr, Env(env.state, env.input, env.output)):
        leaf_env = Env(env.state, env.input, env.output)
        leaf_env.locals.update(bound)
        facts.extend(facts_of(leaf, leaf_env, writes, traj))
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


def explain_initial(clause: Clause, state: FrozenMap, traj: Trajectory) -> tuple[str, dict[str, Any]]:
    """Why an invariant is false in a trajectory's initial state: the detail and the values."""
    from envfactory.contracts.interpreter import explain

    values, reason = explain(clause.expr, Env(state))
    facts = [] if reason is None else [reason]
    for leaf, bound in leaves(clause.expr, Env(state)):
        leaf_env = Env(state)
        leaf_env.locals.update(bound)
        facts.extend(facts_of(leaf, leaf_env, {}, traj))
    return "; ".join(dict.fromkeys(facts[:4])) or "it is false", trim(values)


def trim(values: dict[str, Any]) -> dict[str, Any]:
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
    """The pre-state of step ``upto`` and who wrote what, replaying the steps that were accepted.

    Without ``--allow-rejected`` the concrete run stops at the first step it does not accept, so
    every step before ``upto`` was accepted and only their effects are replayed; with it, each
    step is checked again to tell the rejected ones."""
    machine = verifier.machine
    state = machine.initial_state(traj.initial)
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
            if failing(plan.requires, Env(state, step.input)):
                continue
            if step.status is not None and step.status >= 500:
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
    post = applied(effects, state, env)
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


def leaves(node: ir.Expr, env: Env) -> list[tuple[ir.Expr, dict[str, Any]]]:
    """The parts of a false clause that make it false, each with the quantifier bindings in force."""
    from envfactory.contracts.interpreter import evaluate

    out: list[tuple[ir.Expr, dict[str, Any]]] = []
    if isinstance(node, ir.BoolOp):
        if node.op == "and":
            for operand in node.operands:
                if not _truthy(operand, env):
                    return leaves(operand, env)
        else:
            for operand in node.operands:
                out.extend(leaves(operand, env))
            return out
    if isinstance(node, ir.Call) and node.func == "implies":
        return leaves(node.args[1], env)
    if isinstance(node, ir.IfExp):
        return leaves(node.body if _truthy(node.test, env) else node.orelse, env)
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
                return leaves(node.body, inner)
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


def facts_of(node: ir.Expr | None, env: Env, writes: Writes, traj: Trajectory) -> list[str]:
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
                    facts.extend(facts_of(node.left, env, writes, traj))
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
