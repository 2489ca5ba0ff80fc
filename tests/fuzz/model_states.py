"""The model's state after calls built by hand, shared by the fuzz tests of clause outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envfactory.contracts.model import Contract
from envfactory.contracts.semantics import Machine


def after(contract: Contract, calls: Sequence[tuple[str, Any]]) -> tuple[Machine, Any]:
    """The contract's model and its state after ``calls``, each applied as accepted."""
    machine = Machine(contract)
    state = machine.initial_state()
    for name, value in calls:
        state = machine.apply(state, contract.operations[name], value)
    return machine, state


def planned(contract: Contract, outcome: str) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    """The solver's route to a clause outcome, planned alone, and its calls with their inputs."""
    from envfactory.fuzz.reach import goal_of, plan

    goal = goal_of(outcome, contract)
    assert goal is not None
    (route,) = plan(contract, [goal], effort=10**9)
    return route, [(name, dict(value)) for name, value in zip(route.operations, route.inputs, strict=True)]
