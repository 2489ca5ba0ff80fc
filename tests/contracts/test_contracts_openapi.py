"""OpenAPI 3.0/3.1 to contracts: operations, inputs, outputs, dialect, inferred and explicit clauses."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import Contract, ContractError, Machine, RefError
from envfactory.contracts.errors import ExpressionError

PETS = """\
openapi: 3.0.3
info: {title: Pets, version: "2"}
paths:
  /pets:
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewPet"}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
        "400": {description: bad pet}
    get:
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, exclusiveMinimum: true}}
        - {name: X-Trace, in: header, required: true, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
      responses:
        "200":
          description: all pets
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Pet"}}
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: integer}}
    get:
      operationId: show pet by id
      responses:
        "200":
          description: one pet
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
        "404": {description: no such pet}
    put:
      operationId: replacePet
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewPet"}
      responses:
        "204": {description: replaced}
    delete:
      operationId: deletePet
      responses:
        "204": {description: deleted}
        "404": {description: no such pet}
  /pets/{petId}/photo:
    put:
      operationId: setPhoto
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      requestBody:
        content:
          application/octet-stream:
            schema: {type: string, format: binary}
      responses:
        "200": {description: stored}
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        tag: {type: string, nullable: true}
        age: {type: integer, minimum: 0, maximum: 50, exclusiveMaximum: true}
    Pet:
      allOf:
        - $ref: "#/components/schemas/NewPet"
        - type: object
          required: [id]
          properties:
            id: {type: integer, readOnly: true}
"""


def write(tmp_path: Path, text: str, name: str = "api.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str, **kwargs: Any) -> Contract:
    return envfactory.load(write(tmp_path, text), **kwargs)


def checks(contract: Contract, op: str, part: str = "requires") -> list[str]:
    return [c.source for c in getattr(contract.operations[op], part)]


def test_operation_names_are_operation_ids_or_method_and_path(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    assert contract.kind == "openapi"
    assert list(contract.operations) == [
        "createPet",
        "GET /pets",
        "show pet by id",
        "replacePet",
        "deletePet",
        "setPhoto",
    ]
    assert contract.title == "Pets" and contract.version == "2"


def test_parameters_and_object_body_become_one_input(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    listing = contract.operations["GET /pets"]
    assert set(listing.input_schema["properties"]) == {"limit", "X-Trace"}  # Accept and cookies dropped
    assert listing.input_schema["required"] == ["X-Trace"]
    assert listing.http is not None
    assert listing.http.query_params == ("limit",) and listing.http.header_params == ("X-Trace",)
    create = contract.operations["createPet"]
    assert set(create.input_schema["properties"]) == {"name", "tag", "age"}
    assert create.input_schema["required"] == ["name"]
    assert create.http is not None and create.http.body == "*"
    assert create.http.body_fields == ("name", "tag", "age")
    assert create.input_validator.is_valid({"name": "Rex"})
    assert not create.input_validator.is_valid({"tag": "dog"})
    assert not create.input_validator.is_valid({"name": "Rex", "color": "red"})  # undeclared argument


def test_body_goes_under_body_when_not_an_object_or_a_name_collides(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    photo = contract.operations["setPhoto"]
    assert photo.http is not None and photo.http.body == "body"
    assert photo.input_validator.is_valid({"petId": 1, "body": "...bytes..."})
    collide = PETS.replace(
        "required: [name]\n      properties:\n        name:",
        "required: [name]\n      properties:\n        petId: {type: integer}\n        name:",
    )
    replace = load(tmp_path, collide).operations["replacePet"]
    assert replace.http is not None and replace.http.body == "body"
    assert replace.input_validator.is_valid({"petId": 1, "body": {"name": "Rex", "petId": 1}})


def test_openapi_dialect_is_normalized(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    create = contract.operations["createPet"]
    assert create.input_validator.is_valid({"name": "Rex", "tag": None})  # nullable
    assert create.input_validator.is_valid({"name": "Rex", "age": 49})
    assert not create.input_validator.is_valid({"name": "Rex", "age": 50})  # 3.0 boolean exclusiveMaximum
    listing = contract.operations["GET /pets"]
    assert not listing.input_validator.is_valid({"X-Trace": "t", "limit": 1})  # exclusiveMinimum
    assert listing.input_validator.is_valid({"X-Trace": "t", "limit": 2})
    show = contract.operations["show pet by id"]
    assert show.output_validator.is_valid({"id": 1, "name": "Rex"})  # allOf composition
    assert not show.output_validator.is_valid({"name": "Rex"})
    assert "nullable" not in json.dumps(create.input_schema)


def test_openapi_31_type_arrays(tmp_path: Path) -> None:
    doc = """\
    openapi: 3.1.0
    info: {title: T, version: "1"}
    paths:
      /things/{id}:
        get:
          operationId: getThing
          parameters: [{name: id, in: path, required: true, schema: {type: string}}]
          responses:
            "200":
              description: ok
              content:
                application/json:
                  schema: {type: object, properties: {id: {type: string}, note: {type: [string, "null"]}}, required: [id]}
    """
    contract = load(tmp_path, doc)
    op = contract.operations["getThing"]
    assert op.output_validator.is_valid({"id": "a", "note": None})
    assert not op.output_validator.is_valid({"id": "a", "note": 3})
    assert contract.state["things"].key_type is not None


def test_output_is_the_2xx_schema_and_errors_are_kept(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    assert contract.operations["createPet"].errors == {400: "bad pet"}
    assert contract.operations["deletePet"].errors == {404: "no such pet"}
    assert contract.operations["deletePet"].output_schema is None
    create = contract.operations["createPet"]
    assert create.output_validator.is_valid({"id": 3, "name": "Rex"})


def test_rest_conventions_are_inferred_and_marked(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS)
    pets = contract.state["pets"]
    assert pets.collection and pets.inferred and not pets.known
    assert contract.open_world
    for name in ("show pet by id", "replacePet", "deletePet", "setPhoto"):
        (clause,) = contract.operations[name].requires
        assert clause.source == "input.petId in pets"
        assert clause.inferred and clause.error is not None and clause.error.status == 404
    assert [e.source for e in contract.operations["createPet"].effects] == ["pets[output.id] = output"]
    assert [e.source for e in contract.operations["deletePet"].effects] == ["del pets[input.petId]"]
    assert contract.operations["deletePet"].inferred_effects
    assert checks(contract, "show pet by id", "ensures") == ["output.petId == input.petId"] or checks(
        contract, "show pet by id", "ensures"
    ) == ["output.id == input.petId"]
    assert contract.operations["GET /pets"].requires == ()


def test_inferred_semantics_in_a_closed_world(tmp_path: Path) -> None:
    contract = load(tmp_path, PETS, closed_world=True)
    machine = Machine(contract)
    state = machine.initial_state()
    show = contract.operations["show pet by id"]
    failure = machine.check_requires(state, show, {"petId": 1})
    assert failure is not None and failure.error_status == 404 and failure.clause is not None
    create = contract.operations["createPet"]
    state = machine.apply(state, create, {"name": "Rex"}, {"id": 1, "name": "Rex"})
    assert machine.check_requires(state, show, {"petId": 1}) is None
    assert machine.check_ensures(state, show, {"petId": 1}, {"id": 2, "name": "Rex"}) is not None
    delete = contract.operations["deletePet"]
    state = machine.apply(state, delete, {"petId": 1})
    assert machine.check_requires(state, show, {"petId": 1}) is not None


def test_client_chosen_keys_and_conflicts(tmp_path: Path) -> None:
    doc = """\
    openapi: 3.0.0
    info: {title: Users, version: "1"}
    paths:
      /users:
        post:
          operationId: createUser
          requestBody:
            required: true
            content:
              application/json:
                schema:
                  type: object
                  required: [username]
                  properties: {username: {type: string}, email: {type: string}}
          responses:
            "200": {description: ok, content: {application/json: {schema: {type: object, properties: {email: {type: string}}}}}}
            "409": {description: taken}
      /users/{username}:
        get:
          operationId: getUser
          parameters: [{name: username, in: path, required: true, schema: {type: string}}]
          responses: {"200": {description: ok}}
    """
    contract = load(tmp_path, doc)
    create = contract.operations["createUser"]
    assert [e.source for e in create.effects] == ["users[input.username] = input"]
    assert [c.source for c in create.requires] == ["not (input.username in users)"]
    assert create.requires[0].error is not None and create.requires[0].error.status == 409


def test_links_with_required_fields_witness_the_target(tmp_path: Path) -> None:
    doc = """\
    openapi: 3.0.0
    info: {title: Orders, version: "1"}
    paths:
      /carts/{cartId}/checkout:
        post:
          operationId: checkout
          parameters: [{name: cartId, in: path, required: true, schema: {type: string}}]
          responses:
            "200":
              description: ok
              content: {application/json: {schema: {$ref: "#/components/schemas/Receipt"}}}
              links:
                order:
                  operationId: getOrder
                  parameters: {orderId: "$response.body#/order"}
      /orders/{orderId}:
        get:
          operationId: getOrder
          parameters: [{name: orderId, in: path, required: true, schema: {type: string}}]
          responses: {"200": {description: ok}}
    components:
      schemas:
        Receipt: {type: object, required: [order], properties: {order: {type: string}}}
    """
    contract = load(tmp_path, doc, closed_world=True)
    checkout = contract.operations["checkout"]
    assert [e.source for e in checkout.effects] == ["orders[output.order] = output"]
    machine = Machine(contract)
    state = machine.initial_state({"carts": {"c1": {}}})
    state = machine.apply(state, checkout, {"cartId": "c1"}, {"order": "o9"})
    assert machine.check_requires(state, contract.operations["getOrder"], {"orderId": "o9"}) is None


def test_links_on_optional_fields_are_not_relied_on(tmp_path: Path) -> None:
    contract = envfactory.load(
        Path(__file__).resolve().parents[1] / "realworld" / "corpus" / "link-example.yaml"
    )
    assert all(op.effects == () for op in contract.operations.values())


def test_x_envfactory_adds_state_and_explicit_clauses(tmp_path: Path) -> None:
    doc = PETS.replace(
        "paths:\n",
        textwrap.dedent(
            """\
            x-envfactory:
              state:
                created: {type: integer, initial: 0}
                favourites:
                  collection: {key: {type: string}, value: {$ref: "#/components/schemas/NewPet"}}
                  initial: {}
              invariants: [created >= 0]
              goals:
                many: created >= 3
            paths:
            """
        ),
        1,
    ).replace(
        "      operationId: createPet\n",
        "      operationId: createPet\n"
        "      x-envfactory:\n"
        "        requires: [{check: len(input.name) > 0, error: {status: 422, message: empty name}}]\n"
        "        effects: [created = created + 1]\n"
        "        ensures: [output.name == input.name]\n",
    )
    path = write(tmp_path, doc)
    contract = envfactory.load(path)
    assert contract.state["created"].known and not contract.state["created"].inferred
    favourites = contract.state["favourites"]
    assert favourites.known and favourites.collection and not favourites.inferred
    assert "name" in json.dumps(favourites.schema)  # the $ref into components resolved
    create = contract.operations["createPet"]
    assert [c.source for c in create.requires] == ["len(input.name) > 0"]
    assert not create.requires[0].inferred
    line = (
        doc.splitlines().index(
            "        requires: [{check: len(input.name) > 0, error: {status: 422, message: empty name}}]"
        )
        + 1
    )
    assert create.requires[0].loc.file == str(path) and create.requires[0].loc.line == line
    assert [e.source for e in create.effects] == ["pets[output.id] = output", "created = created + 1"]
    assert not create.inferred_effects
    assert [c.source for c in create.ensures] == ["output.name == input.name"]
    assert [c.source for c in contract.invariants] == ["created >= 0"]
    assert list(contract.goals) == ["many"]


def test_explicit_clause_errors_point_into_the_document(tmp_path: Path) -> None:
    doc = PETS.replace(
        "      operationId: deletePet\n",
        "      operationId: deletePet\n      x-envfactory:\n        requires: [input.petid in pets]\n",
    )
    with pytest.raises(ExpressionError) as err:
        load(tmp_path, doc)
    assert "petId" in str(err.value)  # the suggestion
    line = doc.splitlines().index("        requires: [input.petid in pets]") + 1
    assert err.value.location is not None and err.value.location.line == line


def test_x_envfactory_unknown_key_and_infer_false(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="did you mean 'requires'"):
        load(
            tmp_path,
            PETS.replace(
                "      operationId: deletePet\n",
                "      operationId: deletePet\n      x-envfactory: {require: []}\n",
            ),
        )
    plain = load(tmp_path, PETS.replace("paths:\n", "x-envfactory: {infer: false}\npaths:\n", 1))
    assert plain.state == {} and all(not op.requires and not op.effects for op in plain.operations.values())
    one = load(
        tmp_path,
        PETS.replace(
            "      operationId: deletePet\n",
            "      operationId: deletePet\n      x-envfactory: {infer: false}\n",
        ),
    )
    assert one.operations["deletePet"].requires == () and one.operations["replacePet"].requires != ()


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (("openapi: 3.0.3", "openapi: 2.0"), ContractError, "unsupported OpenAPI version"),
        (("operationId: replacePet", "operationId: deletePet"), ContractError, "duplicate operationId"),
        (
            ('{$ref: "#/components/schemas/NewPet"}', '{$ref: "#/components/schemas/Nope"}'),
            RefError,
            "points to nothing",
        ),
        (
            ('{$ref: "#/components/schemas/NewPet"}', '{$ref: "https://example.com/pet.json"}'),
            RefError,
            "network",
        ),
        (("in: query", "in: body"), ContractError, "expected path, query, header or cookie"),
    ],
)
def test_bad_documents_are_one_located_error(
    tmp_path: Path, change: tuple[str, str], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as err:
        load(tmp_path, PETS.replace(*change, 1))
    assert isinstance(err.value, ContractError)
    assert err.value.location is not None and err.value.location.line > 0


def test_no_operations_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no operations"):
        load(tmp_path, "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths: {}\n")


def test_refs_to_files_beside_the_document(tmp_path: Path) -> None:
    write(
        tmp_path, "Pet: {type: object, required: [name], properties: {name: {type: string}}}\n", "common.yaml"
    )
    contract = load(
        tmp_path, PETS.replace('{$ref: "#/components/schemas/NewPet"}', '{$ref: "common.yaml#/Pet"}', 1)
    )
    create = contract.operations["createPet"]
    assert create.input_validator.is_valid({"name": "Rex"}) and not create.input_validator.is_valid({})


def test_parameter_and_request_body_refs(tmp_path: Path) -> None:
    doc = """\
    openapi: 3.0.0
    info: {title: Refs, version: "1"}
    paths:
      /notes/{noteId}:
        parameters: [{$ref: "#/components/parameters/NoteId"}]
        patch:
          operationId: editNote
          requestBody: {$ref: "#/components/requestBodies/Note"}
          responses: {"200": {$ref: "#/components/responses/Note"}}
    components:
      parameters:
        NoteId: {name: noteId, in: path, required: true, schema: {type: integer}}
      requestBodies:
        Note: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/Note"}}}}
      responses:
        Note: {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Note"}}}}
      schemas:
        Note: {type: object, required: [text], properties: {text: {type: string, maxLength: 5}}}
    """
    contract = load(tmp_path, doc)
    op = contract.operations["editNote"]
    assert op.input_validator.is_valid({"noteId": 1, "text": "hi"})
    assert not op.input_validator.is_valid({"noteId": 1, "text": "too long"})
    assert op.output_validator.is_valid({"text": "x"})
    assert checks(contract, "editNote") == ["input.noteId in notes"]


def test_with_file_joins_an_openapi_document(tmp_path: Path) -> None:
    api = write(tmp_path, PETS)
    extra = write(
        tmp_path,
        """\
        state:
          budget: {type: integer, initial: 3}
        operations:
          createPet:
            requires: [{check: budget > 0, error: {status: 402}}]
            effects: [budget = budget - 1]
        invariants: [budget >= 0]
        """,
        "state.yaml",
    )
    contract = envfactory.load(api, with_state=extra)
    create = contract.operations["createPet"]
    assert [c.source for c in create.requires] == ["budget > 0"]
    assert create.requires[0].loc.file == str(extra)
    assert [e.source for e in create.effects] == ["pets[output.id] = output", "budget = budget - 1"]
    assert contract.state["budget"].initial == 3


def test_check_json_lists_every_operation(tmp_path: Path) -> None:
    from envfactory.cli.check import all_findings, report

    contract = load(tmp_path, PETS)
    data = report(contract, all_findings(contract))
    names = [op["name"] for op in data["operations"]]
    assert names == list(contract.operations)
    show = next(op for op in data["operations"] if op["name"] == "show pet by id")
    assert show["requires"][0]["inferred"] is True
    assert show["http"] == {
        "method": "GET",
        "path": "/pets/{petId}",
        "path_params": ["petId"],
        "query_params": [],
        "header_params": [],
        "body": None,
    }
    assert data["state"]["pets"]["initial"] == "unknown"
    json.dumps(data)


SEGMENT = st.sampled_from(["pets", "owners", "toys", "v2", "items"])


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.lists(SEGMENT, min_size=1, max_size=3),
            st.booleans(),
            st.sampled_from(["get", "put", "delete", "post"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_call_on_an_item_path_requires_its_item(tmp_path_factory: Any, routes: list[Any]) -> None:
    """Whatever the paths, an operation below a path parameter requires that instance (404), and
    only DELETE on the item itself removes it."""
    paths: dict[str, dict[str, Any]] = {}
    for literals, with_id, method in routes:
        route = "/" + "/".join(literals) + ("/{id}" if with_id else "")
        op: dict[str, Any] = {"responses": {"200": {"description": "ok"}}}
        if with_id:
            op["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]
        paths.setdefault(route, {})[method] = op
    doc = {"openapi": "3.0.0", "info": {"title": "gen", "version": "1"}, "paths": paths}
    path = tmp_path_factory.mktemp("gen") / "api.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    contract = envfactory.load(path)
    assert len(contract.operations) == sum(len(v) for v in paths.values())
    for operation in contract.operations.values():
        assert operation.http is not None
        has_id = operation.http.path.endswith("{id}")
        assert bool(operation.requires) == has_id
        for clause in operation.requires:
            assert clause.inferred and clause.error is not None and clause.error.status == 404
        deletes = [e for e in operation.effects if e.is_delete]
        assert bool(deletes) == (has_id and operation.http.method == "DELETE")


def test_integer_formats_bound_their_range(tmp_path: Path) -> None:
    contract = load(
        tmp_path,
        PETS.replace("age: {type: integer, minimum: 0,", "age: {type: integer, format: int32, minimum: 0,"),
    )
    listing = contract.operations["GET /pets"]
    show = contract.operations["show pet by id"]
    doc = load(
        tmp_path,
        PETS.replace(
            "- {name: petId, in: path, required: true, schema: {type: integer}}",
            "- {name: petId, in: path, required: true, schema: {type: integer, format: int32}}",
        ),
    )
    assert doc.operations["deletePet"].input_validator.is_valid({"petId": 2**31 - 1})
    assert not doc.operations["deletePet"].input_validator.is_valid({"petId": 2**31})
    assert contract.operations["createPet"].input_schema["properties"]["age"]["minimum"] == 0  # kept
    assert listing.input_validator.is_valid({"X-Trace": "t", "limit": 2**40}) and show is not None


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["", "x", "#/components/schemas/Pet", "object", "{id}"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "$ref",
                    "name",
                    "in",
                    "schema",
                    "type",
                    "properties",
                    "required",
                    "content",
                    "200",
                    "get",
                    "operationId",
                    "links",
                    "allOf",
                    "parameters",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
SPOTS = [
    ("paths", "/pets/{petId}"),
    ("paths", "/pets/{petId}", "get"),
    ("paths", "/pets/{petId}", "parameters"),
    ("paths", "/pets", "post", "requestBody"),
    ("paths", "/pets", "post", "responses"),
    ("paths", "/pets", "post", "responses", "201", "content"),
    ("paths", "/pets", "get", "parameters", 0),
    ("components", "schemas", "NewPet"),
    ("components", "schemas", "Pet", "allOf", 1),
    ("x-envfactory",),
    ("paths", "/pets/{petId}", "delete", "x-envfactory"),
]


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(SPOTS), JSON)
def test_hostile_documents_load_or_fail_with_one_error(
    tmp_path_factory: Any, spot: tuple[Any, ...], value: Any
) -> None:
    """Whatever sits anywhere in the document, loading gives a contract or an EnvfactoryError."""
    import yaml

    doc = yaml.safe_load(PETS)
    holder = doc
    for part in spot[:-1]:
        holder = holder[part]
    holder[spot[-1]] = value
    path = tmp_path_factory.mktemp("hostile") / "api.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        envfactory.load(path)
    except envfactory.EnvfactoryError as err:
        assert str(path) in str(err) or err.location is None


def test_with_file_may_declare_an_inferred_collection_known(tmp_path: Path) -> None:
    api = write(tmp_path, PETS)
    extra = write(
        tmp_path,
        """\
        state:
          pets:
            collection: {key: {type: integer}, value: {type: object}}
            initial: {"1": {"name": "Rex"}}
        """,
        "state.yaml",
    )
    contract = envfactory.load(api, with_state=extra)
    pets = contract.state["pets"]
    assert pets.known and not pets.inferred and pets.initial == {1: {"name": "Rex"}}
    machine = Machine(contract)
    show = contract.operations["show pet by id"]
    assert machine.check_requires(machine.initial_state(), show, {"petId": 1}) is None
    assert machine.check_requires(machine.initial_state(), show, {"petId": 2}) is not None


def test_nested_resources_key_by_every_parameter(tmp_path: Path) -> None:
    doc = """\
    openapi: 3.0.0
    info: {title: Repos, version: "1"}
    paths:
      /users/{owner}/repos:
        post:
          operationId: createRepo
          parameters: [{name: owner, in: path, required: true, schema: {type: string}}]
          responses:
            "201":
              description: ok
              content: {application/json: {schema: {type: object, required: [slug], properties: {slug: {type: string}}}}}
              links:
                again: {operationId: getRepo, parameters: {owner: "$request.path.owner", slug: "$response.body#/slug"}}
      /users/{owner}/repos/{slug}:
        parameters:
          - {name: owner, in: path, required: true, schema: {type: string}}
          - {name: slug, in: path, required: true, schema: {type: string}}
        get:
          operationId: getRepo
          responses: {"200": {description: ok}}
        delete:
          operationId: dropRepo
          responses: {"204": {description: ok}}
    """
    contract = load(tmp_path, doc, closed_world=True)
    assert checks(contract, "getRepo") == ['input.owner + "/" + input.slug in repos']
    assert [e.source for e in contract.operations["createRepo"].effects] == [
        'repos[input.owner + "/" + output.slug] = output'
    ]
    assert checks(contract, "createRepo") == ["input.owner in users"]
    machine = Machine(contract)
    state = machine.initial_state({"users": {"ann": {}}})
    state = machine.apply(state, contract.operations["createRepo"], {"owner": "ann"}, {"slug": "tools"})
    assert (
        machine.check_requires(state, contract.operations["getRepo"], {"owner": "ann", "slug": "tools"})
        is None
    )
    state = machine.apply(state, contract.operations["dropRepo"], {"owner": "ann", "slug": "tools"})
    assert (
        machine.check_requires(state, contract.operations["getRepo"], {"owner": "ann", "slug": "tools"})
        is not None
    )
