"""A ``python:`` target in a worker process, so that a call that never returns or eats all memory
is a finding instead of the end of the run.

The worker is forked from the fuzzer (the contract and the factory are already loaded; nothing is
pickled but calls and responses), holds the target object, and answers one call at a time. A call
that has used ``call_timeout`` seconds of the worker's CPU time without answering (or waited
``WAIT_FACTOR`` times that long on the wall clock, for a call that blocks instead of computing) is
a ``hang``: the worker is killed and a new one forked at the next reset. The limit is in CPU
seconds so that a loaded machine does not turn slow answers into hangs, and can be short: each
hang costs the run its limit, and a tool list that hangs on some inputs (``square_root(2,
10**7)``) hangs on many. The worker may map ``memory`` bytes beyond the address space it
inherited (``RLIMIT_AS``), so a call that allocates past it raises ``MemoryError`` there, or kills the
worker: a ``resource`` finding either way, and the run goes on.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import time
from multiprocessing.connection import Connection
from typing import Any

from envfactory.contracts.model import Contract
from envfactory.fuzz.targets import NO_ANSWER, PythonTarget, _error
from envfactory.statemachine.simulator import Response

CALL_TIMEOUT = 0.25
"""CPU seconds of the worker a call may take before it is a ``hang`` (a plain method of a tool
list answers in microseconds)."""
WAIT_FACTOR = 10
"""A call that computes nothing (it waits on a lock or sleeps) is a ``hang`` after this many times
the limit on the wall clock."""
HUNG_AFTER = 2
"""A call that hung after this many different sequences of calls before it hangs by itself: the
same call again answers as a hang at once (the shrinker replays a hanging call many times with
fewer calls before it, each replay a wait of the whole limit)."""
SLICE = 0.05
"""Seconds between two looks at the worker's CPU time while a call runs."""
MEMORY = 2 << 30
"""Bytes of address space the worker may map beyond what it inherited from the fuzzer."""
HANG = "hang: "
RESOURCE = "resource: "


def _serve(conn: Connection, target: PythonTarget, memory: int | None) -> None:
    """The worker's loop: ``("reset",)`` or ``("call", tool, input)`` in, a response out."""
    if memory:
        # relative to the inherited mappings: a fuzzer that already maps gigabytes (Z3, Ray,
        # Arrow, a test run's other imports) would leave a worker under an absolute cap unable
        # to import or allocate anything at all
        limit = _mapped() + memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "reset":
            target.reset()
            conn.send(None)
            continue
        _, tool, value = message
        target.last_exception = None
        response = target.call(tool, value)
        if isinstance(target.last_exception, MemoryError):
            response = _error(NO_ANSWER, f"{RESOURCE}{tool} ran out of memory (limit {memory} bytes)")
        conn.send(response)


def _mapped() -> int:
    """Bytes of address space this process maps now (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) a process has used, or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


def _queued_seconds(pid: int) -> float | None:
    """Seconds a process has been runnable but waiting for a CPU (``/proc/PID/schedstat``), or
    None where the kernel does not tell: a worker starved on a loaded machine is not waiting on
    anything of its own, so that time is not counted against a call that computes nothing."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class IsolatedTarget:
    """``PythonTarget``'s protocol, each call answered by a worker process within limits."""

    keyword_calls = True

    def __init__(
        self,
        spec: str,
        contract: Contract,
        *,
        call_timeout: float = CALL_TIMEOUT,
        memory: int | None = MEMORY,
    ) -> None:
        self.spec = spec
        self.inner = PythonTarget(spec, contract)  # loads the factory here: a bad spec is exit 2
        self.factory = self.inner.factory
        self.call_timeout = call_timeout
        self.memory = memory
        self.process: Any = None
        self.conn: Connection | None = None
        self.slow = False
        self.before: list[str] = []
        """The calls since the last reset, as text."""
        self.hung: dict[str, set[int]] = {}
        """Calls that hung, each with the calls before it (hashed) each time it hung."""

    def _start(self) -> Connection:
        if self.conn is not None and self.process is not None and self.process.is_alive():
            return self.conn
        self._stop()
        parent, child = multiprocessing.get_context("fork").Pipe()
        process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(child, self.inner, self.memory), daemon=True
        )
        process.start()
        child.close()
        self.process, self.conn = process, parent
        return parent

    def _stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join(5)
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def _ask(self, message: tuple[Any, ...]) -> tuple[bool, Any]:
        """(answered, answer): False where the worker did not answer in time or died."""
        conn = self._start()
        try:
            conn.send(message)
            if not conn.poll(min(SLICE, self.call_timeout)) and not self._wait(conn):
                self._stop()
                return False, HANG
            return True, conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._stop()  # the worker died: the kernel's memory limit, most likely
            return False, RESOURCE

    def _wait(self, conn: Connection) -> bool:
        """Wait for a call that did not answer at once; False once it is past its limit (the
        first slice's CPU time counted as spent). A call that computed for a slice or more may
        leave the worker slow (a module-wide precision of ten million digits makes every later
        call of that module slow): the worker is forked again at the next reset, one fork where
        a call took tens of milliseconds anyway. Both are judged on the worker's CPU time, and
        the wall-clock limit on the time the worker was not starved of a CPU, so a loaded
        machine that leaves the worker waiting changes neither."""
        pid = self.process.pid
        first = min(SLICE, self.call_timeout)
        waited = spent = first
        start, queued, clock = _cpu_seconds(pid), _queued_seconds(pid), time.monotonic()
        answered = False
        while spent < self.call_timeout and waited < self.call_timeout * WAIT_FACTOR:
            if conn.poll(SLICE):
                answered = True
                break
            # the wall clock less the time the worker stood in the run queue: a loaded machine
            # that leaves a computing worker without a CPU does not make it a waiting one
            now_queued = _queued_seconds(pid)
            starved = 0.0 if now_queued is None or queued is None else now_queued - queued
            waited = first + time.monotonic() - clock - starved
            now = _cpu_seconds(pid)
            # where /proc cannot be read, the wall clock is the only clock there is
            spent = waited if now is None or start is None else first + now - start
        answered = answered or conn.poll(0)
        now = _cpu_seconds(pid) if answered else None
        computed = spent - first if now is None or start is None else now - start
        if not answered or computed >= SLICE / 2:
            self.slow = True
        return answered

    def reset(self) -> None:
        if self.slow:
            self.slow = False
            self._stop()
        self.before = []
        self._ask(("reset",))  # a factory that hangs or dies: the next call reports it

    def call(self, tool: str, input: Any) -> Response:
        call = repr((tool, input))
        before = hash(tuple(self.before))
        self.before.append(call)
        after = self.hung.get(call, ())
        if len(after) >= HUNG_AFTER and before not in after:
            # hung after other calls before it already: the call itself hangs, and the
            # shrinker's replays of it with fewer calls before it need not wait it out again
            return self._hang(tool)
        answered, answer = self._ask(("call", tool, input))
        if answered:
            assert isinstance(answer, Response)
            return answer
        if answer == HANG:
            self.hung.setdefault(call, set()).add(before)
            return self._hang(tool)
        return _error(
            NO_ANSWER, f"{RESOURCE}the worker running {tool} died (memory limit {self.memory} bytes)"
        )

    def _hang(self, tool: str) -> Response:
        return _error(NO_ANSWER, f"{HANG}{tool} did not return within {self.call_timeout:g} s of CPU time")

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send(None)
        self._stop()


def finding_kind(response: Response) -> str:
    """``hang``, ``resource`` or ``crash``: what a response that is not an answer means."""
    error = response.error or ""
    if error.startswith(HANG):
        return "hang"
    if error.startswith(RESOURCE):
        return "resource"
    return "crash"


__all__ = ["CALL_TIMEOUT", "MEMORY", "WAIT_FACTOR", "IsolatedTarget", "finding_kind"]
