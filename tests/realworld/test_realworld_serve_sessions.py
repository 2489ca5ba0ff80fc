"""A create -> get -> delete -> get session through ``serve`` on the published Stripe and Box
documents, as they are (issue 16 item 3's "Done when"): 200/201, 200, 200/204, 404, with the
bodies the documents say (Stripe's are ``application/x-www-form-urlencoded`` with ``deepObject``
fields, Box's JSON with ``?fields=a,b`` arrays). Each session runs twice: once through the
fuzzer's HTTP client (``HttpTarget``, which writes the form itself), once as raw requests the
way other clients write them; the recorded session then replays against the same server with no
difference (``replay``'s HTTP path). Each document is loaded once per module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from envfactory.cli.replay import _OtherTarget, replay_one
from envfactory.contracts import httpcodec
from envfactory.contracts.errors import Location
from envfactory.contracts.semantics import Machine
from envfactory.fuzz.targets import HttpTarget
from envfactory.server import running
from envfactory.trajectory import parse_trajectory
from tests.published import loaded

CORPUS = Path(__file__).parent / "corpus"
SESSION = "x-envfactory-session"


@pytest.fixture(scope="module")
def stripe() -> Any:
    contract = loaded(CORPUS / "stripe-spec3.json")
    with running(contract) as url:
        yield contract, url


@pytest.fixture(scope="module")
def box() -> Any:
    contract = loaded(CORPUS / "box-openapi.json")
    with running(contract) as url:
        yield contract, url


def _recorded(url: str, session: str) -> dict[str, Any]:
    line = httpx.get(url + "/_trajectory", headers={SESSION: session}, timeout=300).text
    return json.loads(line)


def _replays_clean(contract: Any, url: str, recorded: dict[str, Any]) -> None:
    """The recorded session, replayed through ``replay``'s HTTP target, answers as recorded."""
    traj = parse_trajectory(recorded, Location("<serve>"))
    target = _OtherTarget(url, contract)
    target.target.client.timeout = httpx.Timeout(
        300
    )  # a hang guard: Stripe's answers take a while under load
    try:
        result = replay_one(contract, Machine(contract.with_closed_world()), target, traj)
    finally:
        target.close()
    assert result.skipped is None and [str(d) for d in result.differences] == []


@pytest.mark.timeout(600)
def test_stripe_customer_session_through_the_fuzz_client(stripe: Any) -> None:
    contract, url = stripe
    assert contract.operations["PostCustomers"].http.media == httpcodec.FORM
    target = HttpTarget(url, contract, timeout=300)
    try:
        created = target.call(
            "PostCustomers",
            {"name": "Ann", "metadata": {"plan": "gold"}, "preferred_locales": ["en", "fr"]},
        )
        assert created.status == 200, created.error
        cid = created.output["id"]
        assert created.output["object"] == "customer"
        got = target.call("GetCustomersCustomer", {"customer": cid, "expand": ["default_source"]})
        assert got.status == 200 and got.output["id"] == cid
        deleted = target.call("DeleteCustomersCustomer", {"customer": cid})
        assert deleted.status == 200, deleted.error
        gone = target.call("GetCustomersCustomer", {"customer": cid})
        assert gone.status == 404
    finally:
        target.close()
    recorded = _recorded(url, "default")
    steps = recorded["steps"]
    assert [s["status"] for s in steps] == [200, 200, 200, 404]
    # serve read the form as the document types it: nested deepObject fields, arrays by index
    assert steps[0]["input"] == {
        "name": "Ann",
        "metadata": {"plan": "gold"},
        "preferred_locales": ["en", "fr"],
    }
    assert steps[1]["input"] == {"customer": cid, "expand": ["default_source"]}
    _replays_clean(contract, url, recorded)


@pytest.mark.timeout(600)
def test_stripe_customer_session_as_raw_form_requests(stripe: Any) -> None:
    _, url = stripe
    with httpx.Client(timeout=300, base_url=url, headers={SESSION: "raw"}) as client:
        created = client.post(
            "/v1/customers",
            data={"email": "a@example.com", "metadata[plan]": "gold", "address[city]": "Oslo"},
        )
        assert created.status_code == 200, created.text
        cid = created.json()["id"]
        got = client.get(f"/v1/customers/{cid}", params=[("expand[]", "default_source")])
        assert got.status_code == 200 and got.json()["id"] == cid
        assert client.delete(f"/v1/customers/{cid}").status_code == 200
        assert client.get(f"/v1/customers/{cid}").status_code == 404
        # a JSON body where the document says form still reads (not "the body is not JSON")
        assert client.post("/v1/customers", json={"email": "b@example.com"}).status_code == 200
    first = _recorded(url, "raw")["steps"][0]["input"]
    assert first == {"email": "a@example.com", "metadata": {"plan": "gold"}, "address": {"city": "Oslo"}}


@pytest.mark.timeout(600)
def test_box_comment_session(box: Any) -> None:
    contract, url = box
    target = HttpTarget(url, contract, timeout=300)
    item = {"id": "12345", "type": "file"}
    try:
        created = target.call("post_comments", {"message": "hi", "item": item, "fields": ["message", "id"]})
        assert created.status == 201, created.error
        cid = created.output["id"]
        got = target.call("get_comments_id", {"comment_id": cid, "fields": ["message"]})
        assert got.status == 200 and got.output["id"] == cid
        assert target.call("delete_comments_id", {"comment_id": cid}).status == 204
        assert target.call("get_comments_id", {"comment_id": cid}).status == 404
    finally:
        target.close()
    recorded = _recorded(url, "default")
    assert [s["status"] for s in recorded["steps"]] == [201, 200, 204, 404]
    assert recorded["steps"][1]["input"]["fields"] == ["message"]
    _replays_clean(contract, url, recorded)
    with httpx.Client(timeout=300, base_url=url, headers={SESSION: "raw"}) as client:
        # Box's array query parameters (explode: false) as clients write them, with or without %2C
        created = client.post("/comments?fields=message,id", json={"message": "x", "item": item})
        assert created.status_code == 201, created.text
        cid = created.json()["id"]
        assert client.get(f"/comments/{cid}", params={"fields": "message,id"}).status_code == 200
        assert client.delete(f"/comments/{cid}").status_code == 204
        assert client.get(f"/comments/{cid}").status_code == 404
    raw = _recorded(url, "raw")["steps"]
    assert raw[0]["input"]["fields"] == ["message", "id"] and raw[1]["input"]["fields"] == ["message", "id"]
