"""envfactory: turn an API or tool specification into a formally checked, executable, stateful environment.

The public API. Names are imported on first use, so that ``import envfactory`` stays cheap and
pulls in neither Z3, Hypothesis nor Gymnasium until they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from envfactory.contracts.errors import (
    ContractError,
    EnvfactoryError,
    EvaluationError,
    ExpressionError,
    InputError,
    Location,
    RefError,
    SolverError,
    TrajectoryError,
    UsageError,
)
from envfactory.contracts.loader import load
from envfactory.contracts.model import Clause, Contract, Operation, StateVar
from envfactory.statemachine.outputs import install_solver
from envfactory.trajectory import Hole, Step, Trajectory, read_trajectories, write_trajectories

# Imported eagerly: the submodule ``envfactory.verify`` would otherwise shadow the function of
# the same name as soon as anything imports it. It pulls in neither Z3 nor Hypothesis.
from envfactory.verify import Result, verify


def _solve_output(*args: Any) -> Any:
    """The solver layer's output solver for every simulator (composition root: the statemachine
    layer receives it as a function); imported on first use, so ``import envfactory`` stays Z3-free."""
    from envfactory.solver.outputs import solve_output

    return solve_output(*args)


install_solver(_solve_output)

if TYPE_CHECKING:
    from envfactory.solver.graph import compile
    from envfactory.statemachine.gym_env import make_env
    from envfactory.statemachine.simulator import Simulator

_LAZY = {
    "compile": "envfactory.solver.graph",  # the state graph: Z3 decides its edges
    "Simulator": "envfactory.statemachine.simulator",
    "make_env": "envfactory.statemachine.gym_env",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'envfactory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Clause",
    "Contract",
    "ContractError",
    "EnvfactoryError",
    "EvaluationError",
    "ExpressionError",
    "Hole",
    "InputError",
    "Location",
    "Operation",
    "RefError",
    "Result",
    "Simulator",
    "SolverError",
    "StateVar",
    "Step",
    "Trajectory",
    "TrajectoryError",
    "UsageError",
    "compile",
    "load",
    "make_env",
    "read_trajectories",
    "verify",
    "write_trajectories",
]
