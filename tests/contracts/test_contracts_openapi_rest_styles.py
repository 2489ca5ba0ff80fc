"""Resource inference for common REST styles: enveloped responses (PagerDuty's ``{"service": ...}``),
ids named ``Sid``/``uuid``, ``.json`` path suffixes and sub-resources keyed by both parameters
(Twilio's ``/Accounts/{AccountSid}/Calls/{Sid}.json``), and ``PUT``/``PATCH`` storing the record
they answer. Every inferred clause is marked inferred."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.contracts.model import Contract

ENVELOPED = """openapi: 3.0.3
info: {title: pd, version: '1'}
paths:
  /services:
    post:
      operationId: createService
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {service: {$ref: '#/components/schemas/NewService'}}
              required: [service]
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Wrapped'}
  /services/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get:
      operationId: getService
      responses:
        '200':
          description: the service
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Wrapped'}
        '404': {description: no such service}
    put:
      operationId: updateService
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties: {service: {$ref: '#/components/schemas/NewService'}}
      responses:
        '200':
          description: updated
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Wrapped'}
    delete:
      operationId: deleteService
      responses: {'204': {description: gone}}
components:
  schemas:
    NewService:
      type: object
      properties: {name: {type: string}}
      required: [name]
    Wrapped:
      type: object
      properties:
        service:
          allOf:
            - $ref: '#/components/schemas/NewService'
            - type: object
              properties: {id: {type: string}}
              required: [id]
      required: [service]
"""

TWILIO = """openapi: 3.0.1
info: {title: tw, version: '1'}
paths:
  /Accounts/{AccountSid}/Calls.json:
    parameters: [{name: AccountSid, in: path, required: true, schema: {type: string}}]
    post:
      operationId: CreateCall
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {To: {type: string}}, required: [To]}
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: {$ref: '#/components/schemas/call'}
  /Accounts/{AccountSid}/Calls/{Sid}.json:
    parameters:
      - {name: AccountSid, in: path, required: true, schema: {type: string}}
      - {name: Sid, in: path, required: true, schema: {type: string}}
    get:
      operationId: FetchCall
      responses:
        '200':
          description: the call
          content:
            application/json:
              schema: {$ref: '#/components/schemas/call'}
    delete:
      operationId: DeleteCall
      responses: {'204': {description: gone}}
components:
  schemas:
    call:
      type: object
      properties: {sid: {type: string}, account_sid: {type: string}, to: {type: string}}
      required: [sid, account_sid]
"""


def load(tmp_path: Path, text: str) -> Contract:
    path = tmp_path / "api.yaml"
    path.write_text(text, encoding="utf-8")
    return envfactory.load(path)


def effects(contract: Contract, name: str) -> list[str]:
    return [e.source for e in contract.operations[name].effects]


def test_enveloped_responses_create_fill_and_update_the_collection(tmp_path: Path) -> None:
    contract = load(tmp_path, ENVELOPED)
    services = contract.state["services"]
    assert services.collection and services.inferred
    # the record is what the envelope wraps, not the envelope
    assert "name" in services.type.describe() and "service" not in services.type.describe()
    assert effects(contract, "createService") == ["services[output.service.id] = output.service"]
    assert effects(contract, "updateService") == ["services[input.id] = output.service"]
    assert effects(contract, "deleteService") == ["del services[input.id]"]
    assert [c.source for c in contract.operations["getService"].requires] == ["input.id in services"]
    for name in ("createService", "updateService", "deleteService"):
        assert contract.operations[name].inferred_effects


def test_twilio_paths_with_json_suffixes_and_sids_are_one_sub_resource(tmp_path: Path) -> None:
    contract = load(tmp_path, TWILIO)
    assert list(contract.state) == ["Accounts", "Calls"]  # the parent, and calls keyed by both
    key = 'input.AccountSid + "/" + input.Sid'
    assert [c.source for c in contract.operations["FetchCall"].requires] == [f"{key} in Calls"]
    assert all(c.inferred for c in contract.operations["FetchCall"].requires)
    assert effects(contract, "DeleteCall") == [f"del Calls[{key}]"]
    assert effects(contract, "CreateCall") == ['Calls[input.AccountSid + "/" + output.sid] = output']
