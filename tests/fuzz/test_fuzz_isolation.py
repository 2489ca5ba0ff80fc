"""Isolated python: targets: a call that never returns is a ``hang``, one past the memory limit a
``resource`` finding, each with its trace, and the run goes on with a fresh worker.

No timing is asserted: the hanging call blocks forever, so any per-call limit catches it; the
limit only has to be longer than a plain call takes.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.isolation import CALL_TIMEOUT, IsolatedTarget
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import PythonTarget, open_target

CONTRACT = """\
envfactory: "1"
info: {title: Risky tools, version: "1"}
state: {}
operations:
  echo:
    input: {type: object, properties: {text: {type: string}}, required: [text], additionalProperties: false}
  block:
    input: {type: object, additionalProperties: false}
  hog:
    input: {type: object, additionalProperties: false}
  grow:
    input: {type: object, additionalProperties: false}
"""

IMPL = """\
import threading


class Risky:
    def echo(self, text):
        if not isinstance(text, str):
            return {"error": "text must be a string", "status": 422}
        return {"text": text}

    def block(self):
        threading.Event().wait()  # never returns

    def grow(self):
        return {"size": len(bytearray(256 << 20))}  # well within the limit

    def hog(self):
        return {"size": len(bytearray(64 << 30))}  # far past any worker's memory limit
"""


@pytest.fixture
def risky(tmp_path: Path) -> tuple[envfactory.Contract, str]:
    (tmp_path / "risky.yaml").write_text(CONTRACT, encoding="utf-8")
    (tmp_path / "risky_impl.py").write_text(IMPL, encoding="utf-8")
    return envfactory.load(tmp_path / "risky.yaml"), f"python:{tmp_path / 'risky_impl.py'}:Risky"


@pytest.mark.timeout(300)
def test_hangs_and_memory_hogs_are_findings_and_the_run_goes_on(
    risky: tuple[envfactory.Contract, str],
) -> None:
    contract, spec = risky
    target = open_target(spec, contract, isolate=True)  # the default limits, as a user runs it
    assert isinstance(target, IsolatedTarget)
    try:
        summary = fuzz(contract, target, seed=0, max_examples=5, steps=3)
    finally:
        target.close()
    found = {(f.operation, f.kind) for f in summary.findings}
    assert {("block", "hang"), ("hog", "resource")} <= found
    assert "echo" in summary.operations_covered  # calls after a killed worker are answered again
    hang = next(f for f in summary.findings if f.kind == "hang")
    assert hang.steps[-1].tool == "block" and f"did not return within {CALL_TIMEOUT:g} s" in hang.message


def test_isolation_is_the_default_for_bare_tool_lists_only(risky: tuple[envfactory.Contract, str]) -> None:
    contract, spec = risky
    assert isinstance(open_target(spec, contract), PythonTarget)  # a native contract: in process
    assert isinstance(open_target(spec, contract, isolate=True), IsolatedTarget)


@pytest.mark.timeout(120)
def test_the_memory_limit_counts_from_what_the_worker_inherits(
    risky: tuple[envfactory.Contract, str],
) -> None:
    """A fuzzer that already maps more than the limit (Z3, Ray and Arrow in one test process map
    gigabytes) still gets a worker that can answer: the limit is on what a call adds."""
    import mmap

    contract, spec = risky
    reserved = mmap.mmap(-1, 3 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    target = open_target(spec, contract, isolate=True, call_timeout=30.0)
    try:
        target.reset()
        response = target.call("grow", {})
        hogged = target.call("hog", {})
    finally:
        target.close()
        reserved.close()
    assert response.status == 200 and response.output == {"size": 256 << 20}
    assert "memory" in (hogged.error or "")


SLOW_IMPL = """\
import time

RAN = []


class Slow:
    def wait(self, n):
        if isinstance(n, int) and not isinstance(n, bool) and n > 3:
            RAN.append(n)
            start = time.process_time()  # CPU time, the clock an in-process call is read on:
            while time.process_time() - start < 0.01:  # slower than the test's SLOW_CALL, on
                pass  # any machine and at any load
            raise ValueError("too many")
        return {"n": n}
"""


@pytest.mark.timeout(300)
def test_a_slow_failure_is_not_waited_out_again_for_the_same_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shrinker replays a failing sequence many times; a call that took long to fail answers
    from memory when the same calls lead up to it again. The memory changes no answer, so the
    run is the same with it and without it, but for how often the target waits."""
    from envfactory.fuzz import machine

    (tmp_path / "slow.yaml").write_text(
        'envfactory: "1"\ninfo: {title: Slow, version: "1"}\nstate: {}\noperations:\n'
        "  wait:\n    input: {type: object, properties: {n: {type: integer}}, required: [n]}\n",
        encoding="utf-8",
    )
    (tmp_path / "slow_impl.py").write_text(SLOW_IMPL, encoding="utf-8")
    contract = envfactory.load(tmp_path / "slow.yaml")
    runs = []
    for slow_call in (0.005, float("inf")):  # with the memory, and without it
        monkeypatch.setattr(machine, "SLOW_CALL", slow_call)
        target = open_target(f"python:{tmp_path / 'slow_impl.py'}:Slow", contract)
        ran = sys.modules[target.factory.__module__].RAN
        ran.clear()
        try:
            summary = fuzz(contract, target, seed=0, max_examples=20, steps=3, kinds=["crash"])
        finally:
            target.close()
        runs.append((summary, len(ran)))
    (remembered, waited), (plain, waited_without) = runs
    assert [(f.kind, len(f.steps)) for f in remembered.findings] == [("crash", 1)]
    assert remembered.findings == plain.findings and remembered.calls == plain.calls
    assert 0 < waited < waited_without


def test_an_error_inside_hypothesis_engine_is_told_apart_from_ours() -> None:
    """A Hypothesis internal error (one was seen ranking a recorded string while shrinking) ends a
    round, not the run; an error from our code or the target is still raised."""
    from envfactory.fuzz.runner import _from_engine

    def raised(filename: str) -> BaseException:
        try:
            exec(compile("raise ValueError('66 is not in list')", filename, "exec"), {})
        except ValueError as err:
            return err
        raise AssertionError("no error")

    engine = raised(os.path.join("site-packages", "hypothesis", "internal", "intervalsets.py"))
    ours = raised(os.path.join("envfactory", "fuzz", "machine.py"))
    assert _from_engine(engine) and not _from_engine(ours)


LIMITS_IMPL = """\
import time

LEFT = []  # module-wide state a call leaves behind (a precision, a cache)


class Limits:
    def spin(self, n=0):
        while True:  # computes forever: its worker's CPU time runs past any limit
            n += 1

    def echo(self, text=""):
        return {"text": text}

    def leave(self):
        start = time.process_time()  # computes for 0.2 CPU seconds: four looks at the worker
        while time.process_time() - start < 0.2:  # (isolation.SLICE), on any machine and load
            pass
        LEFT.append(1)
        return {"left": len(LEFT)}

    def left(self):
        return {"left": len(LEFT)}

    def nap(self):
        time.sleep(1.5)  # computes nothing: past a 0.1 s limit's wall-clock wait (1 s) on any machine
        return {"napped": True}
"""


@pytest.fixture
def limits(tmp_path: Path) -> tuple[envfactory.Contract, str]:
    ops = "".join(
        f"  {name}:\n    input: {{type: object, properties: {{text: {{type: string}}}}}}\n"
        for name in ("spin", "echo", "leave", "left", "nap")
    )
    (tmp_path / "limits.yaml").write_text(
        f'envfactory: "1"\ninfo: {{title: Limits, version: "1"}}\nstate: {{}}\noperations:\n{ops}',
        encoding="utf-8",
    )
    (tmp_path / "limits_impl.py").write_text(LIMITS_IMPL, encoding="utf-8")
    return envfactory.load(tmp_path / "limits.yaml"), f"python:{tmp_path / 'limits_impl.py'}:Limits"


@pytest.mark.timeout(300)
def test_a_call_past_its_cpu_limit_is_a_hang_and_a_known_hang_is_not_waited_out_again(
    limits: tuple[envfactory.Contract, str],
) -> None:
    """The limit is CPU time of the worker (a loaded machine does not make hangs of slow answers);
    a call that hung after two different sequences of calls hangs by itself, and answers as a
    hang at once after a third, without a worker killed and forked again."""
    contract, spec = limits
    target = IsolatedTarget(spec, contract, call_timeout=0.25)
    try:
        for before in ([], ["a"], ["b"]):
            target.reset()
            for text in before:
                assert target.call("echo", {"text": text}).output == {"text": text}
            worker = target.process
            response = target.call("spin", {})
            assert "hang" in (response.error or "") and "0.25 s of CPU time" in (response.error or "")
            killed = target.process is None
            assert killed == (before != ["b"])  # the third time: answered from memory
            assert worker is not None
        target.reset()
        assert target.call("echo", {"text": "c"}).output == {"text": "c"}  # a fresh worker answers
    finally:
        target.close()


@pytest.mark.timeout(120)
def test_a_slow_call_gets_a_fresh_worker_at_the_next_reset(limits: tuple[envfactory.Contract, str]) -> None:
    """What a slow call leaves behind module-wide (mpmath's precision set to ten million digits
    makes every later call slow) does not outlive the test case: the worker is forked again."""
    contract, spec = limits
    target = IsolatedTarget(spec, contract, call_timeout=30.0)
    try:
        target.reset()
        assert target.call("leave", {}).output == {"left": 1}
        assert target.call("left", {}).output == {"left": 1}  # the same worker, within the case
        target.reset()
        assert target.call("left", {}).output == {"left": 0}  # a fresh worker, in the next
    finally:
        target.close()


@pytest.mark.timeout(120)
def test_time_a_worker_stood_in_the_run_queue_does_not_count_as_waiting(
    limits: tuple[envfactory.Contract, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that computes nothing is a hang after ``WAIT_FACTOR`` times its limit on the wall
    clock, less the time its worker was runnable but had no CPU: on a loaded machine a starved
    worker is not a waiting one. Here the kernel's figure is stood in for by one that says the
    worker was queued all along, and the same nap answers."""
    import envfactory.fuzz.isolation as isolation

    contract, spec = limits
    target = IsolatedTarget(spec, contract, call_timeout=0.1)
    try:
        target.reset()
        assert "hang" in (target.call("nap", {}).error or "")  # 1.5 s asleep, 1 s allowed
        monkeypatch.setattr(isolation, "_queued_seconds", lambda pid: time.monotonic())
        target.reset()
        assert target.call("nap", {}).output == {"napped": True}
    finally:
        target.close()
