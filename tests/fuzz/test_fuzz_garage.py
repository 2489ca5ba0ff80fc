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

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import garage_impl  # noqa: E402
from heldout import HeldOutSet  # noqa: E402

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


class TestGarage(HeldOutSet):
    name, module, correct = "garage", garage_impl, "Garage"
    traces, minimal = TRACES, MINIMAL
    examples = 150  # the bench fuzzes the correct garage for whole budgets
