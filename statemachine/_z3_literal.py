"""Plain JSON scalars as Z3 literals, read one way by the simulator's output solving
(``outputs.solve_output``) and the solver's abstract transition encoding (``solver.domain``).

Imports Z3 at the top: the simulator imports this module lazily, only when it solves.
(``solver.symbolic`` keeps its own conversion: it encodes floats as exact binary fractions.)
"""

from __future__ import annotations

from typing import Any

import z3


def z3_literal(value: Any) -> z3.ExprRef | None:
    """The Z3 literal of a boolean, integer, float or string; None for any other value."""
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    if isinstance(value, float):
        return z3.RealVal(value)
    if isinstance(value, str):
        return z3.StringVal(value)
    return None
