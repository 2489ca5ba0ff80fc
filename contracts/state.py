"""State snapshots: persistent maps, so that forking a state is O(1).

A state maps each variable name to its value; a collection's value is itself a persistent map
from key to record. Records are plain dicts that are never mutated in place (an effect on a
field builds a new dict), so snapshots can share them safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envfactory.contracts import types as T
from envfactory.contracts.errors import EnvfactoryError
from envfactory.contracts.model import UNKNOWN, Contract, StateVar
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as value_to_json

State = FrozenMap

EMPTY: FrozenMap = FrozenMap()


def coerce_key(var: StateVar, key: Any) -> Any:
    """A collection key as the collection's key type (JSON object keys arrive as strings)."""
    if var.key_type is not None and isinstance(key, str) and not T.admits(var.key_type, "string"):
        try:
            return int(key)
        except ValueError:
            raise EnvfactoryError(
                f"{var.name} is keyed by integers, but {key!r} is not one", var.loc
            ) from None
    return key


def collection_from_json(var: StateVar, value: Any) -> FrozenMap:
    """A collection from JSON: an object of key -> record, or a list of records with an ``id``."""
    if isinstance(value, FrozenMap):
        return value
    if isinstance(value, Mapping):
        return FrozenMap({coerce_key(var, k): v for k, v in value.items()})
    if isinstance(value, list):
        entries: dict[Any, Any] = {}
        for item in value:
            if not (isinstance(item, Mapping) and "id" in item):
                raise EnvfactoryError(f"{var.name}: a list of records needs an 'id' in each record", var.loc)
            entries[coerce_key(var, item["id"])] = item
        return FrozenMap(entries)
    raise EnvfactoryError(
        f"{var.name} is a collection; its value must be an object of key -> record", var.loc
    )


def value_from_json(var: StateVar, value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    return collection_from_json(var, value) if var.collection else value


def initial_state(contract: Contract, overrides: Mapping[str, Any] | None = None) -> FrozenMap:
    """The initial state, with ``overrides`` (a trajectory's ``initial``) replacing declared values.

    Variables whose initial value is unknown (open world) are left out of the map; reading them is
    undefined for the concrete evaluator and free for the symbolic one.
    """
    values: dict[str, Any] = {}
    for name, var in contract.state.items():
        if overrides is not None and name in overrides:
            values[name] = value_from_json(var, overrides[name])
        elif var.known:
            values[name] = value_from_json(var, var.initial)
    if overrides:
        unknown = sorted(set(overrides) - set(contract.state))
        if unknown:
            raise EnvfactoryError(f"initial names unknown state variable(s): {', '.join(unknown)}")
    return FrozenMap(values)


def to_json(state: Mapping[str, Any]) -> dict[str, Any]:
    """The state as one JSON object, keys sorted (stable output)."""
    return {name: value_to_json(state[name]) for name in sorted(state)}
