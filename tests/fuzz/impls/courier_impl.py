"""A courier network (``courier.yaml``), correct, and one class per planted bug, 8 to 11 calls
deep.

A tenth held-out set (session 20), written without looking at the fuzzer's code. Its shapes are
ones the earlier sets have less of: a list field (a hub's shelf) appended to by three operations
and taken from by three, with a limit on its length reached exactly; routes through three hubs
(A to B, B to C, and a send from A that must reach C in two hops); a limit on the parcels a
customer has on the way, counted up by two operations; a refund that must equal a fee copied from
another record when the parcel was sent; delivery attempts repeated as many times as the
destination hub was made to allow; a parcel's lifecycle walked twice (sent, given back, sent
again); outputs that the contract's ``ensures`` pin down (the shelf, the refund, the failures);
and optional input fields whose absence matters (``link`` without ``to`` unlinks, ``resend``
without ``to`` keeps the destination). The minimal length is in each docstring, with why it
cannot be shorter.

The implementation keeps some state where the contract does not look: each hub's count of the
parcels on its shelf (beside the shelf, which only the reads show), each hub's routes (the hubs
its links reach in one or two hops), each customer's count of parcels on the way, and each
parcel's log of failed attempts.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

CREDIT = 6
CAP, RATE, TRIES = 2, 2, 2
ON_THE_WAY = 2


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 4


class Courier:
    def __init__(self) -> None:
        self.customers: dict[str, dict[str, Any]] = {}
        self.hubs: dict[str, dict[str, Any]] = {}
        self.parcels: dict[str, dict[str, Any]] = {}
        self.stock: dict[str, int] = {}
        self.routes: dict[str, list[str]] = {}
        self.live: dict[str, int] = {}
        self.log: dict[str, list[str]] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _customer(self, name: Any) -> dict[str, Any]:
        need(name in self.customers, 404)
        return self.customers[name]

    def _hub(self, name: Any) -> dict[str, Any]:
        need(name in self.hubs, 404)
        return self.hubs[name]

    def _parcel(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.parcels, 404)
        return self.parcels[name]

    def _failed(self, parcel: str) -> int:
        return len(self.log[parcel])

    def _tries(self, record: dict[str, Any]) -> int:
        """The attempts a parcel gets: as many as its destination hub allows."""
        return int(self.hubs[record["to"]]["tries"])

    # -- customers and hubs ----------------------------------------------------------------------

    def signup(self, name: Any, credit: Any = ABSENT) -> None:
        need(_name(name), 422)
        amount = option(credit, 0, 9, CREDIT)
        need(name not in self.customers, 409)
        self.customers[name] = {"credit": amount}
        self.live[name] = 0

    def addHub(self, name: Any, cap: Any = ABSENT, rate: Any = ABSENT, tries: Any = ABSENT) -> None:
        need(_name(name), 422)
        size = option(cap, 1, 3, CAP)
        fee = option(rate, 1, 5, RATE)
        attempts = option(tries, 1, 3, TRIES)
        need(name not in self.hubs, 409)
        self.hubs[name] = {"cap": size, "rate": fee, "tries": attempts, "next": "", "shelf": []}
        self.stock[name] = 0
        self.routes[name] = []

    def setRate(self, hub: Any, rate: Any) -> None:
        need(is_str(hub) and is_int(rate) and 1 <= rate <= 5, 422)
        self._hub(hub)["rate"] = rate

    # -- routes ----------------------------------------------------------------------------------

    def link(self, hub: Any, to: Any = ABSENT) -> None:
        need(is_str(hub) and (to is ABSENT or is_str(to)), 422)
        record = self._hub(hub)
        need(to is ABSENT or to in self.hubs, 404)
        need(to != hub, 422)
        if to is ABSENT:
            self._unlink(hub)
            return
        record["next"] = to
        self._reroute(hub)
        self._reroute_feeders(hub)

    def _unlink(self, hub: str) -> None:
        self.hubs[hub]["next"] = ""
        self._reroute(hub)
        self._reroute_feeders(hub)

    def _reroute(self, hub: str) -> None:
        """The hubs ``hub``'s links reach: the next one, and the one after it."""
        first = self.hubs[hub]["next"]
        second = self.hubs[first]["next"] if first else ""
        self.routes[hub] = [h for h in (first, second) if h]

    def _reroute_feeders(self, hub: str) -> None:
        """The hubs that forward to ``hub`` reach what it forwards to: their routes change too."""
        for name, record in self.hubs.items():
            if record["next"] == hub:
                self._reroute(name)

    # -- shelves ---------------------------------------------------------------------------------

    def _has_room(self, hub: str) -> bool:
        return bool(self.stock[hub] < self.hubs[hub]["cap"])

    def _put_on(self, hub: str, parcel: str) -> None:
        self.hubs[hub]["shelf"].append(parcel)
        self.stock[hub] += 1

    def _take_off(self, hub: str, parcel: str) -> None:
        self.hubs[hub]["shelf"].remove(parcel)
        self.stock[hub] -= 1

    # -- parcels ---------------------------------------------------------------------------------

    def send(self, parcel: Any, sender: Any, hub: Any, to: Any) -> dict[str, Any]:
        need(_name(parcel) and is_str(sender) and is_str(hub) and is_str(to), 422)
        customer = self._customer(sender)
        origin = self._hub(hub)
        self._hub(to)
        need(parcel not in self.parcels, 409)
        need(to != hub, 422)
        need(to in self.routes[hub], 424)
        need(self._has_room(hub), 423)
        need(self.live[sender] < ON_THE_WAY, 429)
        need(customer["credit"] >= origin["rate"], 402)
        fee = origin["rate"]
        self.parcels[parcel] = {
            "sender": sender,
            "origin": hub,
            "to": to,
            "hub": hub,
            "status": "transit",
            "fee": fee,
        }
        self.log[parcel] = []
        self._put_on(hub, parcel)
        self.live[sender] += 1
        customer["credit"] -= fee
        return {"fee": fee, "credit": customer["credit"]}

    def forward(self, parcel: Any) -> dict[str, Any]:
        record = self._parcel(parcel)
        need(record["status"] == "transit", 409)
        need(record["hub"] != record["to"], 409)
        here = record["hub"]
        there = self.hubs[here]["next"]
        need(there != "", 424)
        need(self._has_room(there), 423)
        self._take_off(here, parcel)
        self._put_on(there, parcel)
        record["hub"] = there
        return {"hub": there}

    def attempt(self, parcel: Any, home: Any) -> dict[str, Any]:
        need(is_str(parcel) and type(home) is bool, 422)
        record = self._parcel(parcel)
        need(record["status"] == "transit", 409)
        need(record["hub"] == record["to"], 409)
        need(self._failed(parcel) < self._tries(record), 429)
        if home:
            self._take_off(record["hub"], parcel)
            self.live[record["sender"]] -= 1
            record.update(status="delivered", hub="")
        else:
            self.log[parcel].append(record["hub"])
        return {"status": record["status"], "failed": self._failed(parcel)}

    def giveBack(self, parcel: Any) -> dict[str, Any]:
        record = self._parcel(parcel)
        need(record["status"] == "transit", 409)
        need(record["hub"] == record["to"], 409)
        need(self._failed(parcel) == self._tries(record), 425)
        self._off_the_network(record["hub"], parcel)
        self.live[record["sender"]] -= 1
        record.update(status="returned", hub="")
        refund = self._refund(record)
        customer = self.customers[record["sender"]]
        customer["credit"] += refund
        return {"refund": refund, "credit": customer["credit"]}

    def _off_the_network(self, hub: str, parcel: str) -> None:
        """A parcel given back leaves its destination's shelf."""
        self._take_off(hub, parcel)

    def _refund(self, record: dict[str, Any]) -> int:
        """A parcel given back refunds what its sender paid for the round."""
        return int(record["fee"])

    def resend(self, parcel: Any, to: Any = ABSENT) -> dict[str, Any]:
        need(is_str(parcel) and (to is ABSENT or is_str(to)), 422)
        record = self._parcel(parcel)
        need(to is ABSENT or to in self.hubs, 404)
        need(record["status"] == "returned", 409)
        origin = record["origin"]
        need(to != origin, 422)
        target = record["to"] if to is ABSENT else to
        need(self._routed(origin, target, to is not ABSENT), 424)
        need(self._has_room(origin), 423)
        sender = record["sender"]
        need(self.live[sender] < ON_THE_WAY, 429)
        customer = self.customers[sender]
        fee = self.hubs[origin]["rate"]
        need(customer["credit"] >= fee, 402)
        record.update(status="transit", hub=origin, to=target, fee=fee)
        self._new_round(parcel)
        self._put_on(origin, parcel)
        self._back_on_the_way(sender)
        customer["credit"] -= fee
        return {"fee": fee, "credit": customer["credit"]}

    def _routed(self, origin: str, target: str, new_destination: bool) -> bool:
        return target in self.routes[origin]

    def _new_round(self, parcel: str) -> None:
        """Failed attempts count from the start of the round."""
        self.log[parcel] = []

    def _back_on_the_way(self, sender: str) -> None:
        self.live[sender] += 1

    # -- reads -----------------------------------------------------------------------------------

    def customer(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        record = self._customer(name)
        sending = sum(p["sender"] == name and p["status"] == "transit" for p in self.parcels.values())
        return {"credit": record["credit"], "sending": sending}

    def hub(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        record = self._hub(name)
        out = {k: record[k] for k in ("cap", "rate", "tries", "next")}
        out["shelf"] = list(record["shelf"])
        return out

    def parcel(self, name: Any) -> dict[str, Any]:
        record = self._parcel(name)
        out = {k: record[k] for k in ("sender", "origin", "to", "hub", "status", "fee")}
        out["failed"] = self._failed(name)
        return out


class StaleRoutes(Courier):
    """K1, 8 calls: signup s, addHub a, b, c, link a->b, link b->c, link b (no ``to``: unlinked),
    send (a to c): unlinking a hub refreshes its own routes but not those of the hubs that forward
    to it, so a still reaches c through b and a parcel is let go where no link leads. Three hubs,
    two links in a row and the one in the middle undone (linking b elsewhere refreshes a right:
    only an unlink leaves it stale); then a customer and the send."""

    def _unlink(self, hub: str) -> None:
        self.hubs[hub]["next"] = ""
        self._reroute(hub)


class TriesOfOrigin(Courier):
    """K2, 8 calls: signup s, addHub a (tries 1), addHub b, link a->b, send (a to b), forward,
    attempt (not home), attempt: the attempts a parcel gets are read from the hub it was sent from,
    not the one delivering it, so after one failure at b (which allows two) the second attempt is
    refused (and with the tries the other way round a third is let in, or a give-back too early).
    An attempt needs the parcel at its destination (a link and a forward), and the two hubs'
    tries must differ where the failures reach the smaller."""

    def _tries(self, record: dict[str, Any]) -> int:
        return int(self.hubs[record["origin"]]["tries"])


class NewRateRefund(Courier):
    """K3, 9 calls: signup s, addHub a, addHub b (tries 1), link a->b, send (a to b), forward,
    attempt (not home), setRate a, giveBack: the refund is the origin's rate now, not the fee the
    sender paid, so once the rate has changed the refund (and the credit) ``giveBack`` answers is
    wrong. Giving back needs every try at the destination failed (a link, a forward, an attempt),
    and the rate changed after the send."""

    def _refund(self, record: dict[str, Any]) -> int:
        return int(self.hubs[record["origin"]]["rate"])


class ShelfAsStack(Courier):
    """K4, 8 calls: signup s, addHub a, addHub b, link a->b, send p (a to b), send q (a to b),
    forward p, hub a: a parcel leaving a shelf is taken off its end (``pop``), as if the newest one
    always left first, so forwarding the older of two parcels leaves the wrong one on the shelf
    the hub answers. It needs two parcels on one shelf and the first to leave before the second; a
    delivery or give-back of a parcel not last on its shelf takes longer (another parcel must
    reach the destination after it)."""

    def _take_off(self, hub: str, parcel: str) -> None:
        self.hubs[hub]["shelf"].pop()
        self.stock[hub] -= 1


class ReturnKeepsRoom(Courier):
    """K5, 10 calls: signup s, addHub a, addHub b (cap 1, tries 1), link a->b, send p (a to b),
    forward p, attempt p (not home), giveBack p, link b->a, send q (b to a): a parcel given back
    is taken off the shelf by hand, and the hub's count of parcels is not lowered, so its shelf is
    full one parcel early: the send is refused with b's shelf empty. The count is read only by the
    room checks, so it shows only at the limit: the giving back (six calls after signing up and two
    hubs), then one more parcel into b (a link out of it and a send, or a send at a and a
    forward)."""

    def _off_the_network(self, hub: str, parcel: str) -> None:
        self.hubs[hub]["shelf"].remove(parcel)


class AttemptsCarriedOver(Courier):
    """K6, 10 calls: signup s, addHub a, addHub b (tries 1), link a->b, send p (a to b), forward,
    attempt (not home), giveBack, resend p, parcel p: a parcel sent again keeps the failed
    attempts of its first round, so ``parcel`` answers them (and at the destination it would have
    no tries left). The lifecycle walked twice: sent, failed at the destination, given back, sent
    again; then one read."""

    def _new_round(self, parcel: str) -> None:
        pass


class ResendUnrouted(Courier):
    """K7, 10 calls: signup s, addHub a, addHub b (tries 1), link a->b, send p (a to b), forward,
    attempt (not home), giveBack, link a (no ``to``: unlinked), resend p (no ``to``): sending a
    parcel again to the same destination skips the route check (it passed when the parcel was
    first sent), so it is let go from a hub no longer linked. Both optional fields absent: a
    resend with ``to`` is checked, and the links must change between the send and the resend (an
    unlink is the one-call way)."""

    def _routed(self, origin: str, target: str, new_destination: bool) -> bool:
        return not new_destination or super()._routed(origin, target, new_destination)


class ResendNotCounted(Courier):
    """K8, 11 calls: signup s, addHub a (cap 3), addHub b (tries 1), link a->b, send p (a to b),
    forward, attempt (not home), giveBack, resend p, send q, send r: a parcel sent again is not
    counted among its sender's parcels on the way (it was counted when first sent, and given back
    since), so a third parcel is let go where two are the limit. The count is read only by the
    limit checks (``customer`` counts the parcels), so it shows only at the limit: a parcel given
    back and sent again (nine calls), then two sends, the second over the limit."""

    def _back_on_the_way(self, sender: str) -> None:
        pass
