"""Lenient loading: defects real documents have that do not change their meaning load with a
warning finding at the defect's own place; ``--strict`` makes them errors (exit 2, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import envfactory
from envfactory.cli import main
from envfactory.contracts import lint
from envfactory.contracts.errors import ContractError

DOC = """openapi: {version}
info: {{title: t, version: '1'}}
paths:
  /things:
    post:
      operationId: make
      requestBody:
        required: true
        content:
          application/json:
            schema: {{$ref: '#/components/schemas/Thing'}}
      responses:
        '201':
          description: made
          content:
            application/json:
              schema: {{$ref: '#/components/schemas/Thing'}}
components:
  schemas:
    Thing:
      type: object
      required: [id, size, id]
      properties:
        id: {{type: string, format: thing-id}}
        size:
          type: number
          minimum: 0
          exclusiveMinimum: true
"""


def write(tmp_path: Path, version: str = "3.1.0") -> Path:
    path = tmp_path / "api.yaml"
    path.write_text(DOC.format(version=version), encoding="utf-8")
    return path


def test_defects_load_with_warnings_at_their_own_place(tmp_path: Path) -> None:
    contract = envfactory.load(write(tmp_path))
    found = {f.kind: f for f in lint(contract)}
    assert found["duplicate-required"].location is not None
    assert (found["duplicate-required"].location.line, found["duplicate-required"].severity) == (
        22,
        "warning",
    )
    assert found["openapi-3.0-keyword"].location is not None
    assert found["openapi-3.0-keyword"].location.line == 28
    assert found["unknown-format"].location is not None
    assert found["unknown-format"].location.line == 24
    assert "thing-id" in found["unknown-format"].message
    # and the schema means what the document meant: a positive size, both fields required
    make = contract.operations["make"]
    assert make.input_validator.is_valid({"id": "a", "size": 1})
    assert not make.input_validator.is_valid({"id": "a", "size": 0})
    assert not make.input_validator.is_valid({"id": "a"})


def test_a_3_0_document_has_no_3_0_keyword_finding(tmp_path: Path) -> None:
    kinds = {f.kind for f in lint(envfactory.load(write(tmp_path, "3.0.3")))}
    assert "openapi-3.0-keyword" not in kinds
    assert {"duplicate-required", "unknown-format"} <= kinds


def test_strict_makes_the_first_defect_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path)
    with pytest.raises(ContractError) as err:
        envfactory.load(path, strict=True)
    assert err.value.location is not None and err.value.location.line in (22, 24, 28)
    with pytest.raises(SystemExit) as code:
        main(["check", str(path), "--strict"])
    assert code.value.code == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    with pytest.raises(SystemExit) as code:
        main(["check", str(path), "--format", "json"])
    assert code.value.code == 0
    kinds = [f["kind"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert kinds[:3] == ["duplicate-required", "unknown-format", "openapi-3.0-keyword"]


def test_json_with_escaped_surrogate_pairs_loads(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(yaml_doc()))
    doc["info"]["title"] = "thumbs \U0001f44d up"
    path = tmp_path / "api.json"
    path.write_text(json.dumps(doc, ensure_ascii=True), encoding="utf-8")
    assert "\\ud83d\\udc4d" in path.read_text(encoding="utf-8")
    assert envfactory.load(path).title == "thumbs \U0001f44d up"


def yaml_doc() -> dict[str, object]:
    import yaml

    result: dict[str, object] = yaml.safe_load(DOC.format(version="3.0.3"))
    return result


AGENT = """openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /runs:
    post:
      operationId: run
      responses:
        '201':
          description: started
          content:
            application/json:
              schema:
                type: object
                required: [id, agent]
                properties:
                  id: {type: string}
                  agent:
                    oneOf:
                      - {$ref: '#/components/schemas/UserRef'}
                      - {$ref: '#/components/schemas/Team/properties/lead/oneOf/1'}
                      - type: object
                        required: [type, id]
                        properties:
                          id: {type: string, example: PT4KHRS}
                          type: {type: string, example: workflow_reference}
components:
  schemas:
    UserRef:
      type: object
      required: [type, id]
      properties:
        id: {type: string}
        type: {type: string, enum: [user_reference]}
    Team:
      type: object
      properties:
        lead:
          oneOf:
            - {$ref: '#/components/schemas/UserRef'}
            - type: object
              required: [type, id]
              properties:
                id: {type: string, example: P000000}
                type: {type: string, example: service_reference}
"""


def test_identical_one_of_branches_load_as_one_with_a_warning_at_the_repeat(tmp_path: Path) -> None:
    """PagerDuty's ``metadata.agent``: a reference listed twice (once by ``$ref``, once inline,
    differing in examples) leaves no value matching exactly one branch; read as one, warned."""
    path = tmp_path / "agent.yaml"
    path.write_text(AGENT, encoding="utf-8")
    contract = envfactory.load(path)
    (finding,) = [f for f in lint(contract) if f.kind == "identical-oneof"]
    assert finding.severity == "warning" and "branches 2 and 3" in finding.message
    assert finding.location is not None and finding.location.line == 21  # the repeated branch
    run = contract.operations["run"]
    assert run.output_validator is not None
    assert run.output_validator.is_valid({"id": "r1", "agent": {"id": "P1", "type": "workflow_reference"}})
    assert (
        run.output_validator.is_valid({"id": "r1", "agent": {"id": "P1", "type": "user_reference"}}) is False
    )
    sim = envfactory.Simulator(contract, seed=3)
    for _ in range(20):
        response = sim.call("run", {})
        assert response.ok and run.output_validator.is_valid(response.output), response
    with pytest.raises(ContractError) as err:
        envfactory.load(path, strict=True)
    assert err.value.location is not None and err.value.location.line == 21
