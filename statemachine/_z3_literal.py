"""Plain JSON scalars as Z3 literals, read one way by the simulator's output solving
(``outputs.solve_output``) and the solver's abstract transition encoding (``solver.domain``);
and a model's value of a term as a literal (``evaluated``), for every reader of Z3 models.

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


def evaluated(model: z3.ModelRef, term: Any) -> Any:
    """``term``'s value in ``model``, as a literal where Z3 can make one.

    ``model.eval`` (and ``simplify``) rewrite some string operations one step at a time:
    ``"" < "b"`` comes back as ``Not("" == "b")``, which ``is_true`` does not recognise and a
    second pass turns into ``True``. So the result is simplified until it is a literal or stops
    changing.
    """
    x = model.eval(term, model_completion=True)
    for _ in range(4):
        if z3.is_true(x) or z3.is_false(x) or z3.is_int_value(x) or z3.is_rational_value(x):
            break
        if z3.is_string_value(x):
            break
        simpler = z3.simplify(x)
        if simpler.eq(x):
            break
        x = simpler
    return x
