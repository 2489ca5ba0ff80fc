"""``bench_fuzz_cli.py --compare``: the ratios a session's closing note reports, computed on the
runs both result files hold, so that a sweep cut short on one side is not read as a loss."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_fuzz_cli  # noqa: E402


def _run(cls: str, seed: int, found: bool, *, calls: int, cpu: float, length: int = 8) -> dict[str, Any]:
    return {
        "set": "cloud",
        "cls": cls,
        "seed": seed,
        "found": found,
        "lengths": [length] if found else [],
        "first_cpu": 3.0 if found else None,
        "calls": calls,
        "cpu": cpu,
        "minimal": 0 if cls == "Cloud" else 8,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_compare_reports_the_ratios_on_the_runs_both_files_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = [
        _run("RoleAsAdded", 1, True, calls=1000, cpu=30.0),
        _run("RoleAsAdded", 2, False, calls=1000, cpu=30.0),
        _run("MoveStartUnbilled", 1, True, calls=2000, cpu=40.0, length=9),
        _run("Cloud", 1, False, calls=500, cpu=20.0),
        _run("RestartOldQuota", 3, True, calls=9999, cpu=99.0),  # only in the old file
    ]
    new = [
        _run("RoleAsAdded", 1, True, calls=1500, cpu=33.0),
        _run("RoleAsAdded", 2, True, calls=1500, cpu=33.0),
        _run("MoveStartUnbilled", 1, False, calls=1000, cpu=44.0),
        _run("Cloud", 1, False, calls=500, cpu=20.0),
    ]
    bench_fuzz_cli.compare(_write(tmp_path / "old.jsonl", old), _write(tmp_path / "new.jsonl", new))
    out = capsys.readouterr().out
    assert (
        "4 runs in common (3 on planted bugs), new against old: found 2/3 against 2/3, "
        "at the minimal length 2 against 1, calls per run 1.00x, CPU per process 1.08x"
    ) in out
    assert "  gained cloud RoleAsAdded seed 2" in out
    assert "  lost   cloud MoveStartUnbilled seed 1" in out
    assert "RestartOldQuota seed 3" not in out


def test_compare_says_so_when_the_files_share_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path / "old.jsonl", [_run("RoleAsAdded", 1, True, calls=10, cpu=1.0)])
    new = _write(tmp_path / "new.jsonl", [_run("RoleAsAdded", 2, True, calls=10, cpu=1.0)])
    bench_fuzz_cli.compare(old, new)
    assert "no run in common" in capsys.readouterr().out
