"""Work done once per contract, kept for the contracts asked last.

A ``Contract`` is immutable, so what is read off it (the simulator's compiled checks, the fuzzer's
walks of every clause) holds for as long as the contract does. The cache is keyed by the
contract's id and keeps the contract itself, so an id is never reused while its entry stands.
Imports nothing of envfactory but the contract model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from envfactory.contracts.model import Contract

R = TypeVar("R")


def per_contract(keep: int = 1) -> Callable[[Callable[[Contract], R]], Callable[[Contract], R]]:
    """``work(contract)`` done once per contract, for the last ``keep`` contracts asked (all
    forgotten at once when one more comes)."""

    def wrap(work: Callable[[Contract], R]) -> Callable[[Contract], R]:
        done: dict[int, tuple[Contract, R]] = {}

        def cached(contract: Contract) -> R:
            known = done.get(id(contract))
            if known is not None and known[0] is contract:
                return known[1]
            found = work(contract)
            if len(done) >= keep:
                done.clear()
            done[id(contract)] = (contract, found)
            return found

        return cached

    return wrap


__all__ = ["per_contract"]
