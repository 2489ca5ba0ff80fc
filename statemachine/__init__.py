"""The state-machine layer: simulator, output synthesis, Gymnasium environment, walks, graph shape.

The one thing defined here is the hook through which the package's composition root
(``envfactory/__init__``) gives this layer the solver layer's output solver: this layer must not
import the solver, and the hook must not import anything, so that installing it costs nothing
(``envfactory --help`` loads no contract code).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_OUTPUT_SOLVER: list[Callable[..., Any]] = []


def install_solver(solver: Callable[..., Any]) -> None:
    """Make ``solver`` the output solver of simulators built without one (see
    ``statemachine.outputs.OutputSolver`` for its signature)."""
    _OUTPUT_SOLVER[:] = [solver]


def installed_solver() -> Callable[..., Any] | None:
    """The output solver ``install_solver`` installed, if any."""
    return _OUTPUT_SOLVER[0] if _OUTPUT_SOLVER else None


__all__ = ["install_solver", "installed_solver"]
