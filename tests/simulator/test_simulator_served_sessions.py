"""Every answer of a served session keeps the contract: random sessions of valid and invalid
calls go through the ASGI app in process (starlette's TestClient, no socket, deterministic), and
the session's ``/_trajectory`` verifies valid, for every bundled contract, the lending library
and every OpenAPI document of the real-world corpus, Stripe's 417 operations included (issue 18
items 3 and 4; its validators share one compiled copy of the document's definitions, so its
sessions take seconds and a few hundred MB instead of minutes and 1.9 GB)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

import envfactory
from envfactory.fuzz.targets import HttpTarget
from envfactory.server import SESSION_HEADER, create_app
from envfactory.statemachine.walk import InputDrawer
from envfactory.trajectory import read_trajectories_text
from tests.published import loaded

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "tests" / "solver" / "contracts" / "library.yaml"
CONTRACTS = sorted(
    [
        *(ROOT / "examples").glob("*/*.yaml"),
        LIBRARY,
        Path(__file__).parent / "composed_openapi.yaml",
        *(ROOT / "tests" / "realworld" / "corpus").glob("*.yaml"),
        *(ROOT / "tests" / "realworld" / "corpus").glob("*.json"),
    ]
)
BASE = "http://testserver"


class _Served:
    """A contract served by its ASGI app, with the HTTP target's request mapping."""

    def __init__(self, path: Path) -> None:
        self.contract = loaded(path)
        self.client = TestClient(create_app(self.contract, seed=7), base_url=BASE)
        self.target = HttpTarget(BASE, self.contract)
        self.target.client.close()
        self.target.client = self.client
        self.drawer = InputDrawer(self.contract)

    def trajectory(self, session: str) -> Any:
        text = self.client.get("/_trajectory", headers={SESSION_HEADER: session}).text
        (traj,) = list(read_trajectories_text(text, "session.jsonl"))
        assert not isinstance(traj, Exception), traj
        return traj


_SERVED: dict[Path, _Served] = {}


def served(path: Path) -> _Served:
    if path not in _SERVED:
        _SERVED[path] = _Served(path)
    return _SERVED[path]


def _invalid(rng: random.Random, value: Any) -> Any:
    """A call that breaks the input schema or names keys that do not exist."""
    choice = rng.randrange(3)
    if choice == 0:
        return {"unexpected": rng.choice([None, 1, "x", [], {}])}
    if choice == 1 or not isinstance(value, dict) or not value:
        return rng.choice([None, 3, "text", [1, 2]])
    field = rng.choice(sorted(value))
    return {**value, field: rng.choice([None, -(10**9), "zz-missing", 9_999_991, True])}


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
@given(seed=st.integers(0, 2**31 - 1), calls=st.integers(1, 25))
@settings(
    max_examples=8,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_every_served_session_verifies_valid(path: Path, seed: int, calls: int) -> None:
    server = served(path)
    contract = server.contract
    session = f"s{seed}-{calls}"
    server.target.client.headers[SESSION_HEADER] = session
    server.client.post("/_reset", headers={SESSION_HEADER: session})
    rng = random.Random(seed)
    tools = sorted(contract.operations)
    state: Any = envfactory.Simulator(contract).state
    for _ in range(calls):
        tool = rng.choice(tools)
        value = server.drawer.draw(contract.operations[tool], state, rng)
        if rng.random() < 0.25:
            value = _invalid(rng, value)
        server.target.call(tool, value)
        state = server.client.get("/_state", headers={SESSION_HEADER: session}).json()
        state = _as_state(contract, state)
    traj = server.trajectory(session)
    assert (
        len(traj.steps) <= calls
    )  # the HTTP client cannot send a call with no URL (a missing path parameter)
    (result,) = envfactory.verify(contract, [traj], allow_rejected=True)
    assert result.verdict == "valid", (path.name, result.to_json() if hasattr(result, "to_json") else result)


def _as_state(contract: envfactory.Contract, json_state: dict[str, Any]) -> Any:
    """The served state as the drawer reads it (collection keys back to their types)."""
    from envfactory.contracts.state import initial_state

    return initial_state(contract, json_state)


def test_two_hundred_books_are_all_listed_and_reset_lists_none() -> None:
    server = served(LIBRARY)
    h = {SESSION_HEADER: "shelf"}
    for isbn in range(1, 201):
        assert (
            server.client.post(
                "/addBook", json={"isbn": isbn, "title": f"book {isbn}"}, headers=h
            ).status_code
            == 200
        )
    listed = server.client.post("/listBooks", json={}, headers=h).json()["books"]
    assert sorted(b["isbn"] for b in listed) == list(range(1, 201))
    assert {b["title"] for b in listed} == {f"book {i}" for i in range(1, 201)}
    assert server.client.post("/_reset", headers=h).status_code == 200
    assert server.client.post("/listBooks", json={}, headers=h).json() == {"books": []}
