"""The fourth held-out set (``impls/garage*``): six planted bugs 8 to 10 calls deep, written
before the session's changes to the fuzzer and measured only (``bench/bench_fuzz.py
--only-deep --deep-sets garage``), never tuned on.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct garage answers that trace as the contract says, the planted one
does not), the correct garage answers every trace as the contract's simulator does, and it gives
the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.contracts.errors import Location
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target
from envfactory.trajectory import parse_trajectory
from envfactory.verification import verify

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))

import garage_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402

CYCLE = [("enter", {"lot": "a"}), ("pay", {"id": 1}), ("leave", {"id": 1})]
CYCLE2 = [("enter", {"lot": "a"}), ("pay", {"id": 2}), ("leave", {"id": 2})]
TRACES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "SecondLeave": [("addLot", {"name": "a", "cap": 1}), *CYCLE, *CYCLE2, ("lotInfo", {"name": "a"})],
    "FifthRelocate": [
        ("addLot", {"name": "a", "cap": 1}),
        ("addLot", {"name": "b", "cap": 1}),
        ("enter", {"lot": "a"}),
        *[("relocate", {"id": 1, "lot": lot}) for lot in ("b", "a", "b", "a", "b")],
    ],
    "PeakResize": [
        ("addLot", {"name": "a", "cap": 4}),
        *[("enter", {"lot": "a"})] * 4,
        ("pay", {"id": 1}),
        ("leave", {"id": 1}),
        ("resize", {"name": "a", "cap": 3}),
    ],
    "RecycledIds": [
        ("addLot", {"name": "a", "cap": 1}),
        *CYCLE,
        *CYCLE2,
        ("removeLot", {"name": "a"}),
        ("addLot", {"name": "a", "cap": 1}),
        ("enter", {"lot": "a"}),
    ],
    "MiddleLeave": [
        ("addLot", {"name": "a", "cap": 4}),
        *[("enter", {"lot": "a"})] * 4,
        ("pay", {"id": 2}),
        ("leave", {"id": 2}),
        ("ticketInfo", {"id": 4}),
    ],
    "RelocatedLimit": [
        ("addLot", {"name": "a", "cap": 4}),
        ("addLot", {"name": "b", "cap": 4}),
        ("enter", {"lot": "a"}),
        ("relocate", {"id": 1, "lot": "b"}),
        *[("enter", {"lot": "a"})] * 4,
        ("enter", {"lot": "b"}),
        ("enter", {"lot": "b"}),
    ],
}
MINIMAL = {
    "SecondLeave": 8,
    "FifthRelocate": 8,
    "PeakResize": 8,
    "RecycledIds": 10,
    "MiddleLeave": 8,
    "RelocatedLimit": 10,
}


def test_every_planted_bug_has_a_trace() -> None:
    planted = {
        name
        for name, cls in vars(garage_impl).items()
        if isinstance(cls, type) and issubclass(cls, garage_impl.Garage) and cls is not garage_impl.Garage
    }
    assert planted == set(TRACES) == set(MINIMAL)


@pytest.mark.parametrize("bug", sorted(TRACES))
def test_each_planted_bug_shows_at_its_stated_depth(bug: str) -> None:
    trace = TRACES[bug]
    assert len(trace) == MINIMAL[bug]
    assert shows_last(garage_impl.Garage(), getattr(garage_impl, bug)(), trace)


@pytest.mark.parametrize("bug", sorted(TRACES))
def test_the_correct_garage_answers_each_trace_as_the_contract_says(bug: str) -> None:
    contract = envfactory.load(IMPLS / "garage.yaml")
    target = open_target(f"python:{IMPLS / 'garage_impl.py'}:Garage", contract)
    steps = []
    try:
        target.reset()
        for name, kwargs in TRACES[bug]:
            response = target.call(name, kwargs)
            steps.append(
                {"tool": name, "input": kwargs, "output": response.output, "status": response.status}
            )
    finally:
        target.close()
    trajectory = parse_trajectory({"id": bug, "steps": steps}, Location(bug))
    results = list(verify(contract, [trajectory], allow_rejected=True))
    assert [r.verdict for r in results] == ["valid"], results


@pytest.mark.timeout(600)
def test_the_correct_garage_has_no_finding() -> None:
    contract = envfactory.load(IMPLS / "garage.yaml")
    target = open_target(f"python:{IMPLS / 'garage_impl.py'}:Garage", contract)
    try:
        summary = fuzz(contract, target, seed=0, max_examples=1000)
    finally:
        target.close()
    assert summary.findings == ()
