"""Inventory and order fulfilment (``warehouse.yaml``), correct, and one class per planted bug, 6 to 9
calls deep.

A twenty-fourth held-out set, written without looking at the fuzzer's code. Its shapes: products
under a free name, each with an optional limit of units per customer on open orders; bins with a
capacity in units; staff registered under a free name; stock received into a bin as lots numbered
by the service, each with a quantity and an expiry day, and a clock that moves on by an optional
number of days; orders numbered by the service with one or two lines (a bounded list of distinct
products and quantities), each line reserved whole from one lot, first to expire first, then the
lowest numbered; a reservation that lapses once the clock passes its hold day; picking, packing
and shipping as a status machine, and a cancel that frees units in the lots they came from; two
open orders at most in the whole store; free units moved between two distinct bins within the
receiving one's capacity, as a new lot; a write-off that needs two approvals by distinct staff,
the second taking the units, which must still be free then. The minimal length is in each
docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each lot's units held by
open orders and each bin's units (beside the lots), the store's count of open orders (beside the
orders), and a status ``lapsed`` set when the clock moves past an order's hold day (the contract
reads a lapse off the day).
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

LIMIT = 2  # a product's units per customer on open orders, without `limit`
OPEN = 2  # open orders in the whole store
DAYS = 1  # the clock moves by this without `days`
HOLD = 1  # days a reservation is held after the day it is placed
OPEN_STATUSES = ("reserved", "picked", "packed")


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _number(value: Any, low: int, high: int) -> bool:
    return is_int(value) and low <= value <= high


def _line(value: Any) -> bool:
    return (
        type(value) is dict
        and set(value) == {"product", "quantity"}
        and _name(value["product"])
        and _number(value["quantity"], 1, 3)
    )


class Warehouse:
    def __init__(self) -> None:
        self.today = 0
        self.products: dict[str, dict[str, int]] = {}  # limit
        self.bins: dict[str, dict[str, int]] = {}  # capacity, units
        self.staff: set[str] = set()
        self.lots: dict[int, dict[str, Any]] = {}  # product, bin, quantity, held, expires
        self.next_lot = 1
        self.orders: dict[int, dict[str, Any]] = {}  # customer, status, hold, lines
        self.next_order = 1
        self.open = 0  # orders reserved (not lapsed), picked or packed
        self.writeoffs: dict[int, dict[str, Any]] = {}  # lot, quantity, approvers, done
        self.next_writeoff = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _lot(self, lot: Any) -> dict[str, Any]:
        need(lot in self.lots, 404)
        return self.lots[lot]

    def _order(self, order: Any) -> dict[str, Any]:
        need(order in self.orders, 404)
        return self.orders[order]

    @staticmethod
    def _free(record: dict[str, Any]) -> int:
        free: int = record["quantity"] - record["held"]
        return free

    # -- products, bins, staff, stock ------------------------------------------------------------

    def addProduct(self, product: Any, limit: Any = ABSENT) -> None:
        need(_name(product), 422)
        most = option(limit, 1, 3, LIMIT)
        need(product not in self.products, 409)
        self.products[product] = {"limit": most}

    def addBin(self, bin: Any, capacity: Any) -> None:
        need(_name(bin) and _number(capacity, 1, 4), 422)
        need(bin not in self.bins, 409)
        self.bins[bin] = {"capacity": capacity, "units": 0}

    def addStaff(self, staff: Any) -> None:
        need(_name(staff), 422)
        need(staff not in self.staff, 409)
        self.staff.add(staff)

    def receive(self, product: Any, bin: Any, quantity: Any, shelf: Any) -> dict[str, Any]:
        need(_name(product) and _name(bin), 422)
        need(_number(quantity, 1, 3) and _number(shelf, 1, 3), 422)
        need(product in self.products, 404)
        need(bin in self.bins, 404)
        place = self.bins[bin]
        need(place["units"] + quantity <= place["capacity"], 413)
        return {"lot": self._new_lot(product, bin, quantity, self.today + shelf)}

    def _new_lot(self, product: str, bin: str, quantity: int, expires: int) -> int:
        number = self.next_lot
        self.next_lot += 1
        self.lots[number] = {
            "product": product,
            "bin": bin,
            "quantity": quantity,
            "held": 0,
            "expires": expires,
        }
        self.bins[bin]["units"] += quantity
        return number

    def lotInfo(self, lot: Any) -> dict[str, Any]:
        need(is_int(lot), 422)
        record = self._lot(lot)
        return {
            "product": record["product"],
            "bin": record["bin"],
            "quantity": record["quantity"],
            "free": self._free(record),
            "expires": record["expires"],
        }

    # -- the clock -------------------------------------------------------------------------------

    def advance(self, days: Any = ABSENT) -> dict[str, Any]:
        self.today += option(days, 1, 3, DAYS)
        for order in self.orders.values():
            if order["status"] == "reserved" and self._lapsed(order):
                order["status"] = "lapsed"
                for line in order["lines"]:
                    self.lots[line["lot"]]["held"] -= line["quantity"]
                self.open -= 1
        return {"today": self.today}

    def _lapsed(self, order: dict[str, Any]) -> bool:
        """Lapsed once the clock has passed the hold day."""
        lapsed: bool = self.today > order["hold"]
        return lapsed

    # -- orders ----------------------------------------------------------------------------------

    def placeOrder(self, customer: Any, lines: Any) -> dict[str, Any]:
        need(_name(customer), 422)
        need(type(lines) is list and 1 <= len(lines) <= 2 and all(_line(x) for x in lines), 422)
        need(all(x["product"] in self.products for x in lines), 404)
        need(len(lines) == 1 or lines[0]["product"] != lines[1]["product"], 422)
        need(self.open < OPEN, 429)
        for x in lines:
            mine = self._units(customer, x["product"])
            need(mine + x["quantity"] <= self.products[x["product"]]["limit"], 403)
        chosen = [self._choose(x["product"], x["quantity"]) for x in lines]
        need(all(lot is not None for lot in chosen), 409)
        taken = []
        for x, lot in zip(lines, chosen, strict=True):
            self.lots[lot]["held"] += x["quantity"]
            taken.append({"product": x["product"], "quantity": x["quantity"], "lot": lot})
        number = self.next_order
        self.next_order += 1
        self.orders[number] = {
            "customer": customer,
            "status": "reserved",
            "hold": self.today + HOLD,
            "lines": taken,
        }
        self.open += 1
        return {"order": number}

    def _units(self, customer: str, product: str) -> int:
        """The customer's units of the product on open orders, every line of each."""
        return sum(
            x["quantity"]
            for order in self.orders.values()
            if order["customer"] == customer and order["status"] in OPEN_STATUSES
            for x in order["lines"]
            if x["product"] == product
        )

    def _choose(self, product: str, quantity: int) -> int | None:
        """The lot a line is reserved from: of the lots not expired with enough units free, the
        first to expire, then the lowest numbered."""
        fits = [
            (record["expires"], number)
            for number, record in self.lots.items()
            if record["product"] == product
            and record["expires"] > self.today
            and self._free(record) >= quantity
        ]
        return min(fits)[1] if fits else None

    def pick(self, order: Any) -> None:
        need(is_int(order), 422)
        record = self._order(order)
        need(record["status"] != "lapsed", 410)
        need(record["status"] == "reserved", 409)
        record["status"] = "picked"

    def pack(self, order: Any) -> None:
        need(is_int(order), 422)
        record = self._order(order)
        need(record["status"] == "picked", 409)
        record["status"] = "packed"

    def ship(self, order: Any) -> None:
        need(is_int(order), 422)
        record = self._order(order)
        need(record["status"] == "packed", 409)
        for line in record["lines"]:
            lot = self.lots[line["lot"]]
            lot["quantity"] -= line["quantity"]
            lot["held"] -= line["quantity"]
            self.bins[lot["bin"]]["units"] -= line["quantity"]
        record["status"] = "shipped"
        self.open -= 1

    def cancel(self, order: Any) -> None:
        need(is_int(order), 422)
        record = self._order(order)
        need(record["status"] in OPEN_STATUSES, 409)
        self._give_back(record)
        self._close(record)
        record["status"] = "canceled"

    def _give_back(self, record: dict[str, Any]) -> None:
        """Each line's units free again in the lot it was reserved from."""
        for line in record["lines"]:
            self.lots[line["lot"]]["held"] -= line["quantity"]

    def _close(self, record: dict[str, Any]) -> None:
        """An open order fewer in the store, whatever its status was."""
        self.open -= 1

    # -- moves and write-offs --------------------------------------------------------------------

    def move(self, lot: Any, bin: Any, quantity: Any) -> dict[str, Any]:
        need(is_int(lot) and _name(bin) and _number(quantity, 1, 3), 422)
        record = self._lot(lot)
        need(bin in self.bins, 404)
        need(record["bin"] != bin, 409)
        need(quantity <= self._free(record), 412)
        target = self.bins[bin]
        need(target["units"] + quantity <= target["capacity"], 413)
        self._take_out(record, quantity)
        return {"lot": self._new_lot(record["product"], bin, quantity, record["expires"])}

    def _take_out(self, record: dict[str, Any], quantity: int) -> None:
        """Units out of a lot, and out of its bin."""
        record["quantity"] -= quantity
        self.bins[record["bin"]]["units"] -= quantity

    def requestWriteOff(self, lot: Any, quantity: Any, staff: Any) -> dict[str, Any]:
        need(is_int(lot) and _number(quantity, 1, 3) and _name(staff), 422)
        record = self._lot(lot)
        need(staff in self.staff, 404)
        need(quantity <= self._free(record), 412)
        number = self.next_writeoff
        self.next_writeoff += 1
        self.writeoffs[number] = {"lot": lot, "quantity": quantity, "approvers": [], "done": False}
        return {"writeoff": number}

    def approveWriteOff(self, writeoff: Any, staff: Any) -> dict[str, Any]:
        need(is_int(writeoff) and _name(staff), 422)
        need(writeoff in self.writeoffs, 404)
        record = self.writeoffs[writeoff]
        need(staff in self.staff, 404)
        need(not record["done"], 409)
        need(not self._approved(record, staff), 409)
        lot = self.lots[record["lot"]]
        second = len(record["approvers"]) == 1
        need(not second or record["quantity"] <= self._writable(lot), 412)
        record["approvers"].append(staff)
        if second:
            self._take_out(lot, record["quantity"])
            record["done"] = True
        return {"done": record["done"]}

    @staticmethod
    def _approved(record: dict[str, Any], staff: str) -> bool:
        """Whether this member of the staff approved the write-off already."""
        return staff in record["approvers"]

    def _writable(self, lot: dict[str, Any]) -> int:
        """The units a write-off may take from a lot: the free ones."""
        return self._free(lot)


class FifoByLotNumber(Warehouse):
    """B1, 6 calls: addProduct p, addBin a, receive (p, a, 1, shelf 3), receive (p, a, 1, shelf
    1), placeOrder (c, p 1), lotInfo 1: a line is reserved from the lowest numbered lot that fits,
    whatever it expires, so lot 1 (expiring on day 3) is held, not lot 2 (day 1), and lot 1 reads
    no unit free. It needs two lots of one product expiring in the other order than their
    numbers (a product, a bin, two receipts), an order, and a read (the order answers its number
    only)."""

    def _choose(self, product: str, quantity: int) -> int | None:
        fits = [
            number
            for number, record in self.lots.items()
            if record["product"] == product
            and record["expires"] > self.today
            and self._free(record) >= quantity
        ]
        return min(fits) if fits else None


class LapseOneDayLate(Warehouse):
    """B2, 6 calls: addProduct p, addBin a, receive (p, a, 1, shelf 3), placeOrder (c, p 1),
    advance (days 2), pick 1: a reservation lapses a day after the clock passes its hold day, so
    on day 2 an order placed on day 0 (held to day 1) is picked, not refused as lapsed (410). It
    needs an order (a product, a bin, a receipt), the clock moved on two days at once (or twice),
    and a call that sees the lapse (a pick, a cancel, another order, a read of the lot)."""

    def _lapsed(self, order: dict[str, Any]) -> bool:
        lapsed: bool = self.today > order["hold"] + 1
        return lapsed


class MoveKeepsGivingCount(Warehouse):
    """B3, 6 calls: addProduct p, addBin (a, 2), addBin (b, 2), receive (p, a, 2, shelf 1), move (1,
    b, 1), receive (p, a, 1, shelf 1): a move counts the units into the receiving bin but leaves
    them counted in the giving one, so bin a, holding one unit, refuses a receipt of one more as
    over its capacity (413). It needs two bins, a lot (a product, a receipt), the move, and a
    receipt (or a move) into the giving bin."""

    def _take_out(self, record: dict[str, Any], quantity: int) -> None:
        record["quantity"] -= quantity


class SameApproverTwice(Warehouse):
    """B4, 7 calls: addStaff s, addProduct p, addBin a, receive (p, a, 1, shelf 1), requestWriteOff
    (1, 1, s), approveWriteOff (1, s), approveWriteOff (1, s): a write-off takes a second approval
    by the one who approved it first, so one person writes the units off alone (refused, 409). It
    needs someone of the staff, a lot (a product, a bin, a receipt), the request and both
    approvals."""

    @staticmethod
    def _approved(record: dict[str, Any], staff: str) -> bool:
        return False


class LimitCountsFirstLineOnly(Warehouse):
    """B5, 7 calls: addProduct p, addProduct q, addBin (a, 4), receive (p, a, 1, shelf 1), receive
    (q, a, 3, shelf 1), placeOrder (c, p 1 and q 2), placeOrder (c, q 1): a customer's units on
    open orders are counted on each order's first line only, so with two units of q on the second
    line of an open order the customer orders a third (refused, 403; there is stock for it). It
    needs a two-line order (two products, a lot of each), and another order of the second
    line's product."""

    def _units(self, customer: str, product: str) -> int:
        return sum(
            order["lines"][0]["quantity"]
            for order in self.orders.values()
            if order["customer"] == customer
            and order["status"] in OPEN_STATUSES
            and order["lines"][0]["product"] == product
        )


class CancelKeepsOpenSlot(Warehouse):
    """B6, 8 calls: addProduct p, addBin a, receive (p, a, 2, shelf 3), placeOrder (c, p 1),
    placeOrder (d, p 1), pick 1, cancel 1, placeOrder (e, p 1): a cancel gives the store's slot of
    open orders back only for an order still reserved, so with one open order left a third is
    refused (429). It needs the two open orders (a product, a bin, a receipt of two units, two
    orders), one of them picked and canceled, and another order."""

    def _close(self, record: dict[str, Any]) -> None:
        if record["status"] == "reserved":
            self.open -= 1


class CancelGivesBackToFirstLine(Warehouse):
    """B7, 8 calls: addProduct p, addProduct q, addBin (a, 2), receive (p, a, 1, shelf 1), receive
    (q, a, 1, shelf 1), placeOrder (c, p 1 and q 1), cancel 1, lotInfo 2: a cancel frees every
    line's units in the first line's lot, so lot 2 (of q) reads none free, not one (and lot 1 two
    free of one). It needs a two-line order (two products, a lot of each), its cancel, and a call
    that sees the units free (a read, an order, a move or a write-off)."""

    def _give_back(self, record: dict[str, Any]) -> None:
        first = record["lines"][0]["lot"]
        for line in record["lines"]:
            self.lots[first]["held"] -= line["quantity"]


class WriteOffIgnoresHolds(Warehouse):
    """B8, 9 calls: addStaff s, addStaff t, addProduct p, addBin a, receive (p, a, 1, shelf 1),
    requestWriteOff (1, 1, s), approveWriteOff (1, s), placeOrder (c, p 1), approveWriteOff (1,
    t): the second approval checks the units against the lot's quantity, not its free units, so
    it writes off a unit an order holds (refused, 412). It needs two of the staff, a lot, the
    request (while the unit is free), a first approval, an order holding the unit, and the second
    approval."""

    def _writable(self, lot: dict[str, Any]) -> int:
        quantity: int = lot["quantity"]
        return quantity
