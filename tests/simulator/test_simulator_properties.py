"""Properties of the simulator under Hypothesis-chosen call sequences (valid and not)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.semantics import Machine
from envfactory.statemachine.simulator import Simulator
from envfactory.statemachine.walk import InputDrawer

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = {
    name: envfactory.load(ROOT / "examples" / name)
    for name in ("bank/bank.yaml", "petstore/petstore.yaml", "tickets/tickets.yaml")
}
DRAWERS = {name: InputDrawer(c) for name, c in CONTRACTS.items()}


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, int, list[tuple[int, int, bool]]]:
    name = draw(st.sampled_from(sorted(CONTRACTS)))
    seed = draw(st.integers(0, 2**16))
    calls = draw(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 2**16), st.booleans()), max_size=25))
    return name, seed, calls


def _input(name: str, tool: str, sim: Simulator, salt: int, sensible: bool) -> Any:
    contract = CONTRACTS[name]
    rng = random.Random(salt)
    if sensible and tool in contract.operations:
        return DRAWERS[name].draw(contract.operations[tool], sim.state, rng)
    return rng.choice([{}, {"id": "x"}, {"account": 3}, None, {"petId": -1, "extra": True}])


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(sessions())
def test_rejections_change_nothing_and_acceptances_keep_the_contract(
    session: tuple[str, int, list[tuple[int, int, bool]]],
) -> None:
    name, seed, calls = session
    contract = CONTRACTS[name]
    machine = Machine(contract)
    tools = sorted(contract.operations)
    sim = Simulator(contract, seed=seed)
    for pick, salt, sensible in calls:
        tool = tools[pick % len(tools)] if pick < 45 else "no_such_tool"
        before = sim.state
        response = sim.call(tool, _input(name, tool, sim, salt, sensible))
        if not response.accepted:
            assert sim.state is before
            assert 400 <= response.status < 500 and response.error
            assert response.failure is not None
        else:
            assert response.failure is None, response.failure.message
            assert machine.check_invariants(sim.state) is None
    replayed = Simulator(contract, seed=seed)
    for tool, value, response in sim.history:
        assert replayed.call(tool, value) == response  # same seed, same calls: same answers
    trajectory = sim.trajectory(id="h", accepted_only=True)
    (result,) = envfactory.verify(contract, [trajectory])
    assert result.verdict == "valid", result.message
