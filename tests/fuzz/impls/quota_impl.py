"""API keys with per-key and account quotas (``quota.yaml``), correct, and one class per planted
bug, 3 to 8 calls deep: counters at a limit spread over distinct keys."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_str, need


class Keys:
    PER_KEY = 3
    ACCOUNT = 5

    def __init__(self) -> None:
        self.keys: dict[str, dict[str, Any]] = {}
        self.total = 0

    def createKey(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 16, 422)
        need(name not in self.keys, 409)
        self.keys[name] = {"uses": 0, "active": True}

    def _account_ok(self) -> bool:
        return self.total < self.ACCOUNT

    def _key_ok(self, key: dict[str, Any]) -> bool:
        return key["uses"] < self.PER_KEY

    def _active(self, key: dict[str, Any]) -> bool:
        return key["active"]

    def use(self, name: Any) -> dict[str, int]:
        need(is_str(name), 422)
        need(name in self.keys, 404)
        key = self.keys[name]
        need(self._active(key), 403)
        need(self._key_ok(key), 429)
        need(self._account_ok(), 429)
        key["uses"] += 1
        self.total += 1
        return {"remaining": self.ACCOUNT - self.total}

    def revoke(self, name: Any) -> None:
        need(is_str(name), 422)
        need(name in self.keys, 404)
        self.keys[name]["active"] = False

    def usage(self) -> dict[str, int]:
        return {"total": self.total}


class SpreadOverKeys(Keys):
    """Q1, 8 calls: createKey a, b; use a x3, use b x3: the account quota looks at one key only."""

    def _account_ok(self) -> bool:
        return max((k["uses"] for k in self.keys.values()), default=0) < self.ACCOUNT


class RevokedStillWorks(Keys):
    """Q2, 3 calls: createKey, revoke, use."""

    def _active(self, key: dict[str, Any]) -> bool:
        return True


class FourthUse(Keys):
    """Q3, 5 calls: createKey, use x4: the per-key quota is off by one."""

    def _key_ok(self, key: dict[str, Any]) -> bool:
        return key["uses"] <= self.PER_KEY
