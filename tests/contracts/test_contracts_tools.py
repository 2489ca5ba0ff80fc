"""Tool lists to contracts: OpenAI, MCP, Anthropic, BFCL spellings, and joining a native file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import ContractError, Machine, _source, tools
from envfactory.contracts._dialect import normalize_tool_schema
from envfactory.contracts.errors import ExpressionError

WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}


def dump(tmp_path: Path, doc: Any, name: str = "tools.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "doc",
    [
        [{"type": "function", "function": WEATHER}],
        [WEATHER],
        {"tools": [{"type": "function", "function": WEATHER}]},
        WEATHER,
    ],
    ids=["openai", "bare", "request", "single"],
)
def test_openai_function_lists(tmp_path: Path, doc: Any) -> None:
    contract = envfactory.load(dump(tmp_path, doc))
    assert contract.kind == "tools"
    op = contract.operations["get_weather"]
    assert op.description == "Weather in a city."
    assert op.input_validator.is_valid({"city": "Oslo", "unit": "c"})
    assert not op.input_validator.is_valid({"unit": "k"})
    assert op.output_schema is None


def test_mcp_tools_list_with_output_schema(tmp_path: Path) -> None:
    mcp = {
        "tools": [
            {
                "name": "add",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"],
                },
            },
            {"name": "ping", "inputSchema": {"type": "object"}},
        ]
    }
    for doc in (mcp, {"jsonrpc": "2.0", "id": 1, "result": mcp}):
        path = dump(tmp_path, doc)
        # a JSON-RPC response is read by from_tools; the loader's sniffing may not route it yet
        contract = tools.from_tools(_source.load_document(path), path)
        add = contract.operations["add"]
        assert add.output_validator.is_valid({"sum": 3})
        assert not add.output_validator.is_valid({"total": 3})
        assert contract.operations["ping"].input_validator.is_valid({})


def test_anthropic_input_schema_and_local_defs(tmp_path: Path) -> None:
    tool = {
        "name": "book",
        "input_schema": {
            "type": "object",
            "properties": {"slot": {"$ref": "#/$defs/Slot"}},
            "required": ["slot"],
            "$defs": {"Slot": {"type": "object", "properties": {"hour": {"type": "integer", "maximum": 23}}}},
        },
    }
    contract = envfactory.load(dump(tmp_path, [tool]))
    op = contract.operations["book"]
    assert op.input_validator.is_valid({"slot": {"hour": 9}})
    assert not op.input_validator.is_valid({"slot": {"hour": 24}})


def test_bfcl_json_lines_and_type_spellings(tmp_path: Path) -> None:
    lines = [
        {
            "name": "mean",
            "description": "Average.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "numbers": {"type": "array", "items": {"type": "float"}},
                    "weights": {"type": "tuple", "items": {"type": "integer"}, "default": "None"},
                    "extra": {"type": "any"},
                },
                "required": ["numbers"],
            },
            "response": {"type": "dict", "properties": {"result": {"type": "float"}}},
        },
        {
            "name": "touch",
            "parameters": {
                "type": "dict",
                "properties": {"file_name": {"type": "string"}},
                "required": ["file_name"],
            },
        },
    ]
    path = dump(tmp_path, "\n".join(json.dumps(line) for line in lines) + "\n", "docs.json")
    contract = envfactory.load(path)
    mean = contract.operations["mean"]
    assert mean.input_schema["type"] == "object"
    assert mean.input_validator.is_valid({"numbers": [1, 2.5], "weights": None, "extra": {"x": [1]}})
    assert not mean.input_validator.is_valid({"numbers": ["a"]})
    assert mean.output_validator.is_valid({"result": 1.5})
    assert not mean.output_validator.is_valid({"result": "x"})
    assert contract.operations["touch"].loc.line == 2


def test_dialect_normalization_rules() -> None:
    schema = normalize_tool_schema(
        {
            "type": "dict",
            "properties": {
                "mode": {"type": "string", "enum": ["a", "b"], "default": "None"},
                "pair": {"type": "tuple", "items": [{"type": "int"}, {"type": "str"}]},
                "flag": {"type": "bool", "required": True},
                "x": {"type": "number", "nullable": True},
            },
        }
    )
    props = schema["properties"]
    assert schema["type"] == "object"
    assert props["mode"]["type"] == ["string", "null"] and None in props["mode"]["enum"]
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["flag"] == {"type": "boolean"}
    assert props["x"]["type"] == ["number", "null"]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([WEATHER, WEATHER], "duplicate tool name 'get_weather'"),
        ([], "the tool list is empty"),
        ([WEATHER, "oops"], "a tool must be an object"),
        ([{"name": "", "parameters": {}}], "non-empty string 'name'"),
        ([{"name": "x", "parameters": "text"}], "must be a JSON Schema object"),
    ],
)
def test_bad_tool_lists(tmp_path: Path, doc: Any, message: str) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    with pytest.raises(ContractError, match=message) as err:
        envfactory.load(path)
    assert err.value.location is not None and err.value.location.file == str(path)


STATE = """\
envfactory: "1"
state:
  cwd: {type: string, initial: /}
  files:
    collection: {key: {type: string}, value: {$ref: "#/schemas/File"}}
    initial: {}
operations:
  touch:
    requires:
      - check: not (input.file_name in files)
        error: {status: 409, message: exists}
    effects: ['files[input.file_name] = {"name": input.file_name, "size": 0}']
  cat:
    requires: [{check: input.file_name in files, error: {status: 404}}]
    output: {type: object, properties: {file_content: {type: string}}}
invariants: [len(cwd) > 0]
goals:
  has_files: len(files) > 0
schemas:
  File: {type: object, properties: {name: {type: string}, size: {type: integer}}, required: [name, size]}
"""

FS = [
    {
        "name": "touch",
        "parameters": {
            "type": "dict",
            "properties": {"file_name": {"type": "string"}},
            "required": ["file_name"],
        },
    },
    {
        "name": "cat",
        "parameters": {
            "type": "dict",
            "properties": {"file_name": {"type": "string"}},
            "required": ["file_name"],
        },
    },
]


def test_with_file_adds_state_and_clauses(tmp_path: Path) -> None:
    tools = dump(tmp_path, FS)
    extra = tmp_path / "state.yaml"
    extra.write_text(STATE, encoding="utf-8")
    contract = envfactory.load(tools, with_state=extra)
    assert set(contract.state) == {"cwd", "files"}
    touch = contract.operations["touch"]
    assert touch.requires[0].loc.file == str(extra) and touch.requires[0].loc.line == 10
    assert contract.operations["cat"].output_validator.is_valid({"file_content": "x"})
    assert list(contract.goals) == ["has_files"] and len(contract.invariants) == 1
    machine = Machine(contract)
    state = machine.initial_state()
    assert machine.check_requires(state, contract.operations["cat"], {"file_name": "a"}) is not None
    state = machine.apply(state, touch, {"file_name": "a"})
    assert machine.check_requires(state, contract.operations["cat"], {"file_name": "a"}) is None
    assert machine.check_requires(state, touch, {"file_name": "a"}) is not None


@pytest.mark.parametrize(
    ("change", "error", "message", "line"),
    [
        (("  cat:\n", "  cats:\n"), ContractError, "did you mean 'cat'", 13),
        (
            ("    output:", "    input: {type: object}\n    output:"),
            ContractError,
            "input comes from the tool list",
            15,
        ),
        (("invariants:", "invariant:"), ContractError, "did you mean 'invariants'", 16),
        (("not (input.file_name in files)", "not (input.file_name in file)"), ExpressionError, "files", 10),
    ],
)
def test_with_file_errors(
    tmp_path: Path, change: tuple[str, str], error: type[Exception], message: str, line: int
) -> None:
    tools = dump(tmp_path, FS)
    extra = tmp_path / "state.yaml"
    extra.write_text(STATE.replace(*change, 1), encoding="utf-8")
    with pytest.raises(error, match=message) as err:
        envfactory.load(tools, with_state=extra)
    assert isinstance(err.value, ContractError)
    assert err.value.location is not None and err.value.location.file == str(extra)
    assert err.value.location.line == line


def test_with_file_refused_for_native_contracts(tmp_path: Path) -> None:
    native = Path(__file__).resolve().parents[2] / "examples" / "bank" / "bank.yaml"
    extra = tmp_path / "state.yaml"
    extra.write_text(textwrap.dedent(STATE), encoding="utf-8")
    with pytest.raises(ContractError, match="--with"):
        envfactory.load(native, with_state=extra)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["", "x", "dict", "float", "None", "#/$defs/A"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "type",
                    "function",
                    "parameters",
                    "properties",
                    "required",
                    "items",
                    "default",
                    "$ref",
                    "$defs",
                    "tools",
                    "inputSchema",
                    "response",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(JSON, st.sampled_from(["doc", "tool", "parameters", "property"]))
def test_hostile_tool_lists_load_or_fail_with_one_error(
    tmp_path_factory: Any, value: Any, where: str
) -> None:
    """Whatever a tool list holds, loading gives a contract or an EnvfactoryError."""
    tool: dict[str, Any] = {
        "name": "t",
        "parameters": {"type": "dict", "properties": {"a": {"type": "string"}}},
    }
    if where == "doc":
        doc: Any = value
    elif where == "tool":
        doc = [tool, value]
    elif where == "parameters":
        doc = [{**tool, "parameters": value}]
    else:
        doc = [{**tool, "parameters": {"type": "dict", "properties": {"a": value}}}]
    path = tmp_path_factory.mktemp("hostile") / "tools.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        envfactory.load(path)
    except envfactory.EnvfactoryError as err:
        assert err.location is None or err.location.file == str(path)
