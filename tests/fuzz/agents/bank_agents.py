"""Agents for examples/bank under the fuzz agent protocol: one that recovers, and two that don't."""

from __future__ import annotations

from typing import Any

RETRIES = 5


def _retry(env: Any, tool: str, **args: Any) -> Any:
    """Retry a call through time-outs, dropped connections and 5xx (faulted calls did not happen)."""
    for _ in range(RETRIES):
        try:
            return env.call(tool, args)
        except env.ToolError as err:
            if err.status not in (0, 503, 504):
                raise
    raise RuntimeError(f"{tool} kept failing")


def _balance(env: Any, account: str) -> int:
    while True:
        out = _retry(env, "balance", account=account)
        if isinstance(out, dict) and isinstance(out.get("balance"), int):
            return int(out["balance"])


def robust(env: Any) -> None:
    """Reaches its goal through faults and odd responses: retries, and checks what it reads."""
    goal = (env.task or {}).get("goal")
    _retry(env, "open", account="AB01", owner="ann")
    if goal == "two_accounts":
        _retry(env, "open", account="AB02", owner="bob")
    elif goal == "rich":
        while _balance(env, "AB01") < 500:
            _retry(env, "deposit", account="AB01", amount=500)


def naive(env: Any) -> None:
    """Trusts every answer: a fault or a malformed body crashes it."""
    env.open(account="AB01", owner="ann")
    if (env.task or {}).get("goal") == "rich":
        out = env.deposit(account="AB01", amount=500)
        assert out["balance"] >= 500
    else:
        env.open(account="AB02", owner="bob")


def careless(env: Any) -> None:
    """Misuses the API: deposits into an account it never opened."""
    env.open(account="AB01", owner="ann")
    env.deposit(account="AB01", amount=500)
    env.deposit(account="ZZ99", amount=1)
    env.open(account="AB02", owner="bob")
