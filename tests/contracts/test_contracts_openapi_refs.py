"""``$ref`` everywhere OpenAPI 3.0/3.1 allow it: path items, operations (written as references to
other files, DigitalOcean style), parameters, request bodies, responses and schemas, across files
and relative paths, never outside the document's folder; a reference that cannot be followed is an
error at its own location, never silently ignored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.contracts.errors import ContractError, InputError

RESOURCES = 400  # x 5 files each, plus shared ones: a document split into 2,000+ files


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def split_document(root: Path, count: int = RESOURCES) -> Path:
    """A document the way DigitalOcean writes one: a small root whose paths are references, one
    folder per resource, operations in their own files, shared parameters and responses."""
    paths = []
    for i in range(count):
        name = f"thing{i}"
        paths.append(f"  /{name}s:\n    $ref: 'resources/{name}/collection.yaml'")
        paths.append(
            f"  /{name}s/{{id}}:\n    get:\n      $ref: 'resources/{name}/get.yaml'\n"
            f"    delete:\n      $ref: 'resources/{name}/delete.yaml'"
        )
        write(root / f"resources/{name}/collection.yaml", "post:\n  $ref: 'create.yaml'\n")
        write(
            root / f"resources/{name}/create.yaml",
            f"operationId: create_{name}\n"
            "requestBody:\n  required: true\n  content:\n    application/json:\n"
            f"      schema: {{$ref: 'model.yaml#/{name}_new'}}\n"
            "responses:\n  '201':\n    description: created\n    content:\n      application/json:\n"
            f"        schema: {{$ref: 'model.yaml#/{name}'}}\n",
        )
        write(
            root / f"resources/{name}/get.yaml",
            f"operationId: get_{name}\n"
            "parameters:\n  - $ref: '../../shared/parameters.yaml#/id'\n"
            "responses:\n  '200':\n    description: the thing\n    content:\n      application/json:\n"
            f"        schema: {{$ref: 'model.yaml#/{name}'}}\n"
            "  '404':\n    $ref: '../../shared/responses.yaml#/not_found'\n",
        )
        write(
            root / f"resources/{name}/delete.yaml",
            f"operationId: delete_{name}\n"
            "parameters:\n  - $ref: '../../shared/parameters.yaml#/id'\n"
            "responses:\n  '204':\n    description: gone\n"
            "  '404':\n    $ref: '../../shared/responses.yaml#/not_found'\n",
        )
        write(
            root / f"resources/{name}/model.yaml",
            f"{name}_new:\n  type: object\n  properties:\n    label: {{type: string, maxLength: 20}}\n"
            "  required: [label]\n"
            f"{name}:\n  allOf:\n    - $ref: '#/{name}_new'\n"
            "    - type: object\n      properties:\n        id: {$ref: '../../shared/schemas.yaml#/id'}\n"
            "      required: [id]\n",
        )
    write(
        root / "shared/parameters.yaml",
        "id:\n  name: id\n  in: path\n  required: true\n  schema: {$ref: 'schemas.yaml#/id'}\n",
    )
    write(root / "shared/responses.yaml", "not_found:\n  description: no such thing\n")
    write(root / "shared/schemas.yaml", "id: {type: string, pattern: '^[a-z0-9-]+$'}\n")
    main = root / "api.yaml"
    write(main, "openapi: 3.0.3\ninfo: {title: split, version: '1'}\npaths:\n" + "\n".join(paths) + "\n")
    return main


def test_a_document_split_into_thousands_of_files_loads_through_its_refs(tmp_path: Path) -> None:
    main = split_document(tmp_path)
    assert sum(1 for _ in tmp_path.rglob("*.yaml")) > 2000
    contract = envfactory.load(main)
    assert len(contract.operations) == 3 * RESOURCES
    for i in (0, RESOURCES // 2, RESOURCES - 1):
        get = contract.operations[f"get_thing{i}"]
        create = contract.operations[f"create_thing{i}"]
        delete = contract.operations[f"delete_thing{i}"]
        # read through the references: parameters, body fields, responses, errors
        assert get.http is not None and get.http.path_params == ("id",)
        assert get.input_validator.is_valid({"id": "abc-1"})
        assert not get.input_validator.is_valid({"id": "NOT OK"})
        assert get.errors == {404: "no such thing"}
        assert get.output_validator.is_valid({"id": "x", "label": "a"})
        assert not get.output_validator.is_valid({"label": "a"})  # id required through allOf
        assert create.http is not None and create.http.success_status == 201
        assert create.input_validator.is_valid({"label": "a"})
        assert not create.input_validator.is_valid({"label": "a" * 21})
        assert delete.http is not None and delete.http.success_status == 204
        # and REST inference sees the resource the references describe
        assert f"thing{i}s" in contract.state
        assert [e.source for e in delete.effects] == [f"del thing{i}s[input.id]"]


@pytest.mark.parametrize(
    ("where", "files", "needle"),
    [
        ("path item", {"api.yaml": "paths:\n  /a:\n    $ref: 'missing.yaml'\n"}, "no such file"),
        (
            "operation",
            {"api.yaml": "paths:\n  /a:\n    get: {$ref: 'ops.yaml#/nope'}\n", "ops.yaml": "x: 1\n"},
            "points to nothing",
        ),
        (
            "parameter",
            {
                "api.yaml": "paths:\n  /a:\n    get:\n      parameters: [{$ref: '#/components/parameters/x'}]\n"
                "      responses: {'200': {description: ok}}\n"
            },
            "points to nothing",
        ),
        (
            "request body",
            {
                "api.yaml": "paths:\n  /a:\n    post:\n      requestBody: {$ref: '../outside.yaml'}\n"
                "      responses: {'200': {description: ok}}\n"
            },
            "leaves the contract's folder",
        ),
        (
            "response",
            {
                "api.yaml": "paths:\n  /a:\n    get:\n      responses: {'200': {$ref: 'https://x.test/r.yaml'}}\n"
            },
            "network",
        ),
    ],
)
def test_a_ref_that_cannot_be_followed_is_an_error_at_its_location(
    tmp_path: Path, where: str, files: dict[str, str], needle: str
) -> None:
    folder = tmp_path / "api"
    for name, text in files.items():
        body = f"openapi: 3.0.3\ninfo: {{title: t, version: '1'}}\n{text}" if name == "api.yaml" else text
        write(folder / name, body)
    write(tmp_path / "outside.yaml", "content: {}\n")
    with pytest.raises((ContractError, InputError)) as err:
        envfactory.load(folder / "api.yaml")
    assert needle in err.value.message, (where, err.value.message)
    location = err.value.location
    assert location is not None and location.line is not None and location.line > 3


def test_path_item_refs_within_the_document_are_followed(tmp_path: Path) -> None:
    write(
        tmp_path / "api.yaml",
        """openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /pets/{id}:
    $ref: '#/components/pathItems/pet'
components:
  pathItems:
    pet:
      parameters: [{$ref: '#/components/parameters/id'}]
      get:
        operationId: getPet
        responses:
          '200': {$ref: '#/components/responses/pet'}
  parameters:
    id: {name: id, in: path, required: true, schema: {type: integer}}
  responses:
    pet:
      description: a pet
      content:
        application/json:
          schema: {type: object, properties: {id: {type: integer}}, required: [id]}
""",
    )
    contract = envfactory.load(tmp_path / "api.yaml")
    op = contract.operations["getPet"]
    assert op.input_validator.is_valid({"id": 3}) and not op.input_validator.is_valid({"id": "x"})
    assert op.output_validator.is_valid({"id": 3}) and not op.output_validator.is_valid({})
