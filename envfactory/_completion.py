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

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from envfactory.contracts.model import Contract
from envfactory.trajectory import Hole, Step

CANDIDATES = 32
"""Values tried per hole at most."""
REACH = 200
"""How many steps before and after a hole are searched for values of its field."""


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
    """Per hole name (from step ``start`` on), at most ``CANDIDATES`` values to try, the
    likeliest first: the ``enum``/``const`` of its schema, then the values recorded under the
    same field name, nearest step first (within ``REACH`` steps), then the keys of the state's
    collections and the same field of their records. Bounded work whatever the sizes."""
    pools: dict[str, dict[tuple[type, Any], Any]] = {}
    for index in range(start, len(steps)):
        step = steps[index]
        if not step.has_holes:
            continue
        op = contract.operations.get(step.tool)
        for part, path, hole in _sites(step):
            pool = pools.setdefault(hole.name, {})
            field = next((k for k in reversed(path) if isinstance(k, str)), None)
            if op is not None:
                schema = op.input_schema if part == "input" else op.output_schema
                _add(pool, _schema_values(schema, path))
            if field is not None:
                for i in _outward(index, len(steps)):
                    if len(pool) >= CANDIDATES:
                        break
                    _add(pool, _values_at(steps[i].input, field))
                    if steps[i].has_output:
                        _add(pool, _values_at(steps[i].output, field))
            for value in state.values():
                if isinstance(value, Mapping):
                    _add(pool, itertools.islice(value, CANDIDATES))
                    if field is not None:
                        records = itertools.islice(value.values(), CANDIDATES)
                        _add(pool, (r[field] for r in records if isinstance(r, Mapping) and field in r))
    return {name: list(pool.values())[:CANDIDATES] for name, pool in pools.items()}


def _outward(at: int, count: int) -> Iterator[int]:
    """Step indices nearest ``at`` first (the earlier of two at one distance), at most ``REACH`` away."""
    for distance in range(min(REACH, max(at, count - 1 - at)) + 1):
        if at - distance >= 0:
            yield at - distance
        if distance and at + distance < count:
            yield at + distance


def _add(pool: dict[tuple[type, Any], Any], values: Iterable[Any]) -> None:
    """Add ``values`` not yet in ``pool`` (``1``, ``1.0`` and ``True`` stay apart), up to ``CANDIDATES``."""
    for value in values:
        if len(pool) >= CANDIDATES:
            return
        if isinstance(value, dict | list | Hole):
            continue
        pool.setdefault((type(value), value), value)


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
