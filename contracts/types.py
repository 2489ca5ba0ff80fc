"""The types of the expression language, read off JSON Schema.

A deliberately small lattice: null, boolean, integer, number, string (with its enum), list,
record, map (a state collection) and unions of those, plus ``ANY`` for what a schema leaves open.
The type checker uses them to reject ill-typed clauses at load time; the Z3 encoder uses them to
choose sorts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs


@attrs.frozen(slots=True)
class Type:
    """Base of every type."""

    def describe(self) -> str:
        raise NotImplementedError


@attrs.frozen(slots=True)
class AnyType(Type):
    def describe(self) -> str:
        return "any"


@attrs.frozen(slots=True)
class Prim(Type):
    """``null``, ``boolean``, ``integer``, ``number`` or ``string``; strings may carry their enum."""

    kind: str
    enum: tuple[Any, ...] | None = None

    def describe(self) -> str:
        if self.enum is not None:
            return f"{self.kind} (one of {', '.join(map(repr, self.enum))})"
        return self.kind


@attrs.frozen(slots=True)
class ListType(Type):
    item: Type

    def describe(self) -> str:
        return f"list of {self.item.describe()}"


@attrs.frozen(slots=True)
class RecordType(Type):
    """An object with known properties; ``open`` when clauses may read fields it does not declare
    (a schema without ``properties``, or one that allows additional properties explicitly)."""

    fields: tuple[tuple[str, Type], ...]
    required: frozenset[str] = frozenset()
    open: bool = True

    def field(self, name: str) -> Type | None:
        for key, value in self.fields:
            if key == name:
                return value
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.fields)

    def describe(self) -> str:
        return "record {" + ", ".join(self.names) + "}"


@attrs.frozen(slots=True)
class MapType(Type):
    """A state collection: keys of one type to values of another."""

    key: Type
    value: Type

    def describe(self) -> str:
        return f"collection of {self.key.describe()} -> {self.value.describe()}"


@attrs.frozen(slots=True)
class UnionType(Type):
    options: tuple[Type, ...]

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)


ANY = AnyType()
NULL = Prim("null")
BOOL = Prim("boolean")
INT = Prim("integer")
NUMBER = Prim("number")
STRING = Prim("string")


def union(types: Iterable[Type]) -> Type:
    """The union, flattened and de-duplicated; ANY absorbs everything."""
    flat: list[Type] = []
    for t in types:
        parts = t.options if isinstance(t, UnionType) else (t,)
        for p in parts:
            if isinstance(p, AnyType):
                return ANY
            if p not in flat:
                flat.append(p)
    if INT in flat and NUMBER in flat:
        flat.remove(INT)
    if not flat:
        return ANY
    return flat[0] if len(flat) == 1 else UnionType(tuple(flat))


def options(t: Type) -> tuple[Type, ...]:
    return t.options if isinstance(t, UnionType) else (t,)


def strip_null(t: Type) -> Type:
    """The type without its null option (where a value is needed, null is a runtime error)."""
    if isinstance(t, UnionType):
        rest = [o for o in t.options if o != NULL]
        return union(rest) if rest else NULL
    return t


def is_nullable(t: Type) -> bool:
    return isinstance(t, AnyType) or NULL in options(t)


def kind_of(t: Type) -> set[str]:
    """The coarse kinds a type admits: null, boolean, number, string, list, record, map, any."""
    kinds: set[str] = set()
    for o in options(t):
        match o:
            case AnyType():
                kinds.add("any")
            case Prim(kind="integer") | Prim(kind="number"):
                kinds.add("number")
            case Prim(kind=k):
                kinds.add(k)
            case ListType():
                kinds.add("list")
            case RecordType():
                kinds.add("record")
            case MapType():
                kinds.add("map")
    return kinds


def admits(t: Type, kind: str) -> bool:
    k = kind_of(t)
    return "any" in k or kind in k


def only(t: Type, *kinds: str) -> bool:
    """Whether every option of ``t`` (null aside) is one of ``kinds`` (ANY counts as fitting)."""
    k = kind_of(strip_null(t)) - {"null"}
    return "any" in k or (bool(k) and k <= set(kinds))


def numeric_result(left: Type, right: Type) -> Type:
    ints = {INT}
    if set(options(strip_null(left))) <= ints and set(options(strip_null(right))) <= ints:
        return INT
    return NUMBER


Resolver = Callable[[str], Any]

_JSON_TYPES = {
    "null": NULL,
    "boolean": BOOL,
    "integer": INT,
    "number": NUMBER,
    "string": STRING,
}


def from_schema(
    schema: Any, resolve: Resolver | None = None, _depth: int = 0, cache: dict[Any, Type] | None = None
) -> Type:
    """The language type of values that validate against a JSON Schema.

    ``resolve`` follows ``$ref`` strings; recursion deeper than a few levels becomes ``ANY``.
    ``cache`` (shared by every schema whose references mean the same, e.g. one document's
    shared ``$defs``) keeps each reference's type per depth, so that a web of schemas that
    refer to each other is read once rather than once per path through it.
    """
    if _depth > 12 or not isinstance(schema, Mapping):
        return ANY
    if cache is None:
        cache = {}
    if "$ref" in schema and resolve is not None:
        ref_key = (schema["$ref"], _depth)
        if isinstance(ref_key[0], str) and ref_key in cache:
            return cache[ref_key]
        result = from_schema(resolve(schema["$ref"]), resolve, _depth + 1, cache)
        if isinstance(ref_key[0], str):
            cache[ref_key] = result
        return result
    if "const" in schema:
        return _literal_type(schema["const"], (schema["const"],))
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        values = tuple(schema["enum"])
        # one value of each Python kind stands for all of that kind (a long enum of strings is
        # one string type listing them, built once)
        kinds = {type(v): v for v in reversed(values)}
        return union(_literal_type(kinds[type(v)], values) for v in values if kinds[type(v)] is v)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return union(from_schema(s, resolve, _depth + 1, cache) for s in schema[key])
    if isinstance(schema.get("allOf"), list):
        return _merge_all(schema, resolve, _depth, cache)
    declared = schema.get("type")
    names = declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else []
    if not names:
        if "properties" in schema:
            names = ["object"]
        elif "items" in schema:
            names = ["array"]
        else:
            return ANY
    return union(_one_type(name, schema, resolve, _depth, cache) for name in names)


def _literal_type(value: Any, enum: tuple[Any, ...]) -> Type:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        return Prim("string", tuple(v for v in enum if isinstance(v, str)))
    if isinstance(value, list):
        return ListType(ANY)
    return ANY


def _one_type(
    name: Any, schema: Mapping[str, Any], resolve: Resolver | None, depth: int, cache: dict[Any, Type]
) -> Type:
    if name in _JSON_TYPES:
        return _JSON_TYPES[name]
    if name == "array":
        return ListType(from_schema(schema.get("items", {}), resolve, depth + 1, cache))
    if name == "object":
        props = schema.get("properties") or {}
        fields = tuple(
            (str(key), from_schema(sub, resolve, depth + 1, cache))
            for key, sub in props.items()
            if isinstance(key, str)
        )
        required = frozenset(r for r in schema.get("required", []) if isinstance(r, str))
        extra = schema.get("additionalProperties")
        if not fields and isinstance(extra, Mapping):
            return MapType(STRING, from_schema(extra, resolve, depth + 1, cache))
        # a record that declares its properties is closed to clauses: reading a field it does
        # not declare is a typo far more often than a field the API adds, so it takes an explicit
        # ``additionalProperties: true`` (or a schema) to read undeclared fields
        return RecordType(fields, required, not fields or extra is True or isinstance(extra, Mapping))
    return ANY


def _merge_all(
    schema: Mapping[str, Any], resolve: Resolver | None, depth: int, cache: dict[Any, Type]
) -> Type:
    parts = [from_schema(s, resolve, depth + 1, cache) for s in schema["allOf"]]
    rest = {k: v for k, v in schema.items() if k != "allOf"}
    if rest.get("type") or rest.get("properties"):
        parts.append(from_schema(rest, resolve, depth + 1, cache))
    known = [p for p in parts if not isinstance(p, AnyType)]
    # a value meets every part, so it is null only where every part admits null
    nullable = bool(known) and all(is_nullable(p) for p in known)
    bare = [strip_null(p) for p in known]
    records = [p for p in bare if isinstance(p, RecordType)]
    if records and len(records) == len(bare):
        fields: dict[str, Type] = {}
        required: set[str] = set()
        for rec in records:
            fields.update(dict(rec.fields))
            required |= rec.required
        # undeclared fields stay readable where a part may hold fields nobody listed: a part of
        # unknown type, or one with fields that is open itself (a bare ``type: object`` is not)
        opened = len(known) < len(parts) or any(r.open and r.fields for r in records)
        merged = RecordType(tuple(fields.items()), frozenset(required), opened or not fields)
        return union([merged, NULL]) if nullable else merged
    return known[0] if len(known) == 1 else ANY
