"""The planner's effort bounds its encoding too: a run bounded by examples waits for the planner,
and on a wide contract whose checks are cheap, encoding depth after depth (which Z3 does not
count) took several times the effort's worth of time (the petstore: 4.6 s with a tenth of the
default effort, its checks 0.8 s of it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz import reach
from envfactory.solver import bmc
from envfactory.solver.effort import Effort

PETSTORE = envfactory.load(
    Path(__file__).resolve().parents[1] / "realworld" / "corpus" / "swagger-petstore-v3.yaml"
)


def test_a_step_is_charged_for_each_constant_it_copies() -> None:
    budget = Effort(10**12, per_copy=reach.COPY_UNITS)
    unrolling = bmc.Unrolling(PETSTORE, slots=2, effort=budget)
    unrolling.extend()
    first = unrolling.template.copied
    unrolling.extend()
    assert first > 0 and unrolling.template.copied == 2 * first  # every step has one shape
    assert 10**12 - budget.units == reach.COPY_UNITS * 2 * first


def test_the_planner_stops_encoding_once_its_effort_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every outcome of the petstore asked at once, up to ten calls with a thirtieth of the
    default effort: charged for its encoding, the planner builds a fraction of the steps and
    meets the same goals (those met are met in the first few calls; the steps past them asked
    only goals no route meets)."""
    steps = [0]
    extend = bmc.Unrolling.extend

    def counted(self: bmc.Unrolling) -> object:
        steps[0] += 1
        return extend(self)

    monkeypatch.setattr(bmc.Unrolling, "extend", counted)
    goals: list[reach.Goal] = [(name, None) for name in PETSTORE.operations]
    goals += [(name, i) for name, op in PETSTORE.operations.items() for i in range(len(op.requires))]
    met = {}
    for per_copy in (0, reach.COPY_UNITS):
        steps[0] = 0
        routes = reach.plan(PETSTORE, goals, effort=reach.effort(0.3), max_depth=10, per_copy=per_copy)
        met[per_copy] = (steps[0], sorted(map(str, (r.goal for r in routes))))
    (free_steps, free_met), (charged_steps, charged_met) = met[0], met[reach.COPY_UNITS]
    assert charged_met == free_met and len(free_met) > len(PETSTORE.operations)
    assert charged_steps * 3 < free_steps, (charged_steps, free_steps)
