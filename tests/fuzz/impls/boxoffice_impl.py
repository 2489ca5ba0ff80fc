"""A theatre box office (``boxoffice.yaml``), correct, and one class per planted bug, 7 to 10
calls deep.

An eleventh held-out set (session 24), written without looking at the fuzzer's code. Its shapes
are ones the earlier sets have less of: a first-come-first-served waitlist held as a list field
in a show's record (two long at most), a seated booking cancelled giving its seats to the first
waiter if they are enough for them, and nobody seated past a waiter; a show's capacity reached
exactly; a per-customer limit of four seats summed across shows (waiting seats count, seats of
closed shows do not); a ticket passed on between two distinct customers, with its refund going to
whoever holds it then; a refund that must equal the show's price times the seats; a show's
lifecycle (scheduled, on sale, closed; or cancelled, its bookings staying until refunded); a
customer who leaves and signs up again under the same name; and a box-office-wide limit of three
bookings, counted up by one operation and down by two. The minimal length is in each docstring,
with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each customer's count of
the seats they hold (beside the bookings, which the reads count), the box office's count of its
bookings (the same), a register of the tickets each name has passed on (kept when a customer
leaves), and each booking's first buyer.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

CREDIT, PRICE, CAPACITY = 10, 2, 2
HOLD = 4  # seats a customer holds at most, over every show not closed
WAIT = 2  # a waitlist's length at most
LIVE = 3  # bookings the box office holds at most
PASS = 2  # tickets a customer passes on at most
MOVES = {("scheduled", "onsale"), ("onsale", "closed"), ("scheduled", "cancelled"), ("onsale", "cancelled")}


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 4


class BoxOffice:
    def __init__(self) -> None:
        self.customers: dict[str, dict[str, Any]] = {}
        self.shows: dict[str, dict[str, Any]] = {}
        self.bookings: dict[str, dict[str, Any]] = {}
        self.held: dict[str, int] = {}
        self.passed: dict[str, int] = {}
        self.live = 0
        self.takings = 0

    # -- lookups ---------------------------------------------------------------------------------

    def _customer(self, name: Any) -> dict[str, Any]:
        need(name in self.customers, 404)
        return self.customers[name]

    def _show(self, name: Any) -> dict[str, Any]:
        need(name in self.shows, 404)
        return self.shows[name]

    def _booking(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.bookings, 404)
        return self.bookings[name]

    def _counts(self, record: dict[str, Any]) -> bool:
        """A booking counts (to its holder's seats and the box office's bookings) while it is not
        cancelled and its show not closed."""
        return bool(record["status"] != "cancelled" and self.shows[record["show"]]["status"] != "closed")

    def _holding(self, name: str) -> int:
        return sum(r["seats"] for r in self.bookings.values() if r["customer"] == name and self._counts(r))

    # -- customers -------------------------------------------------------------------------------

    def signup(self, name: Any, credit: Any = ABSENT) -> None:
        need(_name(name), 422)
        amount = option(credit, 0, 20, CREDIT)
        need(name not in self.customers, 409)
        self.customers[name] = {"credit": amount}
        self.held[name] = 0
        self._open_register(name)

    def _open_register(self, name: str) -> None:
        """A new customer has passed nothing on (the register keeps the names of those who left)."""
        self.passed[name] = 0

    def leave(self, name: Any) -> None:
        need(is_str(name), 422)
        self._customer(name)
        need(not any(r["customer"] == name and self._counts(r) for r in self.bookings.values()), 409)
        del self.customers[name]

    # -- shows -----------------------------------------------------------------------------------

    def addShow(self, show: Any, price: Any = ABSENT, capacity: Any = ABSENT) -> None:
        need(_name(show), 422)
        cost = option(price, 1, 5, PRICE)
        size = option(capacity, 1, 4, CAPACITY)
        need(show not in self.shows, 409)
        self.shows[show] = {"status": "scheduled", "price": cost, "capacity": size, "sold": 0, "waitlist": []}

    def setShow(self, show: Any, status: Any) -> None:
        need(is_str(show) and status in ("onsale", "closed", "cancelled"), 422)
        record = self._show(show)
        need((record["status"], status) in MOVES, 409)
        need(status != "closed" or not record["waitlist"], 423)
        record["status"] = status
        if status == "closed":
            self._close(show)
        elif status == "cancelled":
            self._call_off(show)

    def _of(self, show: str) -> list[dict[str, Any]]:
        """The bookings of ``show`` not cancelled."""
        return [r for r in self.bookings.values() if r["show"] == show and r["status"] != "cancelled"]

    def _close(self, show: str) -> None:
        """A closed show's bookings (all seated: its waitlist is empty) are done with: their seats
        stop counting to their holders, and they leave the box office's count."""
        for record in self._of(show):
            self.held[record["customer"]] -= record["seats"]
            self.live -= 1

    def _call_off(self, show: str) -> None:
        """A cancelled show's bookings count until their holders cancel them for the refund."""

    # -- bookings --------------------------------------------------------------------------------

    def book(self, booking: Any, customer: Any, show: Any, seats: Any) -> dict[str, Any]:
        need(_name(booking) and is_str(customer) and is_str(show), 422)
        need(is_int(seats) and 1 <= seats <= 3, 422)
        account = self._customer(customer)
        record = self._show(show)
        need(booking not in self.bookings, 409)
        need(record["status"] == "onsale", 409)
        need(seats <= record["capacity"], 422)
        fits = not record["waitlist"] and record["sold"] + seats <= record["capacity"]
        need(fits or len(record["waitlist"]) < WAIT, 410)
        need(self.held[customer] + seats <= HOLD, 429)
        need(self.live < LIVE, 429)
        cost = record["price"] * seats
        need(account["credit"] >= cost, 402)
        self.bookings[booking] = {
            "customer": customer,
            "buyer": customer,
            "show": show,
            "seats": seats,
            "paid": cost,
            "status": "seated" if fits else "waiting",
        }
        if fits:
            record["sold"] += seats
        else:
            record["waitlist"].append(booking)
        account["credit"] -= cost
        self.held[customer] += seats
        self.live += 1
        self.takings += cost
        return {"status": self.bookings[booking]["status"], "paid": cost, "credit": account["credit"]}

    def cancel(self, booking: Any) -> dict[str, Any]:
        record = self._booking(booking)
        need(record["status"] != "cancelled", 409)
        show = self.shows[record["show"]]
        need(show["status"] != "closed", 409)
        if record["status"] == "seated":
            show["sold"] -= record["seats"]
            if self._promotes(show):
                self._promote(show)
        else:
            show["waitlist"].remove(booking)
        record["status"] = "cancelled"
        refund = record["paid"]
        self.customers[self._refund_to(record)]["credit"] += refund
        self.held[record["customer"]] -= record["seats"]
        self.live -= 1
        self.takings -= refund
        return {"refund": refund, "credit": self.customers[record["customer"]]["credit"]}

    def _refund_to(self, record: dict[str, Any]) -> str:
        """A refund goes to whoever holds the booking."""
        return str(record["customer"])

    def _promotes(self, show: dict[str, Any]) -> bool:
        """Seats given back on a show on sale go to its first waiter, if they are enough."""
        if show["status"] != "onsale" or not show["waitlist"]:
            return False
        first = self.bookings[show["waitlist"][0]]
        return bool(first["seats"] <= show["capacity"] - show["sold"])

    def _promote(self, show: dict[str, Any]) -> None:
        waiter = self.bookings[self._next_waiter(show)]
        waiter["status"] = "seated"
        self._seat(show, waiter)

    def _next_waiter(self, show: dict[str, Any]) -> str:
        return str(show["waitlist"].pop(0))

    def _seat(self, show: dict[str, Any], record: dict[str, Any]) -> None:
        show["sold"] += record["seats"]

    def transfer(self, booking: Any, src: Any, dst: Any) -> dict[str, Any]:
        need(is_str(booking) and is_str(src) and is_str(dst), 422)
        record = self._booking(booking)
        need(src in self.customers and dst in self.customers, 404)
        need(src != dst, 422)
        need(record["customer"] == src, 403)
        need(record["status"] == "seated", 409)
        need(self.shows[record["show"]]["status"] == "onsale", 409)
        need(self.passed[src] < PASS, 429)
        need(self.held[dst] + record["seats"] <= HOLD, 429)
        record["customer"] = dst
        self._move_hold(src, dst, record["seats"])
        self.passed[src] += 1
        return {"passed": self.passed[src], "held": self._holding(dst)}

    def _move_hold(self, src: str, dst: str, seats: int) -> None:
        self.held[src] -= seats
        self.held[dst] += seats

    # -- reads -----------------------------------------------------------------------------------

    def customer(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        account = self._customer(name)
        return {"credit": account["credit"], "passed": self.passed[name], "held": self._holding(name)}

    def show(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        record = self._show(name)
        out = {k: record[k] for k in ("status", "price", "capacity", "sold")}
        out["waitlist"] = list(record["waitlist"])
        return out

    def office(self) -> dict[str, Any]:
        live = sum(self._counts(r) for r in self.bookings.values())
        return {"live": live, "takings": self.takings}


class PromotedNotSeated(BoxOffice):
    """B1, 7 calls: signup s, addShow x (capacity 1), setShow x onsale, book b1 (1 seat),
    book b2 (1 seat: waiting), cancel b1, show x: a waiter given a cancelled booking's seats is
    marked seated, but its seats are not added to the show's count, so the show reads one seat
    short of full (and a next booking is seated past its capacity). A promotion needs a seated
    booking, a waiter (the show full: its capacity reached exactly) and the cancel, whose answer
    (the refund, the holder's credit) is right; then one read."""

    def _seat(self, show: dict[str, Any], record: dict[str, Any]) -> None:
        pass


class WaitlistAsStack(BoxOffice):
    """B2, 8 calls: signup s, addShow x (capacity 1), setShow x onsale, book b1, book b2
    (waiting), book b3 (waiting), cancel b1, show x: the seats given back go to the last waiter
    (``pop()``), not the first, so the waitlist reads the wrong one left. It needs two waiters
    (three bookings: the box office's limit reached exactly) and the cancel, whose answer is
    right; then one read (or, with waiters of different sizes, the next booking)."""

    def _next_waiter(self, show: dict[str, Any]) -> str:
        return str(show["waitlist"].pop())


class TransferKeepsHold(BoxOffice):
    """B3, 7 calls: signup s, signup t, addShow x (capacity 3), setShow x onsale, book b1 (s, 3
    seats), transfer b1 s->t, book b2 (s, 2 seats): passing a ticket on moves the booking but not
    the seats counted against the two customers' limit of four, so s is refused seats s no longer
    holds (and t let past the limit). The count is read only by the limit checks (``customer`` and
    ``transfer`` count the bookings), so it shows only there: two customers, a transfer, and a
    booking (or a transfer back) over the limit by the moved seats."""

    def _move_hold(self, src: str, dst: str, seats: int) -> None:
        pass


class RefundToBuyer(BoxOffice):
    """B4, 7 calls: signup s, signup t, addShow x, setShow x onsale, book b1 (s), transfer b1
    s->t, cancel b1: a ticket passed on is refunded to the customer who bought it, not the one
    holding it, so the credit ``cancel`` answers (the holder's) is short of the refund. It needs
    the order book, transfer, cancel on one booking, and two customers."""

    def _refund_to(self, record: dict[str, Any]) -> str:
        return str(record["buyer"])


class PromoteOnCancelledShow(BoxOffice):
    """B5, 8 calls: signup s, addShow x (capacity 1), setShow x onsale, book b1, book b2
    (waiting), setShow x cancelled, cancel b1, show x: a seated booking of a cancelled show,
    cancelled for its refund, still gives its seats to the first waiter, so the waitlist reads
    empty (and the waiter seated). The lifecycle's branch to cancelled between the bookings and the
    cancel; the cancel's answer is right, so one read follows."""

    def _promotes(self, show: dict[str, Any]) -> bool:
        if not show["waitlist"]:
            return False
        first = self.bookings[show["waitlist"][0]]
        return bool(first["seats"] <= show["capacity"] - show["sold"])


class CancelledShowNotHeld(BoxOffice):
    """B6, 8 calls: signup s, addShow x, addShow y (capacity 3), setShow x onsale, setShow y
    onsale, book b1 (s, x, 2 seats), setShow x cancelled, book b2 (s, y, 3 seats): a cancelled
    show's seats stop counting against their holders' limit at once (as a closed show's do), not
    when each booking is refunded, so s is let hold five seats (paying exactly the credit left).
    The count is read only by the limit checks, so it shows only there: two shows, both on sale
    (one to cancel with seats on it, one to book past the limit), and the two bookings."""

    def _call_off(self, show: str) -> None:
        for record in self._of(show):
            self.held[record["customer"]] -= record["seats"]


class ReSignedPassed(BoxOffice):
    """B7, 9 calls: signup s, signup t, addShow x, setShow x onsale, book b1 (s), transfer b1
    s->t, leave s, signup s, customer s: a customer signing up again under the name of one who
    left keeps the old one's tickets passed on, from the register kept by name (state the
    contract does not see). It needs a ticket passed on (two customers, a show on sale, a
    booking, the transfer: six calls), the leaving (after the transfer: s held the ticket
    before), the new signup, and a read (or a third transfer over the limit, later)."""

    def _open_register(self, name: str) -> None:
        self.passed.setdefault(name, 0)


class CloseKeepsLive(BoxOffice):
    """B8, 10 calls: signup s, addShow x, addShow y, setShow x onsale, setShow y onsale, book b1
    (s, x), setShow x closed, book b2 (s, y), book b3 (s, y), book b4 (s, y: waiting): closing a
    show frees its bookings' seats for their holders but leaves them in the box office's count of
    three, so a third live booking is refused. The count is read only by the limit check
    (``office`` counts the bookings), so it shows only at the limit: k bookings on a show closed
    and 3 - k more bring the count to three while the box office holds 3 - k, and one more is
    refused. A closed show never reopens, so those later bookings need a second show on sale:
    five calls for the customer and the two shows, the close, three bookings and the refused
    one."""

    def _close(self, show: str) -> None:
        for record in self._of(show):
            self.held[record["customer"]] -= record["seats"]
