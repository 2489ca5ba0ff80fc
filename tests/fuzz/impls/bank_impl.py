"""A Python implementation of examples/bank, correct, plus three copies with a planted bug each."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ApiError, is_int, is_str, matches, need

ACCOUNT = r"^[A-Z]{2}[0-9]{2,6}$"


class Bank:
    """Exactly the contract: schema checks first (422), then the requires in order."""

    max_deposit = 1_000_000

    def __init__(self) -> None:
        self.accounts: dict[str, dict[str, Any]] = {}
        self.transfers = 0

    def open(self, account: Any, owner: Any) -> None:
        need(matches(ACCOUNT, account) and is_str(owner) and len(owner) >= 1, 422)
        need(account not in self.accounts, 409, "account exists")
        self.accounts[account] = {"owner": owner, "balance": 0, "frozen": False}

    def deposit(self, account: Any, amount: Any) -> dict[str, int]:
        need(is_str(account) and is_int(amount) and 0 < amount <= self.max_deposit, 422)
        need(account in self.accounts, 404, "no such account")
        need(not self.accounts[account]["frozen"], 423, "account frozen")
        self.accounts[account]["balance"] += amount
        return {"balance": self.accounts[account]["balance"]}

    def transfer(self, source: Any, target: Any, amount: Any) -> None:
        need(is_str(source) and is_str(target) and is_int(amount) and amount > 0, 422)
        need(source in self.accounts and target in self.accounts, 404, "no such account")
        need(source != target, 400, "same account")
        src, dst = self.accounts[source], self.accounts[target]
        need(not src["frozen"] and not dst["frozen"], 423, "account frozen")
        need(src["balance"] >= amount, 409, "insufficient funds")
        src["balance"] -= amount
        dst["balance"] += amount
        self.transfers += 1

    def freeze(self, account: Any) -> None:
        need(is_str(account), 422)
        need(account in self.accounts, 404)
        self.accounts[account]["frozen"] = True

    def close(self, account: Any) -> None:
        need(is_str(account), 422)
        need(account in self.accounts, 404, "no such account")
        need(self.accounts[account]["balance"] == 0, 409, "balance not zero")
        del self.accounts[account]

    def balance(self, account: Any) -> dict[str, int]:
        need(is_str(account), 422)
        need(account in self.accounts, 404, "no such account")
        return {"balance": self.accounts[account]["balance"]}


class OffByOneBank(Bank):
    """Planted bug: the deposit limit is exclusive (1,000,000 itself is refused)."""

    def deposit(self, account: Any, amount: Any) -> dict[str, int]:
        if is_int(amount) and amount >= self.max_deposit:
            raise ApiError(422, "amount too large")
        return super().deposit(account, amount)


class LostUpdateBank(Bank):
    """Planted bug: a deposit overwrites the balance instead of adding to it."""

    def deposit(self, account: Any, amount: Any) -> dict[str, int]:
        need(is_str(account) and is_int(amount) and 0 < amount <= self.max_deposit, 422)
        need(account in self.accounts, 404, "no such account")
        need(not self.accounts[account]["frozen"], 423, "account frozen")
        self.accounts[account]["balance"] = amount
        return {"balance": amount}


class UnvalidatedBank(Bank):
    """Planted bug: ``open`` does not check the account number's format."""

    def open(self, account: Any, owner: Any) -> None:
        need(is_str(account) and is_str(owner) and len(owner) >= 1, 422)
        need(account not in self.accounts, 409, "account exists")
        self.accounts[account] = {"owner": owner, "balance": 0, "frozen": False}
