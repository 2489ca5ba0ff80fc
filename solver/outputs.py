"""The simulator's output solver, over the one symbolic core.

Where an operation's ``ensures`` is not settled by the plain equations the output synthesizer
computes (``statemachine.outputs``), this asks Z3 for an output: a fresh symbolic value of the
output schema's shape (``schema.Schemas.fresh``; a list's length is an unknown, preferably the
drawn sample's, with room for at least as many items as the sample has), the
schema's constraints (``Schemas.holds``: types, bounds, enum/const, allOf/anyOf/oneOf/not,
nullable), and every clause encoded by the one IR encoder (``encode``) over the known post-state
and input. The drawn sample's scalars are soft goals, so fields move only where a clause or the
schema forces them. The simulator receives ``solve_output`` as a function (installed by the
package's composition root), so the statemachine layer never imports this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Operation
from envfactory.contracts.values import FrozenMap, to_json
from envfactory.solver.effort import UNITS_PER_SECOND
from envfactory.solver.encode import Encoder, SymEnv, holds
from envfactory.solver.schema import LIST_ITEMS, Schemas
from envfactory.solver.symbolic import SIMPLE, Lst, Py, Rec, SVal, Union, is_sym, lift, read, to_z3

OUTPUT_UNITS = UNITS_PER_SECOND // 2
"""Z3's effort for one output, in resource units (the simulator then keeps the drawn sample and
reports the clause): the same answer on a busy machine as on an idle one."""
GUARD_MS = 10_000
"""The wall-clock guard of one output (Z3 looks at its limits cooperatively)."""


def solve_output(op: Operation, exprs: Sequence[ir.Expr], state: FrozenMap, input: Any, current: Any) -> Any:
    """An output for ``op`` on which ``exprs`` and the output schema hold, as close to
    ``current`` as Z3 finds; None when there is none or it is outside the fragment."""
    schema = op.output_schema if op.output_schema is not None else {}
    encoder = Encoder()
    schemas = Schemas(encoder, schema)
    opt = z3.Optimize()
    opt.set("rlimit", OUTPUT_UNITS)
    opt.set("timeout", GUARD_MS)
    try:
        output = _shaped(schemas, schema, "output", current)
        opt.add(_z3(schemas.holds(output, schema)))
        env = SymEnv({name: Py(value) for name, value in state.items()}, Py(input), output)
        for expr in exprs:
            opt.add(_z3(holds(encoder.encode(expr, env))))
        _prefer(opt, output, current)
        if opt.check() != z3.sat:
            return None
        return to_json(read(output, opt.model()))
    except (SolverError, z3.Z3Exception, TypeError, ValueError):
        return None


def _z3(term: Any) -> Any:
    return z3.BoolVal(term) if isinstance(term, bool) else term


def _shaped(schemas: Schemas, schema: Any, base: str, current: Any) -> SVal:
    """A fresh value of the schema; a list with room for ``current``'s items where that is a list."""
    resolved = schemas.resolve(schema)
    if isinstance(current, list) and isinstance(resolved, Mapping) and schemas.kinds(resolved) == ["array"]:
        item = schemas.sub_schema(resolved, 0)
        room = [*current, *([None] * (LIST_ITEMS - len(current)))]
        return Lst(
            tuple(_shaped(schemas, item, f"{base}[{i}]", v) for i, v in enumerate(room)),
            z3.Int(base + "#len"),
        )
    return schemas.fresh(schema, base)


def _prefer(opt: z3.Optimize, v: SVal, current: Any) -> None:
    """Soft goals: each scalar keeps the value it has in ``current``."""
    if isinstance(v, SIMPLE) and is_sym(v.t):
        known = lift(current)
        if type(known) is type(v):
            opt.add_soft(v.t == to_z3(known.t))
    elif isinstance(v, Rec) and isinstance(current, Mapping):
        for name, (present, value) in v.fields.items():
            if is_sym(present):
                opt.add_soft(present if name in current else z3.Not(present))
            if name in current:
                _prefer(opt, value, current[name])
    elif isinstance(v, Lst) and isinstance(current, list):
        if v.n is not None:
            opt.add_soft(v.n == len(current))
        for item, now in zip(v.items, current, strict=False):
            _prefer(opt, item, now)
    elif isinstance(v, Union):
        for _, option in v.options:
            _prefer(opt, option, current)


__all__ = ["GUARD_MS", "OUTPUT_UNITS", "solve_output"]
