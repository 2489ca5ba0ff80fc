"""The state-machine layer: simulator, output synthesis, Gymnasium environment, walks, graph shape.

The one thing defined here is the hook through which this layer receives the solver layer's
output solver: this layer must not import the solver. A caller may ``install_solver``; otherwise
the composition root's (``envfactory._solve_output``, defined by the top package, which Python
has always loaded before any of its subpackages) is taken, so that ``import envfactory`` itself
loads nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_OUTPUT_SOLVER: list[Callable[..., Any]] = []


def install_solver(solver: Callable[..., Any]) -> None:
    """Make ``solver`` the output solver of simulators built without one (see
    ``statemachine.outputs.OutputSolver`` for its signature)."""
    _OUTPUT_SOLVER[:] = [solver]


def installed_solver() -> Callable[..., Any] | None:
    """The output solver ``install_solver`` installed, else the composition root's, if any."""
    if _OUTPUT_SOLVER:
        return _OUTPUT_SOLVER[0]
    root = sys.modules.get(__name__.rpartition(".")[0])
    found = getattr(root, "_solve_output", None)
    return found if callable(found) else None


__all__ = ["install_solver", "installed_solver"]
