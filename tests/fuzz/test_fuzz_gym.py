"""The twentieth held-out set (``impls/gym*``): eight planted bugs 7 and 8 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (bookings numbered by the gym
and cancelled by number; a class of one seat full, a second member's booking waiting on it, and
the seat freed going to the first one waiting; seats marked attended or no-show after a cutoff,
used either way; a ban at the third no-show of a member; a membership frozen and unfrozen twice
at most, around a renewal of its credits; a class cancelled by its instructor, every booking
refunded, and made again under its name; a cached read of a member not dropped on one of the
paths that change it; a cancel allowed to the wrong member).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct gym answers that trace as the contract says, the planted one
does not), and the correct gym gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, names taken as
interchangeable (members joined, instructors hired and classes scheduled in a fixed order, a
class's name scheduled again once it is cancelled, and one name not made yet asked as well),
states told apart by everything either implementation keeps (its cache of answers included), on a
small domain: members a, b and c, joined on the default plan, 1 or 5 credits; instructors i and j;
classes c, d and e of the default two seats, 1 or 3, each scheduled, cut off and cancelled by
either instructor, booked by each member and read; every booking number given (and the next one)
cancelled by each member and marked attended or a no-show by each instructor; every member
frozen, unfrozen, renewed and read. It found nothing shorter than each stated length (every call
asked at the 12,700 pair states within 6 calls: 0.7 million calls to rule out 7), and a
difference at each stated length itself (for a bug of 8, with every call asked at the 59,500
states within 7 calls: 3.8 million calls); the traces below show one at each stated length. A
random walk of the correct gym checked by ``verify`` (2,000 traces of up to 65 calls) found no
disagreement either.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import gym_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def join(member: str = "a") -> Call:
    return ("join", {"member": member})


def schedule(session: str = "c", capacity: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"session": session, "instructor": "i"}
    return ("schedule", kwargs if capacity is None else {**kwargs, "capacity": capacity})


def book(member: str = "a", session: str = "c") -> Call:
    return ("book", {"member": member, "session": session})


def cancel(booking: int, member: str = "a") -> Call:
    return ("cancel", {"member": member, "booking": booking})


def by_instructor(op: str, session: str = "c") -> Call:
    return (op, {"session": session, "instructor": "i"})


def mark(op: str, booking: int) -> Call:
    return (op, {"booking": booking, "instructor": "i"})


def member(op: str, name: str = "a") -> Call:
    return (op, {"member": name})


HIRE: Call = ("hire", {"instructor": "i"})
# A class of one seat, a's booking 1 seated on it and b's booking 2 waiting: six calls.
FULL: list[Call] = [HIRE, schedule(capacity=1), join(), join("b"), book(), book("b")]

TRACES: dict[str, list[Call]] = {
    # b frozen while waiting; a cancels: b's booking gets the seat all the same.
    "FrozenSkipped": [*FULL, member("freeze", "b"), cancel(1)],
    # a's seat on a class of one marked a no-show: a's next booking on it waits.
    "NoShowSeatFree": [
        HIRE,
        schedule(capacity=1),
        join(),
        by_instructor("cutoff"),
        book(),
        mark("noShow", 1),
        book(),
    ],
    # a marked a no-show twice: not banned yet.
    "BanAtSecond": [
        HIRE,
        schedule(),
        join(),
        by_instructor("cutoff"),
        book(),
        mark("noShow", 1),
        book(),
        mark("noShow", 2),
    ],
    # Two freezes, a renewal, a third freeze: refused.
    "FreezesPerPeriod": [
        join(),
        member("freeze"),
        member("unfreeze"),
        member("freeze"),
        member("unfreeze"),
        member("renew"),
        member("freeze"),
    ],
    # After b's booking 2 waits, a's booking on a second class is number 3.
    "WaitingSkipsSequence": [*FULL, schedule("d"), book(session="d")],
    # a's booking on c, c cancelled and scheduled again: a books it.
    "RebookMadeAgain": [
        HIRE,
        schedule(),
        join(),
        book(),
        by_instructor("cancelClass"),
        schedule(),
        book(),
    ],
    # a read between a's booking and its class cancelled, and a read after: refunded.
    "CachedRefund": [
        HIRE,
        schedule(),
        join(),
        book(),
        member("memberInfo"),
        by_instructor("cancelClass"),
        member("memberInfo"),
    ],
    # a and b on c: b cancels a's booking 1.
    "CancelByClassmate": [HIRE, schedule(), join(), join("b"), book(), book("b"), cancel(1, "b")],
}
MINIMAL = {
    "FrozenSkipped": 8,
    "NoShowSeatFree": 7,
    "BanAtSecond": 8,
    "FreezesPerPeriod": 7,
    "WaitingSkipsSequence": 8,
    "RebookMadeAgain": 7,
    "CachedRefund": 7,
    "CancelByClassmate": 7,
}


class TestGym(HeldOutSet):
    name, module, correct = "gym", gym_impl, "Gym"
    traces, minimal = TRACES, MINIMAL
