"""The mock server over real loopback HTTP: routes, sessions, concurrency and hostile clients."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import SESSION_HEADER, running
from envfactory.trajectory import read_trajectories_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(envfactory.load(ROOT / "examples" / "bank" / "bank.yaml")) as base:
        yield base


def session(name: str) -> dict[str, str]:
    return {SESSION_HEADER: name}


def test_operations_errors_state_and_trajectory(url: str) -> None:
    h = session("basic")
    with httpx.Client(base_url=url, headers=h, timeout=10) as client:
        assert client.post("/open", json={"account": "AA01", "owner": "ann"}).status_code == 200
        deposit = client.post("/deposit", json={"account": "AA01", "amount": 30})
        assert (deposit.status_code, deposit.json()) == (200, {"balance": 30})
        missing = client.post("/deposit", json={"account": "ZZ01", "amount": 1})
        assert missing.status_code == 404
        assert missing.json()["error"] == "no such account"
        assert missing.json()["clause"] == "input.account in accounts"
        assert client.post("/close", json={"account": "AA01"}).status_code == 409
        assert client.post("/nope", json={}).status_code == 404
        assert client.post("/open", json={"account": 5}).status_code == 422
        assert client.get("/open").status_code == 405
        state = client.get("/_state").json()
        assert state["accounts"]["AA01"]["balance"] == 30
        text = client.get("/_trajectory").text
        (traj,) = list(read_trajectories_text(text, "session.jsonl"))
        assert not isinstance(traj, Exception)
        assert [s.status for s in traj.steps] == [200, 200, 404, 409, 422]
        results = list(
            envfactory.verify(
                envfactory.load(ROOT / "examples" / "bank" / "bank.yaml"), [traj], allow_rejected=True
            )
        )
        assert results[0].verdict in ("valid", "invalid")
        assert client.post("/_reset").json()["accounts"] == {}


def test_sessions_are_isolated(url: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        client.post("/open", json={"account": "SS01", "owner": "a"}, headers=session("one"))
        assert "SS01" in client.get("/_state", headers=session("one")).json()["accounts"]
        assert "SS01" not in client.get("/_state", headers=session("two")).json()["accounts"]
        assert client.get("/_state", headers=session("bad id!")).status_code == 400


def test_concurrent_deposits_on_one_session_lose_nothing(url: str) -> None:
    h = session("load")

    async def main() -> tuple[set[int], int]:
        limits = httpx.Limits(max_connections=40)
        async with httpx.AsyncClient(base_url=url, headers=h, limits=limits, timeout=30) as client:
            await client.post("/open", json={"account": "LL01", "owner": "l"})
            replies = await asyncio.gather(
                *[client.post("/deposit", json={"account": "LL01", "amount": i % 7 + 1}) for i in range(200)]
            )
            final = (await client.get("/_state")).json()["accounts"]["LL01"]["balance"]
            return {r.status_code for r in replies}, final

    statuses, final = asyncio.run(main())
    assert statuses == {200}
    assert final == sum(i % 7 + 1 for i in range(200))


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[" * 200 + b"]" * 200, 400),
        (b"x" * (2 << 20), 413),
        (b'"just a string"', 422),
    ],
    ids=["malformed", "deep", "oversized", "not-an-object"],
)
def test_hostile_bodies_get_4xx(url: str, body: bytes, status: int) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        assert (
            client.post("/open", content=body, headers={"content-type": "application/json"}).status_code
            == status
        )


def test_huge_headers_are_refused(url: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        try:
            status = client.post("/open", json={}, headers={"x-big": "a" * 200_000}).status_code
        except httpx.HTTPError:
            status = 0  # the connection was closed: also fine
        assert status in (0, 400, 413, 431)
        assert client.get("/_state").status_code == 200


@pytest.mark.timeout(600)
def test_a_slow_client_does_not_stall_others(url: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    slow = socket.create_connection((host, int(port)))
    try:
        slow.sendall(b"POST /open HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        # served while the slow body is pending: the client's own time-out is the bound (a
        # stalled server raises there); no wall-clock assert, which a loaded machine could break
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/_state", headers=session("other")).status_code == 200
    finally:
        slow.close()


def test_openapi_bindings_use_their_own_paths(tmp_path: Path) -> None:
    from envfactory.contracts.loader import build
    from envfactory.contracts.model import HttpBinding

    doc = {
        "envfactory": "1",
        "state": {"pets": {"collection": {"key": {"type": "integer"}, "value": {"type": "object"}}}},
        "operations": {
            "createPet": {
                "input": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    "required": ["id", "name"],
                },
                "requires": [{"check": "not (input.id in pets)", "error": {"status": 409}}],
                "effects": ["pets[input.id] = input"],
            },
            "getPet": {
                "input": {
                    "type": "object",
                    "properties": {"petId": {"type": "integer"}},
                    "required": ["petId"],
                },
                "output": {"type": "object"},
                "requires": [{"check": "input.petId in pets", "error": {"status": 404}}],
                "ensures": ["output == pets[input.petId]"],
            },
        },
    }
    http = {
        "createPet": HttpBinding("POST", "/pets", body="*", body_fields=("id", "name")),
        "getPet": HttpBinding("GET", "/pets/{petId}", path_params=("petId",)),
    }
    contract = build(doc, tmp_path / "api.yaml", http=http)
    with running(contract) as base, httpx.Client(base_url=base, timeout=10) as client:
        assert client.get("/pets/1").status_code == 404
        assert client.post("/pets", json={"id": 1, "name": "Rex"}).status_code == 200
        assert client.post("/pets", json={"id": 1, "name": "Rex"}).status_code == 409
        got = client.get("/pets/1")
        assert (got.status_code, got.json()) == (200, {"id": 1, "name": "Rex"})
        assert client.get("/pets/abc").status_code == 422


def test_openapi_file_served_on_its_paths() -> None:
    contract = envfactory.load(Path(__file__).parent / "pets_openapi.yaml")
    with running(contract) as base, httpx.Client(base_url=base, timeout=10) as client:
        made = client.post("/pets", json={"name": "Rex"})
        assert made.status_code == 201 and made.json()["name"] == "Rex"
        pet = made.json()["id"]
        assert client.get(f"/pets/{pet}").json() == made.json()
        assert client.get("/pets", params={"limit": 5}).json() == [made.json()]
        assert client.delete(f"/pets/{pet}").status_code == 204
        missing = client.get(f"/pets/{pet}")
        assert missing.status_code == 404 and missing.json()["clause"] == "input.petId in pets"
        assert client.post("/pets", json={"name": 5}).status_code == 422
        assert client.put("/pets").status_code == 405


def test_a_body_that_never_arrives_gets_408_and_the_worker_moves_on() -> None:
    from envfactory.server import create_app

    app = create_app(envfactory.load(ROOT / "examples" / "bank" / "bank.yaml"), body_timeout=0.5)
    with running(app) as base:
        host, port = base.removeprefix("http://").split(":")
        slow = socket.create_connection((host, int(port)), timeout=5)
        try:
            slow.sendall(b"POST /open HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
            reply = slow.recv(4096)
            assert reply.startswith(b"HTTP/1.1 408")
        finally:
            slow.close()
        with httpx.Client(base_url=base, timeout=10) as client:
            assert client.post("/open", json={"account": "AB12", "owner": "x"}).status_code == 200


def test_openapi_lists_answer_the_stored_records_of_their_own_collection() -> None:
    """An inferred lister clause ties ``GET /pets`` to ``pets`` (bare array) and ``GET /owners``
    to ``owners`` (a ``data`` envelope): each lists what was added there, nothing of the other."""
    contract = envfactory.load(Path(__file__).parent / "two_lists_openapi.yaml")
    for op, where in (("listPets", "output"), ("listOwners", "output.data")):
        (clause,) = contract.operations[op].ensures
        assert clause.inferred and clause.source.endswith(f"for x in {where})")
    with running(contract) as base, httpx.Client(base_url=base, timeout=10) as client:
        assert client.get("/pets").json() == []
        pets = [client.post("/pets", json={"name": f"pet{i}"}).json() for i in range(3)]
        owners = [client.post("/owners", json={"name": f"owner{i}"}).json() for i in range(2)]
        assert sorted(p["id"] for p in client.get("/pets").json()) == sorted(p["id"] for p in pets)
        assert client.get("/pets").json() == pets
        listed = client.get("/owners").json()["data"]
        assert all(o in owners for o in listed)  # an envelope lists stored owners only
        trajectory = client.get("/_trajectory").text
    (traj,) = read_trajectories_text(trajectory)
    assert [r.verdict for r in envfactory.verify(contract, [traj])] == ["valid"]


def test_two_hundred_concurrent_books_on_one_session_are_all_listed_and_reset_lists_none() -> None:
    """Issue 18: a stateful mock lists what was put into it, however the calls interleave."""
    library = envfactory.load(ROOT / "tests" / "solver" / "contracts" / "library.yaml")
    h = session("shelf")

    async def main(base: str) -> tuple[set[int], list[dict[str, object]], object]:
        limits = httpx.Limits(max_connections=40)
        async with httpx.AsyncClient(base_url=base, headers=h, limits=limits, timeout=30) as client:
            replies = await asyncio.gather(
                *[client.post("/addBook", json={"isbn": i, "title": f"book {i}"}) for i in range(1, 201)]
            )
            listed = (await client.post("/listBooks", json={})).json()["books"]
            await client.post("/_reset")
            after = (await client.post("/listBooks", json={})).json()
            return {r.status_code for r in replies}, listed, after

    with running(library) as base:
        statuses, listed, after = asyncio.run(main(base))
    assert statuses == {200}
    assert sorted((b["isbn"], b["title"]) for b in listed) == [(i, f"book {i}") for i in range(1, 201)]
    assert after == {"books": []}
