"""Public re-export of the exception hierarchy (defined in the contracts layer, the lowest one)."""

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

__all__ = [
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
]
