"""The two large published documents (Stripe, Box), used as they are: they load, every published
operation is there with its HTTP binding, ``check`` exits 0 with a JSON report sized by what it
reports (the document's schemas once, by reference), and REST resources are inferred.

Each document is loaded once per module (a module-scoped fixture): loading is the expensive part.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envfactory.contracts.model import Contract
from tests.published import loaded

CORPUS = Path(__file__).resolve().parent / "corpus"
LARGE = ("stripe-spec3.json", "box-openapi.json")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

pytestmark = pytest.mark.timeout(600)  # a hang guard only


def published(path: Path) -> list[tuple[str, str, str]]:
    """(name, method, path) of every operation, read with plain ``json`` (independently of envfactory)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [
        (op.get("operationId") or f"{method.upper()} {route}", method.upper(), route)
        for route, item in doc["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


@pytest.fixture(scope="module", params=LARGE, ids=lambda name: name.split("-")[0])
def document(request: pytest.FixtureRequest) -> tuple[Path, Contract]:
    path = CORPUS / request.param
    return path, loaded(path)


@pytest.fixture(scope="module")
def report(document: tuple[Path, Contract]) -> tuple[dict[str, Any], int]:
    """``check --format json`` as a user runs it, in a process of its own: the parsed report and
    its size in bytes. In this process the same check took 12 to 52 s, by what the suite had
    asked Z3 before in it (the graph's effort is counted in Z3's units, and a context's history
    changes the work a query takes); a process of its own takes what a user's does."""
    path, _ = document
    done = subprocess.run(
        [sys.executable, "-m", "envfactory", "check", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    return json.loads(done.stdout), len(done.stdout.encode())


def test_every_published_operation_loads_with_its_binding(document: tuple[Path, Contract]) -> None:
    path, contract = document
    expected = published(path)
    assert len(expected) > 250
    assert list(contract.operations) == [name for name, _, _ in expected]
    for name, method, route in expected:
        http = contract.operations[name].http
        assert http is not None and (http.method, http.path) == (method, route)


def test_check_exits_0_with_a_report_sized_by_what_it_reports(
    document: tuple[Path, Contract], report: tuple[dict[str, Any], int]
) -> None:
    path, contract = document
    data, size = report
    assert [op["name"] for op in data["operations"]] == list(contract.operations)
    # schemas are written once at the root and referred to; no operation carries its own copy
    assert data["$defs"]
    assert all("$defs" not in (op["input"] or {}) for op in data["operations"])
    assert all("$defs" not in (op["output"] or {}) for op in data["operations"])
    refs = json.dumps(data["operations"]).count('"#/$defs/')
    assert refs > 100
    assert set(_names(data["operations"])) <= set(data["$defs"])
    # before sharing, Stripe's report was 271 MB (1.19 GB indented): now a small multiple of the document
    assert size < 3 * path.stat().st_size


def _names(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"][len("#/$defs/") :]] if str(node.get("$ref", "")).startswith("#/$defs/") else []
        return found + [n for v in node.values() for n in _names(v)]
    if isinstance(node, list):
        return [n for v in node for n in _names(v)]
    return []


def test_operation_schemas_share_one_set_of_definitions(document: tuple[Path, Contract]) -> None:
    _, contract = document
    shared = {id(op.input_schema.get("$defs")) for op in contract.operations.values()}
    shared |= {
        id(op.output_schema.get("$defs"))
        for op in contract.operations.values()
        if op.output_schema is not None and "$defs" in op.output_schema
    }
    assert len(shared) == 1


# a collection each document's REST paths imply, with its item get and delete
RESOURCES = {
    "stripe-spec3.json": ("customers", "GetCustomersCustomer", "DeleteCustomersCustomer"),
    "box-openapi.json": ("comments", "get_comments_id", "delete_comments_id"),
}


def test_rest_resources_are_inferred(document: tuple[Path, Contract]) -> None:
    path, contract = document
    collection, get, delete = RESOURCES[path.name]
    var = contract.state[collection]
    assert var.collection and var.inferred and not var.known
    requires = [c.source for c in contract.operations[get].requires]
    assert any(f" in {collection}" in text for text in requires), requires
    assert all(c.inferred for c in contract.operations[get].requires)
    effects = [e.source for e in contract.operations[delete].effects]
    assert any(text.startswith(f"del {collection}[") for text in effects), effects
