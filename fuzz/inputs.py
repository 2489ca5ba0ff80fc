"""Inputs: JSON Schemas compiled to value generators, valid ones and adversarial ones.

``compile_schema(schema)`` turns a schema into a generator: a function of a ``draws.Source``
that returns a value meant to satisfy the schema (JSON Schema 2020-12 as the loader bundles it:
local ``$ref``s into ``$defs``, ``enum``/``const``, numeric and string bounds, ``pattern``,
``format``, arrays, objects, ``anyOf``/``oneOf``/``allOf``, ``nullable``). Every choice goes
through the source, so Hypothesis replays and shrinks it (to the lower bound, the first enum
value, the shortest string). The fuzzer never trusts a generator to be exact: every drawn input
is judged by the contract's model, so a schema feature drawn loosely only changes how often a
call is valid.

``mutate`` breaks an input on purpose: a wrong type, a missing required field, an unknown extra
field, a value just past a boundary. Which fields name keys of state collections is read by
``steering.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import orjson
from hypothesis import strategies as st

from envfactory.contracts._validate import SchemaValidator
from envfactory.contracts.errors import ContractError
from envfactory.fuzz.draws import ASCII, LOWER, UNICODE, Source
from envfactory.fuzz.regex import compile_pattern

Gen = Callable[[Source], Any]

MAX_ITEMS = 4
"""Longest array a generator draws beyond ``minItems`` (longer ones only add cost, rarely behaviour)."""
MAX_DEPTH = 8
INT_LIMIT = 1 << 53

HUGE = (10**400, -(10**400))
"""Integers JSON allows and no float holds (arithmetic with a float overflows)."""
WRONG_VALUES: tuple[Any, ...] = (None, True, 0, -1, 1.5, "", "x", [], {}, 2**63, "\u0000\u202e", "a" * 2000)
"""Values that are the wrong type (or a hostile edge) for most fields."""

JSON_EDGES: dict[str, tuple[Any, ...]] = {
    "number": (HUGE[0], HUGE[1], math.inf, math.nan, 1e308, 10**7),
    "integer": (HUGE[0], HUGE[1], 10**7, 2**63, -1),
    "string": ("", "a" * 10_000, "\x00", "\u00e9\u4e2d\U0001f600"),
    "array": ([], [None], [[]]),
    "object": ({}, {"": None}),
    "boolean": (None, 0),
}
"""The hardest values of each JSON type (as Python's json reads them): integers past every float
and large enough to make work slow, NaN and Infinity, empty and very long strings, empty and
null-filled lists."""
BREAKING: tuple[Any, ...] = ([], {}, "x", 1.5, HUGE[0])
"""Values that break most code that reads them as another type: unhashable (a dict key, a set
member), not a string, not a number, not an integer, past every float."""

_SCALARS: tuple[Any, ...] = (None, True, False, 0, 1, -1, "", "a", 1.5)


def _any_value(src: Source) -> Any:
    return src.pick(_SCALARS)


def compile_schema(schema: Any) -> Gen:
    """A generator for ``schema`` (cached per schema; a document's shared definitions by
    identity: serialising PagerDuty's 320 KB of them for each of 1,400 schemas took 2.5 s)."""
    shared = tuple(schema.get(k) for k in _SHARED) if isinstance(schema, Mapping) else ()
    body = {k: v for k, v in schema.items() if k not in _SHARED} if any(shared) else schema
    try:
        key = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return _build(schema, schema, 0)
    if not any(shared):
        return _cached(key)
    hit = _WITH_SHARED.get((key, tuple(map(id, shared))))
    if hit is None or any(a is not b for a, b in zip(hit[0], shared, strict=True)):
        if len(_WITH_SHARED) > 1024:
            _WITH_SHARED.clear()
        # built from key-sorted copies, as ``_cached`` builds: the same draws as before
        sorted_schema = orjson.loads(key)
        for name, defs in zip(_SHARED, shared, strict=True):
            if defs is not None:
                sorted_schema[name] = _sorted_copy(defs)
        hit = _WITH_SHARED[(key, tuple(map(id, shared)))] = (
            shared,
            _build(sorted_schema, sorted_schema, 0),
        )
    return hit[1]


def _sorted_copy(defs: Any) -> Any:
    """A key-sorted copy of shared definitions, made once per document."""
    hit = _SORTED.get(id(defs))
    if hit is None or hit[0] is not defs:
        try:
            copy = orjson.loads(orjson.dumps(defs, option=orjson.OPT_SORT_KEYS))
        except TypeError:  # past orjson's reach (an integer beyond 64 bits): as they are
            copy = defs
        hit = _SORTED[id(defs)] = (defs, copy)
    return hit[1]


_SHARED = ("$defs", "definitions")
_WITH_SHARED: dict[tuple[bytes, tuple[int, ...]], tuple[tuple[Any, ...], Gen]] = {}
_SORTED: dict[int, tuple[Any, Any]] = {}


@lru_cache(maxsize=1024)
def _cached(key: bytes) -> Gen:
    schema = orjson.loads(key)
    return _build(schema, schema, 0)


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        return {}
    node = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return {}
    return node


def _nothing(src: Source) -> Any:
    return None


def _build(schema: Any, root: Any, depth: int) -> Gen:
    if schema is True or schema is None:
        return _any_value
    if schema is False or not isinstance(schema, Mapping):
        return _nothing
    if depth > MAX_DEPTH:
        return _nothing
    if "$ref" in schema:
        target = _resolve(str(schema["$ref"]), root)
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
        merged = {**target, **rest} if isinstance(target, Mapping) else rest
        return _build(merged, root, depth + 1)
    inner = _build_plain(schema, root, depth)
    if schema.get("nullable") is True:
        return _one_of([inner, _nothing])
    return inner


def _one_of(options: list[Gen]) -> Gen:
    if len(options) == 1:
        return options[0]

    def gen(src: Source) -> Any:
        return options[src.index(len(options))](src)

    return gen


def _just(value: Any) -> Gen:
    def gen(src: Source) -> Any:
        return orjson.loads(orjson.dumps(value)) if isinstance(value, dict | list) else value

    return gen


def _build_plain(schema: Mapping[str, Any], root: Any, depth: int) -> Gen:
    if "const" in schema:
        return _just(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        choices = list(enum)
        return lambda src: src.pick(choices)
    if "allOf" in schema and isinstance(schema["allOf"], list):
        return _build(_merge_all(schema, root), root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema and isinstance(schema[key], list) and schema[key]:
            base = {k: v for k, v in schema.items() if k not in (key, "$defs")}
            return _one_of([_build({**base, **_as_map(s, root)}, root, depth + 1) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _one_of([_typed(str(k), schema, root, depth) for k in kind] or [_any_value])
    if kind is None:
        if "properties" in schema or "required" in schema:
            kind = "object"
        elif "items" in schema:
            kind = "array"
        else:
            return _any_value
    return _typed(str(kind), schema, root, depth)


def _as_map(schema: Any, root: Any) -> Mapping[str, Any]:
    if isinstance(schema, Mapping) and "$ref" in schema:
        target = _resolve(str(schema["$ref"]), root)
        return target if isinstance(target, Mapping) else {}
    return schema if isinstance(schema, Mapping) else {}


def _merge_all(schema: Mapping[str, Any], root: Any) -> dict[str, Any]:
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        part = _as_map(part, root)
        if "allOf" in part:
            part = _merge_all(part, root)
        for key, value in part.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = sorted(set(merged.get("required", [])) | set(value))
            else:
                merged.setdefault(key, value)
    return merged


def _typed(kind: str, schema: Mapping[str, Any], root: Any, depth: int) -> Gen:
    if kind == "null":
        return _nothing
    if kind == "boolean":
        return lambda src: src.boolean()
    if kind == "integer":
        return _integers(schema)
    if kind == "number":
        return _numbers(schema)
    if kind == "string":
        return _strings(schema)
    if kind == "array":
        return _arrays(schema, root, depth)
    if kind == "object":
        return _objects(schema, root, depth)
    return _any_value


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None]:
    low = schema.get("minimum")
    high = schema.get("maximum")
    ex_low = schema.get("exclusiveMinimum")
    ex_high = schema.get("exclusiveMaximum")
    if ex_low is True and low is not None:  # OpenAPI 3.0 spelling
        ex_low, low = low, None
    if ex_high is True and high is not None:
        ex_high, high = high, None
    lo = float(low) if isinstance(low, int | float) and _num(low) else None
    hi = float(high) if isinstance(high, int | float) and _num(high) else None
    if isinstance(ex_low, int | float) and _num(ex_low):
        lo = float(ex_low) if lo is None else max(lo, float(ex_low))
        lo = math.nextafter(lo, math.inf)
    if isinstance(ex_high, int | float) and _num(ex_high):
        hi = float(ex_high) if hi is None else min(hi, float(ex_high))
        hi = math.nextafter(hi, -math.inf)
    return lo, hi


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def integer_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The least and greatest integers a schema allows (None where it sets no bound)."""
    lo, hi = _bounds(schema)
    return (math.ceil(lo) if lo is not None else None, math.floor(hi) if hi is not None else None)


def _integers(schema: Mapping[str, Any]) -> Gen:
    lo, hi = _bounds(schema)
    low = max(math.ceil(lo), -INT_LIMIT) if lo is not None else -INT_LIMIT
    high = min(math.floor(hi), INT_LIMIT) if hi is not None else INT_LIMIT
    if low > high:
        return _just(low)
    near_low = max(low, min(high, 0))
    near_high = min(high, near_low + 100)
    edges = sorted({v for v in (low, high) if -INT_LIMIT < v < INT_LIMIT})
    step = schema.get("multipleOf")
    stride = step if isinstance(step, int) and step > 0 else 1

    def gen(src: Source) -> int:
        how = src.index(4)
        if how == 0 or how == 3:
            value = src.integer(near_low, near_high)
        elif how == 1 and edges:
            value = src.pick(edges)
        else:
            value = src.integer(low, high)
        if stride > 1:
            value -= value % stride
            if value < low:
                value += stride
        return value

    return gen


def _numbers(schema: Mapping[str, Any]) -> Gen:
    lo, hi = _bounds(schema)
    ints = _integers(schema)

    def gen(src: Source) -> float | int:
        if src.boolean():
            return ints(src)
        return src.number(lo, hi)

    return gen


_FORMAT_STRATEGIES: dict[str, st.SearchStrategy[str]] = {
    "uuid": st.uuids().map(str),
    "date-time": st.datetimes().map(lambda d: d.isoformat() + "Z"),
    "date": st.dates().map(lambda d: d.isoformat()),
    "email": st.from_regex(r"\A[a-z]{1,8}@[a-z]{1,8}\.(com|org|dev)\Z"),
    "uri": st.from_regex(r"\Ahttps://[a-z]{1,10}\.example/[a-z0-9]{0,8}\Z"),
    "ipv4": st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t))),
}


def _strings(schema: Mapping[str, Any]) -> Gen:
    min_size = int(schema.get("minLength", 0) or 0)
    max_len = schema.get("maxLength")
    max_n = int(max_len) if isinstance(max_len, int) else None
    pattern = schema.get("pattern")
    fmt = schema.get("format")
    if isinstance(pattern, str):
        fast = compile_pattern(pattern)
        if fast is not None:
            return fast
        try:
            strategy: st.SearchStrategy[str] = st.from_regex(pattern, fullmatch=True)
            strategy.validate()
        except Exception:  # a pattern Python's re cannot read: the validator is the judge
            strategy = st.text(max_size=12)
        if min_size or max_n is not None:
            strategy = strategy.filter(lambda s: len(s) >= min_size and (max_n is None or len(s) <= max_n))
        return lambda src: src.strategy(strategy)
    if isinstance(fmt, str) and fmt in _FORMAT_STRATEGIES:
        by_format = _FORMAT_STRATEGIES[fmt]
        return lambda src: src.strategy(by_format)
    top = max_n if max_n is not None else min_size + 12
    if top < min_size:
        return _just("")
    short = min(top, min_size + 8)

    def gen(src: Source) -> str:
        how = src.index(3)
        if how == 0:
            return src.string(LOWER, min_size, short)
        if how == 1:
            return src.string(ASCII, min_size, top)
        return src.string(UNICODE, min_size, top)

    return gen


def _arrays(schema: Mapping[str, Any], root: Any, depth: int) -> Gen:
    items = _build(schema.get("items", True), root, depth + 1)
    min_size = int(schema.get("minItems", 0) or 0)
    max_items = schema.get("maxItems")
    max_size = (
        min(int(max_items), min_size + MAX_ITEMS) if isinstance(max_items, int) else min_size + MAX_ITEMS
    )
    unique = schema.get("uniqueItems") is True

    def gen(src: Source) -> list[Any]:
        n = src.integer(min_size, max(min_size, max_size))
        out = [items(src) for _ in range(n)]
        if unique:
            seen: dict[bytes, Any] = {}
            for v in out:
                seen.setdefault(orjson.dumps(v, option=orjson.OPT_SORT_KEYS), v)
            out = list(seen.values())
        return out

    return gen


def _objects(schema: Mapping[str, Any], root: Any, depth: int) -> Gen:
    props = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    fields = [(name, _build(props.get(name, True), root, depth + 1), name in required) for name in props]
    fields += [(name, _any_value, True) for name in required if name not in props]

    def gen(src: Source) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, field, needed in fields:
            if needed or src.boolean():
                out[name] = field(src)
        return out

    return gen


# ------------------------------------------------------------------------------ adversarial


def object_properties(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str], Any]:
    """An object schema's properties, required names and ``additionalProperties`` (refs followed)."""
    node: Any = schema
    for _ in range(MAX_DEPTH):
        if isinstance(node, Mapping) and "$ref" in node:
            node = {**_resolve(str(node["$ref"]), schema), **{k: v for k, v in node.items() if k != "$ref"}}
        else:
            break
    if isinstance(node, Mapping) and "allOf" in node:
        node = _merge_all(node, schema)
    if not isinstance(node, Mapping):
        return {}, [], True
    props = {k: v for k, v in (node.get("properties") or {}).items()}
    required = [r for r in node.get("required") or [] if isinstance(r, str)]
    return props, required, node.get("additionalProperties", True)


_NEAR_MISSES = ("", "!", "a", "0", "A0", "a-b", " x ", "\u00e9")
"""Strings to try against a ``pattern``: most patterns refuse some of them."""


@lru_cache(maxsize=256)
def unmatched(pattern: str) -> tuple[str, ...]:
    """Up to two strings the pattern refuses (matched by the contract's own bounded regex
    engine, so a hostile pattern cannot hang the fuzzer): an input past the pattern is the
    classic unvalidated field."""
    try:
        check = SchemaValidator({"type": "string", "pattern": pattern})
    except ContractError:
        return ()
    return tuple(s for s in _NEAR_MISSES if not check.is_valid(s))[:2]


def boundary_values(field_schema: Any, root: Any) -> tuple[list[Any], list[Any]]:
    """A field's values just outside its bounds (the schema forbids them), and those on or just
    inside them with a few classic troublemakers (the schema may allow them)."""
    node = _as_map(field_schema, root)
    outside: list[Any] = []
    edges: list[Any] = []
    kind = node.get("type")
    if kind in ("integer", "number"):
        lo, hi = _bounds(node)
        for edge, step in ((lo, -1), (hi, 1)):
            if edge is not None and math.isfinite(edge):
                if kind == "integer":
                    base = int(math.ceil(edge) if step < 0 else math.floor(edge))
                    outside.append(base + step)
                    edges.extend([base, base - step])
                else:
                    outside.append(edge + step)
                    edges.append(edge)
        # the edges of JSON's numbers: past 32, 53 and 64 bits, negative zero, the largest floats
        # (a bare tool list gets harder ones too: ``JSON_EDGES``)
        edges.extend([0, -1, 2**31, -(2**31), 2**53 + 1, 2**64 + 1, -(2**63) - 1, 10**30])
        if kind == "number":
            edges.extend([-0.0, 1e308, -1e308, 5e-324])
    elif kind == "string":
        min_len = node.get("minLength")
        max_len = node.get("maxLength")
        if isinstance(min_len, int) and min_len > 0:
            outside.append("a" * (min_len - 1))
        if isinstance(max_len, int):
            outside.append("a" * (max_len + 1))
            edges.append("a" * max_len)
        if isinstance(node.get("enum"), list):
            outside.append("NOT_IN_ENUM")
        if isinstance(node.get("pattern"), str):
            outside.extend(unmatched(node["pattern"]))
        edges.extend(
            [
                "",
                " ",
                "\u00e9\u4e2d\U0001f600",
                "../../etc/passwd",
                "' OR 1=1 --",
                "%s%n",
                "a" * 10_000,
                "\x00",
            ]
        )
    elif kind == "array":
        edges.extend([[], [None] * 50])
    return outside, edges


MUTATIONS = ("boundary", "wrong_type", "boundary", "missing_field", "extra_field", "not_an_object")
"""How a probe breaks an input schema, drawn uniformly: values just past a field's bounds (its
pattern, length, range) twice as often as the rest, since each field has its own bounds and
off-by-one and missing validation hide there."""
TOOL_MUTATIONS = (*MUTATIONS, "json_edge", "json_edge", "every_field", "null_but_one")
"""The same for a bare tool list, and: (twice as often) one field at the hardest edge of its JSON
type (a tool list's fields have no bounds: the edges of JSON's types, ``JSON_EDGES``, are where
its bugs are); every field at once the same wrong value (all null), or null but one of a breaking
type: a method with no contract may compare two fields with state that is unset too (a token
never issued is null, and so is the one sent) before it reads a third, and a tool list has no
deep states to spend its probes on instead. A contract's probes keep ``MUTATIONS`` alone."""


def mutate(value: Any, schema: Mapping[str, Any], kind: str, choice: int, *, allow_non_object: bool) -> Any:
    """``value`` broken in the way ``kind`` names; ``choice`` picks which field and which value."""
    props, required, _additional = object_properties(schema)
    fields = dict(value) if isinstance(value, Mapping) else {}
    names = sorted(set(props) | set(fields))
    if kind == "not_an_object":
        if allow_non_object:
            return WRONG_VALUES[choice % len(WRONG_VALUES)] if choice % 3 else [fields]
        kind = "wrong_type"
    if kind == "missing_field":
        present = [n for n in required if n in fields] or [n for n in names if n in fields]
        if present:
            fields.pop(present[choice % len(present)])
            return fields
        kind = "extra_field"
    if kind == "extra_field":
        extra = ["unexpected", "__proto__", "id_", "$where", "\u202eadmin"][choice % 5]
        while extra in props:
            extra += "_"
        fields[extra] = WRONG_VALUES[choice % len(WRONG_VALUES)]
        return fields
    if not names:
        fields["unexpected"] = WRONG_VALUES[choice % len(WRONG_VALUES)]
        return fields
    if kind == "every_field":
        wrong = WRONG_VALUES[choice % len(WRONG_VALUES)]
        return {name: wrong for name in names}
    if kind == "json_edge":
        name = names[choice % len(names)]
        field = _as_map(props.get(name, {}), schema)
        hard: tuple[Any, ...] = JSON_EDGES.get(str(field.get("type")), JSON_EDGES["number"])
        items = _as_map(field.get("items", {}), schema) if field.get("type") == "array" else {}
        if items.get("type") in ("number", "integer"):
            hard = ([HUGE[0], 0.5], *hard)
        edge = fields[name] = hard[(choice // len(names)) % len(hard)]
        if edge in HUGE:
            # an integer no float holds next to floats: arithmetic mixing them overflows
            for other in names:
                if other != name and _as_map(props.get(other, {}), schema).get("type") == "number":
                    fields[other] = 0.5
        return fields
    if kind == "null_but_one":
        # the other fields null, this one of a type that breaks most code reading it
        one = names[choice % len(names)]
        return {**dict.fromkeys(names), one: BREAKING[(choice // len(names)) % len(BREAKING)]}
    name = names[choice % len(names)]
    if kind == "boundary":
        outside, edges = boundary_values(props.get(name, {}), schema)
        # half of the draws go just outside a bound, where off-by-one validation hides
        rest = choice // max(len(names), 1)
        candidates = outside if outside and rest % 2 == 0 else outside + edges
        if candidates:
            fields[name] = candidates[(rest // 2) % len(candidates)]
            return fields
    fields[name] = WRONG_VALUES[(choice // max(len(names), 1)) % len(WRONG_VALUES)]
    return fields
