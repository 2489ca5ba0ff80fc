"""``prove`` goes through k = 0, 1, 2, ... on one incremental unrolling for the base case and one
for the induction step, extended a step per k, as ``plan`` does (issue 17 item 5): not a new
unrolling of k steps for each k. Counted, not timed; the answers are those of the bundled tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.solver import bmc, induction

ROOT = Path(__file__).resolve().parents[2]


def test_prove_builds_two_unrollings_whatever_the_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    built: list[int] = []
    extended: list[int] = []
    init, extend = bmc.Unrolling.__init__, bmc.Unrolling.extend

    def counting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        init(self, *args, **kwargs)

    def counting_extend(self: Any) -> Any:
        extended.append(self.depth)
        return extend(self)

    monkeypatch.setattr(bmc.Unrolling, "__init__", counting_init)
    monkeypatch.setattr(bmc.Unrolling, "extend", counting_extend)
    result = induction.prove(contract, "next_id <= 100", depth=5, timeout=300)
    assert result.status == "unknown"  # true, but not 5-inductive: the bound is far away
    assert len(built) == 2
    assert len(extended) == 5 + 5  # each unrolling grew one step per k, to depth 5


def test_prove_still_finds_a_counterexample_at_its_depth() -> None:
    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    result = induction.prove(contract, "next_id <= 3", depth=4, timeout=300)
    assert result.status == "violated"
    assert result.counterexample is not None and len(result.counterexample.steps) == 3
