"""The twenty-fourth held-out set (``impls/warehouse*``): eight planted bugs 6 to 9 calls deep,
written without reading the fuzzer, in shapes the earlier sets have less of (lots numbered by the
service with an expiry day, and orders of one or two lines, each reserved whole from one lot,
first to expire first and then the lowest numbered; units free in a lot when no open order holds
them, read off the orders, not kept; a reservation that lapses once the clock passes its hold
day; pick, pack and ship as a status machine, and a cancel that must free each line's units in its
own lot; two open orders at most in the whole store, a canceled picked one giving its slot back;
a limit of units per customer and product counted over every line of the open orders; free units
moved between two distinct bins within the receiving one's capacity; a write-off that needs two
approvals by distinct staff, the units still free at the second).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct service answers that trace as the contract says, the planted one
does not), and the correct service gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over tuples of (correct, planted)
states, every call (refused calls and reads included) asked at every state, states told apart by
everything each implementation holds, on a small domain: products p and q (two units per customer)
and p with a limit of one; bin a of capacity two or four, bin b of one or two; staff s and t;
every receipt of either product into either bin of one, two or three units with a shelf life of
one or three days; the clock moved on without ``days`` and by two; every order by customer c or
d of p 1, p 2, q 1, p 1 and q 1, p 1 and q 2, q 1 and p 1; every order number given (and the
next, to 3) picked, packed, shipped and canceled; every lot number given (and the next, to 3)
read and moved by one or two units into either bin; write-offs of one unit of lot 1 or 2 asked
by s or t, and write-off 1 approved by s and by t. Over every operation (80 calls at each state)
the search found nothing within 5 calls for any bug (some 13,700 states within 5, every bug
tracked); ``FifoByLotNumber``, ``LapseOneDayLate`` and ``MoveKeepsGivingCount`` at 6 (some
109,000 within 6), nothing within 6 for the others. The deeper searches left out what cannot
make a trace shorter. For ``CancelKeepsOpenSlot`` and ``CancelGivesBackToFirstLine`` (the
store's count of open orders, read by an order only, and the units a cancel frees), no staff
and no write-offs (they only take units out), no moves (they need a second bin: longer), one
bin a of capacity four (a bin only bounds the receipts), every other call as above: nothing
within 7 (some 129,000 states within 7). For ``WriteOffIgnoresHolds`` (the units a second
approval checks), product p alone (with or without a limit of one), bin a of capacity four,
receipts of one or two units, orders of p 1 and p 2 by c or d, orders 1 and 2 picked and
canceled, lots 1 and 2 read, the clock, the staff and every write-off as above: nothing within 8
(some 146,000 states within 8). The planted service's answers were checked against the contract
on each trace the searches found (for ``LapseOneDayLate``, an order of two refused as over the
customer's limit, 403, where the lapsed order holds nothing and the expired lot has no stock,
409): the correct one's are valid, the planted one's break it outright. The traces below show one
at each length; the ones at 7 to 9 were written by hand, the searches showing nothing shorter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import warehouse_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def product(name: str = "p", **options: Any) -> Call:
    return ("addProduct", {"product": name, **options})


def bin_(name: str = "a", capacity: int = 4) -> Call:
    return ("addBin", {"bin": name, "capacity": capacity})


def staff(name: str) -> Call:
    return ("addStaff", {"staff": name})


def receive(quantity: int = 1, shelf: int = 1, name: str = "p", into: str = "a") -> Call:
    return ("receive", {"product": name, "bin": into, "quantity": quantity, "shelf": shelf})


def order(customer: str, *lines: tuple[str, int]) -> Call:
    return (
        "placeOrder",
        {"customer": customer, "lines": [{"product": p, "quantity": q} for p, q in lines]},
    )


def on(op: str, number: int = 1) -> Call:
    return (op, {"order": number})


def lot(number: int) -> Call:
    return ("lotInfo", {"lot": number})


def approve(who: str) -> Call:
    return ("approveWriteOff", {"writeoff": 1, "staff": who})


REQUEST: Call = ("requestWriteOff", {"lot": 1, "quantity": 1, "staff": "s"})

# Products p and q in bin a, a lot of one unit of each (lots 1 and 2).
TWO_PRODUCTS: list[Call] = [product(), product("q"), bin_(), receive(), receive(name="q")]

TRACES: dict[str, list[Call]] = {
    # Lot 2 expires first: the order holds it, and lot 1 stays free.
    "FifoByLotNumber": [product(), bin_(), receive(shelf=3), receive(), order("c", ("p", 1)), lot(1)],
    # Placed on day 0, held to day 1: lapsed on day 2.
    "LapseOneDayLate": [
        product(),
        bin_(),
        receive(shelf=3),
        order("c", ("p", 1)),
        ("advance", {"days": 2}),
        on("pick"),
    ],
    # One unit of two moved from bin a to b: a has room for one more.
    "MoveKeepsGivingCount": [
        product(),
        bin_("a", 2),
        bin_("b", 2),
        receive(2),
        ("move", {"lot": 1, "bin": "b", "quantity": 1}),
        receive(),
    ],
    # s approves twice: refused the second time.
    "SameApproverTwice": [staff("s"), product(), bin_(), receive(), REQUEST, approve("s"), approve("s")],
    # c holds two units of q on a second line: a third is over q's limit of two.
    "LimitCountsFirstLineOnly": [
        product(),
        product("q"),
        bin_(),
        receive(),
        receive(3, name="q"),
        order("c", ("p", 1), ("q", 2)),
        order("c", ("q", 1)),
    ],
    # Order 1 picked and canceled: one open order, room for another.
    "CancelKeepsOpenSlot": [
        product(),
        bin_(),
        receive(2, shelf=3),
        order("c", ("p", 1)),
        order("d", ("p", 1)),
        on("pick"),
        on("cancel"),
        order("e", ("p", 1)),
    ],
    # Order 1 (p from lot 1, q from lot 2) canceled: lot 2's unit is free again.
    "CancelGivesBackToFirstLine": [*TWO_PRODUCTS, order("c", ("p", 1), ("q", 1)), on("cancel"), lot(2)],
    # The unit of lot 1 held by an order after the first approval: the second is refused.
    "WriteOffIgnoresHolds": [
        staff("s"),
        staff("t"),
        product(),
        bin_(),
        receive(),
        REQUEST,
        approve("s"),
        order("c", ("p", 1)),
        approve("t"),
    ],
}
MINIMAL = {
    "FifoByLotNumber": 6,
    "LapseOneDayLate": 6,
    "MoveKeepsGivingCount": 6,
    "SameApproverTwice": 7,
    "LimitCountsFirstLineOnly": 7,
    "CancelKeepsOpenSlot": 8,
    "CancelGivesBackToFirstLine": 8,
    "WriteOffIgnoresHolds": 9,
}


class TestWarehouse(HeldOutSet):
    name, module, correct = "warehouse", warehouse_impl, "Warehouse"
    traces, minimal = TRACES, MINIMAL
