"""The seventh held-out set (``impls/clinic*``): eight planted bugs 6 to 9 calls deep, written in
session 14 in shapes the earlier sets have less of (a limit reached by a mix of two operations,
three keys in one call, a status lifecycle walked twice, an amount exactly equal to a field, a
record made again over hidden state, a derived read after two records interact, optional input
fields, an order of three calls on one key), and measured (``bench/bench_fuzz_cli.py --sets
clinic``) on the fuzzer as it was.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct clinic answers that trace as the contract says, the planted one
does not), and the correct clinic gives the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import clinic_impl  # noqa: E402
from heldout import HeldOutSet  # noqa: E402

P, Q = {"name": "p"}, {"name": "q"}
D, E = {"name": "d", "cap": 1}, {"name": "e", "cap": 1}
STAY = [("admit", {"patient": "p", "doctor": "d"}), ("discharge", {"patient": "p", "fee": 2})]


def move(source: str, target: str) -> tuple[str, dict[str, Any]]:
    return ("transfer", {"patient": "p", "doctor": source, "to": target})


TRACES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "MixedMoves": [
        ("addDoctor", D),
        ("addDoctor", E),
        ("register", P),
        ("admit", {"patient": "p", "doctor": "d"}),
        move("d", "e"),
        move("e", "d"),
        move("d", "e"),
        ("register", Q),
        ("admit", {"patient": "q", "doctor": "d"}),
    ],
    "CapOfSource": [
        ("addDoctor", {"name": "d", "cap": 2}),
        ("addDoctor", E),
        ("register", P),
        ("register", Q),
        ("admit", {"patient": "q", "doctor": "e"}),
        ("admit", {"patient": "p", "doctor": "d"}),
        move("d", "e"),
    ],
    "SecondBill": [
        ("addDoctor", D),
        ("register", P),
        *STAY,
        ("admit", {"patient": "p", "doctor": "d"}),
        ("discharge", {"patient": "p", "fee": 3}),
    ],
    "FullPayment": [
        ("addDoctor", D),
        ("register", P),
        *STAY,
        ("pay", {"patient": "p", "amount": 2}),
        ("patientInfo", P),
    ],
    "ReRegistered": [
        ("addDoctor", D),
        ("register", P),
        ("admit", {"patient": "p", "doctor": "d"}),
        ("discharge", {"patient": "p", "fee": 0}),
        ("removePatient", P),
        ("register", P),
        ("patientInfo", P),
    ],
    "StaleFree": [
        ("addDoctor", D),
        ("addDoctor", E),
        ("register", P),
        ("admit", {"patient": "p", "doctor": "d"}),
        move("d", "e"),
        ("doctorInfo", {"name": "d"}),
    ],
    "TriageBypass": [
        ("addDoctor", {"name": "d", "cap": 3, "senior": True}),
        ("register", {"name": "a"}),
        ("register", {"name": "b"}),
        ("admit", {"patient": "a", "doctor": "d"}),
        ("admit", {"patient": "b", "doctor": "d"}),
        ("register", {"name": "u", "urgent": True}),
        ("admit", {"patient": "u", "doctor": "d"}),
    ],
    "DischargeAdmitter": [
        ("addDoctor", D),
        ("addDoctor", E),
        ("register", P),
        ("admit", {"patient": "p", "doctor": "d"}),
        move("d", "e"),
        ("discharge", {"patient": "p", "fee": 0}),
        ("doctorInfo", {"name": "d"}),
    ],
}
MINIMAL = {
    "MixedMoves": 9,
    "CapOfSource": 7,
    "SecondBill": 6,
    "FullPayment": 6,
    "ReRegistered": 7,
    "StaleFree": 6,
    "TriageBypass": 7,
    "DischargeAdmitter": 7,
}


class TestClinic(HeldOutSet):
    name, module, correct = "clinic", clinic_impl, "Clinic"
    traces, minimal = TRACES, MINIMAL
