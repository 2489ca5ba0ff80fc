"""The simulator: forbidden calls change nothing, outputs satisfy ensures, same seed same bytes."""

from __future__ import annotations

import random
from pathlib import Path

import attrs
import pytest

import envfactory
from envfactory.contracts.model import UNKNOWN, Contract
from envfactory.statemachine.simulator import Simulator
from envfactory.statemachine.walk import InputDrawer
from envfactory.trajectory import dumps_trajectory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["bank/bank.yaml", "petstore/petstore.yaml", "tickets/tickets.yaml"]


@pytest.fixture(scope="module", params=EXAMPLES)
def contract(request: pytest.FixtureRequest) -> Contract:
    return envfactory.load(ROOT / "examples" / request.param)


@pytest.fixture(scope="module")
def bank() -> Contract:
    return envfactory.load(ROOT / "examples" / "bank" / "bank.yaml")


def _drive(contract: Contract, seed: int, calls: int = 40) -> Simulator:
    """Random calls, mostly allowed ones (the drawer aims for enabled inputs)."""
    sim = Simulator(contract, seed=seed)
    rng = random.Random(seed)
    drawer = InputDrawer(contract)
    tools = sorted(contract.operations)
    for _ in range(calls):
        tool = rng.choice(tools)
        sim.call(tool, drawer.draw(contract.operations[tool], sim.state, rng))
    return sim


def test_accepted_calls_satisfy_output_schema_ensures_and_invariants(contract: Contract) -> None:
    sim = _drive(contract, seed=5, calls=60)
    accepted = [r for _, _, r in sim.history if r.accepted]
    assert accepted, "the drawer should find allowed calls"
    assert all(r.failure is None and r.status == 200 for r in accepted)
    traj = sim.trajectory(id="t", accepted_only=True)
    (result,) = envfactory.verify(contract, [traj])
    assert result.verdict == "valid", result.message


def test_same_seed_same_bytes_other_seed_other_outputs(contract: Contract) -> None:
    a = dumps_trajectory(_drive(contract, seed=3).trajectory(id="x"))
    b = dumps_trajectory(_drive(contract, seed=3).trajectory(id="x"))
    assert a == b
    sim = Simulator(contract, seed=1)
    other = Simulator(contract, seed=2)
    if "tickets" in contract.path:
        outs = [s.call("create_ticket", {"title": "t", "priority": "low"}).output for s in (sim, other)]
        assert outs[0] == outs[1]  # every field is pinned by effects, ensures or the echoed input


def test_forbidden_call_gets_clause_status_and_changes_nothing(bank: Contract) -> None:
    sim = Simulator(bank, seed=0)
    sim.call("open", {"account": "AA01", "owner": "ann"})
    before = sim.state
    response = sim.call("deposit", {"account": "ZZ99", "amount": 5})
    assert (response.status, response.accepted, response.error) == (404, False, "no such account")
    assert response.failure is not None and response.failure.kind == "precondition"
    assert sim.state is before
    assert sim.call("close", {"account": "AA01"}).accepted
    assert sim.call("transfer", {"source": "AA01", "target": "AA01", "amount": 1}).status == 404


def test_unknown_tool_and_bad_input_are_4xx(bank: Contract) -> None:
    sim = Simulator(bank)
    unknown = sim.call("opne", {})
    assert unknown.status == 404 and "did you mean 'open'" in (unknown.error or "")
    bad = sim.call("open", {"account": "not valid", "owner": "x"})
    assert bad.status == 422 and bad.failure is not None and bad.failure.kind == "input_schema"
    assert sim.state == Simulator(bank).state


def test_ensures_pin_outputs_to_the_post_state(bank: Contract) -> None:
    sim = Simulator(bank, seed=9)
    sim.call("open", {"account": "AA01", "owner": "ann"})
    assert sim.call("deposit", {"account": "AA01", "amount": 7}).output == {"balance": 7}
    assert sim.call("deposit", {"account": "AA01", "amount": 5}).output == {"balance": 12}
    assert sim.call("balance", {"account": "AA01"}).output == {"balance": 12}


def test_fork_is_independent_and_shares_snapshots(bank: Contract) -> None:
    sim = Simulator(bank, seed=1)
    sim.call("open", {"account": "AA01", "owner": "ann"})
    twin = sim.fork()
    assert twin.state is sim.state
    twin.call("deposit", {"account": "AA01", "amount": 3})
    assert sim.state["accounts"]["AA01"]["balance"] == 0
    assert twin.state["accounts"]["AA01"]["balance"] == 3
    assert len(sim.history) == 1 and len(twin.history) == 2


def test_caller_mutation_cannot_reach_the_state(bank: Contract) -> None:
    sim = Simulator(bank)
    value = {"account": "AA01", "owner": "ann"}
    sim.call("open", value)
    value["owner"] = "mallory"
    sim.call("deposit", {"account": "AA01", "amount": 2})
    out = sim.call("balance", {"account": "AA01"}).output
    out["balance"] = 10**6
    assert sim.state["accounts"]["AA01"] == {"owner": "ann", "balance": 2, "frozen": False}


def test_reset_restores_the_initial_state_and_takes_overrides(bank: Contract) -> None:
    sim = Simulator(bank)
    sim.call("open", {"account": "AA01", "owner": "ann"})
    sim.reset(initial={"accounts": {"BB02": {"owner": "bob", "balance": 4, "frozen": False}}})
    assert list(sim.state["accounts"]) == ["BB02"] and sim.history == []
    assert sim.call("balance", {"account": "BB02"}).output == {"balance": 4}
    traj = sim.trajectory(id="r")
    assert traj.initial is not None and "BB02" in traj.initial["accounts"]
    (result,) = envfactory.verify(bank, [traj])
    assert result.verdict == "valid"


def _write(tmp_path: Path, text: str) -> Contract:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return envfactory.load(path)


def test_non_equation_ensures_are_solved(tmp_path: Path) -> None:
    contract = _write(
        tmp_path,
        """envfactory: "1"
state: {total: {type: integer, initial: 10}}
operations:
  quote:
    input: {type: object, properties: {x: {type: integer}}, required: [x]}
    output:
      type: object
      properties: {n: {type: integer}, code: {type: string, maxLength: 8}}
      required: [n, code]
    ensures:
      - output.n > input.x + total and output.n < input.x + total + 3
      - output.code.startswith("Q-")
""",
    )
    for seed in range(5):
        sim = Simulator(contract, seed=seed)
        response = sim.call("quote", {"x": seed * 100})
        assert response.ok, response.failure
        assert seed * 100 + 10 < response.output["n"] < seed * 100 + 13
        assert response.output["code"].startswith("Q-")


def test_unsatisfiable_ensures_is_reported_not_hidden(tmp_path: Path) -> None:
    contract = _write(
        tmp_path,
        """envfactory: "1"
state: {}
operations:
  bad:
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    ensures: [output.n > 5 and output.n < 3]
""",
    )
    response = Simulator(contract).call("bad", {})
    assert response.accepted and not response.ok
    assert response.failure is not None and response.failure.kind == "postcondition"


def test_producer_output_feeds_effects_with_a_fresh_key(tmp_path: Path) -> None:
    contract = _write(
        tmp_path,
        """envfactory: "1"
state:
  items: {collection: {key: {type: integer}, value: {type: object}}}
operations:
  create:
    input: {type: object, properties: {name: {type: string}}, required: [name]}
    output: {type: object, properties: {id: {type: integer, minimum: 1, maximum: 3}}, required: [id]}
    effects: ['items[output.id] = {"name": input.name}']
""",
    )
    sim = Simulator(contract, seed=4)
    ids = [sim.call("create", {"name": f"n{i}"}).output["id"] for i in range(3)]
    assert len(set(ids)) == 3 and sorted(sim.state["items"]) == sorted(ids)


def test_open_world_state_starts_empty_and_the_trajectory_says_so(tmp_path: Path) -> None:
    contract = _write(
        tmp_path,
        """envfactory: "1"
state:
  pets: {collection: {key: {type: integer}, value: {type: object}}}
operations:
  add:
    input: {type: object, properties: {id: {type: integer}}, required: [id]}
    requires: [not (input.id in pets)]
    effects: ['pets[input.id] = {"id": input.id}']
""",
    )
    opened = attrs.evolve(
        contract,
        state={n: attrs.evolve(v, initial=UNKNOWN) for n, v in contract.state.items()},
        open_world=True,
    )
    sim = Simulator(opened)
    assert sim.state["pets"] == {}
    assert sim.call("add", {"id": 1}).ok
    traj = sim.trajectory(id="o")
    assert traj.initial == {"pets": {}}
    (result,) = envfactory.verify(opened, [traj])
    assert result.verdict == "valid", result.message


def test_openapi_mock_answers_with_what_it_holds() -> None:
    contract = envfactory.load(Path(__file__).parent / "pets_openapi.yaml")
    assert contract.open_world
    sim = Simulator(contract, seed=3)
    created = [sim.call("createPet", {"name": name}).output for name in ("Rex", "Bo")]
    assert [c["name"] for c in created] == ["Rex", "Bo"] and created[0]["id"] != created[1]["id"]
    assert sim.call("getPet", {"petId": created[0]["id"]}).output == created[0]
    assert sim.call("listPets", {}).output == created
    assert sim.call("deletePet", {"petId": created[0]["id"]}).ok
    assert sim.call("getPet", {"petId": created[0]["id"]}).status == 404
    (result,) = envfactory.verify(contract, [sim.trajectory(id="p", accepted_only=True)])
    assert result.verdict == "valid", result.message
