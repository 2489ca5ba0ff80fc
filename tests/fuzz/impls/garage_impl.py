"""A garage (``garage.yaml``), correct, and one class per planted bug, 8 to 10 calls deep.

A fourth held-out set (session 9), written before any change to the fuzzer that session and
never tuned on. Its shapes differ from ledger, hotel and depot: enter/pay/leave cycles on one
lot with a new target-assigned id each time (the second departure keeps its space), a per-ticket
move limit reached by alternating two lots, two counters of one lot that interact (cars now and
the most ever, at capacity), ids recycled once a lot with two departures is removed, the middle
of four tickets of one lot (a specific order of distinct keys), and a global ticket limit that
relocations wrongly loosen. The minimal length is in each docstring."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Garage:
    def __init__(self) -> None:
        self.lots: dict[str, dict[str, Any]] = {}
        self.tickets: dict[int, dict[str, Any]] = {}
        self.next_ticket = 1
        self.issued = 0
        self.relocations = 0
        self.freed: list[int] = []

    def _lot(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.lots, 404)
        return self.lots[name]

    def _ticket(self, id: Any) -> dict[str, Any]:
        need(is_int(id), 422)
        need(id in self.tickets, 404)
        return self.tickets[id]

    def _cap(self, cap: Any) -> None:
        need(is_int(cap) and 1 <= cap <= 4, 422)

    def addLot(self, name: Any, cap: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        self._cap(cap)
        need(name not in self.lots, 409)
        self.lots[name] = {"cap": cap, "used": 0, "closed": False, "exits": 0, "peak": 0}

    def removeLot(self, name: Any) -> None:
        lot = self._lot(name)
        need(lot["used"] == 0, 409)
        del self.lots[name]
        self._removed(lot)

    def _removed(self, lot: dict[str, Any]) -> None:
        pass

    def closeLot(self, name: Any) -> None:
        lot = self._lot(name)
        need(not lot["closed"], 409)
        lot["closed"] = True

    def openLot(self, name: Any) -> None:
        lot = self._lot(name)
        need(lot["closed"], 409)
        lot["closed"] = False

    def resize(self, name: Any, cap: Any) -> None:
        need(is_str(name), 422)
        self._cap(cap)
        lot = self._lot(name)
        need(self._fits(lot, cap), 409)
        lot["cap"] = cap

    def _fits(self, lot: dict[str, Any], cap: int) -> bool:
        return cap >= lot["used"]

    def _under_limit(self) -> bool:
        return self.issued < 6

    def _new_id(self) -> int:
        id = self.next_ticket
        self.next_ticket += 1
        return id

    def enter(self, lot: Any) -> dict[str, Any]:
        record = self._lot(lot)
        need(not record["closed"], 423)
        need(record["used"] < record["cap"], 409)
        need(self._under_limit(), 429)
        id = self._new_id()
        self.tickets[id] = {"lot": lot, "paid": False, "moves": 0}
        self.issued += 1
        record["used"] += 1
        record["peak"] = max(record["peak"], record["used"])
        return {"id": id}

    def pay(self, id: Any) -> None:
        ticket = self._ticket(id)
        need(not ticket["paid"], 409)
        ticket["paid"] = True

    def leave(self, id: Any) -> None:
        ticket = self._ticket(id)
        need(ticket["paid"], 402)
        lot = self.lots[ticket["lot"]]
        self._depart(id, lot)
        lot["exits"] += 1
        del self.tickets[id]
        self.freed.append(id)

    def _depart(self, id: int, lot: dict[str, Any]) -> None:
        lot["used"] -= 1

    def _move_limit(self, ticket: dict[str, Any]) -> bool:
        return ticket["moves"] < 4

    def relocate(self, id: Any, lot: Any) -> None:
        ticket = self._ticket(id)
        dest = self._lot(lot)
        need(ticket["lot"] != lot, 409)
        need(not dest["closed"], 423)
        need(dest["used"] < dest["cap"], 409)
        need(self._move_limit(ticket), 429)
        self.lots[ticket["lot"]]["used"] -= 1
        dest["used"] += 1
        dest["peak"] = max(dest["peak"], dest["used"])
        ticket["lot"] = lot
        ticket["moves"] += 1
        self.relocations += 1

    def lotInfo(self, name: Any) -> dict[str, Any]:
        lot = self._lot(name)
        return {"cap": lot["cap"], "used": lot["used"], "closed": lot["closed"], "exits": lot["exits"]}

    def ticketInfo(self, id: Any) -> dict[str, Any]:
        ticket = self._ticket(id)
        return {"lot": ticket["lot"], "paid": ticket["paid"], "moves": ticket["moves"]}

    def stats(self) -> dict[str, Any]:
        return {"issued": self.issued}


class SecondLeave(Garage):
    """G1, 8 calls: addLot, (enter, pay, leave) x2, lotInfo: the second car to leave a lot
    does not free its space (each cycle has a new ticket id)."""

    def _depart(self, id: int, lot: dict[str, Any]) -> None:
        if lot["exits"] != 1:
            super()._depart(id, lot)


class FifthRelocate(Garage):
    """G2, 8 calls: addLot x2, enter, relocate x5 back and forth: the limit of four moves per
    ticket is off by one, so the fifth is accepted."""

    def _move_limit(self, ticket: dict[str, Any]) -> bool:
        return ticket["moves"] <= 4


class PeakResize(Garage):
    """G3, 8 calls: addLot(cap 4), enter x4, pay, leave, resize to 3: once a lot has held four
    cars, shrinking it is checked against the most it ever held, not the cars in it now."""

    def _fits(self, lot: dict[str, Any], cap: int) -> bool:
        if lot["peak"] >= 4:
            return cap >= lot["peak"]
        return super()._fits(lot, cap)


class RecycledIds(Garage):
    """G4, 10 calls: addLot, (enter, pay, leave) x2, removeLot, addLot, enter: removing a lot
    once two tickets have left hands the freed ids out again (the next enter answers id 1)."""

    def _removed(self, lot: dict[str, Any]) -> None:
        if len(self.freed) >= 2:
            self.recycle = sorted(self.freed)

    def _new_id(self) -> int:
        recycle = getattr(self, "recycle", [])
        if recycle:
            return recycle.pop(0)
        return super()._new_id()


class MiddleLeave(Garage):
    """G5, 8 calls: addLot(cap 4), enter x4, pay #2, leave #2, ticketInfo #4: with four cars in a
    lot, one leaving with a ticket that is neither the oldest nor the newest marks the newest paid."""

    def _depart(self, id: int, lot: dict[str, Any]) -> None:
        here = sorted(k for k, t in self.tickets.items() if t["lot"] == self.tickets[id]["lot"])
        if len(here) >= 4 and here[0] < id < here[-1]:
            self.tickets[here[-1]]["paid"] = True
        super()._depart(id, lot)


class RelocatedLimit(Garage):
    """G6, 10 calls: addLot x2 (cap 4), enter a, relocate to b, enter a x4, enter b x2: the daily limit of
    six tickets is checked against tickets issued minus relocations, so a seventh is issued."""

    def _under_limit(self) -> bool:
        return self.issued - self.relocations < 6
