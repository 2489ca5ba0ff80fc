"""Text output reads as a person writes: counted words agree with their number, and a negated
membership keeps its parentheses as in the JSON output (issue 19 item 10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envfactory._output import plural

ROOT = Path(__file__).resolve().parent.parent

ONE_OP = """\
envfactory: "1"
info: {title: One, version: "1"}
state:
  seen: {collection: {key: {type: string}, value: {type: boolean}}}
operations:
  add:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: ["not (input.k in seen)"]
    effects: ["seen[input.k] = true"]
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_plural_counts() -> None:
    assert plural(1, "step") == "1 step"
    assert plural(0, "step") == "0 steps"
    assert plural(2, "trajectory", "trajectories") == "2 trajectories"
    assert plural(12000, "call") == "12,000 calls"


def test_check_counts_one_operation_and_prints_not_in_with_parentheses(tmp_path: Path) -> None:
    contract = tmp_path / "one.yaml"
    contract.write_text(ONE_OP, encoding="utf-8")
    done = _cli("check", str(contract))
    assert done.returncode == 0, done.stderr
    assert "1 operation," in done.stdout and "1 operations" not in done.stdout
    assert "1 state variable," in done.stdout
    assert "requires not (input.k in seen)" in done.stdout


def test_plan_of_one_step_says_step(tmp_path: Path) -> None:
    contract = tmp_path / "one.yaml"
    contract.write_text(ONE_OP + "goals: {some: len(seen) == 1}\n", encoding="utf-8")
    done = _cli("plan", str(contract), "--goal", "some", "-o", str(tmp_path / "plan.jsonl"))
    assert done.returncode == 0, done.stderr
    text = done.stdout + done.stderr
    assert "plan of 1 step " in text and "step(s)" not in text
