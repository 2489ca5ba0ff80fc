"""Session history is bounded in calls and bytes, the oldest calls dropped with a marker in
``/_trajectory`` (which still verifies), total history bounded over sessions, and an evicted
session said in the log and in ``/_state`` (issue 20 item 3). Counts and sizes, never timing."""

from __future__ import annotations

import gc
import logging
import tracemalloc
from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import MockServer, create_app, running
from envfactory.trajectory import read_trajectories_text

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"


def _session(name: str) -> dict[str, str]:
    return {"x-envfactory-session": name}


def _trajectory(client: httpx.Client) -> envfactory.Trajectory:
    (traj,) = list(read_trajectories_text(client.get("/_trajectory").text, "session.jsonl"))
    assert not isinstance(traj, Exception)
    return traj


@pytest.mark.timeout(600)
def test_the_oldest_calls_are_dropped_with_a_marker_and_the_rest_still_verifies() -> None:
    contract = envfactory.load(BANK)
    app = create_app(contract, max_history=10)
    with running(app) as url, httpx.Client(base_url=url, headers=_session("long"), timeout=10) as client:
        assert client.post("/open", json={"account": "AA01", "owner": "ann"}).status_code == 200
        for n in range(1, 41):
            assert client.post("/deposit", json={"account": "AA01", "amount": n}).status_code == 200
            assert client.post("/deposit", json={"account": "ZZ01", "amount": 1}).status_code == 404
        traj = _trajectory(client)
        assert 5 <= len(traj.steps) <= 10
        assert traj.meta is not None and traj.meta["dropped_calls"] == 81 - len(traj.steps)
        assert traj.initial is not None and traj.initial["accounts"]["AA01"]["owner"] == "ann"
        (result,) = envfactory.verify(contract, [traj], allow_rejected=True)
        assert result.verdict == "valid", result
        state = client.get("/_state")
        assert state.json()["accounts"]["AA01"]["balance"] == sum(range(1, 41))
        kept, dropped, _ = (part.split("=")[1] for part in state.headers["x-envfactory-history"].split())
        assert (int(kept), int(dropped)) == (len(traj.steps), 81 - len(traj.steps))
        assert client.post("/_reset").status_code == 200
        assert _trajectory(client).meta is None and app.state.mock.total_bytes == 0


@pytest.mark.timeout(600)
def test_rejected_megabyte_calls_keep_memory_bounded() -> None:
    app = create_app(envfactory.load(BANK), max_history_bytes=2 << 20)
    mock: MockServer = app.state.mock
    big = {"account": "ZZ01", "amount": 1, "memo": "m" * (500 << 10)}
    with running(app) as url, httpx.Client(base_url=url, headers=_session("heavy"), timeout=30) as client:
        assert client.post("/deposit", json=big).status_code == 422  # warm up every code path once
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(60):  # 30 MB of rejected bodies
                assert client.post("/deposit", json=big).status_code == 422
                assert mock.sessions["heavy"].history_bytes <= 2 << 20
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert grown < 8 << 20, grown
    assert mock.total_bytes <= 2 << 20


@pytest.mark.timeout(600)
def test_total_history_evicts_the_least_recent_session_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(envfactory.load(BANK), max_total_bytes=60_000)
    mock: MockServer = app.state.mock
    memo = {"account": "ZZ01", "amount": 1, "memo": "m" * 9_000}
    caplog.set_level(logging.WARNING, logger="envfactory.server")
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        for name in ("first", "second", "third"):
            for _ in range(2):
                client.post("/deposit", json=memo, headers=_session(name))
        assert list(mock.sessions) == ["first", "second", "third"]
        for _ in range(3):  # the third session grows past the total: the first goes
            client.post("/deposit", json=memo, headers=_session("third"))
        assert "first" not in mock.sessions and "third" in mock.sessions
        assert mock.total_bytes <= 60_000
        assert any("'first' evicted" in record.getMessage() for record in caplog.records)
        state = client.get("/_state", headers=_session("first"))
        assert "history of all sessions" in state.headers["x-envfactory-evicted"]
        again = client.get("/_state", headers=_session("first"))  # said once
        assert "x-envfactory-evicted" not in again.headers


@pytest.mark.timeout(600)
def test_past_the_session_cap_the_evicted_session_is_said(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="envfactory.server")
    with (
        running(create_app(envfactory.load(BANK), max_sessions=3)) as url,
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        for n in range(4):
            assert client.get("/_state", headers=_session(f"s{n}")).status_code == 200
        assert any("'s0' evicted" in record.getMessage() for record in caplog.records)
        assert (
            "more than 3 sessions"
            in client.get("/_state", headers=_session("s0")).headers["x-envfactory-evicted"]
        )
