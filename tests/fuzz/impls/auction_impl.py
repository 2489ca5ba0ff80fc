"""An auction house (``auction.yaml``), correct, and one class per planted bug, 8 to 11 calls
deep.

A ninth held-out set (session 18), written without looking at the fuzzer's code. Its shapes are
ones the earlier sets have less of: a house clock advanced by its own operation, with deadlines
compared against it and pushed back by bids in a lot's last round (twice at most); a bid that must
reach a reserve, or beat the leading bid by at least a step; a lifecycle draft, live, closed,
settled, with a branch to cancelled (by the seller, or by a close with no bids); funds held across
several lots for the leading bids, and an escrow that must equal their sum; a per-seller limit of
three live lots counted across records; and optional input fields (funds, reserve, step, rounds).
The minimal length is in each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each seller's count of
live lots, each lot's log of bidders and of the bids it holds (tables by lot id, beside the
lots), who made each late bid, and the round a lot opened in with the rounds it was given.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

FUNDS = 10
LIVE = 3
EXTENSIONS = 2
HOLDING = ("live", "closed")


class Auction:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.lots: dict[str, dict[str, Any]] = {}
        self.clock = 0
        self.escrow = 0
        self.live: dict[str, int] = {}
        self.bidders: dict[str, list[str]] = {}
        self.locks: dict[str, dict[str, int]] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _user(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.users, 404)
        return self.users[name]

    def _lot(self, lot: Any) -> dict[str, Any]:
        need(is_str(lot), 422)
        need(lot in self.lots, 404)
        return self.lots[lot]

    def _held(self, name: str) -> int:
        return sum(r["top"] for r in self.lots.values() if r["leader"] == name and self._holds(r))

    def _holds(self, record: dict[str, Any]) -> bool:
        """A leading bid is held from the bidder's funds while its lot is live or closed."""
        return record["status"] in HOLDING

    # -- users -----------------------------------------------------------------------------------

    def join(self, name: Any, funds: Any = ABSENT) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        amount = option(funds, 0, 30, FUNDS)
        need(name not in self.users, 409)
        self.users[name] = {"funds": amount, "won": 0}
        self.live[name] = 0

    def account(self, name: Any) -> dict[str, Any]:
        user = self._user(name)
        held = self._held(name)
        return {
            "funds": user["funds"],
            "held": held,
            "available": user["funds"] - held,
            "selling": sum(r["seller"] == name and r["status"] == "live" for r in self.lots.values()),
            "won": user["won"],
        }

    # -- lots ------------------------------------------------------------------------------------

    def create(self, lot: Any, seller: Any, reserve: Any = ABSENT, step: Any = ABSENT) -> None:
        need(is_str(lot) and 1 <= len(lot) <= 4 and is_str(seller), 422)
        floor = option(reserve, 1, 9, 1)
        raise_by = option(step, 1, 5, 1)
        need(seller in self.users, 404)
        need(lot not in self.lots, 409)
        self.lots[lot] = {
            "seller": seller,
            "status": "draft",
            "reserve": floor,
            "step": raise_by,
            "deadline": 0,
            "top": 0,
            "leader": "",
            "extended": 0,
            "opened": 0,
            "rounds": 0,
            "late": [],
        }
        self._new_tables(lot)

    def _new_tables(self, lot: str) -> None:
        self.bidders[lot] = []
        self.locks[lot] = {}

    def open(self, lot: Any, rounds: Any = ABSENT) -> dict[str, Any]:
        need(is_str(lot), 422)
        length = option(rounds, 1, 3, 2)
        record = self._lot(lot)
        need(record["status"] == "draft", 409)
        need(self.live[record["seller"]] < LIVE, 429)
        record.update(status="live", opened=self.clock, rounds=length, deadline=self.clock + length)
        self.live[record["seller"]] += 1
        return {"deadline": record["deadline"]}

    def _free_slot(self, record: dict[str, Any]) -> None:
        """A lot that stops being live gives its seller's place back."""
        if record["status"] == "live":
            self.live[record["seller"]] -= 1

    def cancel(self, lot: Any) -> None:
        record = self._lot(lot)
        need(record["status"] in ("draft", "live"), 409)
        need(record["leader"] == "", 409)
        self._free_slot(record)
        record["status"] = "cancelled"

    def remove(self, lot: Any) -> None:
        record = self._lot(lot)
        need(self._removable(record), 409)
        del self.lots[lot]

    def _removable(self, record: dict[str, Any]) -> bool:
        return record["status"] in ("draft", "settled", "cancelled")

    # -- bidding ---------------------------------------------------------------------------------

    def bid(self, lot: Any, bidder: Any, amount: Any) -> dict[str, Any]:
        need(is_str(lot) and is_str(bidder) and is_int(amount) and 1 <= amount <= 30, 422)
        record = self._lot(lot)
        self._user(bidder)
        need(record["status"] == "live", 409)
        need(bidder != record["seller"], 403)
        need(bidder != record["leader"], 409)
        need(self._bidding_open(record), 410)
        need(amount >= self._minimum(lot, record, bidder), 409)
        need(self.users[bidder]["funds"] - self._held(bidder) >= amount, 402)
        outbid, old = record["leader"], record["top"]
        if outbid:
            self._unlock(lot, outbid)
        self.locks[lot][bidder] = amount
        self.escrow += amount - old
        if bidder not in self.bidders[lot]:
            self.bidders[lot].append(bidder)
        if record["deadline"] - self.clock == 1 and self._may_extend(record, bidder):
            record["deadline"] += 1
            record["extended"] += 1
            record["late"].append(bidder)
        record.update(top=amount, leader=bidder)
        return {"top": amount, "deadline": record["deadline"]}

    def _bidding_open(self, record: dict[str, Any]) -> bool:
        return bool(self.clock < record["deadline"])

    def _minimum(self, lot: str, record: dict[str, Any], bidder: str) -> int:
        """The reserve for the first bid; the leading bid and one step for every later one."""
        if not record["leader"]:
            return int(record["reserve"])
        return int(record["top"] + record["step"])

    def _may_extend(self, record: dict[str, Any], bidder: str) -> bool:
        return bool(record["extended"] < EXTENSIONS)

    def _unlock(self, lot: str, bidder: str) -> None:
        """An outbid bidder's bid is no longer held by the lot."""
        del self.locks[lot][bidder]

    # -- the clock and the hammer ----------------------------------------------------------------

    def tick(self, rounds: Any = ABSENT) -> dict[str, Any]:
        self.clock += option(rounds, 1, 3, 1)
        return {"clock": self.clock}

    def close(self, lot: Any) -> dict[str, Any]:
        record = self._lot(lot)
        need(record["status"] == "live", 409)
        need(self.clock >= record["deadline"], 425)
        self._free_slot(record)
        record["status"] = "closed" if record["leader"] else "cancelled"
        return {"status": record["status"], "winner": record["leader"]}

    def settle(self, lot: Any) -> dict[str, Any]:
        record = self._lot(lot)
        need(record["status"] == "closed", 409)
        winner, seller, price = record["leader"], record["seller"], record["top"]
        self.users[winner]["funds"] -= price
        self.users[winner]["won"] += 1
        self.users[seller]["funds"] += price
        self.escrow -= self._release(lot)
        record["status"] = "settled"
        return {"paid": price, "escrow": self.escrow}

    def _release(self, lot: str) -> int:
        """What a settled lot gives back to the escrow: the bids it holds."""
        held = sum(self.locks[lot].values())
        self.locks[lot] = {}
        return held

    # -- reads -----------------------------------------------------------------------------------

    def lotInfo(self, lot: Any) -> dict[str, Any]:
        record = self._lot(lot)
        out = {k: record[k] for k in ("seller", "status", "reserve", "step", "deadline", "top")}
        out.update(leader=record["leader"], bidders=list(self.bidders[lot]), extended=record["extended"])
        return out

    def house(self) -> dict[str, Any]:
        return {
            "clock": self.clock,
            "escrow": self.escrow,
            "live": sum(r["status"] == "live" for r in self.lots.values()),
        }


class ExactRebid(Auction):
    """A1, 8 calls: join s, join b, join c, create a, open a, bid (b, 1), bid (c, 2),
    bid (b, 3): a bidder who has bid on the lot before must beat the leading bid by more than the
    step, so a rebid of exactly the leading bid plus the step is refused. A first bid by anyone is
    judged right, and b cannot bid while leading, so it needs the seller and two bidders, the lot
    made and opened, and three bids, the last exactly at the boundary."""

    def _minimum(self, lot: str, record: dict[str, Any], bidder: str) -> int:
        extra = 1 if bidder in self.bidders[lot] else 0
        return super()._minimum(lot, record, bidder) + extra


class ExtendedDeadline(Auction):
    """A2, 8 calls: join s, join b, join c, create a, open (a, 1 round), bid (b, 1), tick,
    bid (c, 2): bidding is checked against the deadline the lot opened with, not the one a late
    bid pushed back, so once the clock reaches the first deadline exactly a bid is refused that
    the extended one still allows. The extension needs a bid in the last round, the clock a tick,
    and the second bid a third user: the seller and the leader are refused (403, 409) before the
    deadline is looked at. The lot's ``deadline`` reads right everywhere, and a close is judged
    on it."""

    def _bidding_open(self, record: dict[str, Any]) -> bool:
        return bool(self.clock < record["opened"] + record["rounds"])


class ThirdExtension(Auction):
    """A3, 10 calls: join s, join b, join c, create a, open (a, 1 round), bid (b, 1), tick,
    bid (c, 2), tick, bid (b, 3): the limit of two extensions is counted per bidder, so a third
    bid in the last round pushes the deadline back a third time. Every extension leaves two
    rounds to go, so the clock must tick between late bids (two ticks), and the late bids must
    alternate between two bidders: three late bids, three users."""

    def _may_extend(self, record: dict[str, Any], bidder: str) -> bool:
        return bool(record["late"].count(bidder) < EXTENSIONS)


class DraftCancelFreesSlot(Auction):
    """A4, 11 calls: join s, create a..e, cancel a, open b, c, d, e: cancelling a lot gives its
    seller's live place back even when it was a draft that never took one, so a fourth lot goes
    live. The seller's count is read nowhere else (``selling`` and ``live`` are counted from the
    lots), so it shows only at the limit: four lots opened, and a fifth, cancelled as a draft (a
    cancelled lot never opens; making it again costs a remove and a create)."""

    def _free_slot(self, record: dict[str, Any]) -> None:
        self.live[record["seller"]] -= 1


class ClosedNotHeld(Auction):
    """A5, 8 calls: join s, join b, create a, open a, bid b, tick (2 rounds), close a, account b:
    a winning bid stops being held from the winner's funds when the lot closes, not when it is
    settled, so the winner's ``held`` and ``available`` read wrong between the two (and a bid
    elsewhere could spend the money twice). A closed lot needs a bid, and the clock at the deadline
    (the bid did not extend it: two rounds remained); then one read."""

    def _holds(self, record: dict[str, Any]) -> bool:
        return bool(record["status"] == "live")


class StaleLockReleased(Auction):
    """A6, 10 calls: join s, join b, join c, create a, open a, bid (b, 1), bid (c, 2),
    tick (2 rounds), close a, settle a: an outbid bid stays in the lot's table of bids held, and
    settling gives the whole table back to the escrow, so the escrow ``settle`` answers is short
    by every outbid bid. It needs a bid outbid (two bidders besides the seller) and the lot
    settled, which needs it closed, which needs the clock at its deadline."""

    def _unlock(self, lot: str, bidder: str) -> None:
        pass


class ReusedLotId(Auction):
    """A7, 11 calls: join s, join b, create a, open a, bid b, tick (2 rounds), close a,
    settle a, remove a, create a, lotInfo a: a lot made again under a removed one's id keeps the
    old lot's bidders from the table by id. The table has someone in it only after a bid, and a
    lot with a bid can be removed only once settled (closed first, at its deadline); then the new
    lot and one read."""

    def _new_tables(self, lot: str) -> None:
        self.bidders.setdefault(lot, [])
        self.locks[lot] = {}


class RemoveUnsettled(Auction):
    """A8, 8 calls: join s, join b, create a, open a, bid b, tick (2 rounds), close a, remove a:
    a lot closed with a winner but not yet settled is removed, where the contract keeps it until
    it is paid for. A lot closed without bids is cancelled (removable either way), so it needs a
    bid, and the clock at the deadline to close it."""

    def _removable(self, record: dict[str, Any]) -> bool:
        return bool(record["status"] != "live")
