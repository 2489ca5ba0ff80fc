"""Paths into JSON values and schemas: reading and setting a field path, copying, following a
local ``$ref`` pointer, the sub-schema at a path. Shared by the sampler, the output synthesizer,
the generator and the solver's schema reader. Imports nothing from envfactory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 12
"""Deepest schema nesting followed (recursive schemas stop here)."""

Path = tuple[str, ...]


def get_path(value: Any, path: Path) -> Any:
    """The value at ``path`` inside ``value`` (None where a step is not a record or is missing)."""
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def set_path(value: Any, path: Path, new: Any) -> Any:
    """``value`` with ``path`` set to ``new`` (a changed copy; missing records are created)."""
    if not path:
        return new
    base = dict(value) if isinstance(value, Mapping) else {}
    head, rest = path[0], path[1:]
    base[head] = set_path(base.get(head), rest, new)
    return base


def plain_copy(value: Any) -> Any:
    """A deep copy of a JSON value (collections become plain dicts with their keys)."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def merge_schemas(a: Mapping[str, Any], b: Any) -> dict[str, Any]:
    """One schema for values that satisfy both ``a`` and ``b`` (parts of an ``allOf``, or a
    schema and the branch drawn from it): a property both declare must satisfy both schemas
    (PagerDuty's ``AddonReference`` narrows its ``Reference``'s ``type`` string to an enum)."""
    if not isinstance(b, Mapping):
        return dict(a)
    merged = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            props = dict(merged[key])
            for name, sub in value.items():
                old = props.get(name)
                props[name] = sub if old is None or old == sub or old in ({}, True) else {"allOf": [old, sub]}
            merged[key] = props
        elif key == "required" and isinstance(merged.get(key), list) and isinstance(value, list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        elif key == "type" and key in merged:
            both = [t for t in _types(value) if t in _types(merged[key])]
            merged[key] = (both[0] if len(both) == 1 else both) if both else value
        else:
            merged[key] = value
    return merged


def _types(declared: Any) -> list[Any]:
    return list(declared) if isinstance(declared, list) else [declared]


def resolve_pointer(root: Any, ref: str, missing: Any = None) -> Any:
    """The schema a local ``#/a/b`` reference points to inside ``root``, or ``missing``."""
    if not ref.startswith("#"):
        return missing
    node = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return missing
    return node


def schema_at(schema: Any, path: Path, root: Any = None) -> Any:
    """The sub-schema that describes ``path`` inside values of ``schema`` (``{}`` if unknown).

    A property declared inside ``allOf`` (or a branch of ``anyOf``/``oneOf``) counts: OpenAPI
    documents compose their records that way (Box's ``Comment--Full`` is ``allOf`` of three)."""
    root = schema if root is None else root
    node = schema
    for part in path:
        found = _property(node, part, root, 0)
        if found is None:
            return {}
        node = found
    return deref(node, root)


def _property(node: Any, name: str, root: Any, depth: int) -> Any:
    node = deref(node, root)
    if not isinstance(node, Mapping) or depth > MAX_DEPTH:
        return None
    props = node.get("properties")
    if isinstance(props, Mapping) and name in props:
        return props[name]
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(key) or ():
            found = _property(branch, name, root, depth + 1)
            if found is not None:
                return found
    return None


def deref(node: Any, root: Any) -> Any:
    for _ in range(MAX_DEPTH):
        if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            node = resolve_pointer(root, node["$ref"]) or {}
        else:
            break
    return node


__all__ = [
    "MAX_DEPTH",
    "Path",
    "deref",
    "get_path",
    "merge_schemas",
    "plain_copy",
    "resolve_pointer",
    "schema_at",
    "set_path",
]
