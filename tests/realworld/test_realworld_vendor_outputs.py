"""The simulator answering within published documents' own shapes, each cut down to its essence:
what ``fuzz --target sim`` found the simulator breaking on DigitalOcean's, Twilio's and OpenAI's
documents. A created record's key and the record itself are what the inferred effects read, so
they are drawn present and non-null (Twilio writes every field nullable, DigitalOcean wraps the
record in a field it does not mark required), and a record drawn for the wrapper carries its
required fields; a ``oneOf`` whose open branches overlap (OpenAI's transcription responses) is
answered with a value that matches exactly one of them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import envfactory
from envfactory.statemachine.simulator import Simulator

SEEDS = range(40)


def _load(tmp_path: Path, text: str) -> envfactory.Contract:
    path = tmp_path / "api.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return envfactory.load(path)


DIGITALOCEAN = """\
openapi: 3.0.0
info: {title: autoscale, version: "2.0"}
paths:
  /v2/droplets/autoscale:
    post:
      operationId: autoscalepools_create
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/autoscale_pool_create'}
      responses:
        '202':
          description: accepted
          content:
            application/json:
              schema:
                properties:
                  autoscale_pool: {$ref: '#/components/schemas/autoscale_pool'}
  /v2/droplets/autoscale/{autoscale_pool_id}:
    get:
      operationId: autoscalepools_get
      parameters:
        - {name: autoscale_pool_id, in: path, required: true, schema: {type: string}}
      responses:
        '200':
          description: one
          content:
            application/json:
              schema:
                properties:
                  autoscale_pool: {$ref: '#/components/schemas/autoscale_pool'}
        '404': {description: none}
components:
  schemas:
    autoscale_pool_create:
      type: object
      properties:
        name: {type: string}
        config: {$ref: '#/components/schemas/config'}
      required: [name, config]
    config:
      oneOf:
        - type: object
          properties: {target_number_instances: {type: integer, minimum: 1, maximum: 1000}}
          required: [target_number_instances]
        - type: object
          properties:
            min_instances: {type: integer, minimum: 1, maximum: 500}
            max_instances: {type: integer, minimum: 1, maximum: 1000}
          required: [min_instances, max_instances]
    autoscale_pool:
      type: object
      properties:
        id: {type: string}
        name: {type: string}
        config: {$ref: '#/components/schemas/config'}
        status: {type: string, enum: [active, deleting, error]}
        created_at: {type: string, format: date-time}
      required: [id, name, config, status, created_at]
"""


def test_a_create_whose_wrapper_is_optional_answers_a_whole_record(tmp_path: Path) -> None:
    contract = _load(tmp_path, DIGITALOCEAN)
    op = contract.operations["autoscalepools_create"]
    assert [e.source for e in op.effects] == ["autoscale[output.autoscale_pool.id] = output.autoscale_pool"]
    call = {"name": "pool", "config": {"target_number_instances": 2}}
    for seed in SEEDS:
        sim = Simulator(contract, seed=seed)
        response = sim.call("autoscalepools_create", call)
        assert response.ok, (seed, response.output, response.failure)
        pool = response.output["autoscale_pool"]
        assert {"id", "name", "config", "status", "created_at"} <= set(pool)
        got = sim.call("autoscalepools_get", {"autoscale_pool_id": pool["id"]})
        assert got.ok and got.status == 200, (seed, got)


TWILIO = """\
openapi: 3.0.1
info: {title: Twilio - Api, version: 1.0.0}
paths:
  /2010-04-01/Accounts.json:
    post:
      operationId: CreateAccount
      responses:
        '201':
          description: Created
          content:
            application/json:
              schema: {$ref: '#/components/schemas/api.v2010.account'}
  /2010-04-01/Accounts/{Sid}.json:
    get:
      operationId: FetchAccount
      parameters:
        - name: Sid
          in: path
          required: true
          schema: {type: string, minLength: 34, maxLength: 34, pattern: '^AC[0-9a-fA-F]{32}$'}
      responses:
        '200':
          description: OK
          content:
            application/json:
              schema: {$ref: '#/components/schemas/api.v2010.account'}
  /2010-04-01/Accounts/{AccountSid}/Applications.json:
    post:
      operationId: CreateApplication
      parameters:
        - name: AccountSid
          in: path
          required: true
          schema: {type: string, minLength: 34, maxLength: 34, pattern: '^AC[0-9a-fA-F]{32}$'}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              title: CreateApplicationRequest
              properties:
                FriendlyName: {type: string}
      responses:
        '201':
          description: Created
          content:
            application/json:
              schema: {$ref: '#/components/schemas/api.v2010.account.application'}
  /2010-04-01/Accounts/{AccountSid}/Applications/{Sid}.json:
    get:
      operationId: FetchApplication
      parameters:
        - name: AccountSid
          in: path
          required: true
          schema: {type: string, minLength: 34, maxLength: 34, pattern: '^AC[0-9a-fA-F]{32}$'}
        - name: Sid
          in: path
          required: true
          schema: {type: string, minLength: 34, maxLength: 34, pattern: '^AP[0-9a-fA-F]{32}$'}
      responses:
        '200':
          description: OK
          content:
            application/json:
              schema: {$ref: '#/components/schemas/api.v2010.account.application'}
components:
  schemas:
    api.v2010.account:
      type: object
      properties:
        sid: {type: string, minLength: 34, maxLength: 34, pattern: '^AC[0-9a-fA-F]{32}$', nullable: true}
        friendly_name: {type: string, nullable: true}
        status: {$ref: '#/components/schemas/account_enum_status'}
    account_enum_status:
      type: string
      enum: [active, suspended, closed]
    api.v2010.account.application:
      type: object
      properties:
        account_sid: {type: string, minLength: 34, maxLength: 34, pattern: '^AC[0-9a-fA-F]{32}$', nullable: true}
        friendly_name: {type: string, nullable: true}
        sid: {type: string, minLength: 34, maxLength: 34, pattern: '^AP[0-9a-fA-F]{32}$', nullable: true}
        sms_url: {type: string, format: uri, nullable: true}
"""


def test_keys_the_document_writes_nullable_are_drawn_present(tmp_path: Path) -> None:
    contract = _load(tmp_path, TWILIO)
    effects = [e.source for e in contract.operations["CreateApplication"].effects]
    assert effects == ['Applications[input.AccountSid + "/" + output.sid] = output']
    for seed in SEEDS:
        sim = Simulator(contract, seed=seed)
        account = sim.call("CreateAccount", {})
        assert account.ok, (seed, account)
        sid = account.output["sid"]
        assert isinstance(sid, str), (seed, account.output)
        app = sim.call("CreateApplication", {"AccountSid": sid, "FriendlyName": "app"})
        assert app.ok, (seed, app.output, app.error)
        assert isinstance(app.output["sid"], str)
        got = sim.call("FetchApplication", {"AccountSid": sid, "Sid": app.output["sid"]})
        assert got.ok and got.status == 200, (seed, got)


OPENAI = """\
openapi: 3.1.0
info: {title: OpenAI API, version: 2.3.0}
paths:
  /audio/transcriptions:
    post:
      operationId: createTranscription
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              properties: {file: {type: string, format: binary}, model: {type: string}}
              required: [file, model]
      responses:
        '200':
          description: OK
          content:
            application/json:
              schema:
                oneOf:
                  - $ref: '#/components/schemas/CreateTranscriptionResponseJson'
                  - $ref: '#/components/schemas/CreateTranscriptionResponseDiarizedJson'
                  - $ref: '#/components/schemas/CreateTranscriptionResponseVerboseJson'
components:
  schemas:
    CreateTranscriptionResponseJson:
      type: object
      properties:
        text: {type: string}
        usage:
          type: object
          properties: {type: {type: string, enum: [tokens]}, input_tokens: {type: integer}}
          required: [type, input_tokens]
      required: [text]
    CreateTranscriptionResponseDiarizedJson:
      type: object
      properties:
        task: {type: string, enum: [transcribe]}
        duration: {type: number}
        text: {type: string}
        segments:
          type: array
          items:
            type: object
            properties: {id: {type: string}, text: {type: string}, speaker: {type: string}}
            required: [id, text, speaker]
      required: [task, duration, text, segments]
    CreateTranscriptionResponseVerboseJson:
      type: object
      properties:
        language: {type: string}
        duration: {type: number}
        text: {type: string}
      required: [language, duration, text]
"""


def test_a_one_of_with_overlapping_branches_is_answered_by_exactly_one(tmp_path: Path) -> None:
    contract = _load(tmp_path, OPENAI)
    op = contract.operations["createTranscription"]
    assert op.output_validator is not None
    for seed in range(200):  # a draw of the plain branch alone is valid: most seeds find one
        response = Simulator(contract, seed=seed).call("createTranscription", {"file": "a", "model": "m"})
        assert response.ok, (seed, response.output, response.failure)
        assert op.output_validator.is_valid(response.output)
