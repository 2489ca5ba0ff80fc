"""Resource inference for common REST styles: enveloped responses (PagerDuty's ``{"service": ...}``),
ids named ``Sid``/``uuid``, ``.json`` path suffixes and sub-resources keyed by both parameters
(Twilio's ``/Accounts/{AccountSid}/Calls/{Sid}.json``), and ``PUT``/``PATCH`` storing the record
they answer. Every inferred clause is marked inferred."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import _rest
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


# PagerDuty's automation actions: the record is one of two kinds (``oneOf``), wrapped in an
# envelope, its ``id`` read-only (not required); invocations live below the action's path
AUTOMATION = """openapi: 3.0.2
info: {title: pd, version: '1'}
paths:
  /automation_actions/actions:
    post:
      operationId: createAutomationAction
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {action: {$ref: '#/components/schemas/Script'}}
              required: [action]
      responses:
        '201':
          description: created
          content:
            application/json:
              schema:
                type: object
                properties:
                  action:
                    oneOf: [{$ref: '#/components/schemas/Script'}, {$ref: '#/components/schemas/Job'}]
                required: [action]
  /automation_actions/actions/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get:
      operationId: getAutomationAction
      responses:
        '200':
          description: the action
          content:
            application/json:
              schema:
                type: object
                properties:
                  action:
                    oneOf: [{$ref: '#/components/schemas/Script'}, {$ref: '#/components/schemas/Job'}]
                required: [action]
        '404': {description: no such action}
  /automation_actions/actions/{id}/invocations:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    post:
      operationId: createAutomationActionInvocation
      responses:
        '201':
          description: invoked
          content:
            application/json:
              schema:
                type: object
                properties: {invocation: {type: object, properties: {id: {type: string}}, required: [id]}}
                required: [invocation]
        '404': {description: no such action}
components:
  schemas:
    Base:
      type: object
      properties:
        id: {type: string, readOnly: true}
        name: {type: string}
        action_type: {type: string, enum: [script, process_automation]}
      required: [name, action_type]
    Script:
      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          properties: {script: {type: string}}
          required: [script]
    Job:
      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          properties: {job_id: {type: string}}
          required: [job_id]
"""


def test_a_one_of_record_in_an_envelope_with_an_optional_id_is_created_and_fetched(tmp_path: Path) -> None:
    contract = load(tmp_path, AUTOMATION)
    assert effects(contract, "createAutomationAction") == ["actions[output.action.id] = output.action"]
    assert contract.operations["createAutomationAction"].inferred_effects
    invoke = contract.operations["createAutomationActionInvocation"]
    assert [c.source for c in invoke.requires] == ["input.id in actions"]
    assert all(c.inferred for c in invoke.requires)
    for seed in range(5):
        sim = envfactory.Simulator(contract, seed=seed)
        created = sim.call(
            "createAutomationAction", {"action": {"name": "n", "action_type": "script", "script": "s"}}
        )
        assert created.ok and created.status == 201, (seed, created)
        action_id = created.output["action"]["id"]
        assert sim.call("getAutomationAction", {"id": action_id}).status == 200
        assert sim.call("createAutomationActionInvocation", {"id": action_id}).status == 201
        assert sim.call("createAutomationActionInvocation", {"id": action_id + "x"}).status == 404


# Asana: every body and answer is wrapped in ``{"data": ...}`` and records are keyed by ``gid``
ASANA = """openapi: 3.0.0
info: {title: asana, version: '1'}
paths:
  /projects:
    post:
      operationId: createProject
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties: {data: {$ref: '#/components/schemas/ProjectRequest'}}
      responses:
        '201':
          description: created
          content:
            application/json:
              schema:
                type: object
                properties: {data: {$ref: '#/components/schemas/ProjectResponse'}}
  /projects/{project_gid}:
    parameters: [{name: project_gid, in: path, required: true, schema: {type: string}}]
    get:
      operationId: getProject
      responses:
        '200':
          description: the project
          content:
            application/json:
              schema:
                type: object
                properties: {data: {$ref: '#/components/schemas/ProjectResponse'}}
    put:
      operationId: updateProject
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties: {data: {$ref: '#/components/schemas/ProjectRequest'}}
      responses:
        '200':
          description: updated
          content:
            application/json:
              schema:
                type: object
                properties: {data: {$ref: '#/components/schemas/ProjectResponse'}}
    delete:
      operationId: deleteProject
      responses: {'200': {description: deleted}}
  /projects/{project_gid}/sections:
    parameters: [{name: project_gid, in: path, required: true, schema: {type: string}}]
    post:
      operationId: createSectionForProject
      responses:
        '201':
          description: created
          content:
            application/json:
              schema:
                type: object
                properties: {data: {$ref: '#/components/schemas/SectionResponse'}}
  /sections/{section_gid}:
    parameters: [{name: section_gid, in: path, required: true, schema: {type: string}}]
    get:
      operationId: getSection
      responses:
        '200':
          description: the section
          content:
            application/json:
              schema:
                type: object
                properties: {data: {$ref: '#/components/schemas/SectionResponse'}}
components:
  schemas:
    SectionResponse:
      type: object
      properties: {gid: {type: string, readOnly: true}, name: {type: string}}
    ProjectRequest:
      type: object
      properties: {name: {type: string}}
    ProjectResponse:
      allOf:
        - type: object
          properties:
            gid: {type: string, readOnly: true}
            resource_type: {type: string, readOnly: true}
        - $ref: '#/components/schemas/ProjectRequest'
"""


def test_asana_data_envelopes_keyed_by_gid_create_update_and_delete(tmp_path: Path) -> None:
    contract = load(tmp_path, ASANA)
    assert effects(contract, "createProject") == ["projects[output.data.gid] = output.data"]
    assert effects(contract, "updateProject") == ["projects[input.project_gid] = output.data"]
    assert effects(contract, "deleteProject") == ["del projects[input.project_gid]"]
    sim = envfactory.Simulator(contract, seed=1)
    created = sim.call("createProject", {"data": {"name": "p"}})
    assert created.ok, created
    gid = created.output["data"]["gid"]
    updated = sim.call("updateProject", {"project_gid": gid, "data": {"name": "q"}})
    assert updated.ok, updated
    # the stored record is the one the update answered, not the one the create did
    assert sim.state["projects"][gid] == updated.output["data"]
    # a section made below its project is fetched at the top level
    assert effects(contract, "createSectionForProject") == ["sections[output.data.gid] = output.data"]
    section = sim.call("createSectionForProject", {"project_gid": gid})
    assert section.ok, section
    assert sim.call("getSection", {"section_gid": section.output["data"]["gid"]}).status == 200
    assert sim.call("deleteProject", {"project_gid": gid}).ok
    assert sim.call("getProject", {"project_gid": gid}).status == 404


# Stripe: a POST on an instance updates it, and so does an action below it that answers the
# record (``/invoices/{invoice}/finalize``); an action answering another kind of record does not
STRIPE = """openapi: 3.0.0
info: {title: stripe, version: '1'}
paths:
  /v1/invoices:
    post:
      operationId: PostInvoices
      responses:
        '200':
          description: created
          content: {application/json: {schema: {$ref: '#/components/schemas/invoice'}}}
  /v1/invoices/{invoice}:
    parameters: [{name: invoice, in: path, required: true, schema: {type: string, maxLength: 5000}}]
    get:
      operationId: GetInvoicesInvoice
      responses:
        '200':
          description: the invoice
          content: {application/json: {schema: {$ref: '#/components/schemas/invoice'}}}
    post:
      operationId: PostInvoicesInvoice
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {description: {type: string}}}
      responses:
        '200':
          description: updated
          content: {application/json: {schema: {$ref: '#/components/schemas/invoice'}}}
  /v1/invoices/{invoice}/finalize:
    parameters: [{name: invoice, in: path, required: true, schema: {type: string, maxLength: 5000}}]
    post:
      operationId: PostInvoicesInvoiceFinalize
      responses:
        '200':
          description: finalized
          content: {application/json: {schema: {$ref: '#/components/schemas/invoice'}}}
  /v1/invoices/{invoice}/copy:
    parameters: [{name: invoice, in: path, required: true, schema: {type: string, maxLength: 5000}}]
    post:
      operationId: PostInvoicesInvoiceCopy
      responses:
        '201':
          description: the copy
          content: {application/json: {schema: {$ref: '#/components/schemas/invoice'}}}
  /v1/invoices/{invoice}/lines:
    parameters: [{name: invoice, in: path, required: true, schema: {type: string, maxLength: 5000}}]
    post:
      operationId: PostInvoicesInvoiceLines
      responses:
        '200':
          description: a line
          content:
            application/json:
              schema: {type: object, properties: {id: {type: string}, amount: {type: integer}}, required: [id]}
  /v1/customers:
    post:
      operationId: PostCustomers
      responses:
        '200':
          description: created
          content: {application/json: {schema: {$ref: '#/components/schemas/customer'}}}
  /v1/customers/{customer}:
    parameters: [{name: customer, in: path, required: true, schema: {type: string, maxLength: 5000}}]
    get:
      operationId: GetCustomersCustomer
      responses:
        '200':
          description: the customer, or what is left of a deleted one
          content:
            application/json:
              schema:
                anyOf: [{$ref: '#/components/schemas/customer'}, {$ref: '#/components/schemas/deleted_customer'}]
    post:
      operationId: PostCustomersCustomer
      responses:
        '200':
          description: updated
          content: {application/json: {schema: {$ref: '#/components/schemas/customer'}}}
components:
  schemas:
    customer:
      type: object
      properties: {id: {type: string}, email: {type: string, nullable: true}}
      required: [id]
    deleted_customer:
      type: object
      properties: {id: {type: string}, deleted: {type: boolean, enum: [true]}}
      required: [id, deleted]
    invoice:
      type: object
      properties:
        id: {type: string}
        status: {type: string, enum: [draft, open]}
        description: {type: string, nullable: true}
      required: [id, status]
"""


def test_posts_on_an_instance_and_its_actions_store_the_record_they_answer(tmp_path: Path) -> None:
    contract = load(tmp_path, STRIPE)
    assert effects(contract, "PostInvoicesInvoice") == ["invoices[input.invoice] = output"]
    assert effects(contract, "PostInvoicesInvoiceFinalize") == ["invoices[input.invoice] = output"]
    # an action answering 201 made a new invoice: stored under the key it answers
    assert effects(contract, "PostInvoicesInvoiceCopy") == ["invoices[output.id] = output"]
    assert effects(contract, "PostInvoicesInvoiceLines") == []  # answers a line, not the invoice
    # the GET answers one of two records; the update answers one of them, so it stores it
    assert effects(contract, "PostCustomersCustomer") == ["customers[input.customer] = output"]
    assert all(
        contract.operations[n].inferred_effects
        for n in ("PostInvoicesInvoice", "PostInvoicesInvoiceFinalize")
    )
    sim = envfactory.Simulator(contract, seed=2)
    invoice = sim.call("PostInvoices", {}).output["id"]
    finalized = sim.call("PostInvoicesInvoiceFinalize", {"invoice": invoice})
    assert finalized.ok, finalized
    assert sim.state["invoices"][invoice] == finalized.output
    copied = sim.call("PostInvoicesInvoiceCopy", {"invoice": invoice})
    assert copied.ok and copied.output["id"] != invoice, copied
    assert sim.state["invoices"][invoice] == finalized.output  # the original stays as it was
    assert sim.state["invoices"][copied.output["id"]] == copied.output


_NAMES = st.sampled_from(["id", "gid", "name", "type", "script", "job_id"])


@settings(derandomize=True, database=None, max_examples=150)
@given(
    branches=st.lists(st.tuples(st.sets(_NAMES, min_size=1), st.sets(_NAMES)), min_size=1, max_size=4),
    word=st.sampled_from(["oneOf", "anyOf"]),
    by_ref=st.booleans(),
)
def test_a_choice_of_records_declares_what_every_branch_declares(
    branches: list[tuple[set[str], set[str]]], word: str, by_ref: bool
) -> None:
    """Of ``oneOf``/``anyOf`` records (inline or through ``$ref``/``allOf``), the properties are
    those every branch declares, required where every branch requires them."""
    defs = {
        f"B{i}": {
            "allOf": [{"type": "object", "properties": {n: {"type": "string"} for n in names}}],
            "required": sorted(names & required),
        }
        for i, (names, required) in enumerate(branches)
    }
    listed = [{"$ref": f"#/$defs/B{i}"} if by_ref else defs[f"B{i}"] for i in range(len(branches))]
    schema = {word: listed, "$defs": defs}
    props, required = _rest.object_props(schema)
    common = set.intersection(*(names for names, _ in branches))
    assert set(props) == common
    assert required == frozenset(set.intersection(*(names & req for names, req in branches)))
    assert _rest.is_object(schema, schema)


# DigitalOcean: an envelope among others named after the resource, a key named like the path
# parameter without its ``_id``, and an attach answering the agent (not one of its functions)
DIGITALOCEAN = """openapi: 3.0.0
info: {title: do, version: '2'}
paths:
  /v2/dedicated-inferences:
    post:
      operationId: dedicatedInferences_create
      responses:
        '202':
          description: accepted
          content:
            application/json:
              schema:
                type: object
                properties:
                  dedicated_inference: {$ref: '#/components/schemas/inference'}
                  token: {type: object, properties: {secret: {type: string}}}
  /v2/dedicated-inferences/{dedicated_inference_id}:
    parameters: [{name: dedicated_inference_id, in: path, required: true, schema: {type: string}}]
    get:
      operationId: dedicatedInferences_get
      responses:
        '200':
          description: the inference
          content:
            application/json:
              schema: {type: object, properties: {dedicated_inference: {$ref: '#/components/schemas/inference'}}}
  /v2/functions/namespaces:
    post:
      operationId: functions_create_namespace
      responses:
        '200':
          description: created
          content:
            application/json:
              schema: {type: object, properties: {namespace: {$ref: '#/components/schemas/namespace'}}}
  /v2/functions/namespaces/{namespace_id}:
    parameters: [{name: namespace_id, in: path, required: true, schema: {type: string}}]
    get:
      operationId: functions_get_namespace
      responses:
        '200':
          description: the namespace
          content:
            application/json:
              schema: {type: object, properties: {namespace: {$ref: '#/components/schemas/namespace'}}}
  /v2/gen-ai/agents/{agent_uuid}:
    parameters: [{name: agent_uuid, in: path, required: true, schema: {type: string}}]
    get:
      operationId: genai_get_agent
      responses:
        '200':
          description: the agent
          content:
            application/json:
              schema: {type: object, properties: {agent: {$ref: '#/components/schemas/agent'}}}
  /v2/gen-ai/agents/{agent_uuid}/functions:
    parameters: [{name: agent_uuid, in: path, required: true, schema: {type: string}}]
    post:
      operationId: genai_attach_agent_function
      responses:
        '200':
          description: the agent, with the function attached
          content:
            application/json:
              schema: {type: object, properties: {agent: {$ref: '#/components/schemas/agent'}}}
  /v2/gen-ai/agents/{agent_uuid}/functions/{function_uuid}:
    parameters:
      - {name: agent_uuid, in: path, required: true, schema: {type: string}}
      - {name: function_uuid, in: path, required: true, schema: {type: string}}
    delete:
      operationId: genai_detach_agent_function
      responses: {'200': {description: detached}}
components:
  schemas:
    inference:
      type: object
      properties: {id: {type: string}, region: {type: string}}
    namespace:
      type: object
      properties: {namespace: {type: string}, label: {type: string}, region: {type: string}}
    agent:
      type: object
      properties: {uuid: {type: string}, name: {type: string}}
"""


def test_digitalocean_envelopes_named_after_the_resource(tmp_path: Path) -> None:
    contract = load(tmp_path, DIGITALOCEAN)
    assert effects(contract, "dedicatedInferences_create") == [
        "dedicated_inferences[output.dedicated_inference.id] = output.dedicated_inference"
    ]
    assert effects(contract, "functions_create_namespace") == [
        "namespaces[output.namespace.namespace] = output.namespace"
    ]
    # the agent answered is stored as the agent, not as one of its functions
    assert effects(contract, "genai_attach_agent_function") == ["agents[input.agent_uuid] = output.agent"]
    sim = envfactory.Simulator(contract, seed=4)
    made = sim.call("functions_create_namespace", {})
    assert made.ok, made
    name = made.output["namespace"]["namespace"]
    assert sim.call("functions_get_namespace", {"namespace_id": name}).status == 200
