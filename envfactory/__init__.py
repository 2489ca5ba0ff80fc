"""envfactory: turn an API or tool specification into a formally checked, executable, stateful environment.

The public API. Names are imported on first use, so that ``import envfactory`` stays cheap and
pulls in nothing (not even the contract loader) until a name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from envfactory.statemachine import install_solver as _install_solver

if TYPE_CHECKING:
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
    from envfactory.solver.graph import compile
    from envfactory.statemachine.gym_env import make_env
    from envfactory.statemachine.simulator import Simulator
    from envfactory.trajectory import Hole, Step, Trajectory, read_trajectories, write_trajectories
    from envfactory.verification import Result, verify

_ERRORS = "envfactory.contracts.errors"
_MODEL = "envfactory.contracts.model"
_TRAJECTORY = "envfactory.trajectory"
_LAZY = {
    **dict.fromkeys(
        (
            "ContractError",
            "EnvfactoryError",
            "EvaluationError",
            "ExpressionError",
            "InputError",
            "Location",
            "RefError",
            "SolverError",
            "TrajectoryError",
            "UsageError",
        ),
        _ERRORS,
    ),
    **dict.fromkeys(("Clause", "Contract", "Operation", "StateVar"), _MODEL),
    **dict.fromkeys(("Hole", "Step", "Trajectory", "read_trajectories", "write_trajectories"), _TRAJECTORY),
    "load": "envfactory.contracts.loader",
    "Result": "envfactory.verification",
    "verify": "envfactory.verification",
    "compile": "envfactory.solver.graph",  # the state graph: Z3 decides its edges
    "Simulator": "envfactory.statemachine.simulator",
    "make_env": "envfactory.statemachine.gym_env",
}
"""Each public name and the module that defines it: imported on first use (PEP 562). The module
that holds ``verify`` is ``envfactory.verification``, so no submodule shadows a public name."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'envfactory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})



def _solve_output(*args: Any) -> Any:
    """The solver layer's output solver for every simulator (this package is the composition root:
    the statemachine layer receives it as a function); Z3 is imported on first use."""
    from envfactory.solver.outputs import solve_output

    return solve_output(*args)


_install_solver(_solve_output)

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
