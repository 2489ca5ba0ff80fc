"""Shapes found in published OpenAPI sources that our own corpus lacked, each cut down to its
essence: DigitalOcean's split source (a ``$ref`` standing for a whole ``properties`` map, in
another file), responses that wrap the created record in a field they do not mark required
(DigitalOcean, PagerDuty), and a document whose abstract start states cannot be enumerated in
the time given (Twilio's api_v2010 made ``check`` exit 70)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import envfactory
from envfactory.cli import main

OPENAPI_HEAD = """\
openapi: 3.0.0
info: {title: split, version: "1"}
"""


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        text = textwrap.dedent(text)
        target.write_text(OPENAPI_HEAD + text if name == "api.yaml" else text, "utf-8")
    return folder / "api.yaml"


def test_a_ref_standing_for_a_properties_map_is_replaced_by_its_target(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "api.yaml": """\
            paths:
              /v2/load_balancers/{lb_id}/droplets:
                $ref: resources/lb/paths.yml
            """,
            "resources/lb/paths.yml": """\
            post:
              $ref: add_droplets.yml
            """,
            "resources/lb/add_droplets.yml": """\
            operationId: loadBalancers_add_droplets
            parameters:
              - {name: lb_id, in: path, required: true, schema: {type: string}}
            requestBody:
              required: true
              content:
                application/json:
                  schema:
                    properties:
                      $ref: 'models/attributes.yml#/load_balancer_droplet_ids'
                    required: [droplet_ids]
            responses:
              '204': {description: done}
            """,
            "resources/lb/models/attributes.yml": """\
            load_balancer_droplet_ids:
              droplet_ids:
                type: array
                items: {type: integer}
            """,
        },
    )
    contract = envfactory.load(path)
    op = contract.operations["loadBalancers_add_droplets"]
    assert op.input_validator is not None
    assert op.input_validator.is_valid({"lb_id": "a", "droplet_ids": [1, 2]})
    assert not op.input_validator.is_valid({"lb_id": "a", "droplet_ids": ["x"]})
    assert not op.input_validator.is_valid({"lb_id": "a"})  # droplet_ids is required


def test_a_create_answering_an_optional_wrapper_field_still_stores_the_record(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "api.yaml": """\
            paths:
              /v2/add-ons/saas:
                post:
                  operationId: addons_create
                  requestBody:
                    required: true
                    content:
                      application/json:
                        schema: {type: object, properties: {name: {type: string}}, required: [name]}
                  responses:
                    '200':
                      description: created
                      content:
                        application/json:
                          schema:
                            properties:
                              resource: {$ref: '#/components/schemas/addon'}
              /v2/add-ons/saas/{resource_uuid}:
                get:
                  operationId: addons_get
                  parameters:
                    - {name: resource_uuid, in: path, required: true, schema: {type: string}}
                  responses:
                    '200':
                      description: one
                      content:
                        application/json:
                          schema:
                            properties:
                              resource: {$ref: '#/components/schemas/addon'}
                    '404': {description: none}
            components:
              schemas:
                addon:
                  type: object
                  properties: {uuid: {type: string}, name: {type: string}}
                  required: [uuid, name]
            """,
        },
    )
    contract = envfactory.load(path)
    effects = [e.source for e in contract.operations["addons_create"].effects]
    assert effects == ["saas[output.resource.uuid] = output.resource"]
    _exits_cleanly(["check", str(path)])


def test_start_states_that_cannot_be_enumerated_in_time_give_no_graph_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from envfactory.solver import graph

    def undecided(*_: object) -> list[object]:
        raise graph._Undecided

    monkeypatch.setattr(graph, "_enumerate", undecided)
    bank = Path(__file__).parents[2] / "examples" / "bank" / "bank.yaml"
    _exits_cleanly(["check", str(bank)])
    assert "internal error" not in capsys.readouterr().err


def _exits_cleanly(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code in (0, None)


def test_code_samples_in_block_scalars_are_text_not_nesting(tmp_path: Path) -> None:
    """Asana's descriptions hold JavaScript samples: brackets and quotes that YAML reads as text."""
    lines = ['let body = {\'data\': {"<PARAM_1>": "<VALUE_1>",}};', "it's " + "{" * 70]
    sample = "\n".join(" " * 22 + line for line in lines)
    path = _write(
        tmp_path,
        {
            "api.yaml": """\
            paths:
              /tasks:
                get:
                  operationId: getTasks
                  description: |
            SAMPLE
                  responses:
                    200:
                      description: the tasks
                      content:
                        application/json:
                          schema: {type: object, properties: {data: {type: array}}, required: [data]}
            """.replace("            SAMPLE", sample)
        },
    )
    op = envfactory.load(path).operations["getTasks"]
    # the unquoted 200 (a number to YAML) is still the success response
    assert op.output_validator is not None and not op.output_validator.is_valid({})
    assert op.output_validator.is_valid({"data": []})


def test_draft_2019_recursion_keywords_are_read_past_with_a_warning(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "api.yaml": """\
            paths:
              /filters:
                post:
                  operationId: addFilter
                  requestBody:
                    content:
                      application/json:
                        schema: {$ref: '#/components/schemas/CompoundFilter'}
                  responses:
                    '204': {description: done}
            components:
              schemas:
                CompoundFilter:
                  $recursiveAnchor: true
                  type: object
                  properties:
                    filters:
                      type: array
                      items: {$recursiveRef: '#'}
            """
        },
    )
    contract = envfactory.load(path)
    assert [kind for kind, _, _ in contract.load_defects] == ["draft-2019-keyword", "draft-2019-keyword"]
    with pytest.raises(envfactory.ContractError, match=r"\$recursiveAnchor .*--strict"):
        envfactory.load(path, strict=True)


def test_a_broken_shared_schema_is_reported_where_it_is_written(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "api.yaml": """\
            paths:
              /a:
                get:
                  operationId: getA
                  responses:
                    '200':
                      description: ok
                      content:
                        application/json:
                          schema: {$ref: 'models.yml#/A'}
            """,
            "models.yml": """\
            A:
              type: object
              properties:
                b:
                  type: string
                  minLength: seven
            """,
        },
    )
    with pytest.raises(envfactory.ContractError) as err:
        envfactory.load(path)
    assert err.value.location is not None
    assert (Path(err.value.location.file).name, err.value.location.line) == ("models.yml", 6)
    assert "'seven' is not of type 'integer'" in err.value.message


def test_abstract_strings_admit_literals_as_id_ranges_not_one_disjunct_each() -> None:
    """Plaid's document (thousands of string fields, hundreds of enum literals) spent two minutes
    building one disjunct per literal per field; the same set is a few ranges of identities."""
    import z3

    from envfactory.solver.encode import Encoder
    from envfactory.solver.schema import Schemas, fresh_or_literal, literal_fits
    from envfactory.solver.symbolic import LITERALS, literal_id, to_z3

    for text in ("a", "bb", "ccc", "dddd", "e" * 9):
        literal_id(text)
    known = len(LITERALS)
    ident = z3.Int("ident")
    for schema in (None, {}, {"minLength": 2, "maxLength": 4}, {"pattern": "^[a-c]+$"}, {"maxLength": 0}):
        constraint = to_z3(fresh_or_literal(ident, schema, most=len(LITERALS)))
        admitted = {i for t, i in LITERALS.items() if literal_fits(t, schema)}
        for i in range(-known - 2, 3):
            # a string of its own, a literal that fits, or one given an identity later
            expected = i >= 0 or i in admitted or i < -known
            assert z3.is_true(z3.simplify(z3.substitute(constraint, (ident, z3.IntVal(i))))) == expected
    assert fresh_or_literal(ident, {}) is True  # no length or pattern: nothing to exclude
    # literals that fit in more ranges than asked for are all admitted (the caller notes it)
    assert fresh_or_literal(ident, {"minLength": 2, "maxLength": 4}, most=0) is None

    # an enum of hundreds of literals on an abstract string is one range, not hundreds of equalities
    enum = [f"plaid-{i}" for i in range(300)]
    reader = Schemas(Encoder(), atoms=True)
    schema = {"type": "string", "enum": enum}
    value = reader.fresh(schema, "v")
    constraint = to_z3(reader.holds(value, schema))
    assert z3.is_and(constraint) and constraint.num_args() == 2, constraint
    for text in (enum[0], enum[150], enum[-1], "plaid-300"):
        solver = z3.Solver()
        solver.add(constraint, value.t == literal_id(text))
        assert (solver.check() == z3.sat) == (text in enum), text
