"""``contracts.memo.per_contract``: work read off a contract is done once while it is asked again."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.contracts.memo import per_contract
from envfactory.contracts.model import Contract

LIBRARY = Path(__file__).resolve().parents[1] / "fuzz" / "impls" / "library.yaml"


def test_the_work_is_done_once_per_contract_for_the_last_ones_asked() -> None:
    calls: list[int] = []

    @per_contract(keep=1)
    def operations(contract: Contract) -> tuple[str, ...]:
        calls.append(id(contract))
        return tuple(contract.operations)

    first, second = envfactory.load(LIBRARY), envfactory.load(LIBRARY)
    assert operations(first) is operations(first)
    assert len(calls) == 1
    # an equal contract loaded again is another contract: its own work, and the first forgotten
    assert operations(second) == operations(first)
    assert calls == [id(first), id(second), id(first)]
