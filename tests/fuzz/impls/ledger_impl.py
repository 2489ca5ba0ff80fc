"""A ledger (``ledger.yaml``), correct, and one class per planted bug, 6 to 8 calls deep.

Written as a held-out set (session 7) before the fuzzer was tuned on it: a third distinct
account, a counter at exactly its limit of five, one field updated twice on one record, a key
deleted and made again, a transfer between two live accounts after several deposits, a global
limit that the target counts per account, and loans named by the ids the target assigns."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Ledger:
    def __init__(self) -> None:
        self.accounts: dict[str, dict[str, Any]] = {}
        self.loans: dict[int, dict[str, Any]] = {}
        self.next_loan = 1
        self.transfers = 0
        self.graveyard: dict[str, dict[str, Any]] = {}
        self.last: tuple[str, str] | None = None

    def _account(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.accounts, 404)
        return self.accounts[name]

    def _amount(self, amount: Any, top: int) -> None:
        need(is_int(amount) and 1 <= amount <= top, 422)

    def open(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 8, 422)
        need(name not in self.accounts, 409)
        self.accounts[name] = self._new_account(name)

    def _new_account(self, name: str) -> dict[str, Any]:
        return {"balance": 0, "deposits": 0, "frozen": False, "thaws": 0}

    def close(self, name: Any) -> None:
        account = self._account(name)
        need(account["balance"] == 0, 409)
        self.graveyard[name] = self.accounts.pop(name)

    def _may_deposit(self, account: dict[str, Any]) -> bool:
        return account["deposits"] < 5

    def deposit(self, name: Any, amount: Any) -> None:
        account = self._account(name)
        self._amount(amount, 50)
        need(not account["frozen"], 423)
        need(self._may_deposit(account), 429)
        account["balance"] += amount
        account["deposits"] += 1

    def withdraw(self, name: Any, amount: Any) -> None:
        account = self._account(name)
        self._amount(amount, 100)
        need(not account["frozen"], 423)
        need(account["balance"] >= amount, 409)
        account["balance"] -= amount

    def _covers(self, account: dict[str, Any], amount: int) -> bool:
        return account["balance"] >= amount

    def _under_limit(self, source: str) -> bool:
        return self.transfers < 4

    def _debit(self, source: str, dest: str, amount: int) -> None:
        self.accounts[source]["balance"] -= amount

    def transfer(self, source: Any, dest: Any, amount: Any) -> None:
        src = self._account(source)
        dst = self._account(dest)
        self._amount(amount, 100)
        need(source != dest, 409)
        need(not src["frozen"], 423)
        need(self._covers(src, amount), 409)
        need(self._under_limit(source), 429)
        self._debit(source, dest, amount)
        dst["balance"] += amount
        self.transfers += 1
        self.last = (source, dest)

    def freeze(self, name: Any) -> None:
        account = self._account(name)
        need(not account["frozen"], 409)
        account["frozen"] = True

    def _thaw(self, account: dict[str, Any]) -> None:
        account["frozen"] = False

    def unfreeze(self, name: Any) -> None:
        account = self._account(name)
        need(account["frozen"], 409)
        self._thaw(account)
        account["thaws"] += 1

    def lend(self, name: Any, amount: Any) -> dict[str, Any]:
        account = self._account(name)
        self._amount(amount, 100)
        need(not account["frozen"], 423)
        loan_id = self.next_loan
        self.loans[loan_id] = {"account": name, "amount": amount, "repaid": 0, "payments": 0}
        self.next_loan += 1
        account["balance"] += amount
        return {"id": loan_id}

    def _pay(self, loan: dict[str, Any], amount: int) -> None:
        loan["repaid"] += amount

    def repay(self, id: Any, amount: Any) -> None:
        need(is_int(id), 422)
        self._amount(amount, 100)
        need(id in self.loans, 404)
        loan = self.loans[id]
        need(loan["account"] in self.accounts, 410)
        need(loan["repaid"] + amount <= loan["amount"], 409)
        account = self.accounts[loan["account"]]
        need(account["balance"] >= amount, 409)
        self._pay(loan, amount)
        loan["payments"] += 1
        account["balance"] -= amount

    def info(self, name: Any) -> dict[str, Any]:
        account = self._account(name)
        return {"balance": account["balance"], "deposits": account["deposits"], "frozen": account["frozen"]}

    def stats(self) -> dict[str, Any]:
        return {"transfers": self.transfers, "accounts": len(self.accounts)}


class ChainTransfer(Ledger):
    """L1, 7 calls: open x3, deposit, transfer a->b, transfer b->c, info: passing money on to a
    third distinct account debits the first sender again."""

    def _debit(self, source: str, dest: str, amount: int) -> None:
        if self.last is not None and self.last[1] == source and dest not in self.last:
            source = self.last[0]
        super()._debit(source, dest, amount)


class FifthDeposit(Ledger):
    """L2, 7 calls: open, deposit x5, info: the account freezes itself when its deposit counter
    reaches exactly its limit of five."""

    def deposit(self, name: Any, amount: Any) -> None:
        super().deposit(name, amount)
        if self.accounts[name]["deposits"] == 5:
            self.accounts[name]["frozen"] = True


class RepayTwice(Ledger):
    """L3, 6 calls: open, deposit, lend, repay, repay, repay: a loan's second payment overwrites
    what was repaid instead of adding to it, so a third payment overpays the loan (the loan is
    named by the id the target assigned)."""

    def _pay(self, loan: dict[str, Any], amount: int) -> None:
        loan["repaid"] = amount if loan["payments"] == 1 else loan["repaid"] + amount


class Reopened(Ledger):
    """L4, 6 calls: open, deposit, withdraw, close, open, info: an account closed and opened
    again under the same name keeps its old deposit count."""

    def _new_account(self, name: str) -> dict[str, Any]:
        old = self.graveyard.get(name)
        fresh = super()._new_account(name)
        if old is not None:
            fresh["deposits"] = old["deposits"]
        return fresh


class Overdraft(Ledger):
    """L5, 6 calls: open x2, deposit x3, transfer: a source with three deposits may transfer more
    than its balance to another live account."""

    def _covers(self, account: dict[str, Any], amount: int) -> bool:
        return account["deposits"] >= 3 or super()._covers(account, amount)


class PerSourceLimit(Ledger):
    """L6, 8 calls: open x2, deposit, transfer a->b x4, transfer b->a: the limit of four transfers
    is counted per source account, so the fifth transfer goes through from the other account."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, int] = {}

    def _under_limit(self, source: str) -> bool:
        return self.sent.get(source, 0) < 4

    def _debit(self, source: str, dest: str, amount: int) -> None:
        self.sent[source] = self.sent.get(source, 0) + 1
        super()._debit(source, dest, amount)


class SecondThaw(Ledger):
    """L7, 6 calls: open, freeze, unfreeze, freeze, unfreeze, info: an account thawed once stays
    frozen when thawed a second time (one field set four times on one record)."""

    def _thaw(self, account: dict[str, Any]) -> None:
        if account["thaws"] < 1:
            super()._thaw(account)
