"""BFCL's executable API classes as python: targets, contracts from their function docs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target

pytest.importorskip("bfcl_eval")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fuzz_bfcl_adapter as adapter  # noqa: E402


def test_function_docs_load_for_every_adapted_class():
    for name in adapter.CLASSES:
        contract = envfactory.load(adapter.func_doc(name))
        obj = adapter.make(name)
        missing = [op for op in contract.operations if not callable(getattr(obj, op, None))]
        assert not missing, (name, missing)


def test_file_system_crashes_on_null_names():
    contract = envfactory.load(adapter.func_doc("gorilla_file_system"))
    target = open_target(f"python:{HERE / 'fuzz_bfcl_adapter.py'}:gorilla_file_system", contract)
    summary = fuzz(contract, target, seed=0, max_examples=60, steps=10, engine="fast", kinds=["crash"])
    assert summary.findings, "the file system crashes on a null name"
    assert all(f.kind == "crash" for f in summary.findings)
    shortest = min(summary.findings, key=lambda f: len(f.steps))
    assert len(shortest.steps) == 1
    assert None in shortest.steps[0].input.values() or "TypeError" in shortest.message


TOOLS = [
    {
        "name": "mean",
        "description": "The mean of a list of numbers.",
        "parameters": {
            "type": "dict",
            "properties": {"numbers": {"type": "array", "items": {"type": "float"}}},
            "required": ["numbers"],
        },
    },
    {
        "name": "card_balance",
        "description": "A card's balance; needs the access token a login returns.",
        "parameters": {
            "type": "dict",
            "properties": {"access_token": {"type": "string"}, "card_id": {"type": "string"}},
            "required": ["access_token", "card_id"],
        },
    },
]
IMPL = """\
class Wallet:
    def __init__(self):
        self.token = None  # no login yet: the token is unset
        self.cards = {"c1": 10}

    def mean(self, numbers):
        if not numbers:
            return {"error": "empty"}
        try:
            return {"result": sum(numbers) / len(numbers)}
        except TypeError:
            return {"error": "numbers only"}

    def card_balance(self, access_token, card_id):
        if access_token != self.token:
            return {"error": "invalid token"}
        if card_id not in self.cards:
            return {"error": "no such card"}
        return {"balance": self.cards[card_id]}
"""


@pytest.mark.timeout(600)
def test_a_tool_list_meets_the_edges_of_json_types(tmp_path: Path) -> None:
    """Two BFCL-style bugs a tool list's input handling has (issue 15 item 8): a list that mixes an
    integer past every float with a float (``sum`` overflows), and a token that is unset on both
    sides (null == null) before an unhashable id; the first needs JSON's number edges, the
    second a call with every field null but one."""
    import json

    doc = tmp_path / "wallet.json"
    doc.write_text("".join(json.dumps(tool) + "\n" for tool in TOOLS), encoding="utf-8")
    (tmp_path / "wallet_impl.py").write_text(IMPL, encoding="utf-8")
    contract = envfactory.load(doc)
    target = open_target(f"python:{tmp_path / 'wallet_impl.py'}:Wallet", contract, isolate=False)
    summary = fuzz(contract, target, seed=0, max_examples=300, steps=10, kinds=["crash"])
    messages = {f.operation: f.message for f in summary.findings}
    assert "OverflowError" in messages.get("mean", ""), messages
    assert "unhashable" in messages.get("card_balance", ""), messages
