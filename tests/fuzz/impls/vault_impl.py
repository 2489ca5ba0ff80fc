"""The vault (``vault.yaml``), correct, and one whose lock forgets to reset the dial: 19 calls deep
(sixteen clicks, unlock, lock), past the reach of random search, within the solver's."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import need


class Vault:
    def __init__(self) -> None:
        self.clicks = 0
        self.open = False
        self.notes: dict[str, dict[str, Any]] = {}

    def click(self) -> None:
        need(self.clicks < 16, 409)
        self.clicks += 1

    def reset(self) -> None:
        self.clicks = 0

    def note(self, key: Any, text: Any) -> None:
        need(isinstance(key, str) and len(key) <= 4 and isinstance(text, str), 422)
        self.notes[key] = {"text": text}

    def peek(self) -> dict[str, int]:
        return {"clicks": self.clicks}

    def unlock(self) -> None:
        need(self.clicks == 16, 403)
        self.open = True

    def lock(self) -> None:
        need(self.open, 409)
        self.open = False
        self._dial()

    def _dial(self) -> None:
        self.clicks = 0


class StickyDial(Vault):
    """The dial stays at 16 after a lock: the next unlock is accepted without a single click."""

    def _dial(self) -> None:
        pass
