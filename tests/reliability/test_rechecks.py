"""``serve`` re-checks invariants as ``verify`` does: per operation only those reading what it
writes, and ``all(... for k in c)`` only at the keys written, so a call's checks do not grow with
the state; the answers are those of the plain simulator (issue 20 item 7). Counts, not timing."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import MockServer, _ServedSimulator, create_app, running
from envfactory.statemachine.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]

OVERDRAFT = """
envfactory: "1"
info: {title: Overdraft, version: "1"}
state:
  accounts:
    collection: {key: {type: string}, value: {type: object, properties: {balance: {type: integer}}}}
operations:
  open:
    input: {type: object, properties: {id: {type: string}}, required: [id]}
    requires: [not (input.id in accounts)]
    effects: ['accounts[input.id] = {"balance": 0}']
  move:
    input: {type: object, properties: {id: {type: string}, amount: {type: integer}}, required: [id, amount]}
    requires: [input.id in accounts]
    effects: ["accounts[input.id].balance = accounts[input.id].balance + input.amount"]
invariants:
  - all(accounts[a].balance >= 0 for a in accounts)
"""


@pytest.mark.timeout(120)
def test_a_call_rechecks_only_the_keys_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "overdraft.yaml"
    path.write_text(OVERDRAFT)
    app = create_app(envfactory.load(path))
    mock: MockServer = app.state.mock
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        for n in range(300):
            assert client.post("/open", json={"id": f"a{n}"}).status_code == 200
            assert client.post("/move", json={"id": f"a{n}", "amount": 5}).status_code == 200
        assert mock.rechecks.whole == 1  # the first call, on a state never checked before
        # a call that breaks the invariant at its key is still caught, and named
        sim = mock.sessions["default"].sim
        broken = sim.call("move", {"id": "a7", "amount": -6})
        assert broken.failure is not None and broken.failure.kind == "invariant"
        assert broken.failure.clause_text == "all(accounts[a].balance >= 0 for a in accounts)"
        # on a state not known good, the whole check comes back
        before = mock.rechecks.whole
        assert client.post("/move", json={"id": "a7", "amount": 6}).status_code == 200
        assert mock.rechecks.whole == before + 1
        assert client.post("/_reset").status_code == 200
        assert client.post("/open", json={"id": "b"}).status_code == 200
        assert mock.rechecks.whole == before + 2


@pytest.mark.parametrize("example", ["bank/bank.yaml", "tickets/tickets.yaml", "petstore/petstore.yaml"])
def test_served_answers_are_the_simulators(example: str) -> None:
    contract = envfactory.load(ROOT / "examples" / example)
    served = MockServer(contract).rechecks

    plain, incremental = Simulator(contract, seed=3), _ServedSimulator(contract, served, seed=3)
    rng = random.Random(11)
    names = sorted(contract.operations)
    pools = {"string": ["AA01", "BB02", "ann", "bo"], "integer": [1, 2, 3, 5, 8, 40]}
    junk = [-1, 0, "x", True, None]
    accepted = 0
    for _ in range(400):
        tool = rng.choice(names)
        props = contract.operations[tool].input_schema.get("properties", {})
        value = {
            field: rng.choice(pools.get(schema.get("type"), junk) if rng.random() < 0.9 else junk)
            for field, schema in props.items()
        }
        answer = incremental.call(tool, value)
        assert answer == plain.call(tool, value), (tool, value)
        accepted += answer.accepted
    assert plain.state == incremental.state
    assert accepted >= 40  # the sequence reaches deep enough to compare something
