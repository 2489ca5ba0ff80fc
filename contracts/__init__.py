"""The contracts layer: load and validate specifications, the expression language, the Contract model.

Imports neither Z3 nor Hypothesis: everything above builds on this layer, never the other way.
"""

from envfactory.contracts.errors import (
    ContractError,
    EnvfactoryError,
    EvaluationError,
    ExpressionError,
    InputError,
    Location,
    RefError,
    TrajectoryError,
    UsageError,
)
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.lint import Finding, lint
from envfactory.contracts.loader import build, contract_schema, load
from envfactory.contracts.model import UNKNOWN, Clause, Contract, ErrorSpec, HttpBinding, Operation, StateVar
from envfactory.contracts.parser import Effect, Target, parse_effect, parse_expr
from envfactory.contracts.printer import to_source
from envfactory.contracts.semantics import CHECK_KINDS, Failure, Machine

__all__ = [
    "CHECK_KINDS",
    "UNKNOWN",
    "Clause",
    "Contract",
    "ContractError",
    "Effect",
    "Env",
    "EnvfactoryError",
    "ErrorSpec",
    "EvaluationError",
    "ExpressionError",
    "Failure",
    "Finding",
    "HttpBinding",
    "InputError",
    "Location",
    "Machine",
    "Operation",
    "RefError",
    "StateVar",
    "Target",
    "TrajectoryError",
    "UsageError",
    "build",
    "compile_expr",
    "contract_schema",
    "lint",
    "load",
    "parse_effect",
    "parse_expr",
    "to_source",
]
