"""Verification at scale: the same work on one process, a process pool, or a Ray cluster.

Work is cut into chunks in input order. For JSON Lines in the native format a chunk is a byte
range of whole lines (the main process only finds line ends; the workers read, parse and verify);
for anything else it is already-read trajectories. At most a few chunks per worker are in flight and results come back in
input order, so memory stays flat however large the input. Each worker loads the contract once,
from its path (contracts hold compiled closures, which do not pickle).
"""

from __future__ import annotations

import collections
import contextlib
import operator
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import attrs

from envfactory.contracts.errors import Location, TrajectoryError, UsageError
from envfactory.contracts.loader import load
from envfactory.contracts.model import Contract
from envfactory.contracts.optional import require
from envfactory.trajectory import (
    MAX_LINE_BYTES,
    Trajectory,
    holds_large_native_object,
    holds_native_list,
    is_native_record,
    list_items,
    parse_lines,
    parse_list_item,
    read_trajectories,
)
from envfactory.verification import Result, Verifier, unreadable

CHUNK_LINES = 512
CHUNK_BYTES = 1 << 20
"""Most bytes of whole lines per chunk."""
MIN_CHUNK_BYTES = 64 << 10
"""Fewest bytes per chunk (bar the file's last): chunks shrink toward it as the file's end nears
(guided self-scheduling), so that the workers finish together instead of one waiting on the
other's last big chunk."""
CHUNKS_PER_WORKER_LEFT = 4
"""A chunk is at most the remaining bytes over this many chunks per worker."""
IN_FLIGHT_PER_WORKER = 3
ENGINES = ("local", "ray")

Item: TypeAlias = Trajectory | TrajectoryError
Chunk: TypeAlias = tuple[str, Any]
"""``("range", (file, offset, size, first line))``, ``("list", (file, [(index, line, bytes) |
TrajectoryError]))`` (items of a ``.json`` list, unparsed) or ``("items", [Trajectory |
TrajectoryError])``."""


@attrs.frozen(slots=True)
class ContractRef:
    """How to load a contract in a worker process: its path and the loader's options."""

    path: str
    with_state: str | None = None
    closed_world: bool = False

    def load(self) -> Contract:
        return load(self.path, with_state=self.with_state, closed_world=self.closed_world)


@attrs.frozen(slots=True)
class Options:
    """The verification options every worker applies."""

    allow_rejected: bool = False
    timeout: float = 5.0


# ------------------------------------------------------------------------------------ reading


def read_input(path: str, input_format: str = "native") -> Iterator[Item]:
    """Trajectories of one file in a given format (``native``, ``auto`` or a log format)."""
    if input_format == "native" or (input_format == "auto" and _native_file(path)):
        return read_trajectories(path)
    from envfactory import importers

    return importers.read(input_format, path)


def _native_file(path: str) -> bool:
    """Whether an ``auto`` file is in the native format, told as the importers tell it (its first
    record), without loading them: a ``.json`` list or large object of trajectories, or JSON
    Lines whose first record is one."""
    if Path(path).suffix.lower() == ".json":
        return holds_native_list(path) or holds_large_native_object(path)
    try:
        with open(path, "rb") as handle:
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                if raw.strip():
                    import orjson

                    return is_native_record(orjson.loads(raw))
    except (OSError, ValueError):
        return False
    return False


def _is_native_lines(path: str, input_format: str) -> bool:
    """True when the file can be split into raw lines that workers parse themselves."""
    if Path(path).suffix.lower() == ".json":
        return False
    return input_format == "native" or (input_format == "auto" and _native_file(path))


def _list_chunks(path: str) -> Iterator[Chunk]:
    """``("list", (path, [(index, line, bytes) | TrajectoryError, ...]))``: the main process only
    cuts the list into items, the workers parse them."""
    batch: list[tuple[int, int, bytes] | TrajectoryError] = []
    for item in list_items(path):
        batch.append(item)
        if len(batch) >= CHUNK_LINES:
            yield ("list", (path, batch))
            batch = []
    if batch:
        yield ("list", (path, batch))


def chunks(files: Sequence[str], input_format: str, jobs: int = 1) -> Iterator[Chunk]:
    """The input cut into chunks, in order."""
    for path in files:
        if _is_native_lines(path, input_format):
            yield from _ranges(path, jobs)
        elif input_format in ("native", "auto") and holds_native_list(path):
            yield from _list_chunks(path)
        else:
            items: list[Item] = []
            for entry in read_input(path, input_format):
                items.append(entry)
                if len(items) >= CHUNK_LINES:
                    yield ("items", items)
                    items = []
            if items:
                yield ("items", items)


def _ranges(path: str, jobs: int = 1) -> Iterator[Chunk]:
    """Byte ranges of whole lines, ``("range", (path, offset, size, first line number))``: the
    main process only finds line ends, the workers read and parse their own range. A line longer
    than ``MAX_LINE_BYTES`` is skipped here and becomes one error, in its place."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except OSError as err:
        yield ("items", [TrajectoryError.unreadable_file(err, Location(path))])
        return
    with handle:
        offset, line = 0, 1
        try:
            size = os.fstat(handle.fileno()).st_size  # 0 for a pipe: full-size chunks
            while True:
                left = (size - offset) // (CHUNKS_PER_WORKER_LEFT * jobs)
                block = handle.read(min(CHUNK_BYTES, max(MIN_CHUNK_BYTES, left)))
                if not block:
                    return
                cut = block.rfind(b"\n") + 1
                head, partial = block[:cut], block[cut:]
                long_size = 0
                if partial:
                    rest = (
                        handle.readline(MAX_LINE_BYTES + 2 - len(partial))
                        if len(partial) <= MAX_LINE_BYTES
                        else b""
                    )
                    whole = partial + rest
                    if len(whole) - whole.endswith(b"\n") <= MAX_LINE_BYTES:
                        head += whole
                    else:
                        long_size = len(whole)
                        while not whole.endswith(b"\n"):
                            whole = handle.readline(1 << 20)
                            if not whole:
                                break
                            long_size += len(whole)
                if head:
                    yield ("range", (path, offset, len(head), line))
                    offset += len(head)
                    line += head.count(b"\n") + (not head.endswith(b"\n"))
                if long_size:
                    error = TrajectoryError(
                        f"line longer than {MAX_LINE_BYTES >> 20} MiB", Location(path, line)
                    )
                    yield ("items", [error])
                    offset += long_size
                    line += 1
        except OSError as err:
            yield (
                "items",
                [TrajectoryError.unreadable_file(err, Location(path, line))],
            )


def _read_range(path: str, offset: int, size: int, first: int) -> Iterator[Item]:
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(size)
    except OSError as err:
        yield TrajectoryError.unreadable_file(err, Location(path, first))
        return
    if offset == 0 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    # the byte scans (holes, escapes, long literals) once for the range, as the serial reader
    yield from parse_lines(data.split(b"\n"), first, path, Path(path).stem or path, data)


# ------------------------------------------------------------------------------------ workers

_VERIFIERS: dict[tuple[ContractRef, Options], Verifier] = {}


def _verifier(ref: ContractRef, options: Options) -> Verifier:
    key = (ref, options)
    verifier = _VERIFIERS.get(key)
    if verifier is None:
        verifier = Verifier(ref.load(), allow_rejected=options.allow_rejected, timeout=options.timeout)
        _VERIFIERS[key] = verifier
    return verifier


def run_chunk(ref: ContractRef, options: Options, chunk: Chunk) -> list[Result]:
    """Verify one chunk in this process (the worker's entry point)."""
    verifier = _verifier(ref, options)
    kind, payload = chunk
    items: Iterable[Item]
    if kind == "range":
        items = _read_range(*payload)
    elif kind == "list":
        name, raw = payload
        items = (i if isinstance(i, TrajectoryError) else parse_list_item(name, *i) for i in raw)
    else:
        items = payload
    return [unreadable(i) if isinstance(i, TrajectoryError) else verifier.check(i) for i in items]


Packed: TypeAlias = "tuple[Any, ...]"
"""A result as a worker sends it back: a tuple of its fields (``Result(*packed)``), and for a valid
one only ``(id, seconds, steps, source)``: pickling a tuple of plain values costs a fraction of
pickling the instance, on both sides (issue 17 item 2)."""

_FIELDS = operator.attrgetter(*Result.__struct_fields__)


def run_packed(ref: ContractRef, options: Options, chunk: Chunk) -> list[Packed]:
    """``run_chunk`` with every result packed into a tuple (``unpack`` undoes it)."""
    return [
        (r.id, r.seconds, r.steps, r.source) if r.verdict == "valid" else _FIELDS(r)
        for r in run_chunk(ref, options, chunk)
    ]


def unpack(packed: list[Packed]) -> list[Result]:
    """The results of ``run_packed``, as ``run_chunk`` gives them."""
    return [
        Result(p[0], "valid", seconds=p[1], steps=p[2], source=p[3]) if len(p) == 4 else Result(*p)
        for p in packed
    ]


def _ordered(
    submit: Callable[[Chunk], Any], wait: Callable[[Any], list[Result]], work: Iterable[Chunk], limit: int
) -> Iterator[Result]:
    """Submit chunks with at most ``limit`` in flight; yield results in input order."""
    pending: collections.deque[Any] = collections.deque()
    for chunk in work:
        pending.append(submit(chunk))
        if len(pending) >= limit:
            yield from wait(pending.popleft())
    while pending:
        yield from wait(pending.popleft())


# ------------------------------------------------------------------------------------ engines


def verify_files(
    ref: ContractRef,
    files: Sequence[str],
    *,
    input_format: str = "native",
    options: Options | None = None,
    jobs: int = 1,
    engine: str = "local",
    ray_address: str | None = None,
    contract: Contract | None = None,
) -> Iterator[Result]:
    """Every trajectory of ``files`` verified, results in input order, with ``jobs`` workers."""
    options = options or Options()
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if engine == "ray":
        return _ray(ref, files, input_format, options, jobs, ray_address)
    if jobs == 1:
        return _serial(ref, files, input_format, options, contract)
    return _pool(ref, files, input_format, options, jobs, contract)


def _serial(
    ref: ContractRef, files: Sequence[str], input_format: str, options: Options, contract: Contract | None
) -> Iterator[Result]:
    verifier = Verifier(
        contract or ref.load(), allow_rejected=options.allow_rejected, timeout=options.timeout
    )
    for path in files:
        for item in read_input(path, input_format):
            yield unreadable(item) if isinstance(item, TrajectoryError) else verifier.check(item)


def _pool(
    ref: ContractRef,
    files: Sequence[str],
    input_format: str,
    options: Options,
    jobs: int,
    contract: Contract | None = None,
) -> Iterator[Result]:
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    verifier = Verifier(
        contract or ref.load(), allow_rejected=options.allow_rejected, timeout=options.timeout
    )
    _flush_stdio()
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    # forked workers inherit this verifier instead of loading and compiling the contract again;
    # the entry is this pool's only, and removed with it
    _VERIFIERS[(ref, options)] = verifier
    try:
        with ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=worker_start, initargs=(os.getpid(),)
        ) as pool:

            def submit(chunk: Chunk) -> Future[list[Packed]]:
                return pool.submit(run_packed, ref, options, chunk)

            def wait(future: Future[list[Packed]]) -> list[Result]:
                return unpack(future.result())

            yield from _ordered(submit, wait, chunks(files, input_format, jobs), jobs * IN_FLIGHT_PER_WORKER)
    finally:
        _VERIFIERS.pop((ref, options), None)


PARENT_POLL_SECONDS = 0.5


def worker_start(parent: int) -> None:
    """Run in each worker first: it ends when its parent does (issue 20 item 6). A parent killed
    by SIGKILL runs no cleanup, and its workers, blocked writing to a pipe nobody reads, would
    live on under init. Linux delivers SIGKILL at the parent's death (``PR_SET_PDEATHSIG``);
    elsewhere, and as a second line, a daemon thread sees the parent change and exits. SIGTERM
    gets its default action back (the CLI's parent turns it into KeyboardInterrupt)."""
    import signal
    import threading

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="envfactory-parent-watch", daemon=True).start()


def _flush_stdio() -> None:
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _ray(
    ref: ContractRef,
    files: Sequence[str],
    input_format: str,
    options: Options,
    jobs: int,
    address: str | None,
) -> Iterator[Result]:
    ray: Any = require("ray", "--engine ray")
    ref.load()
    _flush_stdio()  # forked helpers must not inherit (and write out again) half a report
    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(num_cpus=max(jobs, 2), include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        remote = ray.remote(run_packed)

        def submit(chunk: Chunk) -> Any:
            return remote.remote(ref, options, chunk)

        def wait(handle: Any) -> list[Result]:
            return unpack(ray.get(handle))

        yield from _ordered(
            submit, wait, chunks(files, input_format, max(jobs, 2)), max(jobs, 2) * IN_FLIGHT_PER_WORKER
        )
    finally:
        if started_here:
            ray.shutdown()


__all__ = [
    "ENGINES",
    "ContractRef",
    "Options",
    "chunks",
    "read_input",
    "run_chunk",
    "run_packed",
    "unpack",
    "verify_files",
]
