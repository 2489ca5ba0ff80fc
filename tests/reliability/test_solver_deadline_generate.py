"""``generate`` costs in proportion to a large document (issue 16 item 1's leftover): validators
compile only the definitions their schema reaches, and exploration tries a bounded number of
operations in all, however many the document has. Counts, never durations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.contracts._validate import SchemaValidator, _used_defs
from envfactory.statemachine import walk

DEFS: dict[str, Any] = {
    "Name": {"type": "string", "minLength": 1},
    "Pet": {
        "type": "object",
        "properties": {
            "name": {"$ref": "#/$defs/Name"},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
        },
        "required": ["name"],
    },
    "Tag": {"type": "object", "properties": {"label": {"$ref": "#/$defs/Name"}}},
    "Unused": {"type": "object", "properties": {"x": {"$ref": "#/$defs/AlsoUnused"}}},
    "AlsoUnused": {"type": "integer"},
    "a/b": {"type": "boolean"},
}


def test_only_the_reached_definitions_are_compiled() -> None:
    schema = {"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": DEFS}
    assert set(_used_defs(schema)["$defs"]) == {"Pet", "Name", "Tag"}
    escaped = {"$ref": "#/$defs/a~1b", "$defs": DEFS}
    assert set(_used_defs(escaped)["$defs"]) == {"a/b"}
    assert _used_defs({"type": "integer", "$defs": DEFS})["$defs"] == {}


@pytest.mark.parametrize(
    "ref",
    ["#", "#/properties/pet", "#/$defs/Missing", "#/$defs/Pet%20x"],
)
def test_a_reference_it_cannot_follow_keeps_every_definition(ref: str) -> None:
    schema = {
        "type": "object",
        "properties": {"pet": {"$ref": "#/$defs/Pet"}, "other": {"$ref": ref}},
        "$defs": DEFS,
    }
    assert _used_defs(schema) == schema


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ({"pet": {"name": "rex", "tags": [{"label": "a"}]}}, True),
        ({"pet": {"name": "", "tags": []}}, False),
        ({"pet": {"name": "rex", "tags": [{"label": ""}]}}, False),
        ({"pet": {"tags": []}}, False),
    ],
)
def test_the_pruned_validator_answers_as_the_whole_one(value: Any, valid: bool) -> None:
    schema = {"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": DEFS}
    assert SchemaValidator(schema).is_valid(value) is valid


def _many_operations(count: int, folder: Path) -> Any:
    operations = {
        f"put{i}": {
            "input": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
            "effects": [f"c{i % 7}[input.k] = {i}"],
        }
        for i in range(count)
    }
    state = {
        f"c{j}": {"collection": {"key": {"type": "string"}, "value": {"type": "integer"}}} for j in range(7)
    }
    doc = {
        "envfactory": "1",
        "info": {"title": "Many", "version": "1"},
        "state": state,
        "operations": operations,
    }
    path = folder / "many.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return envfactory.load(path)


def test_exploration_of_many_operations_is_bounded_in_tries(tmp_path: Path) -> None:
    contract = _many_operations(1000, tmp_path)
    found = walk.explore(contract, seed=0)
    assert found.states <= max(2, walk.EXPLORE_TRIES // 1000)
    assert set(found.operations) == set(contract.operations)  # all reached from the first state
