"""What ``envfactory generate`` writes for a published document, ``envfactory verify`` accepts,
each in a fresh process as a user runs them. A large document's schema validators compile lazily,
so the first validation of a ``verify`` run happened inside a generated checker, which runs with
no builtins; jsonschema_rs, which looks its type objects up on its first validation, then refused
every int and bool ("Unsupported type: 'int'") and every trajectory came out invalid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOX = ROOT / "tests" / "realworld" / "corpus" / "box-openapi.json"


def _envfactory(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory", *args], capture_output=True, text=True, check=False, timeout=600
    )


@pytest.mark.timeout(900)
def test_generated_runs_of_a_published_document_verify_valid_in_a_fresh_process(tmp_path: Path) -> None:
    out = tmp_path / "box.jsonl"
    made = _envfactory("generate", str(BOX), "-n", "3", "--seed", "0", "-o", str(out))
    assert made.returncode == 0, made.stderr
    checked = _envfactory("verify", str(BOX), str(out), "--format", "json")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    results = json.loads(checked.stdout)["results"]
    assert len(results) == 3 and {r["verdict"] for r in results} == {"valid"}


def test_a_first_validation_from_code_without_builtins_still_reads_ints_and_bools() -> None:
    code = (
        "from envfactory.contracts._validate import SchemaValidator\n"
        "v = SchemaValidator({'type': 'object', 'properties': {'n': {'type': 'integer'}, "
        "'b': {'type': 'boolean'}}}, lazy=True)\n"
        "ns = {'__builtins__': {}}\n"
        "exec('def f(t, x):\\n    return t(x)\\n', ns)\n"
        "print(ns['f'](v._validator.is_valid, {'n': 1, 'b': True}), v.is_valid({'n': 'x'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
