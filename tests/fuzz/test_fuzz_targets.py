"""The target protocol: sim, python: (exactly as the design says) and spec errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.errors import UsageError
from envfactory.fuzz.targets import HttpTarget, PythonTarget, SimTarget, is_crash, open_target
from envfactory.statemachine.simulator import Response

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BANK = envfactory.load(ROOT / "examples" / "bank" / "bank.yaml")
PET = envfactory.load(ROOT / "examples" / "petstore" / "petstore.yaml")
SPEC = f"python:{HERE / 'fuzz_protocol_objects.py'}:make"


def test_python_target_protocol():
    target = open_target(SPEC, BANK)
    assert isinstance(target, PythonTarget)
    target.reset()
    ok = target.call("open", {"account": "AB01", "owner": "ann"})
    assert isinstance(ok, Response) and ok.accepted and ok.status == 200 and ok.output is None
    refused = target.call("open", {"account": "taken", "owner": "ann"})
    assert (refused.status, refused.accepted, refused.error) == (409, False, "account exists")
    assert target.call("deposit", {"account": "AB01", "amount": 11}).status == 423
    plain_error = target.call("deposit", {"account": "AB01", "amount": 6})
    assert (plain_error.status, plain_error.error) == (400, "odd amount")
    assert target.call("deposit", {"account": "AB01", "amount": 1}).output == {"balance": 1}
    crash = target.call("close", {"account": "AB01"})
    assert is_crash(crash) and crash.status == 500
    assert "ZeroDivisionError: boom" in (crash.error or "") and "fuzz_protocol_objects.py" in (
        crash.error or ""
    )


def test_python_target_arguments_that_cannot_bind_are_rejected_not_crashes():
    target = open_target(SPEC, BANK)
    extra = target.call("open", {"account": "AB01", "owner": "ann", "extra": 1})
    missing = target.call("open", {"account": "AB01"})
    not_object = target.call("open", [1, 2])
    assert [r.status for r in (extra, missing, not_object)] == [422, 422, 422]
    assert not any(is_crash(r) for r in (extra, missing, not_object))
    assert target.call("freeze", {"account": "AB01"}).status == 404  # no such method


def test_python_target_outputs_are_detached_copies():
    target = open_target(SPEC, BANK)
    first = target.call("balance", {"account": "x"})
    target.obj.leak.append(3)
    assert first.output == [1, 2]


def test_python_target_fresh_object_per_reset():
    target = open_target(SPEC, BANK)
    target.reset()
    one = target.obj
    target.reset()
    assert target.obj is not one


def test_python_target_dotted_module(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    target = open_target("python:fuzz_protocol_objects:Protocol", BANK)
    assert target.call("open", {"account": "AB01", "owner": "ann"}).accepted


@pytest.mark.parametrize(
    "spec",
    [
        "nope",
        "python:",
        "python:no_such_module_xyz:make",
        f"python:{HERE / 'fuzz_protocol_objects.py'}:missing",
        "agent:x:y",
    ],
)
def test_bad_target_specs_are_usage_errors(spec):
    with pytest.raises(UsageError):
        open_target(spec, BANK)


def test_sim_target_follows_the_contract():
    target = open_target("sim", PET)
    assert isinstance(target, SimTarget)
    target.reset()
    assert target.call("addPet", {"id": 1, "name": "a", "price": 1}).status == 401
    assert target.call("login", {"name": "ann"}).output == {"user": "ann"}
    assert target.call("addPet", {"id": 1, "name": "a", "price": 1}).accepted
    target.reset()
    assert target.call("countPets", {}).output == {"count": 0}


def test_http_request_for_native_contract():
    target = HttpTarget("http://127.0.0.1:1/api/", BANK)
    request = target.request_for(BANK.operations["open"], "open", {"account": "AB01", "owner": "x"})
    assert request == {
        "method": "POST",
        "url": "http://127.0.0.1:1/api/open",
        "json": {"account": "AB01", "owner": "x"},
    }
    target.close()


def test_a_null_body_travels_as_the_text_null_and_serve_refuses_it():
    """``json=None`` makes httpx send no body at all, which ``serve`` reads as an absent input:
    the value null goes as the text ``null``, which ``serve`` refuses where the schema does."""
    from envfactory.server import running

    native = HttpTarget("http://127.0.0.1:1/api/", BANK)
    assert native.request_for(BANK.operations["open"], "open", None) == {
        "method": "POST",
        "url": "http://127.0.0.1:1/api/open",
        "content": b"null",
        "headers": {"content-type": "application/json"},
    }
    native.close()
    contract = envfactory.load(ROOT / "tests" / "realworld" / "corpus" / "swagger-petstore-v3.yaml")
    op = contract.operations["createUsersWithListInput"]
    with running(contract) as url:
        target = HttpTarget(url, contract, timeout=60)
        request = target.request_for(op, op.name, {"body": None})
        assert (request["content"], request["headers"]["content-type"]) == (b"null", "application/json")
        assert 400 <= target.call(op.name, {"body": None}).status < 500
        assert target.call(op.name, {"body": []}).accepted
        target.close()
    with running(BANK) as url:
        target = HttpTarget(url, BANK, timeout=60)
        assert 400 <= target.call("open", None).status < 500
        target.close()


def test_http_request_for_openapi_bindings():
    spec = ROOT / "tests" / "realworld" / "corpus" / "petstore-expanded.yaml"
    contract = envfactory.load(spec)
    target = HttpTarget("http://127.0.0.1:1/v1", contract)
    get = target.request_for(contract.operations["find pet by id"], "find pet by id", {"id": 7})
    assert (get["method"], get["url"]) == ("GET", "http://127.0.0.1:1/v1/pets/7") and "json" not in get
    add = target.request_for(contract.operations["addPet"], "addPet", {"name": "Rex", "tag": "dog"})
    assert (add["method"], add["url"], add["json"]) == (
        "POST",
        "http://127.0.0.1:1/v1/pets",
        {"name": "Rex", "tag": "dog"},
    )
    find = target.request_for(contract.operations["findPets"], "findPets", {"tags": ["a", "b"], "limit": 3})
    assert find["url"] == "http://127.0.0.1:1/v1/pets?tags=a&tags=b&limit=3"  # form, exploded
    # calls no request can express are rejected by the client, never sent
    assert target.call("find pet by id", {}).status == 422
    assert target.call("find pet by id", {"id": 7, "extra": 1}).status == 422
    target.close()
