"""Explaining a false clause to a person: which parts of it are false, and the concrete state
locations they read (``accounts['AA01'].balance is 50``).

One explainer for every report. ``verify`` passes a ``provenance`` that says which step last
wrote each location (``, set at step 2``); the simulator's own rejections, which ``fuzz`` and
``replay`` show, use it without one. Failures are rare, so nothing here is in a hot loop: values
come from the reference interpreter.

Imports the contracts layer only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.interpreter import evaluate, explain
from envfactory.contracts.model import Clause
from envfactory.contracts.printer import to_source
from envfactory.contracts.values import to_json

Path = tuple[Any, ...]
"""A concrete state location: ``(var, ("key", k), ("field", f), ...)``."""
Provenance = Callable[[Path], str]
"""Where a location's value came from, as a clause to append (``, set at step 2``), or ``""``."""

FACTS = 4
"""State facts a sentence names at most."""


def show_value(value: Any) -> str:
    """A value as it reads in a sentence: strings quoted like Python, the rest as JSON."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(to_json(value), ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def show_path(path: Path) -> str:
    """``accounts['AA01'].balance``: a concrete state location as a person reads it."""
    text = str(path[0])
    for kind, part in path[1:]:
        text += f".{part}" if kind == "field" and isinstance(part, str) else f"[{show_value(part)}]"
    return text


def describe(
    clause: Clause, env: Env, subject: str, provenance: Provenance | None = None
) -> tuple[str, dict[str, Any], str | None]:
    """``{subject} {clause}, but {why}``, the values of the clause's parts, and the reason the
    clause is undefined (None when it is simply false).

    ``why`` is the reason the clause is undefined, if it is, then up to ``FACTS`` facts about the
    state locations its false parts read."""
    values, reason = explain(clause.expr, env)
    details = [] if reason is None else [reason]
    details.extend(dict.fromkeys(clause_facts(clause.expr, env, provenance)[:FACTS]))
    detail = "; ".join(details) if details else "it is false"
    mark = " (inferred)" if clause.inferred else ""
    return f"{subject} {clause.source}{mark}, but {detail}", trim(values), reason


def clause_facts(node: ir.Expr, env: Env, provenance: Provenance | None = None) -> list[str]:
    """Facts about the false parts of ``node`` (at least ``FACTS`` of them where there are)."""
    facts: list[str] = []
    for leaf, bound in leaves(node, Env(env.state, env.input, env.output)):
        leaf_env = Env(env.state, env.input, env.output)
        leaf_env.locals.update(bound)
        facts.extend(facts_of(leaf, leaf_env, provenance))
        if len(facts) >= FACTS:
            break
    return facts


def trim(values: dict[str, Any]) -> dict[str, Any]:
    """Leave out a whole collection or record when a part of it is shown."""
    keys = list(values)
    return {
        k: v
        for k, v in values.items()
        if not (isinstance(v, dict) and any(o != k and o.startswith((k + "[", k + ".")) for o in keys))
    }


def _truthy(node: ir.Expr, env: Env) -> bool:
    try:
        return evaluate(node, env) is True
    except EvaluationError:
        return False


def leaves(node: ir.Expr, env: Env) -> list[tuple[ir.Expr, dict[str, Any]]]:
    """The parts of a false clause that make it false, each with the quantifier bindings in force."""
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


def _nowhere(path: Path) -> str:
    return ""


def facts_of(node: ir.Expr | None, env: Env, provenance: Provenance | None = None) -> list[str]:
    """Sentences like ``books[1].holder is 'ann'`` (``, set at step 2`` with a ``provenance``)
    for the atoms of ``node``."""
    if node is None:
        return []
    origin = provenance or _nowhere
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
                own = origin((*container, ("key", key)))
                if present:
                    facts.append(f"{where} has key {show_value(key)}{own}")
                else:
                    facts.append(f"{where} has no key {show_value(key)}{own if 'deleted' in own else ''}")
                if not isinstance(node.left, ir.Const):
                    facts.extend(facts_of(node.left, env, provenance))
                return facts
    for atom in _atoms(node, env.locals):
        try:
            value = evaluate(atom, env)
        except EvaluationError as err:
            facts.append(f"{_show_atom(atom, env)} is undefined ({err.message})")
            continue
        path = _state_path(atom, env)
        if path is not None:
            facts.append(f"{show_path(path)} is {show_value(value)}{origin(path)}")
        else:
            facts.append(f"{_show_atom(atom, env)} is {show_value(value)}")
    return facts


def _show_atom(atom: ir.Expr, env: Env) -> str:
    path = _state_path(atom, env)
    return show_path(path) if path is not None else to_source(atom)


__all__ = [
    "FACTS",
    "Path",
    "Provenance",
    "clause_facts",
    "describe",
    "facts_of",
    "leaves",
    "show_path",
    "show_value",
    "trim",
]
