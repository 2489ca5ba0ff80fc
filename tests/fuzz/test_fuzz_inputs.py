"""Schema generators, mutations, key links and the pattern sampler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts._validate import SchemaValidator
from envfactory.fuzz import inputs
from envfactory.fuzz.draws import Source
from envfactory.fuzz.regex import compile_pattern
from envfactory.fuzz.steering import KeyField, key_fields

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = {
    name: envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
    for name in ("bank", "petstore", "tickets")
}
OPERATIONS = [(name, op) for name, c in CONTRACTS.items() for op in c.operations]


@pytest.mark.parametrize(("example", "operation"), OPERATIONS)
def test_generated_inputs_mostly_satisfy_the_schema(example, operation):
    op = CONTRACTS[example].operations[operation]
    gen = inputs.compile_schema(op.input_schema)
    results: list[bool] = []

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(st.data())
    def check(data):
        results.append(op.input_validator.is_valid(gen(Source(data))))

    check()
    assert sum(results) >= 0.9 * len(results)


SCHEMAS = [
    {"type": "integer", "minimum": 3, "maximum": 7},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    {"type": "string", "minLength": 2, "maxLength": 4},
    {"type": "string", "enum": ["a", "b"]},
    {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3, "uniqueItems": True},
    {"type": ["string", "null"]},
    {"anyOf": [{"type": "integer"}, {"type": "string", "format": "uuid"}]},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"const": 1}}, "required": ["b"]},
        ]
    },
    {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/X"}},
        "required": ["x"],
        "$defs": {"X": {"type": "string", "pattern": "^[a-f]{3}$"}},
    },
    {"type": "integer", "nullable": True, "minimum": 0},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_generators_cover_schema_keywords(schema):
    gen = inputs.compile_schema(schema)
    validator = SchemaValidator(
        {k: v for k, v in schema.items() if k != "nullable"}
        if "nullable" not in schema
        else {"type": ["integer", "null"], "minimum": 0}
    )

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(st.data())
    def check(data):
        value = gen(Source(data))
        assert validator.is_valid(value), value

    check()


@pytest.mark.parametrize("kind", sorted(set(inputs.TOOL_MUTATIONS)))
def test_mutations_break_a_valid_input(kind):
    op = CONTRACTS["bank"].operations["transfer"]
    valid = {"source": "AB01", "target": "AB02", "amount": 5}
    assert op.input_validator.is_valid(valid)
    broken = [
        inputs.mutate(valid, op.input_schema, kind, choice, allow_non_object=True) for choice in range(40)
    ]
    assert valid == {"source": "AB01", "target": "AB02", "amount": 5}  # not changed in place
    invalid = sum(not op.input_validator.is_valid(b) for b in broken)
    # boundary values and JSON's edges are edges (some inside, some just outside); the other
    # kinds always break
    assert invalid >= (5 if kind in ("boundary", "json_edge") else 30)
    if kind == "boundary":
        assert {b["amount"] for b in broken if isinstance(b.get("amount"), int)} & {0, 1}


def test_key_fields_are_found_with_how_they_name_keys():
    bank = CONTRACTS["bank"]
    assert key_fields(bank.operations["transfer"], bank) == (
        KeyField("source", "accounts", False),
        KeyField("target", "accounts", False),
    )
    assert key_fields(bank.operations["open"], bank) == (KeyField("account", "accounts", True),)
    pets = CONTRACTS["petstore"]
    assert key_fields(pets.operations["addPet"], pets) == (KeyField("id", "pets", True),)
    assert key_fields(pets.operations["login"], pets) == ()


@pytest.mark.parametrize(
    "pattern", [r"^[A-Z]{2}[0-9]{2,6}$", r"^[a-z0-9-]+$", r"\d+(\.\d+)?", r"^(foo|bar)_\w*$", r"^.{3,5}$"]
)
def test_pattern_sampler_matches(pattern):
    gen = compile_pattern(pattern)
    assert gen is not None

    @settings(max_examples=80, deadline=None, database=None, derandomize=True)
    @given(st.data())
    def check(data):
        text = gen(Source(data))
        assert re.search(pattern, text), text

    check()


@pytest.mark.parametrize("pattern", [r"^[^a]+$", r"(a)\1", r"(?=a)a", "("])
def test_pattern_sampler_declines_what_it_cannot_do(pattern):
    assert compile_pattern(pattern) is None


def test_boundary_values_reach_the_edges_of_json_types() -> None:
    """Adversarial inputs include integers past 64 bits, negative zero and the largest floats,
    empty, very long and NUL-bearing strings (where an API's parsing or arithmetic breaks)."""
    _, numbers = inputs.boundary_values({"type": "number"}, {})
    assert 2**64 + 1 in numbers and 1e308 in numbers
    assert any(isinstance(v, float) and v == 0 and str(v) == "-0.0" for v in numbers)
    _, strings = inputs.boundary_values({"type": "string"}, {})
    assert "" in strings and "\x00" in strings and max(map(len, strings)) >= 10_000
