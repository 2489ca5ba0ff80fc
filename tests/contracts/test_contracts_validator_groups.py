"""The validators of one document's schemas share one compiled copy of its definitions
(issue 16 item 1: each of Stripe's validators held its own copy, 1-3.5 MB each, and a served
session reached 1.9 GB): counted by compilations, not measured by time or memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import _refs, _validate
from envfactory.contracts.errors import ContractError, Location

BOX = Path(__file__).resolve().parents[1] / "realworld" / "corpus" / "box-openapi.json"

DOC = {
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "required": ["id", "name"],
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "name": {"type": "string", "maxLength": 8},
                    "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                },
            },
            "Tag": {"type": "string", "enum": ["a", "b"]},
        }
    }
}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    compiled: list[Any] = []
    real = jsonschema_rs.validator_for

    def counted(schema: Any, **kwargs: Any) -> Any:
        compiled.append(schema)
        return real(schema, **kwargs)

    monkeypatch.setattr(_validate.jsonschema_rs, "validator_for", counted)
    return compiled


def _bundler() -> _refs.DocumentBundler:
    return _refs.DocumentBundler(DOC, None)


def test_every_validator_of_a_large_document_compiles_its_definitions_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    contract = envfactory.load(BOX)
    compiled = _counting(monkeypatch)
    validators = [
        v for op in contract.operations.values() for v in (op.input_validator, op.output_validator) if v
    ]
    assert len(validators) > 500
    for v in validators:
        v.is_valid({})
        v.first(None)
    assert len(compiled) == 1  # before: one copy of the reachable definitions per validator


def test_a_member_joining_after_its_group_compiled_starts_the_next_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled = _counting(monkeypatch)
    bundler = _bundler()
    pet = _validate.SchemaValidator(bundler.bundle({"$ref": "#/components/schemas/Pet"}), lazy=True)
    tags = _validate.SchemaValidator(
        bundler.bundle({"type": "array", "items": {"$ref": "#/components/schemas/Tag"}}), lazy=True
    )
    assert pet.is_valid({"id": 1, "name": "Rex", "tags": ["a"]}) and tags.is_valid(["b"])
    later = _validate.SchemaValidator(bundler.bundle({"$ref": "#/components/schemas/Tag"}), lazy=True)
    assert later.is_valid("a") and not later.is_valid("c")
    assert not pet.is_valid({"id": 1, "name": "Rex", "tags": ["c"]})
    assert len(compiled) == 2


def test_a_member_that_is_no_json_schema_reports_its_own_place_and_spares_the_others() -> None:
    bundler = _bundler()
    good = _validate.SchemaValidator(bundler.bundle({"$ref": "#/components/schemas/Pet"}), lazy=True)
    bad = _validate.SchemaValidator(
        bundler.bundle({"type": "no-such-type"}), location=Location("api.yaml", 7, 3), lazy=True
    )
    assert good.is_valid({"id": 2, "name": "Tom"}) and not good.is_valid({"id": 0, "name": "Tom"})
    with pytest.raises(ContractError) as err:
        bad.is_valid(1)
    assert err.value.location == Location("api.yaml", 7, 3)


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["a", "b", "c", "x" * 9]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["id", "name", "tags", "other"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@given(value=VALUES)
@settings(max_examples=150, derandomize=True, database=None, deadline=None)
def test_a_group_member_answers_as_the_schema_compiled_alone(value: Any) -> None:
    bundler = _bundler()
    schemas = [
        bundler.bundle({"$ref": "#/components/schemas/Pet"}),
        bundler.bundle({"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"}}}),
        bundler.bundle({"type": "array", "items": {"$ref": "#/components/schemas/Tag"}, "maxItems": 2}),
    ]
    members = [_validate.SchemaValidator(s, lazy=True) for s in schemas]
    for schema, member in zip(schemas, members, strict=True):
        alone = _validate.SchemaValidator(schema)
        assert member._group is not None and alone._group is None
        assert member.is_valid(value) == alone.is_valid(value)
        assert list(member.violations(value)) == list(alone.violations(value))
        assert member.first(value) == alone.first(value)
