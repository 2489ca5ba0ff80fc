"""The fifth held-out set (``impls/registrar*``): six planted bugs 7 to 10 calls deep that need
distinct keys, counters at a limit and a resource made again, written in session 10 and
measured (``bench/bench_fuzz_cli.py --sets registrar``) before any change made with it in view.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct registrar answers that trace as the contract says, the planted
one does not), and the correct registrar gives the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import registrar_impl  # noqa: E402
from heldout import HeldOutSet  # noqa: E402

S = {"name": "s"}
TRACES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "FourthCourse": [
        ("addStudent", S),
        *[("addCourse", {"code": c, "seats": 1}) for c in "abcd"],
        *[("enroll", {"student": "s", "course": c}) for c in "abcd"],
    ],
    "FullSwapLeak": [
        ("addStudent", S),
        ("addStudent", {"name": "t"}),
        ("addCourse", {"code": "a", "seats": 2}),
        ("addCourse", {"code": "b", "seats": 1}),
        ("enroll", {"student": "s", "course": "a"}),
        ("enroll", {"student": "t", "course": "a"}),
        ("swap", {"id": 1, "course": "b"}),
        ("courseInfo", {"code": "a"}),
    ],
    "DroppedSwaps": [
        ("addStudent", S),
        ("addCourse", {"code": "a", "seats": 1}),
        ("addCourse", {"code": "b", "seats": 1}),
        ("enroll", {"student": "s", "course": "a"}),
        ("swap", {"id": 1, "course": "b"}),
        ("drop", {"id": 1}),
        ("enroll", {"student": "s", "course": "a"}),
        *[("swap", {"id": 2, "course": c}) for c in "bab"],
    ],
    "ReopenForgets": [
        ("addCourse", {"code": "a", "seats": 2}),
        ("addStudent", S),
        ("addStudent", {"name": "t"}),
        ("enroll", {"student": "s", "course": "a"}),
        ("enroll", {"student": "t", "course": "a"}),
        ("closeCourse", {"code": "a"}),
        ("openCourse", {"code": "a"}),
        ("courseInfo", {"code": "a"}),
    ],
    "RecreatedCourse": [
        ("addCourse", {"code": "a", "seats": 1}),
        ("addStudent", S),
        ("enroll", {"student": "s", "course": "a"}),
        ("drop", {"id": 1}),
        ("enroll", {"student": "s", "course": "a"}),
        ("drop", {"id": 2}),
        ("removeCourse", {"code": "a"}),
        ("addCourse", {"code": "a", "seats": 3}),
        ("courseInfo", {"code": "a"}),
    ],
    "FrozenSwap": [
        ("addStudent", S),
        *[("addCourse", {"code": c, "seats": 1}) for c in "ab"],
        ("enroll", {"student": "s", "course": "a"}),
        ("enroll", {"student": "s", "course": "b"}),
        ("freeze", S),
        ("swap", {"id": 1, "course": "b"}),
    ],
}
MINIMAL = {
    "FourthCourse": 9,
    "FullSwapLeak": 8,
    "DroppedSwaps": 10,
    "ReopenForgets": 8,
    "RecreatedCourse": 9,
    "FrozenSwap": 7,
}


class TestRegistrar(HeldOutSet):
    name, module, correct = "registrar", registrar_impl, "Registrar"
    traces, minimal = TRACES, MINIMAL
    # the frozen student's swap is refused 409 (already enrolled in b), where 423 (frozen) comes
    # first: both clauses fail there
    ambiguous = frozenset({"FrozenSwap"})
