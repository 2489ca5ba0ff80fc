"""Integers past 64 bits are refused with 400 the same way in body, path and query, never turned
into colliding floats, and ``/_trajectory`` answers 200 whatever came before (issue 20 item 4)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import running
from envfactory.trajectory import read_trajectories_text

ROOT = Path(__file__).resolve().parents[2]
BIG = 1 << 64


def _trajectory_reads(client: httpx.Client) -> list[int]:
    answer = client.get("/_trajectory")
    assert answer.status_code == 200
    (traj,) = list(read_trajectories_text(answer.text, "session.jsonl"))
    assert not isinstance(traj, Exception)
    return [step.status for step in traj.steps]


@pytest.mark.timeout(60)
def test_ids_past_64_bits_in_a_body_are_refused_and_never_collide() -> None:
    contract = envfactory.load(ROOT / "examples" / "petstore" / "petstore.yaml")
    with running(contract) as url, httpx.Client(base_url=url, timeout=10) as client:
        assert client.post("/login", json={"name": "ann"}).status_code == 200
        for pet in (BIG + 1, BIG + 2, -(1 << 63) - 1, 10**40):
            body = b'{"id": %d, "name": "Rex", "price": 1}' % pet
            answer = client.post("/addPet", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 400, answer.text
            assert "does not fit in 64 bits" in answer.json()["error"]
        # the largest 64-bit ids stay exact and distinct
        for pet in (BIG - 1, BIG - 2):
            assert client.post("/addPet", json={"id": pet, "name": "Rex", "price": 1}).status_code == 200
        assert sorted(client.get("/_state").json()["pets"]) == [str(BIG - 2), str(BIG - 1)]
        # a number literal of 19+ digits inside a string is only text
        named = client.post("/addPet", json={"id": 7, "name": "1" * 30, "price": 1})
        assert named.status_code == 200 and named.json()["name"] == "1" * 30
        assert _trajectory_reads(client) == [200, 200, 200, 200]


@pytest.mark.timeout(60)
def test_path_and_query_integers_past_64_bits_get_400_and_the_trajectory_stays_readable() -> None:
    contract = envfactory.load(ROOT / "tests" / "simulator" / "pets_openapi.yaml")
    with running(contract) as url, httpx.Client(base_url=url, timeout=10) as client:
        for path in (f"/pets/{BIG + 5}", f"/pets?limit={BIG * 4}", f"/pets/{-BIG}"):
            answer = client.get(path)
            assert answer.status_code == 400, (path, answer.text)
            assert "does not fit in 64 bits" in answer.json()["error"]
        assert client.get(f"/pets/{BIG - 1}").status_code == 404  # in range: an ordinary miss
        assert client.post("/pets", json={"name": "Rex", "tag": str(BIG)}).status_code == 201
        for _ in range(2):  # the session's trajectory never breaks
            assert _trajectory_reads(client) == [404, 201]
