"""A killed run leaves nothing behind (issue 20 item 6): workers end with their parent, SIGTERM
unwinds like Ctrl-C (the partial output removed), and a ``.part`` file of a process that is gone
is removed by the next run. Processes only, loopback nothing; waits are bounded hang guards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from envfactory.cli._common import remove_stale_parts

ROOT = Path(__file__).resolve().parents[2]


def _last_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_next_run_removes_a_dead_processs_part_file(tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    dead = tmp_path / f".report.txt.{_last_pid()}.abc123.part"
    live = tmp_path / f".report.txt.{os.getpid()}.def456.part"
    other = tmp_path / f".other.txt.{_last_pid()}.x.part"
    for path in (dead, live, other):
        path.write_text("half", "utf-8")
    contract = ROOT / "examples" / "bank" / "bank.yaml"
    trajectories = ROOT / "examples" / "bank" / "trajectories.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "envfactory.cli", "verify", str(contract), str(trajectories), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1, 3), done.stderr
    assert out.exists() and not dead.exists()
    assert live.exists() and other.exists()  # a live writer's file, and another output's, stay
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".part")) == sorted(
        [live.name, other.name]
    )


def test_remove_stale_parts_names_what_it_removed(tmp_path: Path) -> None:
    stale = tmp_path / f".x.jsonl.{_last_pid()}.q.part"
    stale.write_text("", "utf-8")
    assert remove_stale_parts(tmp_path / "x.jsonl") == [stale]
    assert remove_stale_parts(tmp_path / "x.jsonl") == []


_SIGTERM_SCRIPT = """
import os, signal, sys
from pathlib import Path
from envfactory.cli import _terminate_as_interrupt
from envfactory.cli._common import output_stream
_terminate_as_interrupt()
out = Path(sys.argv[1])
try:
    with output_stream(str(out)) as stream:
        stream.write(b"partial")
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()
except KeyboardInterrupt:
    print("interrupted", sorted(p.name for p in out.parent.iterdir()))
"""


def test_sigterm_unwinds_like_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "f.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", _SIGTERM_SCRIPT, str(out)], capture_output=True, text=True, timeout=600
    )
    assert done.stdout.strip() == "interrupted []", done.stderr


_ORPHAN_SCRIPT = """
import os, sys, time
from envfactory.parallel import worker_start
parent = os.getpid()
child = os.fork()
if child == 0:
    worker_start(parent)
    while True:
        time.sleep(1)
print(child, flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.timeout(600)
def test_a_worker_ends_when_its_parent_is_killed() -> None:
    parent = subprocess.run(
        [sys.executable, "-c", _ORPHAN_SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert parent.returncode == -signal.SIGKILL
    worker = int(parent.stdout.strip())
    # the worker is not our child: poll until it is gone (bounded by the timeout mark, no timing assert)
    while True:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        with (
            open(f"/proc/{worker}/stat") if os.path.exists(f"/proc/{worker}/stat") else open(os.devnull) as f
        ):
            if ") Z " in f.read():  # a zombie is already dead
                break
        os.sched_yield()
