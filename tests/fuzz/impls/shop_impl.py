"""A shop (``shop.yaml``), correct, and one class per planted bug, 4 to 7 calls deep; order ids are
assigned by the target, so shrinking must follow them."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Shop:
    def __init__(self) -> None:
        self.next_order = 1
        self.open_orders = 0
        self.products: dict[str, dict[str, int]] = {}
        self.orders: dict[int, dict[str, Any]] = {}

    def addProduct(self, sku: Any, price: Any) -> None:
        need(is_str(sku) and 1 <= len(sku) <= 8 and is_int(price) and 1 <= price <= 1000, 422)
        need(sku not in self.products, 409)
        self.products[sku] = {"stock": 0, "price": price}

    def restock(self, sku: Any, qty: Any) -> None:
        need(is_str(sku) and is_int(qty) and 1 <= qty <= 10, 422)
        need(sku in self.products, 404)
        self.products[sku]["stock"] += qty

    def _in_stock(self, product: dict[str, int], qty: int) -> bool:
        return product["stock"] >= qty

    def _take(self, product: dict[str, int], qty: int) -> None:
        product["stock"] -= qty

    def place(self, sku: Any, qty: Any) -> dict[str, int]:
        need(is_str(sku) and is_int(qty) and 1 <= qty <= 5, 422)
        need(sku in self.products, 404)
        product = self.products[sku]
        need(self._in_stock(product, qty), 409)
        need(self.open_orders < 3, 429)
        oid = self.next_order
        self.orders[oid] = {"sku": sku, "qty": qty, "status": "placed"}
        self.next_order += 1
        self._take(product, qty)
        self.open_orders += 1
        return {"id": oid}

    def _order(self, id: Any) -> dict[str, Any]:
        need(is_int(id), 422)
        need(id in self.orders, 404)
        return self.orders[id]

    def pay(self, id: Any) -> None:
        order = self._order(id)
        need(order["status"] == "placed", 409)
        order["status"] = "paid"
        self._paid()

    def _paid(self) -> None:
        pass

    def ship(self, id: Any) -> None:
        order = self._order(id)
        need(order["status"] == "paid", 409)
        order["status"] = "shipped"
        self.open_orders -= 1

    def _cancellable(self, order: dict[str, Any]) -> bool:
        return order["status"] in ("placed", "paid")

    def cancel(self, id: Any) -> None:
        order = self._order(id)
        need(self._cancellable(order), 409)
        was = order["status"]
        order["status"] = "cancelled"
        self.products[order["sku"]]["stock"] += order["qty"]
        if was != "shipped":
            self.open_orders -= 1
        self._cancelled()

    def _cancelled(self) -> None:
        pass


class CancelShipped(Shop):
    """S1, 6 calls: addProduct, restock, place, pay, ship, cancel: a shipped order cancels."""

    def _cancellable(self, order: dict[str, Any]) -> bool:
        return order["status"] != "cancelled"


class LastUnitKept(Shop):
    """S2, 4 calls: addProduct, restock 2, place 2 (the last units are not taken), place 1."""

    def _take(self, product: dict[str, int], qty: int) -> None:
        if product["stock"] != qty:
            product["stock"] -= qty


class PayFreesSlot(Shop):
    """S3, 7 calls: addProduct, restock, place x3, pay, place: paying frees an open-order slot."""

    def _paid(self) -> None:
        self.open_orders -= 1

    def ship(self, id: Any) -> None:
        order = self._order(id)
        need(order["status"] == "paid", 409)
        order["status"] = "shipped"


class IdReused(Shop):
    """S4, 6 calls: addProduct, restock, place, place, cancel, place: a cancel gives back an id."""

    def _cancelled(self) -> None:
        self.next_order -= 1
