"""The sixth held-out set (``impls/fleet*``): seven planted bugs 6 to 10 calls deep, written in
session 12 in shapes the earlier sets have less of (two distinct keys each at a limit, a record
used and then made again, two collections interacting, three calls in one order on one key, a
limit summed over keys), and measured (``bench/bench_fuzz_cli.py --sets fleet``) on the fuzzer
as it was before that session's changes.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct fleet answers that trace as the contract says, the planted one
does not), and the correct fleet gives the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import fleet_impl  # noqa: E402
from heldout import HeldOutSet  # noqa: E402

A, B, C = {"name": "a"}, {"name": "b"}, {"plate": "c"}
TRIP = [("rent", {"plate": "c", "driver": "a"}), ("giveBack", C)]
TRACES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "TwoBanned": [
        ("addCar", C),
        ("addDriver", A),
        ("addDriver", B),
        ("strike", A),
        ("strike", A),
        ("strike", B),
        ("strike", B),
        ("rent", {"plate": "c", "driver": "a"}),
    ],
    "RecreatedCar": [
        ("addCar", C),
        ("addDriver", A),
        *TRIP,
        *TRIP,
        ("removeCar", C),
        ("addCar", C),
        ("carInfo", C),
    ],
    "WrongDriverCredited": [
        ("addCar", C),
        ("addCar", {"plate": "d"}),
        ("addDriver", A),
        ("addDriver", B),
        ("rent", {"plate": "c", "driver": "a"}),
        ("rent", {"plate": "d", "driver": "b"}),
        ("giveBack", C),
        ("driverInfo", A),
    ],
    "StrikeWhileOut": [
        ("addCar", C),
        ("addDriver", A),
        ("rent", {"plate": "c", "driver": "a"}),
        ("strike", A),
        ("giveBack", C),
        ("driverInfo", A),
    ],
    "FleetSum": [
        *[("addCar", {"plate": p}) for p in "cdef"],
        ("addDriver", A),
        ("addDriver", B),
        *[("rent", {"plate": p, "driver": d}) for p, d in zip("cdef", "aabb", strict=True)],
    ],
    "FourthTrip": [
        ("addCar", C),
        ("addDriver", A),
        *TRIP,
        *TRIP,
        *TRIP,
        ("rent", {"plate": "c", "driver": "a"}),
    ],
    "BannedComesBack": [
        ("addDriver", A),
        ("strike", A),
        ("strike", A),
        ("removeDriver", A),
        ("addDriver", A),
        ("driverInfo", A),
    ],
}
MINIMAL = {
    "TwoBanned": 8,
    "RecreatedCar": 9,
    "WrongDriverCredited": 8,
    "StrikeWhileOut": 6,
    "FleetSum": 10,
    "FourthTrip": 9,
    "BannedComesBack": 6,
}


class TestFleet(HeldOutSet):
    name, module, correct = "fleet", fleet_impl, "Fleet"
    traces, minimal = TRACES, MINIMAL
