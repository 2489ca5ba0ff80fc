"""`envfactory verify` and `envfactory demo`: reports (text, json, junit), exit codes, bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.cli import main
from envfactory.report import write_junit, write_text
from envfactory.trajectory import read_trajectories
from envfactory.verification import RESULT_FIELDS, verify

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"
BANK_TRAJ = ROOT / "examples" / "bank" / "trajectories.jsonl"
PETS = ROOT / "examples" / "petstore" / "petstore.yaml"

GOOD = {
    "id": "good",
    "steps": [
        {"tool": "open", "input": {"account": "AA01", "owner": "ann"}},
        {"tool": "deposit", "input": {"account": "AA01", "amount": 5}, "output": {"balance": 5}},
    ],
}
BAD = {"id": "bad", "steps": [{"tool": "close", "input": {"account": "AA01"}}]}


def _write(path: Path, *lines: Any) -> Path:
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    return path


def _run(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process through ``main`` (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        main(list(args))
    except SystemExit as stop:
        code = int(stop.code or 0)
    finally:
        sys.stdout, sys.stderr = old_out, old_err
    return code, out.getvalue(), err.getvalue()


def test_json_document_shape_and_exit_1(tmp_path: Path) -> None:
    code, out, _ = _run("verify", str(BANK), str(_write(tmp_path / "t.jsonl", GOOD, BAD)), "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"results", "summary"}
    good, bad = doc["results"]
    assert list(good) == list(RESULT_FIELDS) and list(bad) == list(RESULT_FIELDS)
    assert (good["verdict"], good["step"], good["kind"]) == ("valid", None, None)
    assert (bad["verdict"], bad["step"], bad["kind"], bad["operation"]) == (
        "invalid",
        0,
        "precondition",
        "close",
    )
    summary = doc["summary"]
    assert (summary["total"], summary["valid"], summary["invalid"], summary["steps"]) == (2, 1, 1, 3)
    assert summary["kinds"] == {"precondition": 1}
    assert summary["seconds"] >= 0


def test_exit_0_when_all_valid(tmp_path: Path) -> None:
    code, out, _ = _run("verify", str(BANK), str(_write(tmp_path / "t.jsonl", GOOD)))
    assert code == 0
    assert "VALID" in out and "good" in out


def test_exit_3_on_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    hole = {"id": "h", "steps": [{"tool": "open", "input": {"account": {"$var": "a"}, "owner": "x"}}]}
    code, out, _ = _run(
        "verify", str(BANK), str(_write(tmp_path / "t.jsonl", GOOD, hole)), "--format", "json"
    )
    assert code == 3
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["valid", "unknown"]


def test_bad_contract_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("envfactory: '1'\nstate: [\n")
    code, _out, err = _run("verify", str(bad), str(BANK_TRAJ))
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "c.yaml" in err and "Traceback" not in err


def test_hostile_input_is_reported_and_the_rest_verified(tmp_path: Path) -> None:
    evil = "\x1b[31mred\x07\x9b"
    path = tmp_path / "t.jsonl"
    with open(path, "wb") as handle:
        handle.write(json.dumps(GOOD).encode() + b"\n")
        handle.write(b'{"id": "x", "steps": [}\n')  # bad JSON
        handle.write(json.dumps({"id": evil, "steps": [{"tool": evil, "input": {}}]}).encode() + b"\n")
        handle.write(b'{"id": "nan", "steps": [{"tool": "open", "input": {"a": NaN}}]}\n')
        handle.write(
            b'{"id": "deep", "steps": [{"tool": "open", "input": ' + b"[" * 200 + b"]" * 200 + b"}]}\n"
        )
        handle.write(b'{"id": "bytes\xff", "steps": []}\n')
        handle.write(b'{"id": "big", "steps": [{"tool": "open", "input": {"n": 1' + b"0" * 5000 + b"}}]}\n")
        handle.write(b'{"id": "s", "steps": "nope"}\n')
        handle.write(json.dumps(BAD).encode() + b"\n")
    code, out, err = _run("verify", str(BANK), str(path), "--format", "json")
    assert code == 2
    results = json.loads(out)["results"]
    assert [r["verdict"] for r in results] == [
        "valid",
        "unreadable",
        "invalid",
        "unreadable",
        "unreadable",
        "unreadable",
        "unreadable",
        "unreadable",
        "invalid",
    ]
    assert results[2]["kind"] == "unknown_tool" and results[2]["id"] == evil
    lines = err.strip().splitlines()
    assert len(lines) == 6
    assert all(str(path) in line for line in lines)
    assert f"{path}:2:" in lines[0]
    # text output escapes control characters
    code, out, err = _run("verify", str(BANK), str(path))
    assert code == 2
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b[31mred" in out


def test_huge_line_is_one_error(tmp_path: Path) -> None:
    from envfactory.trajectory import MAX_LINE_BYTES

    path = tmp_path / "t.jsonl"
    with open(path, "wb") as handle:
        handle.write(b'{"id": "huge", "steps": [], "meta": {"x": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}}\n')
        handle.write(json.dumps(GOOD).encode() + b"\n")
    code, out, err = _run("verify", str(BANK), str(path), "--format", "json")
    assert code == 2
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["unreadable", "valid"]
    assert f"{path}:1" in err and "longer than" in err


def test_missing_file_does_not_stop_the_others(tmp_path: Path) -> None:
    good = _write(tmp_path / "t.jsonl", GOOD)
    code, out, err = _run("verify", str(BANK), str(tmp_path / "nope.jsonl"), str(good), "--format", "json")
    assert code == 2
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["unreadable", "valid"]
    assert "nope.jsonl" in err


def test_junit_report(tmp_path: Path) -> None:
    evil = {"id": "ev\x01il <&>", "steps": [{"tool": "nope\x02", "input": {}}]}
    traj = _write(tmp_path / "t.jsonl", GOOD, BAD, evil, "{broken")
    report = tmp_path / "junit.xml"
    code, _, _ = _run("verify", str(BANK), str(traj), "--format", "junit", "-o", str(report))
    assert code == 2
    root = ET.parse(report).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases][:3] == ["good", "bad", "ev\\x01il <&>"]
    assert suite.get("tests") == "4" and suite.get("failures") == "2" and suite.get("errors") == "1"
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("type") == "precondition"
    assert cases[3].find("error") is not None


def test_text_report_without_terminal_has_no_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    buffer = io.StringIO()
    target = Console(file=buffer, width=400)
    summary = write_text(verify(envfactory.load(BANK), read_trajectories(BANK_TRAJ)), target)
    text = buffer.getvalue()
    assert summary.counts["invalid"] == 5
    assert "verification summary" in text and "overdraft" in text and "set at step 2" in text
    assert "verifying" not in text


def test_junit_writer_counts_unknown_as_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    buffer = io.StringIO()
    summary = write_junit(verify(envfactory.load(BANK), read_trajectories(BANK_TRAJ)), buffer)
    suite = ET.fromstring(buffer.getvalue()).find("testsuite")
    assert suite is not None
    assert suite.get("skipped") == str(summary.counts["unknown"]) == "2"


def test_input_format_openai_chat(tmp_path: Path) -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "open an account"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "open",
                            "arguments": json.dumps({"account": "AA01", "owner": "a"}),
                        },
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "close", "arguments": json.dumps({"account": "ZZ01"})},
                    },
                ],
            },
        ]
    }
    path = _write(tmp_path / "chat.jsonl", chat)
    code, out, _ = _run("verify", str(BANK), str(path), "--input-format", "openai-chat", "--format", "json")
    assert code == 1
    (result,) = json.loads(out)["results"]
    assert (result["kind"], result["step"], result["operation"]) == ("precondition", 1, "close")


def test_demo_runs_and_exits_0() -> None:
    code, out, _ = _run("demo", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    names = {Path(e["contract"]).name for e in doc["examples"]}
    assert {"bank.yaml", "petstore.yaml", "tickets.yaml"} <= names
    assert doc["summary"]["valid"] >= 3 and doc["summary"]["invalid"] >= 10
    code, out, _ = _run("demo")
    assert code == 0
    assert "broken (on purpose)" in out and "overdraft" in out


def test_entry_point_subprocess(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("envfactory")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "envfactory.cli"]
    traj = _write(tmp_path / "t.jsonl", GOOD, BAD)
    done = subprocess.run(
        [*cmd, "verify", str(BANK), str(traj), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert [r["verdict"] for r in json.loads(done.stdout)["results"]] == ["valid", "invalid"]


def test_text_report_on_a_terminal_shows_progress_and_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from envfactory.trajectory import Step, Trajectory

    monkeypatch.setitem(sys.modules, "envfactory.solver.feasibility", None)
    buffer = io.StringIO()
    target = Console(file=buffer, width=200, force_terminal=True)
    assert target.is_terminal
    evil = Trajectory("\x1b]0;pwned\x07[bold]x[/bold]", (Step("\x1b[2J", {}),))
    summary = write_text(verify(envfactory.load(BANK), [evil, *read_trajectories(BANK_TRAJ)]), target)
    text = buffer.getvalue()
    assert summary.total == 9 and summary.counts["unknown"] == 2
    assert "verifying" in text
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x07" not in text
    assert "\\x1b]0;pwned\\x07[bold]x[/bold]" in text  # markup in names is shown, not applied
