"""Integers past 64 bits stay exact in body, path and query, as the simulator (the fuzzer's model)
keeps them: two ids above 2^64 never collide, and ``/_trajectory`` and ``/_state`` answer 200
whatever came before (issue 20 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import running

ROOT = Path(__file__).resolve().parents[2]
BIG = 1 << 64


def _steps(client: httpx.Client) -> list[tuple[int, object]]:
    answer = client.get("/_trajectory")
    assert answer.status_code == 200
    traj = json.loads(answer.text)  # exact integers, whatever their size
    return [(step["status"], step["input"]) for step in traj["steps"]]


@pytest.mark.timeout(600)
def test_ids_past_64_bits_in_a_body_stay_distinct_and_exact() -> None:
    contract = envfactory.load(ROOT / "examples" / "petstore" / "petstore.yaml")
    with running(contract) as url, httpx.Client(base_url=url, timeout=10) as client:
        assert client.post("/login", json={"name": "ann"}).status_code == 200
        ids = [BIG + 1, BIG + 2, 10**40, BIG - 1]
        for pet in ids:
            body = b'{"id": %d, "name": "Rex", "price": 1}' % pet
            answer = client.post("/addPet", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 200, answer.text
            assert json.loads(answer.text)["id"] == pet
        again = b'{"id": %d, "name": "Rex", "price": 1}' % (BIG + 2)
        assert client.post("/addPet", content=again).status_code == 409  # the same id, and only it
        assert sorted(int(k) for k in json.loads(client.get("/_state").text)["pets"]) == sorted(ids)
        assert client.post("/getPet", content=b'{"petId": %d}' % (BIG + 3)).status_code == 404
        assert json.loads(client.post("/getPet", content=b'{"petId": %d}' % (10**40)).text)["id"] == 10**40
        # a number literal of 19+ digits inside a string is only text
        named = client.post("/addPet", json={"id": 7, "name": "1" * 30, "price": 1})
        assert named.status_code == 200 and named.json()["name"] == "1" * 30
        statuses = [status for status, _ in _steps(client)]
        assert statuses == [200, 200, 200, 200, 200, 409, 404, 200, 200]
        assert _steps(client)[2][1] == {"id": BIG + 2, "name": "Rex", "price": 1}


@pytest.mark.timeout(600)
def test_path_and_query_integers_past_64_bits_stay_exact_and_the_trajectory_readable() -> None:
    contract = envfactory.load(ROOT / "tests" / "simulator" / "pets_openapi.yaml")
    with running(contract) as url, httpx.Client(base_url=url, timeout=10) as client:
        assert client.get(f"/pets/{BIG + 5}").status_code == 404
        assert client.delete(f"/pets/{-BIG}").status_code == 404
        assert client.get(f"/pets?limit={BIG * 4}").status_code == 422  # past the schema's maximum
        assert client.post("/pets", json={"name": "Rex", "tag": str(BIG)}).status_code == 201
        for _ in range(2):  # the session's trajectory never breaks
            steps = _steps(client)
            assert [status for status, _ in steps] == [404, 404, 422, 201]
            assert steps[0][1] == {"petId": BIG + 5} and steps[2][1] == {"limit": BIG * 4}
