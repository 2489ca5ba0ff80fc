"""`envfactory graph`, `plan` and `prove` on the command line: files written, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _graph_contracts import COUNTER, DOOR, EXAMPLES, write_contract

from envfactory.cli import main
from envfactory.trajectory import read_trajectories
from envfactory.verification import verify

BANK = str(EXAMPLES / "bank" / "bank.yaml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_graph_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "graph", BANK, "-o", str(tmp_path / "bank.json"))
    assert code == 0 and "2 abstract states" in out
    data = json.loads((tmp_path / "bank.json").read_text())
    assert sum(1 for n in data["nodes"] if n["initial"]) == 1
    code, _, _ = run(capsys, "graph", BANK, "-o", str(tmp_path / "bank.dot"))
    assert code == 0 and (tmp_path / "bank.dot").read_text().startswith("digraph")
    code, _, err = run(capsys, "graph", BANK, "-o", str(tmp_path / "bank.txt"))
    assert code == 2 and "bank.txt" in err and err.count("\n") == 1


def test_plan_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "plan.jsonl"
    code, out, _ = run(capsys, "plan", BANK, "--goal", "rich", "-o", str(out_file))
    assert code == 0 and "plan of 2 steps" in out
    (traj,) = list(read_trajectories(out_file))
    assert not isinstance(traj, Exception)
    contract = __import__("envfactory").load(BANK)
    assert next(iter(verify(contract, [traj]))).verdict == "valid"
    code, out, _ = run(capsys, "plan", BANK, "--goal", "transfers > 0", "--max-depth", "2")
    assert code == 1 and "no plan up to depth 2" in out and "any depth" not in out
    code, out, _ = run(capsys, "plan", BANK, "--goal", "transfers < 0", "--max-depth", "3")
    assert code == 1 and "nor at any depth" in out
    code, _, err = run(capsys, "plan", BANK, "--goal", "nonsense >")
    assert code == 2 and "<goal>:1:" in err


def test_prove_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "prove", BANK)
    assert code == 0 and "proved (k = 1" in out
    counter = write_contract(tmp_path, "counter", COUNTER)
    cex = tmp_path / "cex.jsonl"
    code, out, _ = run(capsys, "prove", counter.path, "-o", str(cex))
    assert code == 1 and "count >= 0" in out
    (traj,) = list(read_trajectories(cex))
    assert not isinstance(traj, Exception)
    assert [s.tool for s in traj.steps] == ["inc", "dec"]
    code, out, _ = run(capsys, "prove", counter.path, "--invariant", "count < 100", "--depth", "2")
    assert code == 3 and "unknown up to depth 2" in out


def test_check_reports_reachability_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    door = write_contract(tmp_path, "door", DOOR)
    code, out, _ = run(capsys, "check", door.path, "--format", "json")
    assert code == 0
    findings = json.loads(out)["findings"]
    never = [f for f in findings if f["kind"] == "never_enabled"]
    assert [f["operation"] for f in never] == ["repair"]
    assert any(f["kind"] == "unreachable_goal" and "negative" in f["message"] for f in findings)
