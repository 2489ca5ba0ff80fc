"""A depot (``depot.yaml``), correct, and one class per planted bug, 8 to 10 calls deep.

A third held-out set (session 8), written after the fuzzer's last change and never tuned on:
a bin fed by two distinct sources, a global move limit off by one at its seventh move, a third
unlock that does not unlock, a fourth open order that makes ``ship`` mark the wrong order, a bin
removed and added again that keeps its move count, and a capacity check skipped once four
orders exist. Each needs distinct keys, a counter at a limit, or one resource used again and
again; the minimal length is in each docstring."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Depot:
    def __init__(self) -> None:
        self.bins: dict[str, dict[str, Any]] = {}
        self.orders: dict[int, dict[str, Any]] = {}
        self.next_order = 1
        self.moves = 0
        self.removed: dict[str, dict[str, Any]] = {}

    def _bin(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.bins, 404)
        return self.bins[name]

    def _qty(self, qty: Any) -> None:
        need(is_int(qty) and 1 <= qty <= 5, 422)

    def _order(self, id: Any) -> dict[str, Any]:
        need(is_int(id), 422)
        need(id in self.orders, 404)
        return self.orders[id]

    def addBin(self, name: Any, cap: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        need(is_int(cap) and 1 <= cap <= 5, 422)
        need(name not in self.bins, 409)
        self.bins[name] = self._new_bin(name, cap)

    def _new_bin(self, name: str, cap: int) -> dict[str, Any]:
        return {"qty": 0, "cap": cap, "locked": False, "moves": 0, "unlocks": 0, "fed_by": None}

    def removeBin(self, name: Any) -> None:
        bin = self._bin(name)
        need(not bin["locked"], 423)
        need(bin["qty"] == 0, 409)
        self.removed[name] = self.bins.pop(name)

    def stock(self, name: Any, qty: Any) -> None:
        bin = self._bin(name)
        self._qty(qty)
        need(not bin["locked"], 423)
        need(bin["qty"] + qty <= bin["cap"], 409)
        bin["qty"] += qty

    def _under_limit(self) -> bool:
        return self.moves < 6

    def _receive(self, dst: dict[str, Any], src_name: str, qty: int) -> None:
        dst["qty"] += qty
        dst["fed_by"] = src_name

    def move(self, src: Any, dst: Any, qty: Any) -> None:
        source = self._bin(src)
        dest = self._bin(dst)
        self._qty(qty)
        need(src != dst, 409)
        need(not source["locked"], 423)
        need(not dest["locked"], 423)
        need(source["qty"] >= qty, 409)
        need(dest["qty"] + qty <= dest["cap"], 409)
        need(self._under_limit(), 429)
        source["qty"] -= qty
        self._receive(dest, src, qty)
        source["moves"] += 1
        self.moves += 1

    def lock(self, name: Any) -> None:
        bin = self._bin(name)
        need(not bin["locked"], 409)
        bin["locked"] = True

    def unlock(self, name: Any) -> None:
        bin = self._bin(name)
        need(bin["locked"], 409)
        bin["unlocks"] += 1
        self._unlock(bin)

    def _unlock(self, bin: dict[str, Any]) -> None:
        bin["locked"] = False

    def order(self, name: Any, qty: Any) -> dict[str, Any]:
        bin = self._bin(name)
        self._qty(qty)
        need(not bin["locked"], 423)
        need(bin["qty"] >= qty, 409)
        id = self.next_order
        self.orders[id] = {"bin": name, "qty": qty, "shipped": False}
        self.next_order += 1
        bin["qty"] -= qty
        return {"id": id}

    def _to_ship(self, id: int) -> dict[str, Any]:
        return self.orders[id]

    def ship(self, id: Any) -> None:
        order = self._order(id)
        need(not order["shipped"], 409)
        self._to_ship(id)["shipped"] = True

    def _fits(self, bin: dict[str, Any], qty: int) -> bool:
        return bin["qty"] + qty <= bin["cap"]

    def cancel(self, id: Any) -> None:
        order = self._order(id)
        need(not order["shipped"], 409)
        need(order["bin"] in self.bins, 410)
        bin = self.bins[order["bin"]]
        need(self._fits(bin, order["qty"]), 409)
        bin["qty"] += order["qty"]
        del self.orders[id]

    def peek(self, name: Any) -> dict[str, Any]:
        bin = self._bin(name)
        return {"qty": bin["qty"], "cap": bin["cap"], "locked": bin["locked"], "moves": bin["moves"]}

    def status(self, id: Any) -> dict[str, Any]:
        order = self._order(id)
        return {"shipped": order["shipped"], "qty": order["qty"]}


class TwoSources(Depot):
    """D1, 8 calls: addBin x3, stock, move a->b, move a->c, move b->c, peek c: a bin fed by a
    second distinct source keeps only the latest quantity moved in."""

    def _receive(self, dst: dict[str, Any], src_name: str, qty: int) -> None:
        if dst["fed_by"] is not None and dst["fed_by"] != src_name:
            dst["qty"] = qty
            dst["fed_by"] = src_name
            return
        super()._receive(dst, src_name, qty)


class SeventhMove(Depot):
    """D2, 10 calls: addBin x2, stock, move x7 back and forth: the limit of six moves is off by
    one, so the seventh is accepted."""

    def _under_limit(self) -> bool:
        return self.moves <= 6


class ThirdUnlock(Depot):
    """D3, 8 calls: addBin, (lock, unlock) x3, peek: the third unlock of one bin leaves it locked."""

    def _unlock(self, bin: dict[str, Any]) -> None:
        if bin["unlocks"] != 3:
            super()._unlock(bin)


class FourthOrder(Depot):
    """D4, 8 calls: addBin, stock, order x4, ship #4, status #4 (or ship #4 again): with four open
    orders on one bin, ``ship`` marks the bin's oldest open order instead of the one named."""

    def _to_ship(self, id: int) -> dict[str, Any]:
        bin = self.orders[id]["bin"]
        open_orders = [k for k, o in sorted(self.orders.items()) if o["bin"] == bin and not o["shipped"]]
        if len(open_orders) >= 4:
            return self.orders[open_orders[0]]
        return super()._to_ship(id)


class ReAdded(Depot):
    """D5, 8 calls: addBin x2, stock, move a->b x2, removeBin a, addBin a, peek a: a bin removed
    after two moves out of it and added again under its old name keeps its move count."""

    def _new_bin(self, name: str, cap: int) -> dict[str, Any]:
        fresh = super()._new_bin(name, cap)
        old = self.removed.get(name)
        if old is not None and old["moves"] >= 2:
            fresh["moves"] = old["moves"]
        return fresh


class FullCancel(Depot):
    """D6, 8 calls: addBin, stock, order x4, stock to the brim, cancel: once four orders exist,
    a cancel puts the goods back without the capacity check."""

    def _fits(self, bin: dict[str, Any], qty: int) -> bool:
        return self.next_order > 4 or super()._fits(bin, qty)
