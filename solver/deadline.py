"""A solver query under a hard deadline and a memory bound: run it in a forked worker, killed at the
deadline.

Z3's ``timeout`` and ``rlimit`` are cooperative: some procedures (nonlinear integer arithmetic
above all) do not look at them for minutes while their memory grows by gigabytes. The encoders
keep both limits as the common, deterministic answer; ``bounded`` is the backstop that holds
whatever the query does. The worker is a ``fork`` of the caller (the contract, trajectory and
loaded Z3 are shared copy-on-write, nothing is pickled on the way in), sends its result back
pickled over a pipe, and:

* is killed with ``SIGKILL`` when the deadline passes (the caller gets ``Stopped``);
* has Z3's ``memory_max_size`` and an address-space limit (``RLIMIT_AS``), so a query that grows
  fails inside the worker instead of taking the machine;
* has a CPU-time limit and a parent-death signal, so it cannot outlive a caller that was killed.

Where ``fork`` is missing (not POSIX) the query runs in the calling process, with Z3's own limits
only. Imports the standard library, ``attrs`` and ``z3``; nothing of envfactory.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import pickle
import select
import signal
import struct
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs

A = TypeVar("A")
T = TypeVar("T")

GRACE_SECONDS = 1.0
"""Added to a query's time limit before the worker is killed: the encoders stop themselves at
the limit and usually answer first; the kill is for the query that does not."""
GRACE_SHARE = 0.1
"""Plus this share of the limit (a concrete replay of a long completion after a late model)."""
MEMORY_MB = 1024
"""Z3's memory limit in the worker (``memory_max_size``); the worker's address space may grow by
twice this over what it shared with its parent, which bounds the Python side too."""

_HEADER = struct.Struct("!Q")
_PROGRESS, _RESULT, _ERROR = 0, 1, 2


@attrs.frozen(slots=True)
class Stopped:
    """A query that gave no answer: ``cause`` is ``time`` (killed at the deadline), ``memory``
    (past the memory bound) or ``crash`` (the worker died); ``message`` says it for a reader."""

    cause: str
    message: str


@attrs.frozen(slots=True)
class _Frame:
    kind: int
    payload: Any


def stopped(answer: Stopped, seconds: float) -> str:
    """What a command says when its query was stopped: the time limit the user gave, not the
    part of it left when the query started."""
    if answer.cause == "time":
        return f"no answer within the {seconds:g} s time limit (the solver was stopped)"
    return answer.message


def hard_limit(seconds: float) -> float:
    """The wall-clock seconds after which a query with time limit ``seconds`` is killed."""
    return seconds * (1.0 + GRACE_SHARE) + GRACE_SECONDS


def bounded(
    task: Callable[[Callable[[Any], None]], T],
    seconds: float,
    *,
    progress: Callable[[Any], None] | None = None,
    memory_mb: int = MEMORY_MB,
    collect: bool = True,
) -> T | Stopped:
    """``task(report)`` in a worker forked for it: its result, or ``Stopped`` within
    ``hard_limit(seconds)``.

    ``report(value)`` in the worker calls ``progress(value)`` here (a picklable value, for a status
    line). An exception the task raises is raised again here (its type and message); a
    ``MemoryError`` becomes ``Stopped("memory")``.

    Without ``collect`` (the fuzzer's planner), the worker collects no cycles at all
    (``_settle_collector`` starts it afresh, then it is off). Its allocations depend on what the
    caller holds (a memo table of the caller's that has an entry already allocates nothing, one
    that has not a tuple), so collections counted from the fork still came at other moments
    after other work in the process, and the library's 7-call route came with other inputs: the
    same assertions to Z3, other term ids under them. Refcounting frees the terms at the same
    moments whatever the caller did; what is left in cycles waits for the worker's end (the
    courier's 127 goals planned at 60 million units: 183 MB at most, with or without
    collections). A long proof and a ``Worker`` answering many calls keep collecting."""
    if not hasattr(os, "fork"):
        return task(progress or _ignore)
    return Forked(task, seconds, memory_mb=memory_mb, collect=collect).answer(progress)


class Forked(Generic[T]):
    """``task(report)`` in a worker forked now, its answer collected by ``answer`` (``bounded``
    in two halves): the fork made by the caller's thread, where no lock another thread holds is
    copied into the worker, and the wait left to another thread, beside the caller's own work.
    POSIX only (``bounded`` runs the task in the caller without ``fork``)."""

    def __init__(
        self,
        task: Callable[[Callable[[Any], None]], T],
        seconds: float,
        *,
        memory_mb: int = MEMORY_MB,
        collect: bool = True,
    ) -> None:
        self.seconds, self.memory_mb = seconds, memory_mb
        self.deadline = time.monotonic() + hard_limit(seconds)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            os.close(read_end)
            code = 0
            try:
                _limit_self(memory_mb)
                _limit_cpu(seconds)
                if not collect:
                    gc.disable()  # one task, then the process ends (above)
                _answer(write_end, lambda: task(lambda value: _send(write_end, _PROGRESS, value)))
            except BaseException:
                code = 1
            finally:
                os._exit(code)  # no atexit handlers, no flush of buffers copied from the caller
        os.close(write_end)
        self.pid, self.fd = pid, read_end

    def answer(self, progress: Callable[[Any], None] | None = None) -> T | Stopped:
        """The task's result, or ``Stopped`` by ``hard_limit(seconds)`` from the fork; once."""
        try:
            answer: T | Stopped = _collect(
                self.pid, self.fd, self.deadline, progress, self.seconds, self.memory_mb
            )
            return answer
        finally:
            os.close(self.fd)
            _reap(self.pid)


class Worker(Generic[A, T]):
    """A forked process that answers ``handler(arg)`` one call at a time, each under a hard deadline.

    For many short queries against the same data (``verify``: one contract, many trajectories):
    the fork is paid once, not per query; ``arg`` and the answer are pickled. A worker killed at a
    deadline is forked again for the next call. Not thread-safe; ``close`` (or garbage collection,
    or the caller's exit) ends the process."""

    def __init__(self, handler: Callable[[A], T], *, memory_mb: int = MEMORY_MB) -> None:
        self.handler = handler
        self.memory_mb = memory_mb
        self._proc: _Proc | None = None

    def call(self, arg: A, seconds: float) -> T | Stopped:
        """``handler(arg)``: its result, or ``Stopped`` within ``hard_limit(seconds)``; an exception
        the handler raises is raised here, and the worker stays."""
        if not hasattr(os, "fork"):
            return self.handler(arg)
        proc = self._proc if self._proc is not None and self._proc.alive else self._start()
        try:
            _send(proc.requests, _RESULT, (arg, seconds))
            answer = _collect(
                proc.pid, proc.answers, time.monotonic() + hard_limit(seconds), None, seconds, self.memory_mb
            )
        except BrokenPipeError:
            answer = Stopped("crash", "the solver's worker had exited")
        except Exception:
            raise  # the handler's own exception: the worker answered and stays
        except BaseException:
            proc.stop()  # interrupted: the worker may still be busy
            raise
        if isinstance(answer, Stopped):
            proc.stop()
        return answer

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stop()
            self._proc = None

    def _start(self) -> _Proc:
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(requests_write)
            os.close(answers_read)
            code = 0
            try:
                _limit_self(self.memory_mb)
                _serve(self.handler, requests_read, answers_write)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(requests_read)
        os.close(answers_write)
        self._proc = _Proc(pid, requests_write, answers_read)
        weakref.finalize(self, self._proc.stop)
        return self._proc


class _Proc:
    """One worker process and its two pipe ends (requests to it, answers from it)."""

    def __init__(self, pid: int, requests: int, answers: int) -> None:
        self.pid, self.requests, self.answers = pid, requests, answers
        self.alive = True

    def stop(self) -> None:
        if not self.alive:
            return
        self.alive = False
        for fd in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        _reap(self.pid)


def _serve(handler: Callable[[Any], Any], requests: int, answers: int) -> None:
    """The worker's loop: a request, its answer, until the caller closes its end."""
    while True:
        frame = _receive(requests)
        if frame is None:
            return
        arg, seconds = frame.payload
        _limit_cpu(seconds)
        _answer(answers, functools.partial(handler, arg))


def _answer(fd: int, run: Callable[[], Any]) -> None:
    """Send ``run()``'s result, or the exception it raised, back to the caller."""
    try:
        result = run()
    except MemoryError:
        _send_quietly(fd, MemoryError())
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # everything goes back to the caller, never into its stack
        _send_quietly(fd, err)
    else:
        try:
            _send(fd, _RESULT, result)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            _send_quietly(fd, err)


def _ignore(_: Any) -> None:
    return None


def _limit_self(memory_mb: int) -> None:
    """The worker's own bounds: Z3 memory, address space, death with its parent; then its
    garbage collector settled (last, since what the lines above import depends on the caller)."""
    import resource

    import z3

    z3.set_param("memory_max_size", memory_mb)
    with contextlib.suppress(OSError, ValueError):
        size = _address_space() + 2 * memory_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or size < hard:
            resource.setrlimit(resource.RLIMIT_AS, (size, hard))
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() == 1:  # the caller died before the signal was armed
        os._exit(1)
    _settle_collector()


def _settle_collector() -> None:
    """The cyclic garbage collector started the same in every worker, whatever the caller did.

    Z3 hands the ids of the terms Python frees to the next terms it makes, and its answers
    depend on those ids. A collection comes when enough objects were allocated since the last
    one, counted from the state the fork copied: a planning worker forked after other work in
    the same process (a second fuzz run, a notebook) freed its cyclic garbage at other moments
    and planned other routes for the same goals. The caller's objects, its garbage too, are
    frozen out of every collection (moved aside at once, never traversed: a worker forked from
    a large process pays nothing), and the counts start from nothing, so collections come where
    the worker's own allocations put them."""
    gc.freeze()
    gc.collect()  # with nothing to collect, the counts and the long-lived total start from zero


def _limit_cpu(seconds: float) -> None:
    """A CPU-time limit for the next query (``SIGXCPU`` past it): the worker's own backstop, for
    when its caller cannot kill it."""
    import resource

    with contextlib.suppress(OSError, ValueError):
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = math.ceil(used.ru_utime + used.ru_stime + hard_limit(seconds)) + 1
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard == resource.RLIM_INFINITY or soft < hard:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _address_space() -> int:
    """This process's virtual size in bytes (0 when it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _send(fd: int, kind: int, payload: Any) -> None:
    data = pickle.dumps(_Frame(kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _send_quietly(fd: int, err: BaseException) -> None:
    """An exception back to the caller; as a ``RuntimeError`` with its text when it cannot be
    pickled, and nothing when even that fails (the caller then reports a crash)."""
    try:
        pickle.loads(pickle.dumps(err))
        _send(fd, _ERROR, err)
    except BaseException:
        with contextlib.suppress(BaseException):
            _send(fd, _ERROR, RuntimeError(f"{type(err).__name__}: {err}"))


def _receive(fd: int) -> _Frame | None:
    """One frame, read blocking; None at the end of the stream."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    data = _read_exactly(fd, size)
    return None if data is None else pickle.loads(data)


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts = bytearray()
    while len(parts) < size:
        chunk = os.read(fd, size - len(parts))
        if not chunk:
            return None
        parts += chunk
    return bytes(parts)


def _collect(
    pid: int,
    fd: int,
    deadline: float,
    progress: Callable[[Any], None] | None,
    seconds: float,
    memory_mb: int,
) -> Any:
    buffer = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return Stopped("time", f"the solver did not stop at its {seconds:g} s time limit and was stopped")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return _died(pid, seconds, memory_mb)
        buffer += chunk
        while len(buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer)
            if len(buffer) < _HEADER.size + size:
                break
            frame = pickle.loads(bytes(buffer[_HEADER.size : _HEADER.size + size]))
            del buffer[: _HEADER.size + size]
            if frame.kind == _PROGRESS:
                if progress is not None:
                    progress(frame.payload)
            elif frame.kind == _RESULT:
                return frame.payload
            elif isinstance(frame.payload, MemoryError):
                return _out_of_memory(memory_mb)
            else:
                raise frame.payload


def _out_of_memory(memory_mb: int) -> Stopped:
    return Stopped("memory", f"the solver ran out of its memory limit ({memory_mb} MB)")


def _died(pid: int, seconds: float, memory_mb: int) -> Stopped:
    """The worker closed its pipe without an answer (it is exiting): say why from its status."""
    try:
        status: int | None = os.waitpid(pid, 0)[1]
    except ChildProcessError:
        status = None
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return Stopped("time", f"the solver did not stop at its {seconds:g} s time limit and was stopped")
        return Stopped("crash", f"the solver's worker died of {signal.Signals(sig).name}")
    return Stopped("crash", "the solver's worker exited without an answer")


def _reap(pid: int) -> int | None:
    """Kill the worker if it still runs and collect it; its wait status, or None if collected."""
    with contextlib.suppress(ProcessLookupError, ChildProcessError):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    return None


__all__ = ["GRACE_SECONDS", "MEMORY_MB", "Forked", "Stopped", "Worker", "bounded", "hard_limit", "stopped"]
