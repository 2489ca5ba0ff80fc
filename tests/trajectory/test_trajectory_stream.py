"""A ``.json`` file holding one large trajectory is read in bounded memory (issue 20 item 7):
its steps stream from the file (``envfactory.trajectory._stream``), and read exactly as the
same document read whole does; a broken step is named with its index and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import envfactory
import envfactory.trajectory._jsonl as jsonl
from envfactory.contracts.errors import TrajectoryError
from envfactory.trajectory import StreamedSteps, Trajectory, read_trajectories
from envfactory.verification import Verifier

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["bank", "petstore", "tickets"]


def _examples() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in EXAMPLES:
        for line in (ROOT / "examples" / name / "trajectories.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                out.append((name, json.loads(line)))
    return out


def _variants(doc: dict[str, Any]) -> list[bytes]:
    """The same trajectory written in several ways a streaming reader must not trip on."""
    steps = doc["steps"]
    rest = {k: v for k, v in doc.items() if k != "steps"}
    decoy = {
        **rest,
        "meta": {"steps": [{"tool": "not a step"}], "note": 'a [bracket], a " quote and a \\ backslash'},
    }
    return [
        json.dumps(doc, indent=2).encode(),
        json.dumps({**rest, "steps": steps}).encode(),  # steps last
        json.dumps({"steps": steps, **decoy}).encode(),  # steps first, a decoy 'steps' after
        b"\xef\xbb\xbf\n\n" + json.dumps(decoy | {"steps": steps}).encode(),  # BOM, blank lines
        json.dumps(doc).replace('"steps":', '"st\\u0065ps":', 1).encode(),  # an escaped key
    ]


def _read(path: Path, streamed: bool, monkeypatch: pytest.MonkeyPatch) -> list[Trajectory | TrajectoryError]:
    monkeypatch.setattr(jsonl, "STREAM_BYTES", -1 if streamed else 1 << 40)
    return list(read_trajectories(path))


def test_a_streamed_document_reads_as_the_whole_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contracts = {name: envfactory.load(ROOT / "examples" / name / f"{name}.yaml") for name in EXAMPLES}
    checked = 0
    for n, (name, doc) in enumerate(_examples()):
        for m, text in enumerate(_variants(doc)):
            path = tmp_path / f"t{n}-{m}.json"
            path.write_bytes(text)
            (whole,) = _read(path, False, monkeypatch)
            (streamed,) = _read(path, True, monkeypatch)
            assert isinstance(whole, Trajectory) and isinstance(streamed, Trajectory), (whole, streamed)
            assert isinstance(streamed.steps, StreamedSteps)
            assert list(streamed.steps) == list(whole.steps)
            assert len(streamed.steps) == len(whole.steps)
            assert (streamed.id, streamed.initial, streamed.meta, streamed.source) == (
                whole.id,
                whole.initial,
                whole.meta,
                whole.source,
            )
            if whole.steps:
                assert streamed.steps[-1] == whole.steps[-1]
                assert list(streamed.steps[1:3]) == list(whole.steps[1:3])
            ours, theirs = (Verifier(contracts[name]).check(t).to_json() for t in (streamed, whole))
            if ours["witness"] is not None and theirs["witness"] is not None:  # Z3 may pick another
                ours["witness"] = theirs["witness"] = None
                ours["message"] = theirs["message"] = ""
            assert ours == theirs
            checked += 1
    assert checked >= 30


def test_a_broken_step_is_named_with_its_index_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps: list[Any] = [{"tool": "open", "input": {"account": f"A{i}", "owner": "o"}} for i in range(5)]
    steps[3] = {"tool": "open", "input": {}, "status": "late"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"id": "b", "steps": steps}, indent=1), "utf-8")
    (error,) = _read(path, True, monkeypatch)
    assert isinstance(error, TrajectoryError)
    assert "steps[3].status" in error.message
    line = path.read_text("utf-8").splitlines().index("  {", 0) + 1  # the first step's line
    assert error.location is not None and error.location.line > line


def test_a_file_that_is_not_one_object_with_steps_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in ('{"id": "x", "steps": 3}', '{"id": "x"}', '{"id": "x", "steps": [', "[1, 2]", '"steps"'):
        path = tmp_path / "odd.json"
        path.write_text(text, "utf-8")
        streamed = [str(i) for i in _read(path, True, monkeypatch)]
        assert streamed == [str(i) for i in _read(path, False, monkeypatch)], text


@pytest.mark.timeout(600)
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from /proc")
def test_a_large_document_verifies_in_bounded_memory(tmp_path: Path) -> None:
    """300,001 steps in an 18 MB ``.json`` file: read whole it takes some 270 MB; streamed, the
    whole ``envfactory verify`` process stays under 100 MB."""
    names = ["moss", "jen", "roy"]
    create = {
        "tool": "create_ticket",
        "input": {"title": "t", "priority": "low"},
        "output": {"id": 1, "title": "t", "priority": "low", "status": "open", "assignee": None},
    }
    path = tmp_path / "big.json"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"id": "big", "steps": [\n ' + json.dumps(create))
        for i in range(300_000):
            step = {"tool": "assign", "input": {"id": 1, "assignee": names[i % 3]}}
            handle.write(",\n " + json.dumps(step))
        handle.write("\n]}\n")
    assert path.stat().st_size > jsonl.STREAM_BYTES
    # the peak of this process's own memory (VmHWM: ru_maxrss would count the forked parent's)
    script = (
        "import sys\n"
        "from envfactory.cli import main\n"
        "try:\n    main()\n"
        "finally:\n"
        "    peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "    sys.stderr.write('PEAK %s\\n' % peak)\n"
    )
    contract = ROOT / "examples" / "tickets" / "tickets.yaml"
    done = subprocess.run(
        [sys.executable, "-c", script, "verify", str(contract), str(path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["valid"] == 1 and report["summary"]["steps"] == 300_001
    peak_kb = int(done.stderr.rsplit("PEAK ", 1)[1].split()[0])
    assert peak_kb < 100 * 1024, peak_kb
