"""Gym class bookings (``gym.yaml``), correct, and one class per planted bug, 7 or 8 calls deep.

A twentieth held-out set, written without looking at the fuzzer's code. Its shapes: members on a
plan of credits per period, renewed; instructors who schedule classes with a few seats and a
waitlist of two; bookings numbered by the gym (the calls on one use the number it answered), two
upcoming at most per member and one per member and class, each spending a credit that a cancel
gives back only before the class's cutoff; a seat freed by a cancel going to the first booking on
the waitlist at once; seats marked attended or no-show after the cutoff, and a ban at the third
no-show; a membership frozen and unfrozen, twice at most; a class cancelled by its instructor,
every booking of it refunded, and made again under its name. The minimal length is in each
docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each member's balance of
credits and count of upcoming bookings (counters kept up by every path, where the contract counts
the bookings), the set of classes each member holds a booking on (what the one-per-class check
reads), the freezes in a table of their own, a ban flag written when a no-show is marked, a cache
of the answers to ``memberInfo``, each booking's state and a copy of its class's instructor (what
marking it checks), and the booking numbers issued by a sequence.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

PLAN = 3  # credits per period without `plan`
SEATS = 2  # a class's capacity without `capacity`
WAITLIST = 2  # bookings a class's waitlist holds
UPCOMING = 2  # upcoming bookings a member holds
BAN = 3  # no-shows that ban a member
FREEZES = 2  # times a membership is frozen


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


class Gym:
    def __init__(self) -> None:
        self.members: dict[str, dict[str, Any]] = {}  # plan, frozen, noshows, banned
        self.balance: dict[str, int] = {}  # credits left, by member
        self.upcoming: dict[str, int] = {}  # upcoming bookings, by member (the limit)
        self.booked_on: dict[str, set[str]] = {}  # by member: the classes they hold a booking on
        self.freezes: dict[str, int] = {}  # by member, for the life of the membership
        self.info: dict[str, dict[str, Any]] = {}  # answers of memberInfo, until the member changes
        self.instructors: set[str] = set()
        self.classes: dict[str, dict[str, Any]] = {}
        self.bookings: dict[int, dict[str, Any]] = {}  # member, session, instructor, state
        self.sequence = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _member(self, member: str) -> dict[str, Any]:
        need(member in self.members, 404)
        return self.members[member]

    def _class(self, session: str) -> dict[str, Any]:
        need(session in self.classes, 404)
        return self.classes[session]

    def _upcoming(self, booking: int) -> dict[str, Any]:
        """A booking seated or on the waitlist of a class that is still on."""
        need(booking in self.bookings and self.bookings[booking]["state"] in ("seated", "waiting"), 404)
        return self.bookings[booking]

    def _changed(self, member: str) -> None:
        """The member's cached answer is stale."""
        self.info.pop(member, None)

    # -- members and instructors -----------------------------------------------------------------

    def join(self, member: Any, plan: Any = ABSENT) -> None:
        need(_name(member), 422)
        credits = option(plan, 1, 5, PLAN)
        need(member not in self.members, 409)
        self.members[member] = {"plan": credits, "frozen": False, "noshows": 0, "banned": False}
        self.balance[member] = credits
        self.upcoming[member] = 0
        self.booked_on[member] = set()
        self.freezes[member] = 0

    def hire(self, instructor: Any) -> None:
        need(_name(instructor), 422)
        need(instructor not in self.instructors, 409)
        self.instructors.add(instructor)

    def freeze(self, member: Any) -> None:
        need(_name(member), 422)
        record = self._member(member)
        need(not record["frozen"], 409)
        need(self.freezes[member] < FREEZES, 429)
        record["frozen"] = True
        self.freezes[member] += 1
        self._changed(member)

    def unfreeze(self, member: Any) -> None:
        need(_name(member), 422)
        record = self._member(member)
        need(record["frozen"], 409)
        record["frozen"] = False
        self._changed(member)

    def renew(self, member: Any) -> dict[str, Any]:
        need(_name(member), 422)
        record = self._member(member)
        need(not record["frozen"], 423)
        self._new_period(member)
        self._changed(member)
        return {"credits": self.balance[member]}

    def _new_period(self, member: str) -> None:
        """The plan's credits again, less those its upcoming bookings hold."""
        self.balance[member] = self.members[member]["plan"] - self.upcoming[member]

    # -- classes ---------------------------------------------------------------------------------

    def schedule(self, session: Any, instructor: Any, capacity: Any = ABSENT) -> None:
        need(_name(session) and _name(instructor), 422)
        seats = option(capacity, 1, 3, SEATS)
        need(instructor in self.instructors, 404)
        need(session not in self.classes, 409)
        self.classes[session] = {
            "instructor": instructor,
            "capacity": seats,
            "closed": False,
            "seats": [],
            "waitlist": [],
            "done": 0,
        }

    def cutoff(self, session: Any, instructor: Any) -> None:
        need(_name(session) and _name(instructor), 422)
        klass = self._class(session)
        need(klass["instructor"] == instructor, 403)
        need(not klass["closed"], 409)
        klass["closed"] = True

    def cancelClass(self, session: Any, instructor: Any) -> None:
        need(_name(session) and _name(instructor), 422)
        klass = self._class(session)
        need(klass["instructor"] == instructor, 403)
        for number in klass["seats"] + klass["waitlist"]:
            entry = self.bookings[number]
            entry["state"] = "dropped"
            owner = entry["member"]
            self.balance[owner] += 1
            self.upcoming[owner] -= 1
            self._forget_class(owner, session)
            self._refund_told(owner)
        del self.classes[session]

    def _forget_class(self, member: str, session: str) -> None:
        """A class cancelled is off the member's set of classes booked."""
        self.booked_on[member].discard(session)

    def _refund_told(self, member: str) -> None:
        """A member refunded by a class cancelled has their cached answer dropped."""
        self._changed(member)

    def classInfo(self, session: Any) -> dict[str, Any]:
        need(_name(session), 422)
        klass = self._class(session)
        return {
            "instructor": klass["instructor"],
            "capacity": klass["capacity"],
            "cutoff": klass["closed"],
            "seats": list(klass["seats"]),
            "waitlist": list(klass["waitlist"]),
            "done": klass["done"],
        }

    # -- bookings --------------------------------------------------------------------------------

    def book(self, member: Any, session: Any) -> dict[str, Any]:
        need(_name(member) and _name(session), 422)
        record = self._member(member)
        klass = self._class(session)
        need(not record["banned"], 403)
        need(not record["frozen"], 423)
        need(session not in self.booked_on[member], 409)
        need(self.upcoming[member] < UPCOMING, 429)
        need(self.balance[member] > 0, 402)
        seated = len(klass["seats"]) + klass["done"] < klass["capacity"]
        need(seated or len(klass["waitlist"]) < WAITLIST, 413)
        number = self._issue(seated)
        self.bookings[number] = {
            "member": member,
            "session": session,
            "instructor": klass["instructor"],
            "state": "seated" if seated else "waiting",
        }
        (klass["seats"] if seated else klass["waitlist"]).append(number)
        self.balance[member] -= 1
        self.upcoming[member] += 1
        self.booked_on[member].add(session)
        self._changed(member)
        return {"booking": number, "seated": seated}

    def _issue(self, seated: bool) -> int:
        """The next booking number, seated or waiting."""
        number = self.sequence
        self.sequence += 1
        return number

    def cancel(self, member: Any, booking: Any) -> dict[str, Any]:
        need(_name(member) and is_int(booking), 422)
        entry = self._upcoming(booking)
        need(self._may_cancel(member, entry), 403)
        owner = entry["member"]
        klass = self.classes[entry["session"]]
        promoted = None
        if entry["state"] == "seated":
            klass["seats"].remove(booking)
            promoted = self._promote(klass)
        else:
            klass["waitlist"].remove(booking)
        entry["state"] = "cancelled"
        if not klass["closed"]:
            self.balance[owner] += 1
        self._release(owner, entry["session"])
        return {"credits": self.balance[member], "promoted": promoted}

    def _may_cancel(self, member: str, entry: dict[str, Any]) -> bool:
        """The member who booked it."""
        return bool(entry["member"] == member)

    def _promote(self, klass: dict[str, Any]) -> int | None:
        """The seat freed goes to the next booking in line, if any."""
        number = self._next_in_line(klass)
        if number is None:
            return None
        klass["waitlist"].remove(number)
        klass["seats"].append(number)
        self.bookings[number]["state"] = "seated"
        return number

    def _next_in_line(self, klass: dict[str, Any]) -> int | None:
        """The first booking on the waitlist."""
        return klass["waitlist"][0] if klass["waitlist"] else None

    def _release(self, member: str, session: str) -> None:
        """A booking no longer upcoming: off the member's count and set of classes booked."""
        self.upcoming[member] -= 1
        self.booked_on[member].discard(session)
        self._changed(member)

    def _marking(self, booking: Any, instructor: Any) -> dict[str, Any]:
        """A seated booking of the instructor's class, after its cutoff."""
        need(is_int(booking) and _name(instructor), 422)
        entry = self._upcoming(booking)
        need(entry["instructor"] == instructor, 403)
        need(self.classes[entry["session"]]["closed"], 425)
        need(entry["state"] == "seated", 409)
        return entry

    def attend(self, booking: Any, instructor: Any) -> None:
        entry = self._marking(booking, instructor)
        klass = self.classes[entry["session"]]
        klass["seats"].remove(booking)
        self._seat_used(klass, attended=True)
        entry["state"] = "attended"
        self._release(entry["member"], entry["session"])

    def noShow(self, booking: Any, instructor: Any) -> dict[str, Any]:
        entry = self._marking(booking, instructor)
        klass = self.classes[entry["session"]]
        klass["seats"].remove(booking)
        self._seat_used(klass, attended=False)
        entry["state"] = "noshow"
        record = self.members[entry["member"]]
        record["noshows"] += 1
        record["banned"] = self._struck_out(record["noshows"])
        self._release(entry["member"], entry["session"])
        return {"noshows": record["noshows"], "banned": record["banned"]}

    def _seat_used(self, klass: dict[str, Any], attended: bool) -> None:
        """A seat marked, attended or not, stays used: it is not booked again."""
        klass["done"] += 1

    def _struck_out(self, noshows: int) -> bool:
        return noshows >= BAN

    def memberInfo(self, member: Any) -> dict[str, Any]:
        need(_name(member), 422)
        record = self._member(member)
        if member not in self.info:
            self.info[member] = {
                "plan": record["plan"],
                "credits": self.balance[member],
                "upcoming": self.upcoming[member],
                "noshows": record["noshows"],
                "banned": record["banned"],
                "frozen": record["frozen"],
            }
        return dict(self.info[member])


class FrozenSkipped(Gym):
    """G1, 8 calls: hire i, schedule (c, i, capacity 1), join a, join b, book (a, c), book (b, c),
    freeze b, cancel (a, 1): the seat freed is offered to the first booking on the waitlist whose
    member is not frozen, so b's booking, the only one waiting, is passed over (and the seat left
    empty) where the contract gives it the seat (``promoted`` 2, not null). It needs a class full
    (capacity one: a booking seated) and a booking of another member waiting, that member frozen
    after booking (a frozen member does not book), and a seated booking cancelled."""

    def _next_in_line(self, klass: dict[str, Any]) -> int | None:
        for number in klass["waitlist"]:
            if not self.members[self.bookings[number]["member"]]["frozen"]:
                return number
        return None


class NoShowSeatFree(Gym):
    """G2, 7 calls: hire i, schedule (c, i, capacity 1), join a, cutoff (c, i), book (a, c), noShow
    (1, i), book (a, c): a seat marked a no-show is not counted as used (only an attended one is),
    so it is booked again, and a's new booking is seated where the contract puts it on the
    waitlist (``classInfo`` after the no-show shows it as soon: ``done`` 0, not 1). It needs a
    booking seated and marked a no-show (after the cutoff), and a read of the seats: a second
    booking of the class (a's own will do: a no-show is no longer upcoming) or its ``classInfo``."""

    def _seat_used(self, klass: dict[str, Any], attended: bool) -> None:
        if attended:
            klass["done"] += 1


class BanAtSecond(Gym):
    """G3, 8 calls: hire i, schedule (c, i), join a, cutoff (c, i), book (a, c), noShow (1, i), book
    (a, c), noShow (2, i): the ban is read as "the next no-show is the last", so a member is
    banned at their second no-show where the contract waits for the third (``banned`` true, not
    false). It needs two no-shows of one member: two bookings seated (one at a time on one class
    will do, its two seats), each marked after the cutoff."""

    def _struck_out(self, noshows: int) -> bool:
        return noshows >= BAN - 1


class FreezesPerPeriod(Gym):
    """G4, 7 calls: join a, freeze a, unfreeze a, freeze a, unfreeze a, renew a, freeze a: the
    freezes are counted per period, like the credits, so a renewal gives them back and a third
    freeze is let through (429 in the contract). No answer shows the count: it needs two freezes
    (each unfrozen, since a frozen membership is neither frozen again nor renewed), a renewal,
    and a third freeze."""

    def _new_period(self, member: str) -> None:
        super()._new_period(member)
        self.freezes[member] = 0


class WaitingSkipsSequence(Gym):
    """G5, 8 calls: hire i, schedule (c, i, capacity 1), join a, join b, book (a, c), book (b, c),
    schedule (d, i), book (a, d): a booking put on the waitlist takes the next number without
    advancing the sequence (it is advanced where a seat is taken), so the next booking is given
    the same number, 2 where the contract answers 3. It needs a booking waiting (a class full, a
    second member's booking) and one booking more, which neither member can make on the same
    class: a second class (or a third member) for it."""

    def _issue(self, seated: bool) -> int:
        number = self.sequence
        if seated:
            self.sequence += 1
        return number


class RebookMadeAgain(Gym):
    """G6, 7 calls: hire i, schedule (c, i), join a, book (a, c), cancelClass (c, i), schedule (c,
    i), book (a, c): a class cancelled is left in its members' sets of classes booked, so when it
    is scheduled again under its name, a member who held a booking on the old one is refused one
    on the new (409, "booked on this class already"). It needs a booking, its class cancelled and
    made again, and the member booking it again."""

    def _forget_class(self, member: str, session: str) -> None:
        pass


class CachedRefund(Gym):
    """G7, 7 calls: hire i, schedule (c, i), join a, book (a, c), memberInfo a, cancelClass (c, i),
    memberInfo a: the refund of a class cancelled does not drop the member's cached answer (every
    call made by or on the member does), so the second read shows the credits and upcoming
    bookings before it (2 and 1, not 3 and 0). It needs a booking, a read after it (any call on
    the member drops the cache), the class cancelled, and the read again."""

    def _refund_told(self, member: str) -> None:
        pass


class CancelByClassmate(Gym):
    """G8, 7 calls: hire i, schedule (c, i), join a, join b, book (a, c), book (b, c), cancel (b, 1):
    a cancel is allowed to anyone holding a booking on the same class, so b cancels a's booking
    (403 in the contract). It needs two members, each with a booking on one class."""

    def _may_cancel(self, member: str, entry: dict[str, Any]) -> bool:
        klass = self.classes[entry["session"]]
        return any(self.bookings[n]["member"] == member for n in klass["seats"] + klass["waitlist"])
