"""Objects that exercise each clause of the ``python:`` target protocol (bank operations)."""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    status = 409


class Protocol:
    """``open`` raises with a status, ``deposit`` returns an error dict, ``close`` crashes."""

    def open(self, account: str, owner: str) -> None:
        if account == "taken":
            raise Refused("account exists")

    def deposit(self, account: str, amount: int) -> dict[str, Any]:
        if amount > 10:
            return {"error": "too much", "status": 423}
        if amount > 5:
            return {"error": "odd amount"}
        return {"balance": amount}

    def close(self, account: str) -> None:
        raise ZeroDivisionError("boom")

    def balance(self, account: str) -> list[Any]:
        self.leak = [1, 2]
        return self.leak


def make() -> Protocol:
    return Protocol()
