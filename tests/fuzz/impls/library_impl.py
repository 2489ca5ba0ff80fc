"""A lending library (``library.yaml``), correct, and one class per planted bug, 4 to 7 calls deep."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_str, need


class Library:
    LIMIT = 2

    def __init__(self) -> None:
        self.members: dict[str, int] = {}
        self.books: dict[str, dict[str, Any]] = {}

    def join(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 20, 422)
        need(name not in self.members, 409)
        self.members[name] = 0

    def addBook(self, isbn: Any, title: Any) -> None:
        need(is_str(isbn) and 1 <= len(isbn) <= 13 and is_str(title), 422)
        need(isbn not in self.books, 409)
        self.books[isbn] = {"title": title, "holder": None}

    def _check(self, name: Any, isbn: Any) -> dict[str, Any]:
        need(is_str(name) and is_str(isbn), 422)
        need(name in self.members, 404)
        need(isbn in self.books, 404)
        return self.books[isbn]

    def _may_borrow(self, name: str) -> bool:
        return self.members[name] < self.LIMIT

    def borrow(self, name: Any, isbn: Any) -> None:
        book = self._check(name, isbn)
        need(book["holder"] is None, 409)
        need(self._may_borrow(name), 409)
        book["holder"] = name
        self.members[name] += 1

    def _owns(self, book: dict[str, Any], name: str) -> bool:
        return book["holder"] == name

    def _returned(self, name: str) -> None:
        self.members[name] -= 1

    def giveBack(self, name: Any, isbn: Any) -> None:
        book = self._check(name, isbn)
        need(self._owns(book, name), 409)
        holder = book["holder"]
        book["holder"] = None
        self._returned(holder)

    def leave(self, name: Any) -> None:
        need(is_str(name), 422)
        need(name in self.members, 404)
        need(self._may_leave(name), 409)
        del self.members[name]

    def _may_leave(self, name: str) -> bool:
        return self.members[name] == 0

    def onLoan(self) -> dict[str, int]:
        return {"count": sum(self.members.values())}


class ThirdBook(Library):
    """L1, 7 calls: join, addBook x3, borrow x3: the limit is checked with <=."""

    def _may_borrow(self, name: str) -> bool:
        return self.members[name] <= self.LIMIT


class AnyoneReturns(Library):
    """L2, 5 calls: join A, join B, addBook, borrow A, giveBack B: any member may return it."""

    def _owns(self, book: dict[str, Any], name: str) -> bool:
        return book["holder"] is not None


class LeaveWithBooks(Library):
    """L3, 4 calls: join, addBook, borrow, leave: leaving does not check the loans."""

    def _may_leave(self, name: str) -> bool:
        return True


class StuckAtLimit(Library):
    """L4, 7 calls: join, addBook x2, borrow x2, giveBack, borrow: a return at the limit is not
    counted, so the member stays at the limit and a valid borrow is refused."""

    def _returned(self, name: str) -> None:
        if self.members[name] < self.LIMIT:
            self.members[name] -= 1
