"""Punch cards (``punch.yaml``), correct, and one planted bug nine calls deep."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_str, need


class Punch:
    CAP = 1

    def __init__(self) -> None:
        self.cards: dict[str, dict[str, int]] = {}

    def issue(self, card: Any) -> None:
        need(is_str(card) and 1 <= len(card) <= 8, 422)
        need(card not in self.cards, 409)
        self.cards[card] = {"punches": 0, "free": 0}

    def _earned(self, record: dict[str, int]) -> bool:
        return record["punches"] == 3 and record["free"] < self.CAP

    def punch(self, card: Any) -> dict[str, int]:
        need(is_str(card), 422)
        need(card in self.cards, 404)
        record = self.cards[card]
        if self._earned(record):
            record.update(punches=0, free=record["free"] + 1)
        else:
            record["punches"] = min(record["punches"] + 1, 3)
        return {"free": record["free"]}


class FreeBeyondCap(Punch):
    """9 calls: issue a, punch a x8: the cap is not checked, so a card filled again after its
    free coffee earns a second one (four punches fill it, three more fill it again)."""

    def _earned(self, record: dict[str, int]) -> bool:
        return record["punches"] == 3
