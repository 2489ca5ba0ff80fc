"""A ``.json`` file holding one large trajectory, read in bounded memory (issue 20 item 7).

A million steps in one object took 1.95 GB read whole (22 times the file). Here the file is read
in chunks: one pass finds the top-level ``steps`` list (``steps_span``); the rest of the object
(id, initial state, meta) is parsed on its own; a second pass checks every step and counts them;
and the trajectory's ``steps`` is a ``StreamedSteps`` sequence that parses the steps again from
the file each time it is iterated, one at a time. Memory stays bounded by one chunk and one step.
Imports nothing from envfactory beyond ``envfactory.contracts.errors`` and the trajectory format
modules.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, overload

import attrs
import orjson

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory import _wire
from envfactory.trajectory._decode import MAX_LINE_BYTES, _may_overflow, _maybe_deep, decode_json
from envfactory.trajectory._jsonlist import _list_items
from envfactory.trajectory._model import Step, Trajectory
from envfactory.trajectory._shape import _build, _parse_step, _stem, parse_trajectory
from envfactory.trajectory._values import _Problem

STREAM_BYTES = 16 << 20
"""A ``.json`` file holding one object larger than this is streamed (smaller ones are read whole)."""

_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{},]', re.DOTALL)
_CHUNK = 1 << 20


class StreamedSteps(Sequence[Step]):
    """The steps of a trajectory in a file, parsed from it on each iteration (never held).

    ``may_hold_holes`` is False when no step's text holds ``$var`` (known from the pass that
    checked them), so that the verifier need not look. Indexing walks from the start: it serves
    the explanation of a failure, not the hot path; a slice is a view, not a copy.
    """

    __slots__ = ("line", "may_hold_holes", "offset", "path", "start", "stop", "total")

    def __init__(
        self,
        path: str,
        offset: int,
        line: int,
        total: int,
        may_hold_holes: bool,
        start: int = 0,
        stop: int = -1,
    ) -> None:
        self.path = path
        self.offset = offset
        self.line = line
        self.total = total  # the steps in the file (this view may be a slice of them)
        self.may_hold_holes = may_hold_holes
        self.start = start
        self.stop = total if stop < 0 else stop

    def __len__(self) -> int:
        return max(self.stop - self.start, 0)

    def __iter__(self) -> Iterator[Step]:
        steps = _steps(self.path, self.offset, self.line)
        for item in itertools.islice(steps, self.start, self.stop):
            if isinstance(item, TrajectoryError):  # the file changed since it was checked
                raise item
            yield item

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> StreamedSteps: ...

    def __getitem__(self, index: int | slice) -> Step | StreamedSteps:
        if isinstance(index, slice):
            start, stop, stride = index.indices(len(self))
            if stride != 1:
                raise ValueError("streamed steps take slices without a step")
            base = self.start
            return StreamedSteps(
                self.path,
                self.offset,
                self.line,
                self.total,
                self.may_hold_holes,
                base + start,
                base + max(stop, start),
            )
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("step index out of range")
        return next(iter(self[index : index + 1]))

    def __repr__(self) -> str:
        return f"<{len(self)} steps streamed from {self.path}>"


def _steps(
    path: str, offset: int, line: int, seen: list[bool] | None = None
) -> Iterator[Step | TrajectoryError]:
    """Each step of the list at ``offset``, parsed, or the error that names it; ``seen`` (when
    given) is set to whether any step's text holds a ``$`` or a backslash (a hole's mark)."""
    for index, item in enumerate(_list_items(path, offset, line, nested=True)):
        if isinstance(item, TrajectoryError):
            yield item
            return
        at, data = item
        if seen is not None and not seen[0]:
            seen[0] = b"$" in data or b"\\" in data
        yield _step(data, index, Location(path, at))


def _step(data: bytes, index: int, where: Location) -> Step | TrajectoryError:
    deep = _maybe_deep(data)
    if not (deep or b"$" in data or b"\\" in data or _may_overflow(data)):
        step = _wire.decode_step(data)  # plain: straight into the model
        if step is not None:
            return step
    try:
        raw, exact = decode_json(data)
    except orjson.JSONDecodeError as err:
        return TrajectoryError(f"steps[{index}]: invalid JSON: {err.msg}", where)
    except ValueError as err:
        return TrajectoryError(f"steps[{index}]: {err}", where)
    try:
        return _parse_step(raw, deep or exact, b"$var" in data or b"\\u" in data or exact)
    except _Problem as problem:
        problem.path.extend((index, "steps"))
        return TrajectoryError(problem.text(), where)


def steps_span(path: Path | str) -> tuple[int, int, int] | None:
    """``(start, end, line)`` of the top-level object's ``steps`` list in the file (the offsets
    of its ``[`` and just past its ``]``, and the line it starts on); None when the file is not
    one object with such a list, read to its end (the caller then reads it the thorough way,
    which says what is wrong)."""
    depth = 0
    key_next = False
    key: Any = None
    start = -1
    line = 1
    base = 0  # the file offset of data[0]
    carry = b""
    handle: IO[bytes]
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            if not chunk:
                return None
            data = carry + chunk if carry else chunk
            carry = b""
            pos = 0
            while True:
                match = _TOKENS.search(data, pos)
                if match is None:
                    pos = len(data)
                    break
                at, pos = match.start(), match.end()
                char = data[at]
                if char == 0x22:  # "
                    if pos - at == 1:  # cut by the chunk's end
                        carry = data[at:]
                        pos = at
                        break
                    if depth == 1 and key_next:
                        try:
                            key = orjson.loads(match.group())
                        except orjson.JSONDecodeError:
                            return None
                        key_next = False
                    continue
                if char in (0x5B, 0x7B):  # [ {
                    if depth == 0 and (char != 0x7B or data[:at].strip(b" \t\r\n\xef\xbb\xbf")):
                        return None
                    if depth == 1 and char == 0x5B and key == "steps" and start < 0:
                        start = base + at
                        line += data.count(b"\n", 0, at)
                        end = _list_end(path, start, line)  # cut item by item (batched), not token by token
                        return None if end is None else (start, end, line)
                    depth += 1
                    key_next = depth == 1
                    continue
                if char == 0x2C:  # ,
                    key_next = depth == 1
                    continue
                depth -= 1  # ] }
                if depth == 1 and char == 0x5D and start >= 0 and key == "steps":
                    return start, base + pos, line
                if depth <= 0:
                    return None
            if len(carry) > MAX_LINE_BYTES:
                return None
            if start < 0:
                line += data.count(b"\n", 0, len(data) - len(carry))
            base += len(data) - len(carry)


def _list_end(path: Path | str, start: int, line: int) -> int | None:
    """The file offset just past the ``]`` of the list at ``start``; None when it is not closed
    (an item's own error, such as one too long, is the steps' to report: read on past it)."""
    items = _list_items(path, start, line, nested=True)
    while True:
        try:
            next(items)
        except StopIteration as stop:
            end: int | None = stop.value
            return end


def holds_large_native_object(path: Path | str) -> bool:
    """Whether ``path`` is a ``.json`` file larger than ``STREAM_BYTES`` holding one object with
    a ``steps`` list: a native trajectory ``read_trajectories`` streams (what ``auto`` decides
    without decoding it whole)."""
    try:
        large = Path(path).suffix.lower() == ".json" and Path(path).stat().st_size > STREAM_BYTES
        return large and steps_span(path) is not None
    except OSError:
        return False


def stream_document(path: Path | str) -> Iterator[Trajectory | TrajectoryError] | None:
    """The one trajectory of a large ``.json`` file, its steps streamed (``StreamedSteps``);
    None when the file is not one object with a ``steps`` list (the caller reads it whole)."""
    name = str(path)
    span = steps_span(path)
    if span is None:
        return None
    start, end, line = span
    return _streamed(name, start, end, line)


def _streamed(name: str, start: int, end: int, line: int) -> Iterator[Trajectory | TrajectoryError]:
    size = Path(name).stat().st_size
    if size - (end - start) > MAX_LINE_BYTES:
        yield TrajectoryError(
            f"the fields besides 'steps' are larger than {MAX_LINE_BYTES >> 20} MiB", Location(name)
        )
        return
    with open(name, "rb") as handle:
        head = handle.read(start)
        handle.seek(end)
        tail = handle.read()
    rest = head + b"[]" + tail
    first = len(head) - len(head.lstrip(b" \t\r\n\xef\xbb\xbf"))
    source = Location(name, head[:first].count(b"\n") + 1)
    try:
        obj, exact = decode_json(rest.lstrip(b"\xef\xbb\xbf"))
        stem = _stem(name)
        if exact:
            traj = parse_trajectory(obj, source, default_id=f"{stem}:{source.line}")
        else:
            deep, holes = _maybe_deep(rest), b"$var" in rest or b"\\u" in rest
            traj = _build(obj, source, f"{stem}:{source.line}", deep=deep, holes=holes)
    except (orjson.JSONDecodeError, ValueError) as err:
        yield TrajectoryError(f"invalid JSON outside the steps: {err}", source)
        return
    except TrajectoryError as err:
        yield err
        return
    count = 0
    marked = [False]
    for step in _steps(name, start, line, marked):
        if isinstance(step, TrajectoryError):
            yield step
            return
        count += 1
    # a step's text without ``$`` or ``\`` holds no hole: walk the steps only where one does
    holes = marked[0] and any(step.has_holes for step in _steps(name, start, line) if isinstance(step, Step))
    steps = StreamedSteps(name, start, line, count, holes)
    yield attrs.evolve(traj, steps=steps)  # type: ignore[arg-type] # a sequence read on demand


__all__ = ["STREAM_BYTES", "StreamedSteps", "holds_large_native_object", "steps_span", "stream_document"]
