"""OpenAPI success statuses (201, 204, ...) honoured end to end.

The document's own 2xx comes out of the simulator, ``serve`` (no body for 204), ``generate`` and
the session's ``/_trajectory``; ``replay`` of a recorded 201 finds no difference; ``verify`` takes
a recorded 201/204 (and an undocumented 2xx) as valid; a Python target answers with it too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import envfactory
from envfactory.cli import main
from envfactory.contracts.model import Contract
from envfactory.fuzz.targets import PythonTarget
from envfactory.server import running
from envfactory.statemachine.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "realworld" / "corpus"

NOTES = """\
openapi: 3.0.3
info: {title: Notes, version: "1"}
paths:
  /notes:
    post:
      operationId: createNote
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewNote"}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Note"}
        "400": {description: bad note}
  /notes/{noteId}:
    parameters:
      - {name: noteId, in: path, required: true, schema: {type: integer}}
    get:
      operationId: getNote
      responses:
        "200":
          description: the note
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Note"}
        "404": {description: no such note}
    put:
      operationId: replaceNote
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewNote"}
      responses:
        "200":
          description: replaced
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Note"}
        "201":
          description: created instead
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Note"}
    delete:
      operationId: deleteNote
      responses:
        "204": {description: deleted}
        "404": {description: no such note}
components:
  schemas:
    NewNote:
      type: object
      required: [text]
      properties:
        text: {type: string, maxLength: 20}
    Note:
      type: object
      required: [id, text]
      properties:
        id: {type: integer, minimum: 1}
        text: {type: string}
"""


@pytest.fixture(scope="module")
def notes_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("notes") / "notes.yaml"
    path.write_text(NOTES)
    return path


@pytest.fixture(scope="module")
def notes(notes_path: Path) -> Contract:
    return envfactory.load(notes_path)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    code = exited.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().out


def write_jsonl(path: Path, *trajectories: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in trajectories))
    return path


# -- the model ------------------------------------------------------------------------------------


def test_each_operation_records_its_documented_success(notes: Contract) -> None:
    ops = notes.operations
    seen = {name: (op.success_status, op.success_body, op.success_statuses) for name, op in ops.items()}
    assert seen == {
        "createNote": (201, True, (201,)),
        "getNote": (200, True, (200,)),
        "replaceNote": (200, True, (200, 201)),
        "deleteNote": (204, False, (204,)),
    }


def _responses_doc(responses: str) -> str:
    return (
        "openapi: 3.1.0\ninfo: {title: R, version: '1'}\npaths:\n  /r:\n    post:\n"
        "      operationId: make\n      responses:\n" + responses
    )


BODY = "          content: {application/json: {schema: {type: object}}}\n"


@pytest.mark.parametrize(
    ("responses", "expected"),
    [
        # only default: a success is still 200, with a (JSON) body
        ("        default: {description: error}\n", (200, True, (200,))),
        # no 2xx has content: the lowest documented one, and no body
        (
            '        "204": {description: gone}\n        "202": {description: queued}\n',
            (202, False, (202, 204)),
        ),
        # the one that carries the body wins over a bodiless 200
        (
            '        "200": {description: ok}\n        "201":\n          description: made\n' + BODY,
            (201, True, (200, 201)),
        ),
        # 200 and 201 come first, then the others in order
        (
            '        "202":\n          description: queued\n'
            + BODY
            + '        "201":\n          description: made\n'
            + BODY,
            (201, True, (201, 202)),
        ),
        # a range stands for 200
        ('        "2XX":\n          description: fine\n' + BODY, (200, True, (200,))),
        # a 204 never has a body, whatever the document says
        ('        "204":\n          description: gone\n' + BODY, (204, False, (204,))),
    ],
)
def test_the_success_status_is_picked_from_the_documented_2xx(
    tmp_path: Path, responses: str, expected: tuple[int, bool, tuple[int, ...]]
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(_responses_doc(responses))
    op = envfactory.load(path).operations["make"]
    assert (op.success_status, op.success_body, op.success_statuses) == expected


def test_published_petstore_deletes_with_204_and_native_contracts_stay_at_200() -> None:
    expanded = envfactory.load(CORPUS / "petstore-expanded.yaml")
    assert (
        expanded.operations["deletePet"].success_status,
        expanded.operations["deletePet"].success_body,
    ) == (
        204,
        False,
    )
    assert expanded.operations["addPet"].success_status == 200
    native = envfactory.load(ROOT / "examples" / "petstore" / "petstore.yaml")
    assert {op.success_status for op in native.operations.values()} == {200}


# -- the simulator and the server -----------------------------------------------------------------


def test_simulator_answers_with_the_documented_status(notes: Contract) -> None:
    sim = Simulator(notes, seed=5)
    made = sim.call("createNote", {"text": "hello"})
    assert (made.status, made.accepted, made.output["text"]) == (201, True, "hello")
    note = made.output["id"]
    assert sim.call("getNote", {"noteId": note}).status == 200
    gone = sim.call("deleteNote", {"noteId": note})
    assert (gone.status, gone.output, gone.ok) == (204, None, True)
    again = sim.call("deleteNote", {"noteId": note})
    assert (again.status, again.accepted) == (404, False)
    assert [s.status for s in sim.trajectory().steps] == [201, 200, 204, 404]


def test_serve_answers_201_with_a_body_and_204_with_none(notes: Contract) -> None:
    with running(notes) as base, httpx.Client(base_url=base, timeout=10) as client:
        made = client.post("/notes", json={"text": "hi"})
        assert made.status_code == 201 and made.json()["text"] == "hi"
        note = made.json()["id"]
        assert client.get(f"/notes/{note}").json() == made.json()
        gone = client.delete(f"/notes/{note}")
        assert gone.status_code == 204 and gone.content == b""
        assert "content-type" not in gone.headers
        again = client.delete(f"/notes/{note}")
        assert again.status_code == 404 and again.json()["clause"] == "input.noteId in notes"
        recorded = json.loads(client.get("/_trajectory").text)
    steps = recorded["steps"]
    assert [(s["tool"], s["status"]) for s in steps] == [
        ("createNote", 201),
        ("getNote", 200),
        ("deleteNote", 204),
        ("deleteNote", 404),
    ]
    assert steps[0]["output"] == made.json()


def test_python_target_answers_a_plain_return_with_the_success_status(notes: Contract) -> None:
    class Notes:
        def createNote(self, text: str) -> dict[str, Any]:
            return {"id": 1, "text": text}

        def deleteNote(self, noteId: int) -> None:
            return None

    target = PythonTarget("python:notes:Notes", notes, factory=Notes)
    assert target.call("createNote", {"text": "a"}).status == 201
    assert target.call("deleteNote", {"noteId": 1}).status == 204


# -- the command line -----------------------------------------------------------------------------


def _recorded(notes: Contract, *, create_status: int, replace_status: int) -> dict[str, Any]:
    """A recording whose outputs are what the simulator gives (ids included), statuses as given."""
    sim = Simulator(notes, seed=0)
    made = sim.call("createNote", {"text": "hi"})
    note = made.output["id"]
    replaced = sim.call("replaceNote", {"noteId": note, "text": "yo"})
    sim.call("deleteNote", {"noteId": note})
    return {
        "id": f"rec-{create_status}-{replace_status}",
        "seed": 0,
        "initial": {"notes": {}},
        "steps": [
            {"tool": "createNote", "input": {"text": "hi"}, "output": made.output, "status": create_status},
            {
                "tool": "replaceNote",
                "input": {"noteId": note, "text": "yo"},
                "output": replaced.output,
                "status": replace_status,
            },
            {"tool": "deleteNote", "input": {"noteId": note}, "status": 204},
        ],
    }


def test_replay_of_a_recorded_201_against_sim_finds_no_difference(
    notes: Contract, notes_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = _recorded(notes, create_status=201, replace_status=200)
    other_documented = _recorded(notes, create_status=201, replace_status=201)
    undocumented = _recorded(notes, create_status=200, replace_status=200)
    path = write_jsonl(tmp_path / "rec.jsonl", same, other_documented, undocumented)
    code, out = cli(capsys, "replay", str(notes_path), str(path), "--format", "json")
    doc = json.loads(out)
    diffs = {t["id"]: t["differences"] for t in doc["trajectories"]}
    assert diffs[same["id"]] == []
    # replaceNote documents 200 and 201: either is the same success
    assert diffs[other_documented["id"]] == []
    # createNote documents only 201: a recorded 200 is a real difference from the specification
    (diff,) = diffs[undocumented["id"]]
    assert (diff["step"], diff["against"], diff["kind"]) == (0, "recording", "status")
    assert code == 1


def test_generate_writes_the_documented_statuses_and_they_verify(
    notes_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "gen.jsonl"
    code, _ = cli(capsys, "generate", str(notes_path), "-n", "6", "-o", str(out_path), "--seed", "2")
    assert code == 0
    steps = [s for line in out_path.read_text().splitlines() for s in json.loads(line)["steps"]]
    statuses = {s["tool"]: s["status"] for s in steps if s["status"] < 400}
    assert statuses == {"createNote": 201, "getNote": 200, "replaceNote": 200, "deleteNote": 204}
    code, out = cli(capsys, "verify", str(notes_path), str(out_path), "--format", "json")
    assert code == 0, out[-2000:]


def test_verify_takes_recorded_2xx_statuses_as_successes(
    notes: Contract, notes_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = _recorded(notes, create_status=201, replace_status=200)
    # a 2xx the document does not list for the operation: the clauses held, so still valid
    undocumented = _recorded(notes, create_status=202, replace_status=200)
    failed = _recorded(notes, create_status=201, replace_status=500)
    path = write_jsonl(tmp_path / "rec.jsonl", documented, undocumented, failed)
    code, out = cli(capsys, "verify", str(notes_path), str(path), "--format", "json")
    doc = json.loads(out)
    verdicts = {r["id"]: r["verdict"] for r in doc["results"]}
    assert verdicts == {documented["id"]: "valid", undocumented["id"]: "valid", failed["id"]: "invalid"}
    assert code == 1


def test_fuzzing_the_served_api_finds_nothing_in_its_201_and_204(
    notes: Contract, notes_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running(notes) as base:
        code, out = cli(
            capsys, "fuzz", str(notes_path), "--target", base, "--max-examples", "10", "--seed", "1"
        )
    assert code == 0 and "no findings" in out, out[-2000:]
    assert "operations covered: 4 of 4" in out


def test_the_simulator_names_what_it_creates_even_where_the_key_is_optional() -> None:
    # the published petstore: Pet.id and Order.id are optional in the responses
    contract = envfactory.load(CORPUS / "swagger-petstore-v3.yaml")
    for seed in range(25):
        sim = Simulator(contract, seed=seed)
        pet = sim.call("addPet", {"name": "Rex", "photoUrls": []})
        order = sim.call("placeOrder", {"quantity": 1})
        assert pet.ok and order.ok
        assert isinstance(pet.output["id"], int) and isinstance(order.output["id"], int)
        assert None not in sim.state["pet"] and None not in sim.state["order"]
        assert sim.call("getPetById", {"petId": pet.output["id"]}).status == 200
        assert sim.call("getOrderById", {"orderId": order.output["id"]}).status == 200
