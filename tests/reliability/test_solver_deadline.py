"""A solver query answers within its time limit whatever Z3 does (issue 20 item 1).

Z3's ``timeout`` and ``rlimit`` are cooperative; nonlinear integer arithmetic ignores both for
minutes. ``solver.deadline`` runs the query in a forked worker killed at the deadline. These tests
assert answers, never durations: a task that never returns must come back ``Stopped``, and the
``pytest.mark.timeout`` marks are hang guards only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envfactory.solver.deadline import Stopped, Worker, bounded

SQUARES = """\
envfactory: "1"
info: {title: Squares, version: "1.0"}
state:
  x: {type: integer, initial: 0}
operations:
  sq:
    input:
      type: object
      properties: {v: {type: integer}}
      required: [v]
    requires:
      - check: input.v == x * x
        error: {status: 400}
      - check: input.v % 7 == 3
        error: {status: 400}
    effects:
      - x = input.v
"""
"""No square is 3 modulo 7, but Z3's nonlinear arithmetic does not find that out: with eight
steps of holes it stays inside one ``check`` for minutes, past its ``timeout`` and ``rlimit``."""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.timeout(600)
def test_a_task_that_never_returns_is_stopped_and_its_worker_is_gone() -> None:
    pids: list[int] = []

    def hangs(report: Any) -> None:
        report(os.getpid())
        time.sleep(3600)

    answer = bounded(hangs, 0.05, progress=pids.append)
    assert isinstance(answer, Stopped)
    assert answer.cause == "time"
    assert "0.05 s" in answer.message
    assert len(pids) == 1 and pids[0] != os.getpid()
    assert _gone(pids[0])


@pytest.mark.timeout(600)
def test_a_task_spinning_in_one_call_is_stopped() -> None:
    # a busy loop holds the GIL between bytecodes only; the kill does not need the worker's help
    answer = bounded(lambda _: sum(range(10**12)), 0.05)
    assert isinstance(answer, Stopped) and answer.cause == "time"


def test_answers_progress_and_errors_come_back() -> None:
    seen: list[Any] = []

    def task(report: Any) -> dict[str, int]:
        for depth in range(3):
            report(("depth", depth))
        return {"answer": 42}

    assert bounded(task, 30, progress=seen.append) == {"answer": 42}
    assert seen == [("depth", 0), ("depth", 1), ("depth", 2)]

    def fails(_: Any) -> None:
        raise ValueError("no goal 'rich'")

    with pytest.raises(ValueError, match="no goal 'rich'"):
        bounded(fails, 30)


def test_a_worker_s_garbage_collector_starts_the_same_whatever_its_caller_allocated() -> None:
    """Z3's answers depend on when Python frees its terms: a worker's collections must come
    where its own allocations put them, not where the caller's counts had got to."""
    import gc

    def counts(_: Any) -> tuple[tuple[int, int, int], bool, bool]:
        return gc.get_count(), gc.get_freeze_count() > 0, gc.isenabled()

    first = bounded(counts, 30)
    held = [[n] for n in range(1234)]  # containers the caller keeps: its counts move on
    assert held and bounded(counts, 30) == first
    assert first[1]  # the caller's objects are out of the worker's collections
    assert first[2] and not bounded(counts, 30, collect=False)[2]  # the planner's collects no more
    assert gc.isenabled()  # its caller does
    answers = []
    for more in (0, 4321):
        held += [[n] for n in range(more)]
        worker = Worker(counts)
        try:
            answers.append(worker.call(None, 30))
        finally:
            worker.close()
    assert answers[0] == answers[1]


@pytest.mark.timeout(600)
def test_a_task_past_its_memory_bound_is_stopped() -> None:
    answer = bounded(lambda _: bytearray(16 * 1024**3), 30, memory_mb=64)
    assert answer == Stopped("memory", "the solver ran out of its memory limit (64 MB)")


def _serve(job: Any) -> Any:
    if job == "hang":
        time.sleep(3600)
    if job == "fail":
        raise KeyError(job)
    return job, os.getpid()


@pytest.mark.timeout(600)
def test_a_worker_answers_many_calls_in_one_process_and_is_replaced_after_a_kill() -> None:
    worker = Worker(_serve)
    try:
        answers = [worker.call(n, 30) for n in range(20)]
        assert [a[0] for a in answers] == list(range(20))
        pid = answers[0][1]
        assert {a[1] for a in answers} == {pid} != {os.getpid()}
        with pytest.raises(KeyError):
            worker.call("fail", 30)
        assert worker.call("after", 30) == ("after", pid)  # an exception leaves the worker
        stopped = worker.call("hang", 0.05)
        assert isinstance(stopped, Stopped) and stopped.cause == "time"
        assert _gone(pid)
        again = worker.call("next", 30)
        assert again[0] == "next" and again[1] not in (pid, os.getpid())
    finally:
        worker.close()
    assert _gone(again[1])


def _envfactory(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory", *args], capture_output=True, text=True, check=False
    )


def _squares(tmp_path: Path, steps: int) -> tuple[str, str]:
    contract = tmp_path / "squares.yaml"
    contract.write_text(SQUARES, encoding="utf-8")
    traj = {
        "id": f"squares-{steps}",
        "initial": {"x": {"$var": "x0"}},
        "steps": [{"tool": "sq", "input": {"v": {"$var": f"v{i}"}}} for i in range(steps)],
    }
    trajectories = tmp_path / "squares.jsonl"
    trajectories.write_text(json.dumps(traj) + "\n", encoding="utf-8")
    return str(contract), str(trajectories)


@pytest.mark.timeout(600)
def test_verify_answers_unknown_on_nonlinear_holes(tmp_path: Path) -> None:
    contract, trajectories = _squares(tmp_path, 8)
    result = _envfactory("verify", "--timeout", "0.5", "--format", "json", contract, trajectories)
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    (only,) = report["results"]
    assert only["verdict"] == "unknown"
    assert "time limit" in only["message"] or "resource limit" in only["message"]


BANK = Path(__file__).resolve().parents[2] / "examples" / "bank" / "bank.yaml"


def _hangs(*_: Any, progress: Any = None, **__: Any) -> None:
    """A solver that never comes back (as Z3 inside one nonlinear ``check``)."""
    if progress is not None:
        progress(0)
    time.sleep(3600)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("module", "name", "args", "said"),
    [
        (
            "bmc",
            "plan",
            ["plan", str(BANK), "--goal", "rich", "--timeout", "0.1"],
            "undecided: no answer within the 0.1 s time limit (the solver was stopped)",
        ),
        (
            "induction",
            "prove",
            ["prove", str(BANK), "--timeout", "0.1", "--depth", "3"],
            "unknown up to depth 3: no answer within the 0.1 s time limit",
        ),
    ],
)
def test_plan_and_prove_answer_undecided_when_the_solver_never_returns(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    module: str,
    name: str,
    args: list[str],
    said: str,
) -> None:
    import importlib

    from envfactory.cli import main

    monkeypatch.setattr(importlib.import_module(f"envfactory.solver.{module}"), name, _hangs)
    with pytest.raises(SystemExit) as code:
        main(args)
    assert code.value.code == 3
    out = capsys.readouterr()
    assert said in out.out + out.err


def test_plan_and_prove_still_answer_through_the_worker(capsys: pytest.CaptureFixture[str]) -> None:
    from envfactory.cli import main

    for args, expected in (
        (["plan", str(BANK), "--goal", "two_accounts", "-o", "-"], "plan of 2 steps"),
        (["prove", str(BANK), "--invariant", "transfers >= 0"], "proved (k = 1"),
    ):
        with pytest.raises(SystemExit) as code:
            main(args)
        assert code.value.code == 0
        said = capsys.readouterr()
        assert expected in said.out + said.err
