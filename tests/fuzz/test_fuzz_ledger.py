"""A second held-out set of deep planted bugs (``impls/ledger.yaml``), written before the fuzzer
was tuned on it: a third distinct account, a counter at exactly its limit of five, a loan repaid
twice by the id the target assigned, an account closed and opened again under the same name, an
overdraft after three deposits, a global limit the target counts per account, a second thaw.

Runs are bounded by ``max_examples`` and a seed (same seed, same run), never by a clock, and a
planted implementation's run ends at its first finding (then shrinks it);
``bench/bench_fuzz.py`` measures the same set under ``--time-budget 20``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts

LEDGER = [
    # (planted bug, the operations that may show it, its minimal length, examples to search)
    ("ChainTransfer", {"info", "close", "withdraw", "transfer", "stats"}, 7, 1500),
    ("FifthDeposit", {"info", "deposit", "withdraw", "lend", "freeze", "unfreeze", "transfer"}, 7, 300),
    ("RepayTwice", {"repay"}, 6, 1500),
    ("Reopened", {"info", "deposit"}, 6, 1500),
    ("Overdraft", {"transfer"}, 6, 1500),
    ("PerSourceLimit", {"transfer", "stats"}, 8, 1500),
    ("SecondThaw", {"info", "lend", "deposit", "withdraw", "unfreeze", "freeze", "transfer"}, 6, 600),
]


def _run(factory: str, seed: int, max_examples: int, *, multiple: bool = False) -> list[tuple[str, str, int]]:
    contract = envfactory.load(IMPLS / "ledger.yaml")
    target = open_target(f"python:{IMPLS / 'ledger_impl.py'}:{factory}", contract)
    summary = fuzz(contract, target, seed=seed, max_examples=max_examples, multiple=multiple)
    return [(f.operation, f.kind, len(f.steps)) for f in summary.findings]


@pytest.mark.parametrize(("factory", "shows", "minimal", "examples"), LEDGER, ids=[b[0] for b in LEDGER])
def test_held_out_ledger_bugs_six_to_eight_calls_deep_are_found_and_shrunk(
    factory: str, shows: set[str], minimal: int, examples: int
) -> None:
    findings = _run(factory, seed=0, max_examples=examples)
    shown = [length for operation, _, length in findings if operation in shows]
    assert shown, findings
    assert minimal <= min(shown) <= 12  # the bound; most shrink to the minimal length


@pytest.mark.usefixtures("light_planner")
def test_the_correct_ledger_has_no_finding() -> None:
    assert _run("Ledger", seed=0, max_examples=150, multiple=True) == []
