"""Loading contracts: locations in errors, hostile documents, ``$ref`` rules, compiled validators."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import envfactory
from envfactory.contracts import _refs, _source, _validate
from envfactory.contracts.errors import ContractError, ExpressionError, InputError, RefError
from envfactory.contracts.loader import contract_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SMALL = """\
envfactory: "1"
info: {title: Small, version: "1"}
state:
  count: {type: integer, initial: 0}
  items:
    collection: {key: {type: integer}, value: {$ref: "#/schemas/Item"}}
operations:
  add:
    input: {$ref: "#/schemas/Item"}
    requires:
      - check: not (input.id in items)
        error: {status: 409, message: exists}
    effects:
      - items[input.id] = input
      - count = count + 1
invariants: [count >= 0]
schemas:
  Item: {type: object, properties: {id: {type: integer}, name: {type: string}}, required: [id, name]}
"""


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_bundled_examples_load(name: str) -> None:
    contract = envfactory.load(EXAMPLES / name / f"{name}.yaml")
    assert contract.operations
    for op in contract.operations.values():
        assert op.input_validator is not None


def test_small_contract_loads_with_refs_bundled(tmp_path: Path) -> None:
    contract = envfactory.load(write(tmp_path, SMALL))
    add = contract.operations["add"]
    assert add.input_validator.is_valid({"id": 1, "name": "a"})
    violation = add.input_validator.first({"id": "x", "name": "a"})
    assert violation is not None and violation.path == ("id",) and violation.keyword == "type"
    assert add.requires[0].error is not None and add.requires[0].error.status == 409
    assert add.requires[0].loc.line == 11


def test_contract_schema_is_published_and_valid() -> None:
    schema = contract_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"


def test_unknown_key_points_at_line_and_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL.replace("    requires:", "    requirs:"))
    with pytest.raises(ContractError) as info:
        envfactory.load(path)
    text = str(info.value)
    assert "requirs" in text and "requires" in text
    assert info.value.location is not None and info.value.location.line >= 8


def test_expression_error_has_clause_location(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL.replace("count >= 0", "cuont >= 0"))
    with pytest.raises(ExpressionError) as info:
        envfactory.load(path)
    loc = info.value.location
    assert loc is not None and loc.line == 16
    assert "count" in info.value.message  # the closest name is suggested


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: !!python/object/apply:os.system ['true']\n", "unsupported YAML tag"),
        ("a: 1\na: 2\n", "duplicate key"),
        ("a: .nan\n", "finite"),
        ("a: " + "9" * 400 + "\n", "digits"),
        ("a: " + "[" * 200 + "]" * 200 + "\n", "nesting"),
        ("a: [1, 2\n", "not valid YAML"),
        ("a: 1\0\n", "NUL"),
    ],
)
def test_hostile_yaml_is_one_located_error(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        _source.load_document(path)
    assert needle in str(info.value)
    assert str(info.value).startswith(str(path))


@pytest.mark.timeout(600)
def test_alias_bomb_is_bounded(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="alias bomb"):  # refused before expansion; the mark guards a hang
        _source.load_document(path)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1]\nb: *x\n",
        "- &x 1\n- *x\n",
        '{"a": &x [1], "b": *x}',
        "[&x 1, *x]",
        "{a: [1,&x 2], b: *x}",
        "a:\n  &x\n  - 1\nb: *x\n",
        "a: !!seq &x [1]\nb: *x\n",
    ],
)
def test_every_anchor_the_parser_reads_is_one_the_text_scan_sees(text: str) -> None:
    """The pass that refuses alias bombs early is skipped only where the text has no anchor
    (``_source._ANCHOR``): an anchor it missed would skip it for a document with aliases."""
    import yaml

    composed = yaml.compose(text, Loader=yaml.SafeLoader)
    assert composed is not None and any(
        isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=yaml.SafeLoader)
    )
    assert _source._ANCHOR.search(text)


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(InputError) as info:
        _source.load_document(path)
    assert info.value.location is not None
    assert (info.value.location.line, info.value.location.col) == (2, 7)


def test_locations_of_keys_and_values(tmp_path: Path) -> None:
    doc = _source.load_document(write(tmp_path, "top:\n  inner: [1, {k: v}]\n"))
    assert isinstance(doc, _source.LocDict)
    loc = _source.locate(doc, ["top", "inner", 1, "k"], doc.loc)
    assert (loc.line, loc.col) == (2, 18)
    assert doc["top"]["inner"] == [1, {"k": "v"}]


def test_json_lines_saved_as_json(tmp_path: Path) -> None:
    path = write(tmp_path, '{"name": "a"}\n{"name": "b"}\n', name="tools.json")
    doc = _source.load_document(path)
    assert doc == [{"name": "a"}, {"name": "b"}]
    assert doc.item_locs[1].line == 2


# -- $ref ---------------------------------------------------------------------------------------


def test_ref_to_file_beside_the_contract(tmp_path: Path) -> None:
    write(
        tmp_path, "Item: {type: object, properties: {id: {type: integer}}, required: [id]}\n", "common.yaml"
    )
    schema = {"$ref": "common.yaml#/Item"}
    bundled = _refs.bundle(schema, document={}, document_path=tmp_path / "c.yaml")
    validator = _validate.SchemaValidator(bundled)
    assert validator.is_valid({"id": 3}) and not validator.is_valid({"id": "x"})


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("https://example.com/s.json", "network"),
        ("/etc/passwd", "absolute"),
        ("../outside.yaml#/X", "leaves the contract's folder"),
        ("#/schemas/Missing", "points to nothing"),
        ("nothere.yaml#/X", "no such file"),
    ],
)
def test_forbidden_or_dangling_refs(tmp_path: Path, ref: str, needle: str) -> None:
    (tmp_path.parent / "outside.yaml").write_text("X: {type: string}\n")
    sub = tmp_path / "c"
    sub.mkdir()
    with pytest.raises(RefError, match=needle):
        _refs.bundle({"$ref": ref}, document={"schemas": {}}, document_path=sub / "c.yaml")


def test_ref_cycle_is_named() -> None:
    doc = {"schemas": {"A": {"$ref": "#/schemas/B"}, "B": {"$ref": "#/schemas/A"}}}
    with pytest.raises(RefError) as info:
        _refs.bundle({"$ref": "#/schemas/A"}, document=doc)
    assert "cycle" in info.value.message and "A" in info.value.message and "B" in info.value.message


def test_recursive_schema_through_properties_is_fine() -> None:
    doc = {
        "schemas": {
            "Tree": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/schemas/Tree"}}},
            }
        }
    }
    bundled = _refs.bundle({"$ref": "#/schemas/Tree"}, document=doc)
    validator = _validate.SchemaValidator(bundled)
    assert validator.is_valid({"kids": [{"kids": []}]})
    assert not validator.is_valid({"kids": [{"kids": 3}]})


def test_contract_with_ref_outside_folder_fails_with_location(tmp_path: Path) -> None:
    text = SMALL.replace('value: {$ref: "#/schemas/Item"}', 'value: {$ref: "../x.yaml#/Item"}')
    with pytest.raises(RefError) as info:
        envfactory.load(write(tmp_path, text))
    assert info.value.location is not None and info.value.location.line == 6


# -- validation -----------------------------------------------------------------------------------


@pytest.mark.timeout(600)
def test_catastrophic_pattern_is_bounded() -> None:
    validator = _validate.SchemaValidator({"type": "string", "pattern": "^(a+)+$"})
    assert (
        validator.is_valid("a" * 40 + "!") is False
    )  # the backtracking limit ends it; the mark guards a hang


def test_invalid_schema_is_contract_error() -> None:
    with pytest.raises(ContractError, match="invalid JSON Schema"):
        _validate.SchemaValidator({"type": "no-such-type"})


def test_normalize_openapi_dialect() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tag": {"type": "string", "nullable": True, "example": "x"},
            "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        },
    }
    out = _validate.normalize_openapi(schema, "3.0.3")
    validator = _validate.SchemaValidator(out)
    assert validator.is_valid({"tag": None, "age": 1})
    assert not validator.is_valid({"age": 0})
    assert "example" not in json.dumps(out)
    assert _validate.normalize_openapi({"type": "integer", "exclusiveMinimum": 0}, "3.1.0") == {
        "type": "integer",
        "exclusiveMinimum": 0,
    }


@pytest.mark.parametrize(
    ("schema", "error"),
    [("{$ref: null}", RefError), ("{type: object, properties: true}", ContractError)],
)
def test_malformed_schemas_are_located_errors(tmp_path: Path, schema: str, error: type[Exception]) -> None:
    text = SMALL.replace('input: {$ref: "#/schemas/Item"}', f"input: {schema}")
    with pytest.raises(error) as info:
        envfactory.load(write(tmp_path, text))
    assert getattr(info.value, "location", None) is not None


def test_json_rpc_tools_list_is_a_tool_contract(tmp_path: Path) -> None:
    doc = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]},
    }
    path = write(tmp_path, json.dumps(doc), name="tools.json")
    assert "ping" in envfactory.load(path).operations


def test_unhashable_keys_are_evaluation_failures_not_crashes(tmp_path: Path) -> None:
    from envfactory.contracts import Machine

    loose = SMALL.replace(
        'input: {$ref: "#/schemas/Item"}', "input: {type: object, properties: {id: {}, name: {type: string}}}"
    )
    contract = envfactory.load(write(tmp_path, loose))
    machine = Machine(contract)
    state = machine.initial_state()
    add = contract.operations["add"]
    for bad in ({"a": 1}, [1, 2]):
        value = {"id": bad, "name": "x"}
        assert machine.check_requires(state, add, value) is None  # `not (k in items)` holds
        failure = machine.effect_failure(state, add, value, None)
        assert "keyed by integers or strings" in failure.message


def test_an_invariant_whose_names_did_not_change_is_not_evaluated_again(tmp_path: Path) -> None:
    """``check_invariants(post, before=pre)`` takes ``pre`` to hold every invariant (the fuzzer's
    model states do): an invariant none of whose names changed is skipped, one whose name was
    written is evaluated, and without ``before`` every one is."""
    from envfactory.contracts import Machine

    text = (
        'envfactory: "1"\ninfo: {title: Two, version: "1"}\n'
        "state:\n  a: {type: integer, initial: 0}\n  b: {type: integer, initial: 0}\n"
        "operations:\n  setb:\n    input: {type: object, properties: {v: {type: integer}}, required: [v]}\n"
        "    effects: [b = input.v]\n"
        "invariants: [a >= 0, b >= 0]\n"
    )
    contract = envfactory.load(write(tmp_path, text))
    machine = Machine(contract)
    setb = contract.operations["setb"]
    broken = machine.initial_state({"a": -1})  # breaks `a >= 0`: never a model state, a probe
    post = machine.apply(broken, setb, {"v": 2})
    assert machine.check_invariants(post, before=broken) is None  # `a` unchanged: skipped
    assert machine.check_invariants(post).clause_text == "a >= 0"
    worse = machine.apply(broken, setb, {"v": -3})
    assert machine.check_invariants(worse, before=broken).clause_text == "b >= 0"  # `b` written
