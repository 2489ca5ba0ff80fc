"""`envfactory fuzz` on the command line: exit codes, the -o file, reproducibility, errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from envfactory.cli import cli
from envfactory.trajectory import Trajectory, read_trajectories

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PET = str(ROOT / "examples" / "petstore" / "petstore.yaml")
BANK = str(ROOT / "examples" / "bank" / "bank.yaml")
CRASHING = f"python:{HERE / 'impls' / 'petstore_impl.py'}:CrashingStore"


def _fuzz(*args: str):
    return CliRunner().invoke(cli, ["fuzz", *args], catch_exceptions=False)


def test_finding_exits_1_and_writes_a_trajectory_file(tmp_path):
    out = tmp_path / "findings.jsonl"
    result = _fuzz(
        PET, "--target", CRASHING, "--max-examples", "40", "--engine", "fast", "-o", str(out), "--no-graph"
    )
    assert result.exit_code == 1, result.output
    assert "[crash] addPet" in result.output
    assert "reproduce: envfactory fuzz" in result.output and "--seed 0" in result.output
    trajs = list(read_trajectories(out))
    assert trajs and all(isinstance(t, Trajectory) for t in trajs)
    crash = next(t for t in trajs if t.meta and t.meta["finding"] == "crash")
    assert [s.tool for s in crash.steps] == ["login", "addPet"]
    assert crash.steps[-1].status == 500 and crash.seed == 0


def test_json_findings_carry_their_trace_as_the_trajectory_file_has_it(tmp_path):
    """A program reading ``--format json`` gets the calls of each finding, not only their count:
    the same steps the ``-o`` file holds."""
    out = tmp_path / "findings.jsonl"
    args = [PET, "--target", CRASHING, "--max-examples", "40", "--engine", "fast", "--no-graph"]
    result = _fuzz(*args, "--format", "json", "-o", str(out))
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    crash = next(f for f in findings if f["kind"] == "crash")
    assert [s["tool"] for s in crash["trace"]] == ["login", "addPet"] and crash["steps"] == 2
    written = next(t for t in read_trajectories(out) if t.meta and t.meta["finding"] == "crash")
    assert [(s["tool"], s["input"], s.get("status")) for s in crash["trace"]] == [
        (s.tool, s.input, s.status) for s in written.steps
    ]


def test_no_finding_exits_0_with_json_summary():
    result = _fuzz(BANK, "--target", "sim", "--max-examples", "20", "--steps", "10", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["findings"] == [] and doc["calls"] > 0
    assert doc["edges_total"] is not None and 0 < doc["edges_covered"] <= doc["edges_total"]
    assert set(doc["operations_covered"]) <= set(doc["operations"])


def test_same_seed_same_output():
    args = [
        PET,
        "--target",
        CRASHING,
        "--max-examples",
        "30",
        "--seed",
        "3",
        "--format",
        "json",
        "--no-graph",
        "--engine",
        "fast",
    ]
    first, second = json.loads(_fuzz(*args).output), json.loads(_fuzz(*args).output)
    for doc in (first, second):
        doc.pop("seconds")
        doc.pop("first_finding_seconds")
    assert first == second


def test_same_seed_same_output_in_processes_that_hash_strings_differently():
    """Each process hashes strings with its own PYTHONHASHSEED, so a set of strings iterates in
    another order in each: the constants Hypothesis draws from the code under test were such a set
    (drawn by index), and one seed fuzzed with other names in another process."""
    import os
    import subprocess
    import sys

    target = f"python:{HERE / 'impls' / 'petstore_impl.py'}:UseAfterDeleteStore"
    command = [sys.executable, "-m", "envfactory", "fuzz", PET, "--target", target, "--max-examples", "40"]
    command += ["--seed", "0", "--format", "json", "--no-graph", "--engine", "fast"]
    docs = []
    for hash_seed in ("1", "2"):
        run = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            timeout=600,
        )
        doc = json.loads(run.stdout)
        doc.pop("seconds")
        doc.pop("first_finding_seconds")
        docs.append(doc)
    assert docs[0] == docs[1]


def test_usage_errors_exit_2(tmp_path):
    from envfactory.cli import main

    def code(*args: str) -> int:
        try:
            main(["fuzz", *args])
        except SystemExit as exit:
            return int(exit.code or 0)
        return 0

    assert code(BANK, "--target", "nonsense") == 2
    assert code(BANK, "--target", "sim", "--faults") == 2
    assert code(str(tmp_path / "missing.yaml"), "--target", "sim") == 2
    assert code(BANK, "--target", "python:no_such_module_abc:make") == 2


def test_database_is_off_unless_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _fuzz(BANK, "--target", "sim", "--max-examples", "5", "--no-graph").exit_code == 0
    assert not (tmp_path / ".hypothesis").exists()
    db = tmp_path / "db"
    assert (
        _fuzz(
            PET,
            "--target",
            CRASHING,
            "--max-examples",
            "40",
            "--engine",
            "fast",
            "--no-graph",
            "--database",
            str(db),
        ).exit_code
        == 1
    )
    assert db.exists()


ALWAYS_WRONG = """\
envfactory: "1"
info: {title: Always wrong, version: "1"}
state:
  n: {type: integer, default: 0}
operations:
  bump:
    input: {type: object, properties: {}, additionalProperties: false}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    effects: ['n = n + 1']
    ensures: ['output.n == n']
"""

ALWAYS_WRONG_IMPL = """\
class Wrong:
    def __init__(self):
        self.n = 0

    def bump(self):
        self.n += 1
        return {"n": self.n + 1}
"""


def test_a_target_that_answers_every_call_wrong_is_reported_not_a_crash(tmp_path):
    """After the first round reports the finding, every case of a later round meets it again and
    is rejected (a finding an earlier round reported ends its case without a failure), so
    Hypothesis ends the round as unsatisfiable: that ended the whole run with an internal error
    and no report. The round ends as one that reached its limit; the run goes on to its budget
    (a short one: a later round starts within a second of the first finding, and a slower
    machine that gives it fewer rounds answers the same)."""
    (tmp_path / "always.yaml").write_text(ALWAYS_WRONG, encoding="utf-8")
    (tmp_path / "always_impl.py").write_text(ALWAYS_WRONG_IMPL, encoding="utf-8")
    target = f"python:{tmp_path / 'always_impl.py'}:Wrong"
    result = _fuzz(
        str(tmp_path / "always.yaml"), "--target", target, "--time-budget", "4", "--format", "json"
    )
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.output)["findings"]
    assert finding["kind"] == "postcondition" and finding["steps"] == 1
