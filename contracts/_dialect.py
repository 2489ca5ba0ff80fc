"""Schema dialects of tool lists, turned into JSON Schema 2020-12.

Tool lists in the wild stretch JSON Schema: BFCL function docs spell types the Python way
(``dict``, ``float``, ``tuple``, ``any``, ``int``, ``str``...), use ``"default": "None"`` for an
optional argument that may be null, and write ``"type": "dict"`` on the parameter object itself.
``normalize_tool_schema`` rewrites those spellings (and OpenAPI's ``nullable`` and friends, through
``_validate.normalize_openapi``) so that the compiled validator, the type checker and the Z3
encoder read one dialect. Imports nothing above the contracts layer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envfactory.contracts._validate import normalize_openapi

# Python and BFCL spellings of JSON Schema types; None means "any value" (drop the keyword).
TYPE_SPELLINGS: dict[str, str | None] = {
    "dict": "object",
    "object": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "int": "integer",
    "integer": "integer",
    "long": "integer",
    "str": "string",
    "string": "string",
    "char": "string",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "tuple": "array",
    "set": "array",
    "null": "null",
    "none": "null",
    "nonetype": "null",
    "any": None,
}

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
MAX_DEPTH = 100


def normalize_tool_schema(schema: Any) -> dict[str, Any]:
    """A tool's parameter (or response) schema as plain JSON Schema 2020-12."""
    if schema is None or schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, Mapping):
        return {}
    fixed = _spellings(schema, 0)
    result = normalize_openapi(fixed, "3.1")
    return dict(result) if isinstance(result, Mapping) else {}


def _type_of(value: Any) -> tuple[list[str], bool]:
    """The JSON Schema type names for a spelled type, and whether it means 'any'."""
    names = value if isinstance(value, list) else [value]
    result: list[str] = []
    for name in names:
        if not isinstance(name, str):
            continue
        mapped = TYPE_SPELLINGS.get(name.strip().lower(), name)
        if mapped is None:
            return [], True
        if mapped not in result:
            result.append(mapped)
    return result, False


def _spellings(schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        return {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        key = str(key)
        if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                str(k): _spellings(v, depth + 1) if isinstance(v, Mapping) else v for k, v in value.items()
            }
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_spellings(v, depth + 1) if isinstance(v, Mapping) else v for v in value]
        elif key in _SUBSCHEMA_ONE and isinstance(value, Mapping):
            out[key] = _spellings(value, depth + 1)
        elif key == "type":
            names, anything = _type_of(value)
            if anything or not names:
                continue
            out["type"] = names[0] if len(names) == 1 else names
        elif key == "required" and not isinstance(value, list):
            continue  # BFCL sometimes writes required: true on a property; JSON Schema wants a list
        else:
            out[key] = _plain(value)
    if out.get("default") == "None":
        # BFCL: an optional argument whose Python default is None accepts null
        out["default"] = None
        kind = out.get("type")
        if isinstance(kind, str) and kind != "null":
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
    kinds = out.get("type")
    enum = out.get("enum")
    if isinstance(enum, list) and isinstance(kinds, list) and "null" in kinds and None not in enum:
        out["enum"] = [*enum, None]
    if out.get("type") == "array" and "prefixItems" not in out and isinstance(schema.get("items"), list):
        out["prefixItems"] = [_spellings(v, depth + 1) for v in schema["items"] if isinstance(v, Mapping)]
        out.pop("items", None)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# OpenAPI's integer formats, as the bounds a server actually enforces. ``int64`` is left open:
# its bounds reject nothing a JSON client sends, and would only push generated ids to extremes.
INTEGER_FORMATS: dict[str, tuple[int, int]] = {"int32": (-(2**31), 2**31 - 1)}


def format_bounds(schema: Any, depth: int = 0) -> Any:
    """``format: int32`` integers get their range as ``minimum``/``maximum`` (in place).

    OpenAPI uses ``format`` for the wire type; JSON Schema treats it as an annotation, so without
    this a generated or fuzzed value could overflow what the API can hold.
    """
    if depth > MAX_DEPTH:
        return schema
    if isinstance(schema, dict):
        bounds = INTEGER_FORMATS.get(str(schema.get("format")))
        kind = schema.get("type")
        if bounds is not None and (kind == "integer" or (isinstance(kind, list) and "integer" in kind)):
            low, high = bounds
            if not isinstance(schema.get("minimum"), int | float) and "exclusiveMinimum" not in schema:
                schema["minimum"] = low
            if not isinstance(schema.get("maximum"), int | float) and "exclusiveMaximum" not in schema:
                schema["maximum"] = high
        for key, value in schema.items():
            if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
                for sub in value.values():
                    format_bounds(sub, depth + 1)
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
                for sub in value:
                    format_bounds(sub, depth + 1)
            elif key in _SUBSCHEMA_ONE:
                format_bounds(value, depth + 1)
    return schema
