"""Schema sampling and regex generation: every drawn value fits its schema."""

from __future__ import annotations

import random
import re
import time

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.statemachine.sampling import Sampler, derive_seed, sample_regex

PATTERNS = [
    r"^[A-Z]{2}[0-9]{2,6}$",
    r"^(foo|bar)-\d+$",
    r"[a-f0-9]{8}-[a-f0-9]{4}",
    r"^\w+@\w+\.(com|org)$",
    r"^[^x]{3}$",
    r"^a?b*c+$",
    r"^(ab)\1$",
]

SCHEMAS = [
    {"type": "integer", "minimum": 5, "maximum": 9},
    {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5, "maximum": 50},
    {"type": "number", "minimum": -1, "maximum": 1},
    {"type": "string", "minLength": 3, "maxLength": 5},
    {"type": "string", "format": "email"},
    {"type": "string", "enum": ["a", "b"]},
    {"type": ["string", "null"]},
    {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4},
    {
        "type": "object",
        "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "minLength": 1}},
        "required": ["id", "name"],
        "additionalProperties": False,
    },
    {
        "$defs": {"P": {"type": "object", "properties": {"x": {"const": 3}}, "required": ["x"]}},
        "$ref": "#/$defs/P",
    },
    {"anyOf": [{"type": "boolean"}, {"type": "integer", "minimum": 100}]},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"required": ["b"], "properties": {"b": {"type": "string"}}},
        ]
    },
]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_sampled_strings_match_their_pattern(pattern: str, seed: int) -> None:
    text = sample_regex(pattern, random.Random(seed))
    assert text is not None
    assert re.search(pattern, text), (pattern, text)


def test_unsupported_regex_constructs_give_none() -> None:
    assert sample_regex(r"(?=a)b", random.Random(0)) is None
    assert sample_regex(r"[", random.Random(0)) is None


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: str(s)[:40])
@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_sampled_values_validate(schema: dict[str, object], seed: int) -> None:
    value = Sampler(random.Random(seed)).value(schema)
    jsonschema.validate(value, schema)


def test_sampling_is_a_function_of_the_seed() -> None:
    schema = SCHEMAS[8]
    first = [Sampler(random.Random(s)).value(schema) for s in range(20)]
    again = [Sampler(random.Random(s)).value(schema) for s in range(20)]
    assert first == again
    assert len({repr(v) for v in first}) > 10


@pytest.mark.parametrize(
    ("fmt", "shape"),
    [
        ("date-time", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"),
        ("date", r"\d{4}-\d\d-\d\d"),
        ("time", r"\d\d:\d\d:\d\d\+00:00"),
    ],
)
def test_dates_depend_on_the_seed_alone(fmt: str, shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not on the clock nor on the machine's time zone (Faker's dates depend on both): the same
    seed gives the same RFC 3339 text, with its UTC offset, on any day and machine."""
    schema = {"type": "string", "format": fmt}
    first = [Sampler(random.Random(s)).value(schema) for s in range(5)]
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14
    time.tzset()
    try:
        again = [Sampler(random.Random(s)).value(schema) for s in range(5)]
    finally:
        monkeypatch.undo()
        time.tzset()
    assert first == again
    assert len(set(first)) == 5
    assert all(re.fullmatch(shape, text) for text in first), first


def test_derived_seeds_are_stable_and_distinct() -> None:
    assert derive_seed(1, 2) == derive_seed(1, 2)
    assert len({derive_seed(1, i) for i in range(1000)}) == 1000
    assert 0 <= derive_seed("x") < 2**63


@given(st.integers(0, 2**32))
def test_integers_stay_within_64_bits_where_the_bounds_reach_past_them(seed: int) -> None:
    """OpenAI's ``seed`` is bounded by 2**63 as JavaScript prints it (9223372036854776000): a draw
    past 64 bits was a value orjson (and many JSON readers) refuse, and ``generate`` failed."""
    schema = {"type": "integer", "minimum": -9223372036854776000, "maximum": 9223372036854776000}
    sampler = Sampler(random.Random(seed))
    assert all(-(2**63) <= sampler.value(schema, schema) < 2**63 for _ in range(20))
    wide = {"type": "integer", "minimum": 2**70, "maximum": 2**70 + 5}  # nothing within 64 bits
    assert 2**70 <= sampler.value(wide, wide) <= 2**70 + 5


def test_recursive_schemas_stay_bounded() -> None:
    tree = {
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}, "minItems": 3}},
                "required": ["kids"],
            }
        },
        "$ref": "#/$defs/T",
    }

    def size(value: object) -> int:
        if isinstance(value, dict):
            return 1 + sum(size(v) for v in value.values())
        if isinstance(value, list):
            return 1 + sum(size(v) for v in value)
        return 1

    for seed in range(3):
        assert size(Sampler(random.Random(seed)).value(tree)) <= 2 * 2000 + 10


NULLABLE = [
    {"type": ["string", "null"], "pattern": "^AC[0-9a-f]{4}$"},
    {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "$defs": SCHEMAS[9]["$defs"]},
    {"type": ["object", "null"], "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    {"enum": ["a", None]},
    {"oneOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]},
]


@pytest.mark.parametrize("schema", [*SCHEMAS, *NULLABLE], ids=lambda s: str(s)[:40])
@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_present_values_are_valid_and_never_null(schema: dict[str, object], seed: int) -> None:
    # what an effect reads from an answer (a created record's key) is drawn as a value
    value = Sampler(random.Random(seed)).present(schema)
    assert value is not None
    jsonschema.validate(value, schema)


NESTED_ALL_OF = {
    # PagerDuty's shape: AddonReference = allOf [Reference, {type: enum}], Reference = allOf [base, ...]
    "$defs": {
        "Base": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "type": {"type": "string"}},
        },
        "Reference": {"allOf": [{"$ref": "#/$defs/Base"}, {"type": "object", "required": ["type", "id"]}]},
    },
    "allOf": [
        {"$ref": "#/$defs/Reference"},
        {"type": "object", "properties": {"type": {"type": "string", "enum": ["addon_reference"]}}},
    ],
}


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_a_property_every_all_of_part_declares_satisfies_them_all(seed: int) -> None:
    value = Sampler(random.Random(seed)).value(NESTED_ALL_OF)
    jsonschema.validate(value, NESTED_ALL_OF)
    assert value["type"] == "addon_reference"


def _plaid_levels(levels: int) -> dict[str, object]:
    """Plaid's Freddie Mac report shape: each record level a ``$ref`` to an ``allOf``."""
    defs: dict[str, object] = {}
    for i in range(levels):
        inner = {"$ref": f"#/$defs/L{i + 1}"} if i + 1 < levels else {"type": "string"}
        defs[f"L{i}"] = {"allOf": [{"type": "object", "properties": {"NEXT": inner}, "required": ["NEXT"]}]}
    return {"$ref": "#/$defs/L0", "$defs": defs}


@settings(max_examples=10, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_references_and_compositions_do_not_count_as_nesting(seed: int) -> None:
    schema = _plaid_levels(8)  # 8 levels, 16 hops: was cut off (null) past 12
    value = Sampler(random.Random(seed)).value(schema)
    jsonschema.validate(value, schema)


NULLABLE_NARROWED = {
    # Box's File--Full: one allOf part writes shared_link nullable, another says it is an object
    "$defs": {"Link": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
    "allOf": [
        {
            "type": "object",
            "properties": {"shared_link": {"anyOf": [{"$ref": "#/$defs/Link"}, {"type": "null"}]}},
        },
        {"type": "object", "properties": {"shared_link": {"type": "object"}}, "required": ["shared_link"]},
    ],
}


@pytest.mark.parametrize("lean", [False, True])
@settings(max_examples=15, deadline=None, database=None, derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_a_branch_whose_type_another_part_excludes_is_not_drawn(lean: bool, seed: int) -> None:
    sampler = Sampler(random.Random(seed))
    sampler.lean = lean  # the null branch is the simplest, so lean drawing picked it
    value = sampler.value(NULLABLE_NARROWED)
    jsonschema.validate(value, NULLABLE_NARROWED)
