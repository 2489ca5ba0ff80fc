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
