"""The simulator's output solver: ensures that no plain equation settles are solved by the solver
layer's one symbolic core, passed to the simulator as a function (issue 18 item 1)."""

from __future__ import annotations

from pathlib import Path

import yaml

import envfactory
from envfactory.solver.outputs import solve_output
from envfactory.statemachine.simulator import Simulator

CONTRACT = {
    "envfactory": "1",
    "info": {"title": "quotes", "version": "1"},
    "state": {"base": {"type": "integer", "initial": 10}},
    "operations": {
        "quote": {
            "input": {
                "type": "object",
                "properties": {"qty": {"type": "integer", "minimum": 1, "maximum": 50}},
                "required": ["qty"],
            },
            "output": {
                "allOf": [
                    {"type": "object", "properties": {"price": {"type": "integer"}}, "required": ["price"]},
                    {
                        "type": "object",
                        "properties": {
                            "code": {"type": "string", "enum": ["A", "B"]},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["code"],
                    },
                ]
            },
            "ensures": [
                "output.price > base * input.qty and output.price < base * input.qty + 3",
                "output.code != 'A'",
            ],
        }
    },
}


def _contract(tmp_path: Path) -> envfactory.Contract:
    path = tmp_path / "quotes.yaml"
    path.write_text(yaml.safe_dump(CONTRACT))
    return envfactory.load(path)


def test_inequalities_are_solved_within_the_schema(tmp_path: Path) -> None:
    contract = _contract(tmp_path)
    sim = Simulator(contract, seed=3)
    for qty in (1, 7, 50):
        response = sim.call("quote", {"qty": qty})
        assert response.ok, response
        assert 10 * qty < response.output["price"] < 10 * qty + 3
        assert response.output["code"] == "B"


def test_the_simulator_uses_the_solver_it_is_given(tmp_path: Path) -> None:
    contract = _contract(tmp_path)
    asked: list[str] = []

    def refuse(op, exprs, state, input, current):  # type: ignore[no-untyped-def]
        asked.append(op.name)

    response = Simulator(contract, seed=3, solve_output=refuse).call("quote", {"qty": 4})
    assert asked == ["quote"]
    assert response.accepted and response.failure is not None  # the ensures stays unmet, and says so
    assert Simulator(contract, seed=3, solve_output=solve_output).call("quote", {"qty": 4}).ok


AUCTION = Path(__file__).resolve().parents[1] / "fuzz" / "impls" / "auction.yaml"


def test_a_field_an_equation_pins_stays_where_it_is_pinned_while_the_solver_meets_the_rest() -> None:
    """The auction's ``account`` pins ``funds`` to the user's and asks ``available == funds -
    held``: given only the clauses the equations leave, the solver kept the drawn ``available``
    and moved ``funds`` off the user's (192 for 10)."""
    contract = envfactory.load(AUCTION)
    for seed in range(5):
        sim = Simulator(contract, seed=seed, solve_output=solve_output)
        assert sim.call("join", {"name": "a", "funds": 7}).ok
        response = sim.call("account", {"name": "a"})
        assert response.ok, response
        assert response.output["funds"] == response.output["available"] == 7
