"""Solver-directed reach: call sequences, planned by bounded model checking, to states where an
operation random search never got accepted is enabled.

Steering (``steering.py``) draws each call so that the model accepts it, but it cannot plan: an
operation that needs a counter at 12, with another operation that resets the counter among the
choices, is reached by chance about once in 4^12 sequences. The contract's transition relation
knows the way, so for each operation still never accepted after a share of the budget, the BMC
unrolling (``solver.bmc.Unrolling``) is asked for the shortest sequence of valid calls that ends
with that operation accepted. The fuzzer then starts test cases from those prefixes and goes on
from there (``machine.Case``), valid and adversarial, as from any other state.

Imports the solver layer (``solver.bmc``, ``solver.states``) and the contracts layer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import z3

from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Contract
from envfactory.solver.bmc import Unrolling

MAX_DEPTH = 24
"""Longest prefix planned (its last call included)."""

Prefix = tuple[str, ...]
"""The operations of a planned call sequence. Only the operations: the inputs are drawn again by
the steered fuzzer (``machine.Case.follow``), because a solver's model may name other values each
time it is asked (same seed, same run), and ids the target assigns differ from the plan's anyway."""


def prefix_to(
    contract: Contract, operation: str, *, timeout: float, max_depth: int = MAX_DEPTH
) -> Prefix | None:
    """The shortest valid call sequence from the initial state whose last call is ``operation``
    accepted; None when there is none up to ``max_depth`` or the solver cannot say in time."""
    from envfactory.solver.states import slots_needed

    try:
        unrolling = Unrolling(contract, slots=slots_needed(contract, max_depth), timeout=timeout)
        if operation not in unrolling.ops:
            return None
        index = unrolling.ops.index(operation)
        tr = unrolling.transition
        unrolling.add(tr.invariants(unrolling.states[0]))
        for _ in range(max_depth):
            unrolling.add(tr.invariants(unrolling.extend()))
            wanted = unrolling.selectors[-1] == index
            result = unrolling.check(wanted)
            if result == z3.sat:
                return _least(unrolling, wanted)
            if result == z3.unknown:
                return None
    except (SolverError, z3.Z3Exception):
        return None
    return None


def _least(unrolling: Unrolling, wanted: z3.BoolRef) -> Prefix | None:
    """Of the shortest plans, the one whose operations come first in the contract's order, step
    by step: the same plan however the solver's model happens to come out."""
    fixed: list[z3.BoolRef] = []
    for selector in unrolling.selectors:
        for index in range(len(unrolling.ops)):
            if unrolling.check(wanted, *fixed, selector == index) == z3.sat:
                fixed.append(selector == index)
                break
        else:
            return None  # the solver gave up half-way
    return tuple(unrolling.ops[int(str(f.arg(1)))] for f in fixed)


def prefixes(contract: Contract, operations: Iterable[str], *, timeout: float) -> list[Prefix]:
    """A prefix to each of ``operations`` that the solver finds, sharing ``timeout`` among them."""
    names = list(operations)
    found: list[Prefix] = []
    deadline = time.monotonic() + timeout
    for position, name in enumerate(names):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        prefix = prefix_to(contract, name, timeout=left / (len(names) - position))
        if prefix is not None:
            found.append(prefix)
    return found


__all__ = ["Prefix", "prefix_to", "prefixes"]
