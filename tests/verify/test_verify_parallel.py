"""--jobs N and --engine ray give the results of one process, in input order."""

from __future__ import annotations

import io
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from envfactory.cli import main
from envfactory.parallel import ContractRef, Options, verify_files

ROOT = Path(__file__).resolve().parents[2]
BANK = str(ROOT / "examples" / "bank" / "bank.yaml")


def _trajectory(rng: random.Random, index: int) -> dict[str, Any]:
    """A bank trajectory: mostly valid, sometimes broken in one of several ways."""
    a, b = f"AA{index % 100:02d}", f"BB{index % 100:02d}"
    amount = rng.randint(1, 500)
    steps: list[dict[str, Any]] = [
        {"tool": "open", "input": {"account": a, "owner": "ann"}},
        {"tool": "open", "input": {"account": b, "owner": "bob"}},
        {"tool": "deposit", "input": {"account": a, "amount": amount}, "output": {"balance": amount}},
    ]
    move = rng.randint(1, 600)
    steps.append({"tool": "transfer", "input": {"source": a, "target": b, "amount": move}})
    roll = rng.random()
    if roll < 0.1:
        steps.append({"tool": "balance", "input": {"account": b}, "output": {"balance": move + 1}})
    elif roll < 0.15:
        steps.append({"tool": "nosuch", "input": {}})
    return {"id": f"t{index}", "steps": steps}


def _write(path: Path, count: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for index in range(count):
            if index % 97 == 50:
                handle.write("{not json\n")
            handle.write(json.dumps(_trajectory(rng, index)) + "\n")
    return path


def _docs(results: Any) -> list[dict[str, Any]]:
    return [r.to_json() for r in results]


def test_jobs_2_matches_jobs_1_in_order(tmp_path: Path) -> None:
    path = str(_write(tmp_path / "t.jsonl", 600))
    ref = ContractRef(BANK)
    one = _docs(verify_files(ref, [path, path], jobs=1))
    two = _docs(verify_files(ref, [path, path], jobs=2))
    assert len(one) == 2 * (600 + sum(1 for i in range(600) if i % 97 == 50))
    assert one == two
    verdicts = {d["verdict"] for d in one}
    assert verdicts == {"valid", "invalid", "unreadable"}


@pytest.mark.parametrize("input_format", ["native", "auto"])
def test_jobs_on_a_json_list(tmp_path: Path, input_format: str) -> None:
    """A ``.json`` list is cut into items in the main process and parsed by the workers; a bad
    item keeps its place and its error."""
    from envfactory.parallel import chunks

    path = tmp_path / "t.json"
    rng = random.Random(3)
    items = [json.dumps(_trajectory(rng, i)) for i in range(300)]
    items[150] = '{"id": "broken", "steps": 3}'
    path.write_text("[\n" + ",\n".join(items) + "\n]\n")
    ref = ContractRef(BANK)
    options = Options(allow_rejected=True)
    one = _docs(verify_files(ref, [str(path)], jobs=1, options=options, input_format=input_format))
    two = _docs(verify_files(ref, [str(path)], jobs=2, options=options, input_format=input_format))
    assert one == two and len(one) == 300
    assert one[150]["verdict"] == "unreadable" and one[150]["location"].endswith("t.json:152")
    assert {kind for kind, _ in chunks([str(path)], input_format, 2)} == {"list"}


def test_cli_jobs_output_is_identical(tmp_path: Path) -> None:
    path = str(_write(tmp_path / "t.jsonl", 400))

    def run(*extra: str) -> tuple[int, list[Any]]:
        out = io.StringIO()
        old = sys.stdout
        sys.stdout = out
        try:
            main(["verify", BANK, path, "--format", "json", *extra])
        except SystemExit as stop:
            code = int(stop.code or 0)
        finally:
            sys.stdout = old
        return code, json.loads(out.getvalue())["results"]

    assert run() == run("--jobs", "2")


def test_ray_engine_matches_local(tmp_path: Path) -> None:
    """`verify --engine ray` on a local Ray instance: the same document, in order, on stdout."""
    import subprocess

    pytest.importorskip("ray")
    path = str(_write(tmp_path / "t.jsonl", 300))
    local = _docs(verify_files(ContractRef(BANK), [path], jobs=1))
    exe = Path(sys.executable).with_name("envfactory")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from envfactory.cli import main; main()"]
    done = subprocess.run(
        [*cmd, "verify", BANK, path, "--engine", "ray", "--jobs", "2", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr[-2000:]  # the file holds unreadable lines
    assert json.loads(done.stdout)["results"] == local


def test_byte_ranges_keep_line_numbers_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from envfactory import parallel
    from envfactory.trajectory import MAX_LINE_BYTES

    monkeypatch.setattr(parallel, "CHUNK_BYTES", 300)  # many chunks, cut inside lines
    rng = random.Random(5)
    path = tmp_path / "t.jsonl"
    with open(path, "wb") as handle:
        handle.write(b"\xef\xbb\xbf" + json.dumps(_trajectory(rng, 0)).encode() + b"\n\n")
        for index in range(1, 40):
            handle.write(json.dumps(_trajectory(rng, index)).encode() + b"\n")
            if index == 20:
                handle.write(b'{"id": "huge", "steps": [], "meta": "' + b"a" * (MAX_LINE_BYTES + 5) + b'"}\n')
            if index == 30:
                handle.write(b'{"id": "x\xff", "steps": []}\n')
        handle.write(json.dumps(_trajectory(rng, 99)).encode())  # no newline at the end
    ref = ContractRef(BANK)
    one = list(verify_files(ref, [str(path)], jobs=1))
    two = list(verify_files(ref, [str(path)], jobs=2))
    assert _docs(one) == _docs(two)
    assert [r.source for r in one] == [r.source for r in two]
    assert len(one) == 43
    bad = [r for r in one if r.verdict == "unreadable"]
    assert [r.location for r in bad] == [f"{path}:23", f"{path}:34:10"]
    assert one[0].id == "t0" and one[-1].id == "t99"


def test_memory_stays_flat(tmp_path: Path) -> None:
    """Reading, verifying and writing the JSON report hold one trajectory at a time, for JSON
    Lines and ``.json`` lists alike (``auto``, the command line's default, sniffs the format)."""
    import tracemalloc

    from envfactory.report import write_json

    def peak(count: int, suffix: str) -> int:
        path = _write(tmp_path / f"t{count}.jsonl", count)
        if suffix == ".json":  # the same trajectories as a list (the bad lines dropped)
            lines = [line for line in path.read_text().splitlines() if not line.startswith("{not")]
            path = path.with_suffix(".json")
            path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
        sink = io.StringIO()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        results = verify_files(ContractRef(BANK), [str(path)], jobs=1, input_format="auto")
        write_json(results, _Discard(sink))
        result = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        return result

    for suffix in (".jsonl", ".json"):  # ten times the trajectories, about the same peak
        small, large = peak(40, suffix), peak(400, suffix)
        assert large < 1.5 * small + 256 * 1024, (suffix, small, large)


class _Discard(io.StringIO):
    """A text sink that keeps nothing (so that only the pipeline's own memory is measured)."""

    def __init__(self, inner: io.StringIO) -> None:
        super().__init__()
        self.written = 0

    def write(self, text: str) -> int:
        self.written += len(text)
        return len(text)
