"""Solver effort counted in Z3's resource units, so that an answer does not depend on the machine.

A wall-clock limit settles fewer questions on a busy machine than on an idle one: ``check`` could
warn about an operation on one run and not on the next, and a test of it would fail one run in
ten. Z3 counts its own work in resource units (``rlimit``), the same for the same queries on every
run; an ``Effort`` hands a budget of them out across the checks of one job. Each check is charged
at least ``CHECK_UNITS``, because the Python side of a check (building it, reading the model)
costs time the solver does not count: the number of checks is bounded too. A wall-clock deadline
stays, as a hang guard only (Z3 looks at its limits cooperatively).

Imports ``attrs`` and ``z3``; nothing of envfactory.
"""

from __future__ import annotations

import time

import attrs
import z3

CHECK_UNITS = 20_000
"""The least a check is charged, whatever Z3 counted for it."""
UNITS_PER_SECOND = 20_000_000
"""About what Z3 spends in a second of one core: turns a limit given in seconds into units."""
HANG_SECONDS = 3600.0
"""The default wall-clock guard: far past what any budget here spends on a slow machine."""


@attrs.define
class Effort:
    """A budget of Z3 resource units for one job, spent by ``check``; ``timeout`` is the guard."""

    units: int
    timeout: float = HANG_SECONDS
    least: int = CHECK_UNITS
    """The least a check is charged: ``CHECK_UNITS`` bounds the number of checks too; 0 charges
    what Z3 counted alone (a fuzz run's reach planner, whose many small checks the fuzzer's own
    budget bounds)."""
    per_copy: int = 0
    """Units charged for each constant an unrolling's step copies (``charge``): the Python side
    of encoding a step, which Z3 does not count and which, on a wide contract, costs more than
    its checks. 0: encoding is free (the wall-clock guard bounds it)."""
    deadline: float = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.deadline = time.monotonic() + self.timeout

    @property
    def spent(self) -> bool:
        """Nothing left: every further check answers ``unknown`` without asking."""
        return self.units <= 0 or time.monotonic() >= self.deadline

    def charge(self, copied: int) -> None:
        """Spend what encoding a step that copied ``copied`` constants costs (``per_copy``)."""
        self.units -= copied * self.per_copy

    def check(
        self, solver: z3.Solver, *assumptions: z3.BoolRef, units: int | None = None
    ) -> z3.CheckSatResult:
        """``solver.check(*assumptions)`` within what is left (and within ``units`` if given)."""
        allowed = self.units if units is None else min(units, self.units)
        remaining = self.deadline - time.monotonic()
        if allowed <= 0 or remaining <= 0:
            return z3.unknown
        solver.set("rlimit", allowed)
        solver.set("timeout", max(1, int(remaining * 1000)))
        before = int(solver.statistics().get_key_value("rlimit count"))
        result = solver.check(*assumptions)
        used = int(solver.statistics().get_key_value("rlimit count")) - before
        self.units -= max(used, self.least)
        return result


__all__ = ["CHECK_UNITS", "HANG_SECONDS", "UNITS_PER_SECOND", "Effort"]
