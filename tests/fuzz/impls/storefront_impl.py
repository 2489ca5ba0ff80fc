"""A small store (``storefront.yaml``), correct, and one class per planted bug, 5 to 9 calls deep.

A twelfth held-out set, written without looking at the fuzzer's code. Its shapes: order numbers
the store gives and answers (the calls after a ``placeOrder`` must use the number it answered);
two limits on open orders, one per customer (two unpaid) and one for the whole store (three
placed or paid), the second reached only with two customers or a paid order among the three; stock
taken when an order is placed and given back when it is cancelled or returned; loyalty points
earned by a payment (one for every five paid), redeemed on a later order, and given and taken back
exactly by a cancel or a return, which is refused once the points it earned are spent. The minimal
length is in each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: its count of open orders
(beside the orders, which it does not count again), each customer's count of unpaid orders, each
customer's basket (what they last ordered, which an order's line is copied from), and each order's
line (its product and quantity, read back by a cancel or a return).
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

WALLET = 20
UNPAID, OPEN = 2, 3
POINT_PER = 5  # a payment earns a point for every five paid


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 4


class Storefront:
    def __init__(self) -> None:
        self.customers: dict[str, dict[str, Any]] = {}
        self.products: dict[str, dict[str, Any]] = {}
        self.orders: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        self.open = 0
        self.unpaid: dict[str, int] = {}
        self.baskets: dict[str, dict[str, Any]] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _customer(self, name: Any) -> dict[str, Any]:
        need(name in self.customers, 404)
        return self.customers[name]

    def _product(self, sku: Any) -> dict[str, Any]:
        need(sku in self.products, 404)
        return self.products[sku]

    def _order(self, order: Any) -> dict[str, Any]:
        need(is_int(order), 422)
        need(order in self.orders, 404)
        return self.orders[order]

    # -- customers and products ------------------------------------------------------------------

    def registerCustomer(self, name: Any, wallet: Any = ABSENT) -> None:
        need(_name(name), 422)
        money = option(wallet, 0, 30, WALLET)
        need(name not in self.customers, 409)
        self.customers[name] = {"wallet": money, "points": 0}
        self.unpaid[name] = 0

    def addProduct(self, sku: Any, price: Any, stock: Any) -> None:
        need(_name(sku) and is_int(price) and 1 <= price <= 9 and is_int(stock) and 0 <= stock <= 5, 422)
        need(sku not in self.products, 409)
        self.products[sku] = {"price": price, "stock": stock}

    def restock(self, sku: Any, qty: Any) -> dict[str, Any]:
        need(is_str(sku) and is_int(qty) and 1 <= qty <= 5, 422)
        product = self._product(sku)
        product["stock"] += qty
        return {"stock": product["stock"]}

    # -- placing and paying ----------------------------------------------------------------------

    def placeOrder(self, customer: Any, sku: Any, qty: Any, points: Any = ABSENT) -> dict[str, Any]:
        need(is_str(customer) and is_str(sku) and is_int(qty) and 1 <= qty <= 3, 422)
        used = option(points, 1, 9, 0)
        account = self._customer(customer)
        product = self._product(sku)
        cost = product["price"] * qty
        need(used <= cost, 422)
        need(product["stock"] >= qty, 409)
        key = self._cap_key(customer, sku)
        need(self.unpaid.get(key, 0) < UNPAID, 429)
        need(self.open < OPEN, 423)
        if used:
            need(self._enough_points(account, used), 402)
        order = self._new_id(customer)
        basket = self.baskets.setdefault(customer, {})
        basket.update(sku=sku, qty=qty)
        self.orders[order] = {
            "customer": customer,
            "line": self._line(basket),
            "total": cost - used,
            "used": used,
            "earned": 0,
            "status": "placed",
        }
        self.unpaid[key] = self.unpaid.get(key, 0) + 1
        self.open += 1
        product["stock"] -= qty
        account["points"] -= used
        return {"id": order, "total": cost - used}

    def _cap_key(self, customer: str, sku: str) -> str:
        """Whose unpaid orders a new one is counted with: its customer's."""
        return customer

    def _enough_points(self, account: dict[str, Any], used: int) -> bool:
        return bool(account["points"] >= used)

    def _new_id(self, customer: str) -> int:
        """The store numbers its orders in one sequence, 1, 2, 3..."""
        order = self.next_id
        self.next_id += 1
        return order

    def _line(self, basket: dict[str, Any]) -> dict[str, Any]:
        """An order's line is a copy of the basket it was placed from."""
        return dict(basket)

    def _unpaid_done(self, record: dict[str, Any]) -> None:
        key = self._cap_key(record["customer"], record["line"]["sku"])
        self.unpaid[key] -= 1

    def payOrder(self, id: Any) -> dict[str, Any]:
        record = self._order(id)
        need(record["status"] == "placed", 409)
        account = self.customers[record["customer"]]
        need(account["wallet"] >= record["total"], 402)
        earned = record["total"] // POINT_PER
        self._unpaid_done(record)
        record.update(status="paid", earned=earned)
        account["wallet"] -= record["total"]
        account["points"] += earned
        return {"wallet": account["wallet"], "points": account["points"]}

    def shipOrder(self, id: Any) -> None:
        record = self._order(id)
        need(record["status"] == "paid", 409)
        record["status"] = "shipped"
        self.open -= 1

    # -- taking orders back ----------------------------------------------------------------------

    def _restock_line(self, record: dict[str, Any]) -> None:
        line = record["line"]
        self.products[line["sku"]]["stock"] += line["qty"]

    def _covers(self, account: dict[str, Any], record: dict[str, Any]) -> bool:
        """A cancel or a return takes back the points the order's payment earned: the customer
        must still have them."""
        return bool(account["points"] >= record["earned"])

    def cancelOrder(self, id: Any) -> dict[str, Any]:
        record = self._order(id)
        was = record["status"]
        need(was in ("placed", "paid"), 409)
        account = self.customers[record["customer"]]
        need(self._covers(account, record), 403)
        if was == "placed":
            self._unpaid_done(record)
        else:
            account["wallet"] += self._refund(record)
        self._close(was)
        self._restock_line(record)
        account["points"] += record["used"] - record["earned"]
        record["status"] = "cancelled"
        return {"wallet": account["wallet"], "points": account["points"]}

    def _refund(self, record: dict[str, Any]) -> int:
        """A paid order cancelled gives back what was paid for it."""
        return int(record["total"])

    def _close(self, was: str) -> None:
        """An order cancelled is no longer open, paid or not."""
        self.open -= 1

    def returnOrder(self, id: Any) -> dict[str, Any]:
        record = self._order(id)
        need(record["status"] == "shipped", 409)
        account = self.customers[record["customer"]]
        need(self._covers(account, record), 403)
        self._restock_line(record)
        account["wallet"] += record["total"]
        account["points"] += self._returned_points(record)
        record["status"] = "returned"
        return {"wallet": account["wallet"], "points": account["points"]}

    def _returned_points(self, record: dict[str, Any]) -> int:
        """The points redeemed on a returned order come back; the ones it earned go."""
        return int(record["used"] - record["earned"])


class IdsPerCustomer(Storefront):
    """S1, 5 calls: registerCustomer c, registerCustomer d, addProduct x, placeOrder (c), placeOrder
    (d): the store numbers each customer's orders from 1 (one more than the orders that customer
    has), so d's first order is answered number 1, which is c's. Two customers, each with an
    order: one customer's orders are numbered right (1, 2, 3...), and so are everyone's until a
    second customer orders."""

    def _new_id(self, customer: str) -> int:
        return 1 + sum(r["customer"] == customer for r in self.orders.values())


class ExactPointsRefused(Storefront):
    """S2, 5 calls: registerCustomer c, addProduct x (price 5), placeOrder (1 of x: 5), payOrder
    (earns 1 point), placeOrder (redeeming 1 point): redeeming points needs more than the points
    redeemed, not as many, so a customer cannot spend every point they have. The customer needs a
    point, which only a payment of at least five earns (a place and a pay), and the next order
    redeems exactly all of them."""

    def _enough_points(self, account: dict[str, Any], used: int) -> bool:
        return bool(account["points"] > used)


class CapKeyedBySku(Storefront):
    """S3, 6 calls: registerCustomer c, addProduct x, addProduct y, placeOrder (c, x), placeOrder
    (c, y), placeOrder (c, x): unpaid orders are counted per product, not per customer, so a
    customer with two unpaid orders of two products is let place a third (and the other way
    round, two customers' orders of one product count together: once c has two, d's first is
    refused; the same length). The limit of two is reached exactly, by one customer over two
    products or two customers over one."""

    def _cap_key(self, customer: str, sku: str) -> str:
        return sku


class SharedBasket(Storefront):
    """S4, 6 calls: registerCustomer c, addProduct x (stock 3), placeOrder (1 of x), placeOrder (2 of
    x), cancelOrder 1, restock x: an order's line is the customer's basket itself, not a copy, so
    the customer's next order rewrites it and cancelling the first order puts back what the second
    took (two, not one): the stock answered next is one too many. Two orders of one customer with
    different lines (another quantity or another product), the older one cancelled (or returned,
    longer), then the stock read (a restock, or an order that the stock should refuse)."""

    def _line(self, basket: dict[str, Any]) -> dict[str, Any]:
        return basket


class ListPriceRefund(Storefront):
    """S5, 7 calls: registerCustomer c, addProduct x (price 5), placeOrder (1 of x), payOrder (1
    point), placeOrder (1 of x, redeeming the point: 4), payOrder 2, cancelOrder 2: a paid order
    cancelled refunds its price (the product's price times the quantity), not what was paid, so an
    order that redeemed points refunds them in money as well: the wallet answered is one too
    much. It needs points (a payment), an order redeeming them, paid, then cancelled."""

    def _refund(self, record: dict[str, Any]) -> int:
        line = record["line"]
        return int(self.products[line["sku"]]["price"] * line["qty"])


class ReturnKeepsUsedPoints(Storefront):
    """S6, 8 calls: registerCustomer c, addProduct x (price 5), placeOrder (1 of x), payOrder (1
    point), placeOrder (1 of x, redeeming the point), payOrder 2, shipOrder 2, returnOrder 2: a
    returned order takes back the points it earned but does not give back the ones redeemed on it
    (a cancel does), so the points answered are one too few. The whole lifecycle of an order that
    redeemed points: a payment to earn them, the order placed, paid, shipped and returned."""

    def _returned_points(self, record: dict[str, Any]) -> int:
        return -int(record["earned"])


class RefundBeforeCheck(Storefront):
    """S7, 8 calls: registerCustomer c, addProduct x (price 5), placeOrder (2 of x: 10), payOrder
    (2 points), placeOrder (2 of x, redeeming 2: 8), payOrder 2 (1 point), placeOrder (1 of x,
    redeeming 1), cancelOrder 2: whether the customer still has the points an order earned is
    asked after giving back the ones redeemed on it, so order 2 is cancelled though the point it
    earned is spent (the contract refuses: 403). It needs an order that both redeemed points and
    earned one (a payment before it, to have points: four calls after a customer and a product),
    then the point it earned gone (redeemed on a later order, or taken back by cancelling the
    order that earned the ones it redeemed), and the cancel."""

    def _covers(self, account: dict[str, Any], record: dict[str, Any]) -> bool:
        return bool(account["points"] + record["used"] >= record["earned"])


class PaidCancelKeepsOpen(Storefront):
    """S8, 9 calls: registerCustomer c, registerCustomer d, addProduct x, placeOrder (c), payOrder
    1, cancelOrder 1, placeOrder (c), placeOrder (c), placeOrder (d): a paid order cancelled is not
    taken off the store's count of open orders (only an unpaid one is), so the store is full one
    order early: the third open order is refused (423). The count is read only by the limit
    check, so it shows only there: a paid order cancelled (a place, a pay and a cancel), and an
    order placed when two others are open (three places, before or after the cancel). The three
    cannot all be one customer's and unpaid (the limit of two refuses the third in both stores
    alike), so a second customer or a payment among them makes nine with the first customer and
    the product."""

    def _close(self, was: str) -> None:
        if was == "placed":
            self.open -= 1
