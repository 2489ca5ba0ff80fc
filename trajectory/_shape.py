"""The trajectory's shape: an already-parsed JSON object checked field by field and built into
the model, with a path into the object for every error.

Shared by every way in (lines, ``.json`` documents and list items, importers' values). Imports
nothing from envfactory beyond ``envfactory.contracts.errors`` and the trajectory format modules.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, NoReturn

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory._model import Step, Trajectory
from envfactory.trajectory._values import (
    _VAR,
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    _normalize,
    _Problem,
    _show,
    _type_word,
    _walk,
)

TRAJECTORY_FIELDS = ("id", "contract", "seed", "initial", "steps", "meta")
STEP_FIELDS = ("tool", "input", "output", "status", "meta")
_TOP = frozenset(TRAJECTORY_FIELDS)
_STEP = frozenset(STEP_FIELDS)


def parse_trajectory(obj: Any, source: Location, *, default_id: str | None = None) -> Trajectory:
    """A trajectory from an already-parsed JSON object (any Python mapping); raise
    ``TrajectoryError`` with a path into the object on any shape error."""
    try:
        plain = _normalize(obj, 0, MAX_DEPTH + 4)  # steps[i].input is 4 levels below the top
    except _Problem as problem:
        raise TrajectoryError(problem.text(), source) from None
    return _build(plain, source, default_id or _default_id(source), deep=True, holes=True)


@functools.lru_cache(maxsize=64)
def _stem(file: str) -> str:
    return Path(file).stem or file


def _default_id(source: Location, index: int = 0) -> str:
    stem = _stem(source.file)
    if index:
        return f"{stem}:{index}"
    return f"{stem}:{source.line}" if source.line else stem


def _build(obj: Any, source: Location, default_id: str, *, deep: bool, holes: bool) -> Trajectory:
    try:
        return _parse(obj, source, default_id, deep, holes)
    except _Problem as problem:
        message = problem.text()
        tid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(tid, str) and source.line == 0:
            message += f" (trajectory {tid!r})"
        raise TrajectoryError(message, source) from None


def _parse(obj: Any, source: Location, default_id: str, deep: bool, holes: bool) -> Trajectory:
    if obj.__class__ is not dict:
        raise _Problem(f"a trajectory must be a JSON object, got {_type_word(obj)}")
    if not _TOP.issuperset(obj):
        _unknown(obj, _TOP, "trajectory")
    raw_steps = obj.get("steps")
    if raw_steps.__class__ is not list:
        if "steps" not in obj:
            raise _Problem("missing required field 'steps' (a list of tool calls)")
        raise _Problem(f"must be a list of steps, got {_type_word(raw_steps)}", "steps")
    steps = []
    for index, raw in enumerate(raw_steps):
        try:
            steps.append(_parse_step(raw, deep, holes))
        except _Problem as problem:
            problem.path.extend((index, "steps"))
            raise
    tid = obj.get("id")
    if tid is None:
        tid = default_id
    elif tid.__class__ is not str:
        raise _Problem(f"must be a string, got {_show(tid)}", "id")
    contract = obj.get("contract")
    if contract is not None and contract.__class__ is not str:
        raise _Problem(f"must be a string (the contract's path), got {_show(contract)}", "contract")
    seed = obj.get("seed")
    if seed is not None and seed.__class__ is not int:
        seed = _integral(seed)
        if seed is None:
            raise _Problem(f"must be an integer, got {_show(obj['seed'])}", "seed")
    initial = obj.get("initial")
    if initial is not None:
        if initial.__class__ is not dict:
            raise _Problem(
                f"must be an object (state variable -> value), got {_type_word(initial)}", "initial"
            )
        if _VAR in initial:
            raise _Problem("the initial state must be an object of state variables, not a hole", "initial")
        if deep or holes:
            initial = _walk_at(initial, holes, "initial")
    meta = _meta(obj, deep)
    return Trajectory(tid, tuple(steps), contract, seed, initial, meta, source)


def _meta(obj: dict[str, Any], deep: bool) -> Any:
    """The ``meta`` of a trajectory or a step: an object of provenance, or None."""
    meta = obj.get("meta")
    if meta is not None:
        if meta.__class__ is not dict:
            raise _Problem(f"must be an object, got {_type_word(meta)}", "meta")
        if deep:
            _walk_at(meta, False, "meta")
    return meta


def _parse_step(raw: Any, deep: bool, holes: bool) -> Step:
    if raw.__class__ is not dict:
        raise _Problem(f"a step must be an object with 'tool' and 'input', got {_type_word(raw)}")
    if not _STEP.issuperset(raw):
        _unknown(raw, _STEP, "step")
    tool = raw.get("tool")
    if tool.__class__ is not str or not tool:
        if "tool" not in raw:
            raise _Problem("missing required field 'tool' (the operation's name)")
        raise _Problem(f"must be a non-empty string, got {_show(tool)}", "tool")
    if "input" not in raw:
        raise _Problem("missing required field 'input' (use {} for a call without arguments)")
    value = raw["input"]
    if deep or holes:
        value = _walk_at(value, holes, "input")
    has_output = "output" in raw
    output = raw.get("output")
    if has_output and (deep or holes):
        output = _walk_at(output, holes, "output")
    status = raw.get("status")
    if status is not None and (status.__class__ is not int or not 100 <= status <= 599):
        status = _integral(status)
        if status is None or not 100 <= status <= 599:
            raise _Problem(f"must be an integer HTTP status 100..599, got {_show(raw['status'])}", "status")
    meta = _meta(raw, deep)
    return Step(tool, value, output, status, has_output, meta)


def _integral(value: Any) -> int | None:
    """An integer written as ``200.0`` (JSON Schema calls it an integer too); None otherwise."""
    if value.__class__ is int:
        return value
    if value.__class__ is float and value.is_integer() and INT_MIN <= value <= INT_MAX:
        return int(value)
    return None


def _walk_at(value: Any, holes: bool, field: str) -> Any:
    cls = value.__class__
    if cls is not dict and cls is not list:
        return value
    try:
        return _walk(value, 0, holes)
    except _Problem as problem:
        problem.path.append(field)
        raise


def _unknown(obj: dict[str, Any], allowed: frozenset[str], what: str) -> NoReturn:
    extra = sorted(set(obj) - allowed)
    order = TRAJECTORY_FIELDS if what == "trajectory" else STEP_FIELDS
    names = ", ".join(repr(k) for k in extra[:3]) + (", ..." if len(extra) > 3 else "")
    plural = "s" if len(extra) > 1 else ""
    raise _Problem(
        f"unknown {what} field{plural} {names} (allowed: {', '.join(order)}; put provenance under 'meta')"
    )
