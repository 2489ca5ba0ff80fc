"""BFCL's multi-turn function docs (from the ``bfcl-eval`` package, unchanged) load as tool lists.

Each file is JSON Lines saved as ``.json``, with Python type spellings (``dict``, ``float``,
``tuple``, ``any``) and ``"default": "None"`` for optional arguments; every function must come out
as an operation whose input validator accepts the natural values of its declared types.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.contracts import Contract

JSON_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


def doc_dir() -> Path | None:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / "multi_turn_func_doc"
    return path if path.is_dir() else None


DOCS = doc_dir()
FILES = sorted(DOCS.glob("*.json")) if DOCS is not None else []
pytestmark = pytest.mark.skipif(DOCS is None, reason="bfcl-eval is not installed")


def raw_functions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sample(schema: dict[str, Any], raw: dict[str, Any]) -> Any:
    """A natural value for a parameter as BFCL declares it (read from the raw doc, not ours)."""
    if "enum" in raw:
        return raw["enum"][0]
    kind = str(raw.get("type"))
    return {
        "string": "text",
        "integer": 3,
        "float": 2.5,
        "boolean": True,
        "array": [],
        "tuple": [],
        "dict": {},
        "any": [1, "x"],
    }.get(kind, "text")


def types_in(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            found.add(kind)
        elif isinstance(kind, list):
            found.update(kind)
        for key, value in schema.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    found |= types_in(sub)
            elif key != "enum" and key != "default":
                found |= types_in(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= types_in(item)
    return found


def test_the_package_ships_function_docs() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_function_doc_loads_as_a_tool_list(path: Path) -> None:
    contract: Contract = envfactory.load(path)
    functions = raw_functions(path)
    assert contract.kind == "tools"
    assert list(contract.operations) == [f["name"] for f in functions]
    for index, function in enumerate(functions):
        op = contract.operations[function["name"]]
        assert op.loc.line == index + 1  # one function per line
        assert types_in(op.input_schema) <= JSON_TYPES
        if "response" in function:
            assert op.output_schema is not None and types_in(op.output_schema) <= JSON_TYPES
        raw_params = function["parameters"].get("properties", {})
        required = function["parameters"].get("required", [])
        call = {name: sample(op.input_schema["properties"][name], raw_params[name]) for name in required}
        assert op.input_validator.is_valid(call), (function["name"], call, op.input_validator.first(call))
        full = {name: sample(op.input_schema["properties"][name], spec) for name, spec in raw_params.items()}
        assert op.input_validator.is_valid(full), (function["name"], full, op.input_validator.first(full))
        for name, spec in raw_params.items():
            if spec.get("default") == "None":
                assert op.input_validator.is_valid({**call, name: None}), (function["name"], name)
        if required:
            missing = {k: v for k, v in call.items() if k != required[0]}
            assert not op.input_validator.is_valid(missing)
