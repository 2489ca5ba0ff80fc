"""One explainer: ``verify`` and the simulator's own rejections (what ``fuzz`` and ``replay`` show)
name the same state locations with the same values; ``verify`` adds which step wrote each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import envfactory
from envfactory.contracts.semantics import Machine

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"
CALLS = [
    ("open", {"account": "AA01", "owner": "ann"}),
    ("open", {"account": "BB02", "owner": "bob"}),
    ("deposit", {"account": "AA01", "amount": 50}),
    ("transfer", {"source": "AA01", "target": "BB02", "amount": 80}),
]


def test_verify_and_the_simulator_explain_a_failure_with_the_same_facts(tmp_path: Path) -> None:
    contract = envfactory.load(BANK)
    machine = Machine(contract)
    state = machine.initial_state()
    for tool, value in CALLS[:-1]:
        state = machine.apply(state, contract.operations[tool], value)
    failure = machine.check_requires(state, contract.operations["transfer"], CALLS[-1][1])
    assert failure is not None
    simulated = failure.message
    assert "accounts['AA01'].balance is 50" in simulated and "input.amount is 80" in simulated
    assert "accounts is {" not in simulated  # the location, not the whole collection

    path = tmp_path / "t.jsonl"
    steps = [{"tool": tool, "input": value} for tool, value in CALLS]
    path.write_text(json.dumps({"id": "overdraft", "steps": steps}) + "\n", encoding="utf-8")
    (result,) = envfactory.verify(contract, envfactory.read_trajectories(path))
    assert result.verdict == "invalid" and result.kind == "precondition"
    verified = result.message.removeprefix("step 3: ")
    # the same sentence once the provenance (", set at step 2", ", its initial value") is taken out
    assert re.sub(r", (set|deleted|changed) at step \d+|, its initial value", "", verified) == simulated
    assert "accounts['AA01'].balance is 50, set at step 2" in verified


def test_a_negated_membership_prints_with_its_parentheses() -> None:
    contract = envfactory.load(BANK)
    from envfactory.contracts.printer import to_source

    (clause,) = contract.operations["open"].requires
    assert to_source(clause.expr) == "not (input.account in accounts)"
