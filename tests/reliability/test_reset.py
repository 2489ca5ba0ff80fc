"""``/_reset`` checks its ``initial`` as a trajectory's ``initial`` is checked: state names, the
state schema (scalars, record fields, keys) and the invariants, answering 400 with the clause and
leaving the session as it was (issue 20 item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

import envfactory
from envfactory.server import running

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"owner": "ann", "balance": 5, "frozen": False}


@pytest.fixture(scope="module")
def url() -> Any:
    with running(envfactory.load(ROOT / "examples" / "bank" / "bank.yaml")) as base:
        yield base


@pytest.mark.parametrize(
    ("initial", "needle"),
    [
        ({"accounts": {"AA01": {**GOOD, "balance": -7}}}, "balance"),
        ({"accounts": {"AA01": {"owner": "ann"}}}, "required"),
        ({"transfers": -3}, "transfers"),
        ({"transfers": "many"}, "transfers"),
        ({"nope": 1}, "nope"),
        ({"accounts": {"AA01": {**GOOD, "owner": 5}}}, "owner"),
    ],
)
def test_a_bad_initial_is_refused_with_400_and_changes_nothing(url: str, initial: Any, needle: str) -> None:
    with httpx.Client(base_url=url, headers={"x-envfactory-session": "reset-bad"}, timeout=10) as client:
        before = client.post("/_reset", json={"initial": {"accounts": {"BB02": GOOD}}})
        assert before.status_code == 200
        answer = client.post("/_reset", json={"initial": initial})
        assert answer.status_code == 400, answer.text
        assert needle in answer.json()["error"]
        assert client.get("/_state").json() == before.json()


COUNTER = """
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  count: {type: integer, initial: 0}
  limit: {type: integer, initial: 5}
operations:
  bump:
    input: {type: object}
    requires: [count < limit]
    effects: [count = count + 1]
invariants: [count <= limit]
"""


def test_an_initial_that_breaks_an_invariant_names_the_clause(tmp_path: Path) -> None:
    path = tmp_path / "counter.yaml"
    path.write_text(COUNTER)
    with running(envfactory.load(path)) as base, httpx.Client(base_url=base, timeout=10) as client:
        answer = client.post("/_reset", json={"initial": {"count": 9}})
        assert answer.status_code == 400
        body = answer.json()
        assert (body["kind"], body["clause"]) == ("invariant", "count <= limit")
        assert body["location"].endswith("counter.yaml:12:14")
        assert client.post("/_reset", json={"initial": {"count": 9, "limit": 9}}).status_code == 200
        assert client.post("/bump", json={}).status_code == 400  # served from the checked state


def test_a_good_initial_is_served(url: str) -> None:
    with httpx.Client(base_url=url, headers={"x-envfactory-session": "reset-good"}, timeout=10) as client:
        answer = client.post("/_reset", json={"initial": {"accounts": {"AA01": GOOD}, "transfers": 2}})
        assert answer.status_code == 200
        assert answer.json()["accounts"]["AA01"] == GOOD
        assert client.post("/deposit", json={"account": "AA01", "amount": 1}).json() == {"balance": 6}
