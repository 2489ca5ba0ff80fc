"""Fuzz set-up in proportion to a large document: ``fuzz --target sim --time-budget 10`` on
PagerDuty's published document (465 operations) ran no test case at all, its budget spent
loading the document twice and serialising the document's shared definitions (320 KB) once for
every input schema of every operation, in every round. Counts, not times."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import envfactory
from envfactory.cli import main
from envfactory.contracts import loader
from envfactory.fuzz import inputs
from envfactory.fuzz.draws import Source

DEFS = {
    "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
    "Tag": {"type": "string", "enum": ["a", "b"]},
}


def _draws(gen: inputs.Gen, count: int = 20) -> list[Any]:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    out: list[Any] = []

    @settings(max_examples=count, database=None, derandomize=True)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        out.append(gen(Source(data)))

    run()
    return out


def test_schemas_sharing_definitions_compile_once_and_draw_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    defs = {"Pet": dict(DEFS["Pet"]), "Tag": dict(DEFS["Tag"])}  # one shared object, as loaded
    first = {"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": defs}
    second = {"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": defs}
    dumped: list[int] = []
    real_dumps = orjson.dumps

    def dumps(value: Any, **kw: Any) -> bytes:
        text = real_dumps(value, **kw)
        dumped.append(len(text))
        return text

    monkeypatch.setattr(inputs.orjson, "dumps", dumps)
    gen = inputs.compile_schema(first)
    assert inputs.compile_schema(second) is gen
    assert inputs.compile_schema({**first, "required": ["pet"]}) is not gen
    # the definitions are serialised once (to sort them), not once per schema
    assert sum(1 for n in dumped if n >= len(real_dumps(defs))) == 1
    monkeypatch.setattr(inputs.orjson, "dumps", real_dumps)
    # the same draws as a schema compiled whole (key-sorted), the way every schema was before
    whole = inputs._build(*(2 * [orjson.loads(real_dumps(first, option=orjson.OPT_SORT_KEYS))]), 0)
    assert _draws(gen) == _draws(whole)


PETS = """\
openapi: 3.0.0
info: {title: pets, version: "1"}
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}, required: [name]}
      responses:
        '201':
          description: made
          content:
            application/json:
              schema:
                type: object
                properties: {id: {type: integer}, name: {type: string}}
                required: [id, name]
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        '200': {description: one}
        '404': {description: none}
"""


def test_fuzz_loads_the_document_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pets.yaml"
    path.write_text(PETS, "utf-8")
    loads: list[str] = []
    real_load = loader.load

    def counting(*args: Any, **kw: Any) -> Any:
        loads.append(str(args[0]))
        return real_load(*args, **kw)

    monkeypatch.setattr(loader, "load", counting)
    monkeypatch.setattr(envfactory, "load", counting)  # bound on first use elsewhere in the run
    with pytest.raises(SystemExit) as done:
        main(["fuzz", str(path), "--target", "sim", "--max-examples", "3", "--seed", "1", "--no-graph"])
    assert done.value.code == 0
    assert loads == [str(path)]


def test_definitions_orjson_cannot_serialise_still_compile() -> None:
    # DigitalOcean's and OpenAI's documents write integers past 64 bits (exit 70 once)
    defs = {"Big": {"type": "integer", "maximum": 2**70}}
    gen = inputs.compile_schema(
        {"type": "object", "properties": {"n": {"$ref": "#/$defs/Big"}}, "$defs": defs}
    )
    assert all(isinstance(v, dict) for v in _draws(gen, 5))
