"""The third held-out set (``impls/depot*``): six planted bugs 8 to 10 calls deep, written after
the fuzzer's last change and measured only (``bench/bench_fuzz.py --only-deep``), never tuned on.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct depot answers that trace as the contract says, the planted one
does not), and the correct depot gives the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import depot_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402
from heldout import findings  # noqa: E402

TRACES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "TwoSources": [
        ("addBin", {"name": "a", "cap": 5}),
        ("addBin", {"name": "b", "cap": 5}),
        ("addBin", {"name": "c", "cap": 5}),
        ("stock", {"name": "a", "qty": 2}),
        ("move", {"src": "a", "dst": "b", "qty": 1}),
        ("move", {"src": "a", "dst": "c", "qty": 1}),
        ("move", {"src": "b", "dst": "c", "qty": 1}),
        ("peek", {"name": "c"}),
    ],
    "SeventhMove": [
        ("addBin", {"name": "a", "cap": 1}),
        ("addBin", {"name": "b", "cap": 1}),
        ("stock", {"name": "a", "qty": 1}),
        *[("move", {"src": s, "dst": d, "qty": 1}) for s, d in [("a", "b"), ("b", "a")] * 3],
        ("move", {"src": "a", "dst": "b", "qty": 1}),
    ],
    "ThirdUnlock": [
        ("addBin", {"name": "a", "cap": 1}),
        *[(op, {"name": "a"}) for _ in range(3) for op in ("lock", "unlock")],
        ("peek", {"name": "a"}),
    ],
    "FourthOrder": [
        ("addBin", {"name": "a", "cap": 4}),
        ("stock", {"name": "a", "qty": 4}),
        *[("order", {"name": "a", "qty": 1})] * 4,
        ("ship", {"id": 4}),
        ("status", {"id": 4}),
    ],
    "ReAdded": [
        ("addBin", {"name": "a", "cap": 2}),
        ("addBin", {"name": "b", "cap": 2}),
        ("stock", {"name": "a", "qty": 2}),
        ("move", {"src": "a", "dst": "b", "qty": 1}),
        ("move", {"src": "a", "dst": "b", "qty": 1}),
        ("removeBin", {"name": "a"}),
        ("addBin", {"name": "a", "cap": 2}),
        ("peek", {"name": "a"}),
    ],
    "FullCancel": [
        ("addBin", {"name": "a", "cap": 4}),
        ("stock", {"name": "a", "qty": 4}),
        *[("order", {"name": "a", "qty": 1})] * 4,
        ("stock", {"name": "a", "qty": 4}),
        ("cancel", {"id": 1}),
    ],
}
MINIMAL = {
    "TwoSources": 8,
    "SeventhMove": 10,
    "ThirdUnlock": 8,
    "FourthOrder": 8,
    "ReAdded": 8,
    "FullCancel": 8,
}


@pytest.mark.parametrize("bug", sorted(TRACES))
def test_each_planted_bug_shows_at_its_stated_depth(bug: str) -> None:
    trace = TRACES[bug]
    assert len(trace) == MINIMAL[bug]
    assert shows_last(depot_impl.Depot(), getattr(depot_impl, bug)(), trace)


@pytest.mark.usefixtures("light_planner")
def test_the_correct_depot_has_no_finding() -> None:
    assert findings("depot", "Depot", 300) == ()
