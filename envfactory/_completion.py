"""Values to try for a trajectory's unknown values before asking Z3 (issue 17 item 5).

A trajectory with holes is feasible when some values for them make every check pass. Most such
trajectories are recorded runs with a few values redacted, and the value that fits is one the
trajectory or the state already shows: the id of a ticket a later step closes, an assignee
written elsewhere, a member of the field's ``enum``. The verifier tries those concretely, with
its own checks, step by step from the first hole (a search with a fixed budget of steps, so the
same input always gets the same answer); a completion that passes every step is a proof of
feasibility, and anything else is left to Z3. Nothing here imports Z3.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from envfactory.contracts.model import Contract
from envfactory.trajectory import Hole, Step

CANDIDATES = 32
"""Values tried per hole at most."""


def hole_names(steps: Sequence[Step], start: int) -> dict[int, list[str]]:
    """Per step from ``start`` on, the names of the holes it holds, each name at its first step."""
    seen: set[str] = set()
    out: dict[int, list[str]] = {}
    for index in range(start, len(steps)):
        step = steps[index]
        if not step.has_holes:
            continue
        for _, _, hole in _sites(step):
            if hole.name not in seen:
                seen.add(hole.name)
                out.setdefault(index, []).append(hole.name)
    return out


def candidates(
    contract: Contract, steps: Sequence[Step], start: int, state: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """Per hole name (from step ``start`` on), the values to try, the likeliest first: the
    ``enum``/``const`` of its schema, then the values recorded under the same field name,
    nearest step first, then the keys of the state's collections and the same field of their
    records."""
    pools: dict[str, list[Any]] = {}
    for index in range(start, len(steps)):
        step = steps[index]
        if not step.has_holes:
            continue
        op = contract.operations.get(step.tool)
        for part, path, hole in _sites(step):
            pool = pools.setdefault(hole.name, [])
            field = next((k for k in reversed(path) if isinstance(k, str)), None)
            if op is not None:
                schema = op.input_schema if part == "input" else op.output_schema
                pool.extend(_schema_values(schema, path))
            if field is not None:
                for i in sorted(range(len(steps)), key=lambda i: abs(i - index)):  # stable: earlier first
                    pool.extend(_values_at(steps[i].input, field))
                    if steps[i].has_output:
                        pool.extend(_values_at(steps[i].output, field))
            for value in state.values():
                if isinstance(value, Mapping):
                    pool.extend(value)
                    if field is not None:
                        for record in value.values():
                            if isinstance(record, Mapping) and field in record:
                                pool.append(record[field])
    return {name: _distinct(pool)[:CANDIDATES] for name, pool in pools.items()}


def _sites(step: Step) -> Iterator[tuple[str, tuple[Any, ...], Hole]]:
    yield from (("input", path, hole) for path, hole in _holes_in(step.input, ()))
    if step.has_output:
        yield from (("output", path, hole) for path, hole in _holes_in(step.output, ()))


def _holes_in(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Hole]]:
    if isinstance(value, Hole):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _holes_in(item, (*path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _holes_in(item, (*path, i))


def _schema_values(schema: Any, path: tuple[Any, ...]) -> list[Any]:
    """The ``enum`` or ``const`` at ``path`` inside a JSON Schema, following ``properties`` and
    ``items`` (nothing when the path goes through anything else)."""
    for key in path:
        if not isinstance(schema, Mapping):
            return []
        schema = (schema.get("properties") or {}).get(key) if isinstance(key, str) else schema.get("items")
    if not isinstance(schema, Mapping):
        return []
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else []


def _values_at(value: Any, field: str) -> Iterator[Any]:
    """Every concrete value recorded under the key ``field`` inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == field and not isinstance(item, Hole | dict | list):
                yield item
            yield from _values_at(item, field)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _values_at(item, field)


def _distinct(values: list[Any]) -> list[Any]:
    """``values`` without repeats, first kept; ``1``, ``1.0`` and ``True`` stay apart."""
    seen: set[tuple[type, Any]] = set()
    out = []
    for value in values:
        if isinstance(value, dict | list | Hole):
            continue
        key = (type(value), value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out
