"""The seventeenth held-out set (``impls/pharmacy*``): eight planted bugs 6 to 8 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (a fill that goes through
three hands in a fixed order, prepared by one person and checked by another, a controlled drug's
by a pharmacist; a drug taken off the list and put back under its name while a prescription
written against it waits; a shelf of six that a delivery and a cancelled fill both fill; a limit
per person of fills awaiting their check; a prescription open again after each refill, given by
an optional field, and done after its last; one prescription of a drug per patient until it is
done; staff dismissed while fills they prepared are still on the counter).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct pharmacy answers that trace as the contract says, the planted one
does not), and the correct pharmacy gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, names taken as
interchangeable (each made in a fixed order, and one name not made yet asked as well), and states
told apart by everything either implementation reads again, on a small domain: drugs d and e,
listed with 0, 1, 2 or 6 units, controlled or not, restocked with 1 or 6; staff a and b, hired
as technicians or pharmacists; patients p and q; prescriptions of 1, 2 or 3 units with 0, 1 or 2
refills; every prescription number given (and the next one) prepared, checked and cancelled by
either name, dispensed and read. It found nothing shorter than each stated length (some 280,000
pair states within 5 calls, 2.6 million within 6, every call asked at each: 227 million calls for a
bug of 8), it found a difference at 6 calls itself for the two bugs of 6, and the traces below show
one at each stated length.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import pharmacy_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def drug(stock: int, name: str = "d", controlled: bool | None = None) -> Call:
    kwargs: dict[str, Any] = {"drug": name, "stock": stock}
    return ("addDrug", kwargs if controlled is None else {**kwargs, "controlled": controlled})


def hire(name: str, role: str | None = None) -> Call:
    return ("hire", {"name": name} if role is None else {"name": name, "role": role})


def prescribe(patient: str = "p", name: str = "d", refills: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"patient": patient, "drug": name}
    return ("prescribe", kwargs if refills is None else {**kwargs, "refills": refills})


def on(op: str, rx: int, actor: str) -> Call:
    return (op, {"rx": rx, "actor": actor})


# A fill of prescription 1 prepared by t and checked by u, ready to be picked up: six calls.
CHECKED: list[Call] = [drug(1), hire("t"), hire("u"), prescribe(), on("prepare", 1, "t"), on("check", 1, "u")]

TRACES: dict[str, list[Call]] = {
    # The shelf full again after the fill was taken: the cancel would make seven.
    "CancelOverfillsShelf": [
        drug(6),
        hire("t"),
        prescribe(),
        on("prepare", 1, "t"),
        ("restock", {"drug": "d", "amount": 1}),
        on("cancel", 1, "t"),
    ],
    # Written against d with an empty shelf; d taken off the list and put back with one unit.
    "BoundDrugRecord": [
        drug(0),
        prescribe(),
        ("removeDrug", {"drug": "d"}),
        drug(1),
        hire("t"),
        on("prepare", 1, "t"),
    ],
    # Pharmacist a dismissed, then asked to check t's fill.
    "LicenceOutlivesDismissal": [
        drug(1),
        hire("a", "pharmacist"),
        hire("t"),
        prescribe(),
        on("prepare", 1, "t"),
        ("dismiss", {"name": "a"}),
        on("check", 1, "a"),
    ],
    # One refill: the first pickup leaves the prescription open, with none left.
    "ClosedOneFillEarly": [
        drug(1),
        hire("t"),
        hire("u"),
        prescribe(refills=1),
        on("prepare", 1, "t"),
        on("check", 1, "u"),
        ("dispense", {"rx": 1}),
    ],
    # d taken off the list while its checked fill waits.
    "RemoveWithCheckedFill": [*CHECKED, ("removeDrug", {"drug": "d"})],
    # Two fills of t's awaiting check, one cancelled and prepared again: t's second, not a third.
    "CancelKeepsQueue": [
        drug(2),
        hire("t"),
        prescribe("p"),
        prescribe("q"),
        on("prepare", 1, "t"),
        on("prepare", 2, "t"),
        on("cancel", 1, "t"),
        on("prepare", 1, "t"),
    ],
    # Prepared by a, cancelled, prepared by b: a checks b's fill.
    "AnyPastPreparer": [
        drug(1),
        hire("a"),
        hire("b"),
        prescribe(),
        on("prepare", 1, "a"),
        on("cancel", 1, "a"),
        on("prepare", 1, "b"),
        on("check", 1, "a"),
    ],
    # p's prescription of d picked up and done; p is prescribed d again.
    "DoneStillHeld": [*CHECKED, ("dispense", {"rx": 1}), prescribe()],
}
MINIMAL = {
    "CancelOverfillsShelf": 6,
    "BoundDrugRecord": 6,
    "LicenceOutlivesDismissal": 7,
    "ClosedOneFillEarly": 7,
    "RemoveWithCheckedFill": 7,
    "CancelKeepsQueue": 8,
    "AnyPastPreparer": 8,
    "DoneStillHeld": 8,
}


class TestPharmacy(HeldOutSet):
    name, module, correct = "pharmacy", pharmacy_impl, "Pharmacy"
    traces, minimal = TRACES, MINIMAL
