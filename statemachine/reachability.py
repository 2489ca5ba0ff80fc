"""Explicit-state search: the naive baseline the symbolic engines are measured and tested against.

``explicit_bfs`` runs breadth-first search over concrete states with ``contracts.semantics.Machine``,
every operation tried with every input of a finite domain (``input_domain`` builds one from the
input schemas). It needs no solver, so it lives in the state-machine layer; the reachability
findings ``envfactory check`` reports are answered by Z3 and live in ``solver.reachability``.

Imports the contracts layer only; never ``envfactory.solver`` or Z3.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.semantics import Machine
from envfactory.contracts.values import FrozenMap, freeze


@attrs.frozen(slots=True)
class Search:
    """What ``explicit_bfs`` found: the shortest path to a state satisfying the target (``path``
    of (tool, input) calls, ``None`` when there is none within the bounds), the number of
    distinct states seen, and whether the time limit or ``max_states`` cut the search short."""

    path: tuple[tuple[str, Any], ...] | None
    states: int
    seconds: float
    cut: bool = False

    @property
    def depth(self) -> int | None:
        return None if self.path is None else len(self.path)


def explicit_bfs(
    contract: Contract,
    target: Callable[[FrozenMap], bool],
    domain: Mapping[str, Sequence[Any]],
    *,
    max_depth: int = 8,
    time_limit: float = 10.0,
    max_states: int = 2_000_000,
    require_invariants: bool = True,
) -> Search:
    """Breadth-first search over concrete states from the initial state.

    A call is a transition when it passes input schema, requires and effects, and (with
    ``require_invariants``) leaves every invariant holding, as ``verify`` requires of a valid step.
    Effects that read the call's output are run with a null output.
    """
    machine = Machine(contract)
    started = time.monotonic()
    start = machine.initial_state()
    if target(start):
        return Search((), 1, time.monotonic() - started)
    calls = [(name, value) for name in contract.operations for value in domain.get(name, ())]
    parents: dict[Any, tuple[Any, tuple[str, Any]] | None] = {freeze(start): None}
    frontier: deque[tuple[FrozenMap, int]] = deque([(start, 0)])
    while frontier:
        state, depth = frontier.popleft()
        if depth >= max_depth:
            continue
        if time.monotonic() - started > time_limit or len(parents) >= max_states:
            return Search(None, len(parents), time.monotonic() - started, cut=True)
        here = freeze(state)
        for name, value in calls:
            op = contract.operations[name]
            post = _fire(machine, op, state, value, require_invariants)
            if post is None:
                continue
            key = freeze(post)
            if key in parents:
                continue
            parents[key] = (here, (name, value))
            if target(post):
                return Search(_path(parents, key), len(parents), time.monotonic() - started)
            frontier.append((post, depth + 1))
    return Search(None, len(parents), time.monotonic() - started)


def _fire(
    machine: Machine, op: Operation, state: FrozenMap, value: Any, invariants: bool
) -> FrozenMap | None:
    if machine.check_requires(state, op, value) is not None:
        return None
    try:
        post = machine.apply(state, op, value, None)
    except EvaluationError:
        return None
    if invariants and machine.check_invariants(post) is not None:
        return None
    return post


def _path(parents: Mapping[Any, tuple[Any, tuple[str, Any]] | None], key: Any) -> tuple[tuple[str, Any], ...]:
    steps: list[tuple[str, Any]] = []
    entry = parents[key]
    while entry is not None:
        previous, call = entry
        steps.append(call)
        entry = parents[previous]
    return tuple(reversed(steps))


def input_domain(
    contract: Contract,
    *,
    ints: Iterable[int] = (0, 1, 2),
    strings: Iterable[str] = ("a", "b"),
    max_per_operation: int = 10_000,
) -> dict[str, list[Any]]:
    """Every input, per operation, built from small pools of values that the schema accepts.

    Fields with an ``enum`` take every enum value; integers with ``minimum``/``maximum`` take
    the pool clipped to the bounds; optional fields are always given. Inputs the operation's
    validator rejects are left out.
    """
    ints = tuple(ints)
    strings = tuple(strings)
    result: dict[str, list[Any]] = {}
    for name, op in contract.operations.items():
        root = op.input_schema if isinstance(op.input_schema, Mapping) else {}
        schema = _resolve(root, root)
        props = (schema.get("properties") if isinstance(schema, Mapping) else None) or {}
        fields = list(props)
        pools = [_pool(props[f], ints, strings, root) for f in fields]
        values: list[Any] = []
        for combo in itertools.islice(itertools.product(*pools), max_per_operation):
            value = dict(zip(fields, combo, strict=True))
            if op.input_validator is None or op.input_validator.is_valid(value):
                values.append(value)
        result[name] = values
    return result


def _resolve(schema: Any, root: Any) -> Any:
    """Follow local ``$ref``s (``#/...``) inside a bundled schema."""
    for _ in range(8):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            break
        target: Any = root
        for part in schema["$ref"].lstrip("#").split("/")[1:]:
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return schema


def _pool(schema: Any, ints: tuple[int, ...], strings: tuple[str, ...], root: Any) -> list[Any]:
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return [*ints, *strings]
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    pool: list[Any] = []
    if "integer" in kinds or "number" in kinds:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        pool += [i for i in ints if (lo is None or i >= lo) and (hi is None or i <= hi)]
    if "string" in kinds:
        pool += list(strings)
    if "boolean" in kinds:
        pool += [False, True]
    if "null" in kinds:
        pool.append(None)
    return pool


__all__ = ["Search", "explicit_bfs", "input_domain"]
