"""The eleventh held-out set (``impls/boxoffice*``): eight planted bugs 7 to 10 calls deep, written
in session 24 without reading the fuzzer, in shapes the earlier sets have less of (a first-come-
first-served waitlist held as a list field, a cancellation promoting its first waiter, a show's
capacity reached exactly, a per-customer limit of seats summed across shows, a ticket passed on
between two distinct customers, a refund that must equal the price times the seats and go to the
holder, a show's lifecycle with a branch to cancelled, a customer who leaves and signs up again
under the same name, a box-office-wide limit of bookings counted down by two operations).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct box office answers that trace as the contract says, the planted
one does not), and the correct box office gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (reads and refused calls included) asked at every state, pair states already
reached not expanded again, names taken as interchangeable (each made in a fixed order), on a
small domain: customers s and t, signing up with the default credit or 2 (and signing up again
after leaving); shows x and y, each with the default capacity, 1 or 3 (and the default price);
every ``setShow`` of every show to every status; bookings b1, b2, ... by either customer for
either show of 1, 2 or 3 seats (and a booking id already taken); every cancel; every transfer of
every booking between every two names (the same one included); every leave and every read. It
found each stated length as the shortest, CloseKeepsLive's (10 calls) included. A wider domain
was searched too on the six bugs up to 8 calls (a third customer u, capacities 1 to 4, price 1
or the default), and a third customer on ReSignedPassed (9 calls): nothing shorter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import boxoffice_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def signup(name: str = "s") -> Call:
    return ("signup", {"name": name})


def show(name: str, **extra: Any) -> Call:
    return ("addShow", {"show": name, **extra})


def status(name: str, to: str) -> Call:
    return ("setShow", {"show": name, "status": to})


def book(booking: str, show: str = "x", seats: int = 1, customer: str = "s") -> Call:
    return ("book", {"booking": booking, "customer": customer, "show": show, "seats": seats})


def cancel(booking: str) -> Call:
    return ("cancel", {"booking": booking})


def transfer(booking: str, src: str = "s", dst: str = "t") -> Call:
    return ("transfer", {"booking": booking, "src": src, "dst": dst})


def read(op: str, name: str) -> Call:
    return (op, {"name": name})


# A customer and a show of one seat on sale, the seat booked and a waiter behind it.
FULL: list[Call] = [signup(), show("x", capacity=1), status("x", "onsale"), book("b1"), book("b2")]
# Two customers and a show on sale, s's ticket passed on to t.
PASSED: list[Call] = [signup(), signup("t"), show("x"), status("x", "onsale"), book("b1"), transfer("b1")]

TRACES: dict[str, list[Call]] = {
    # The seat given back goes to the waiter; then the show read.
    "PromotedNotSeated": [*FULL, cancel("b1"), read("show", "x")],
    # Two waiters (three bookings, the box office's limit), the seat given back; then the show read.
    "WaitlistAsStack": [*FULL, book("b3"), cancel("b1"), read("show", "x")],
    # Three seats booked by s and passed on to t; then s books two, within the limit now.
    "TransferKeepsHold": [
        signup(),
        signup("t"),
        show("x", capacity=3),
        status("x", "onsale"),
        book("b1", seats=3),
        transfer("b1"),
        book("b2", seats=2),
    ],
    # Booked by s, passed on to t, cancelled: the refund is t's.
    "RefundToBuyer": [*PASSED, cancel("b1")],
    # The show cancelled with a waiter on it, the seated booking cancelled for its refund; then
    # the show read.
    "PromoteOnCancelledShow": [*FULL, status("x", "cancelled"), cancel("b1"), read("show", "x")],
    # Two seats on x, x cancelled (not yet refunded); then three seats on y: five held.
    "CancelledShowNotHeld": [
        signup(),
        show("x"),
        show("y", capacity=3),
        status("x", "onsale"),
        status("y", "onsale"),
        book("b1", seats=2),
        status("x", "cancelled"),
        book("b2", "y", seats=3),
    ],
    # s passes a ticket on, leaves and signs up again; then s read.
    "ReSignedPassed": [*PASSED, ("leave", {"name": "s"}), signup(), read("customer", "s")],
    # A booking on x, x closed; then three bookings on y (the third a waiter): the box office
    # holds three.
    "CloseKeepsLive": [
        signup(),
        show("x"),
        show("y"),
        status("x", "onsale"),
        status("y", "onsale"),
        book("b1"),
        status("x", "closed"),
        book("b2", "y"),
        book("b3", "y"),
        book("b4", "y"),
    ],
}
MINIMAL = {
    "PromotedNotSeated": 7,
    "WaitlistAsStack": 8,
    "TransferKeepsHold": 7,
    "RefundToBuyer": 7,
    "PromoteOnCancelledShow": 8,
    "CancelledShowNotHeld": 8,
    "ReSignedPassed": 9,
    "CloseKeepsLive": 10,
}


class TestBoxOffice(HeldOutSet):
    name, module, correct = "boxoffice", boxoffice_impl, "BoxOffice"
    traces, minimal = TRACES, MINIMAL
