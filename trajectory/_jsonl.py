"""The streaming readers: JSON Lines files and text, and ``.json`` documents.

Every malformed line or item becomes one ``TrajectoryError`` in place and reading goes on: one bad
line never loses the others. Lines are read in memory bounded by ``MAX_LINE_BYTES``; ``.json``
lists stream through ``_jsonlist``. Imports nothing from envfactory beyond
``envfactory.contracts.errors`` and the trajectory format modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import orjson

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory._decode import (
    _BOM,
    MAX_LINE_BYTES,
    decode_json,
    json_syntax_error,
    parse_line,
    parse_lines,
)
from envfactory.trajectory._jsonlist import _stream_list
from envfactory.trajectory._model import Trajectory
from envfactory.trajectory._shape import _build, _stem, parse_trajectory
from envfactory.trajectory._stream import STREAM_BYTES, stream_document
from envfactory.trajectory._values import _type_word

MAX_DOCUMENT_BYTES = 256 << 20
"""Largest ``.json`` document holding one object, which is read whole (lists and lines stream)."""

_LINE_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")


def iter_lines(path: Path | str) -> Iterator[tuple[int, bytes] | TrajectoryError]:
    """The lines of a file as ``(line number, bytes without the newline)``, in bounded memory
    (``iter_blocks``, one by one): a line longer than ``MAX_LINE_BYTES`` becomes an error and is
    skipped; a UTF-8 BOM at the start is dropped."""
    for item in iter_blocks(path):
        if isinstance(item, TrajectoryError):
            yield item
        else:
            yield from enumerate(item[1], item[0])


def read_trajectories(path: Path | str) -> Iterator[Trajectory | TrajectoryError]:
    """Every trajectory of a file, streamed, with each unreadable one as a ``TrajectoryError`` in
    its place. A ``.json`` file holding a list is streamed item by item (each item at most
    ``MAX_LINE_BYTES``, located at the line where it starts); a ``.json`` file holding one
    trajectory is read whole (at most ``MAX_DOCUMENT_BYTES``; one that is really JSON Lines reads
    too; one larger than ``STREAM_BYTES`` has its steps streamed, ``envfactory.trajectory._stream``);
    any other file is JSON Lines, read line by line in memory bounded by ``MAX_LINE_BYTES``."""
    name = str(path)
    if Path(path).suffix.lower() != ".json":
        yield from _read_lines(path)
        return
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
            while head.lstrip() == b"" and len(head) >= 4096:  # a file that starts with much blank space
                more = handle.read(1 << 16)
                if not more:
                    break
                head = head.lstrip() + more
        if head.startswith(_BOM):
            head = head[3:]
        if head.lstrip().startswith(b"["):
            yield from _stream_list(path)
            return
    except OSError as err:
        yield TrajectoryError.unreadable_file(err, Location(name))
        return
    try:
        large = Path(path).stat().st_size > STREAM_BYTES
    except OSError:
        large = False
    streamed = stream_document(path) if large else None
    if streamed is not None:  # one large object: its steps stream (issue 20 item 7)
        yield from streamed
        return
    data = read_document(path, "a .json file holding one object")
    if isinstance(data, TrajectoryError):
        yield data
        return
    yield from _read_document(data, name, lambda: _read_lines(path))


def read_document(path: Path | str, what: str) -> bytes | TrajectoryError:
    """A file read whole, up to ``MAX_DOCUMENT_BYTES``; ``what`` names it in the error for a
    larger one (which should be JSON Lines, to stream)."""
    name = str(path)
    try:
        if Path(path).stat().st_size > MAX_DOCUMENT_BYTES:
            return TrajectoryError(
                f"{what} is read whole and this one is larger than {MAX_DOCUMENT_BYTES >> 20} MiB; "
                "write it as JSON Lines (.jsonl) to stream it",
                Location(name),
            )
        return Path(path).read_bytes()
    except OSError as err:
        return TrajectoryError.unreadable_file(err, Location(name))


def read_trajectories_text(
    text: str | bytes, filename: str = "<memory>"
) -> Iterator[Trajectory | TrajectoryError]:
    """The reader on text in memory, named ``filename`` in locations and default ids. Read as the
    file of that name would be: JSON Lines unless it ends in ``.json``; a name with neither
    suffix (such as ``<memory>``) reads one JSON document when the whole text is one, else lines."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    suffix = Path(filename).suffix.lower()
    if suffix != ".json" and (suffix in _LINE_SUFFIXES or len(data) > MAX_DOCUMENT_BYTES):
        yield from _lines_of(data, filename)
        return
    yield from _read_document(data, filename, lambda: _lines_of(data, filename))


def _lines_of(data: bytes, name: str) -> Iterator[Trajectory | TrajectoryError]:
    if data.startswith(_BOM):
        data = data[3:]
    stem = _stem(name)
    for number, line in enumerate(data.split(b"\n"), 1):
        if len(line) > MAX_LINE_BYTES:
            yield TrajectoryError(f"line longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, number))
            continue
        parsed = parse_line(line, name, number, stem)
        if parsed is not None:
            yield parsed


def _read_lines(path: Path | str) -> Iterator[Trajectory | TrajectoryError]:
    name = str(path)
    stem = _stem(name)
    for item in iter_blocks(path):
        if isinstance(item, TrajectoryError):
            yield item
        else:
            yield from parse_lines(item[1], item[0], name, stem)


BLOCK_BYTES = 1 << 20
"""How much of a JSON Lines file ``iter_blocks`` reads at a time."""


def iter_blocks(path: Path | str) -> Iterator[tuple[int, list[bytes]] | TrajectoryError]:
    """The lines of a file (without their newlines) in blocks of about ``BLOCK_BYTES`` of whole
    lines, as ``(number of the first line, lines)``, read with one call per block. A line longer
    than ``MAX_LINE_BYTES`` becomes an error and is skipped (memory stays bounded by it and one
    block); a UTF-8 BOM at the start is dropped."""
    name = str(path)
    try:
        handle: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except OSError as err:
        yield TrajectoryError.unreadable_file(err, Location(name))
        return
    with handle:
        number = 1  # the number of the line that ``carry`` begins
        carry: list[bytes] = []  # the start of that line, in pieces (never copied while it grows)
        size = 0
        skipping = False  # inside a line already reported too long
        start = True
        while True:
            try:
                data = handle.read(BLOCK_BYTES)
            except OSError as err:
                yield TrajectoryError.unreadable_file(err, Location(name, number))
                return
            if not data:
                if carry and not skipping:
                    yield number, [b"".join(carry)]
                return
            if start:
                while len(data) < len(_BOM) and _BOM.startswith(data):  # a BOM cut short
                    more = handle.read(BLOCK_BYTES)
                    if not more:
                        break
                    data += more
                if data.startswith(_BOM):
                    data = data[len(_BOM) :]
                start = False
            cut = data.find(b"\n")
            if cut < 0:  # no line ends in this block
                if not skipping:
                    carry.append(data)
                    size += len(data)
                    if size > MAX_LINE_BYTES:
                        yield _too_long(name, number)
                        carry, size, skipping = [], 0, True
                continue
            if skipping:  # the rest of a line too long: dropped up to its end
                skipping = False
            elif size + cut > MAX_LINE_BYTES:
                carry, size = [], 0
                yield _too_long(name, number)
            else:
                carry.append(data[:cut])
                first = b"".join(carry)
                carry, size = [], 0
                yield number, [first]
            number += 1
            end = data.rfind(b"\n")
            if end > cut:
                lines = data[cut + 1 : end].split(b"\n")
                yield number, lines
                number += len(lines)
            rest = data[end + 1 :]
            if rest:
                carry, size = [rest], len(rest)


def _too_long(name: str, number: int) -> TrajectoryError:
    return TrajectoryError(f"line longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, number))


def is_json_lines(data: bytes) -> bool:
    """True when a document that fails to parse whole is JSON Lines: its first non-empty line is a
    complete JSON value and more non-empty lines follow."""
    lines = [line for line in data.split(b"\n", 64) if line.strip()]
    if len(lines) < 2:
        return False
    try:
        orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return False
    return True


def _read_document(
    data: bytes, name: str, as_lines: Callable[[], Iterator[Trajectory | TrajectoryError]]
) -> Iterator[Trajectory | TrajectoryError]:
    if data.startswith(_BOM):
        data = data[3:]
    try:
        obj, exact = decode_json(data)
    except orjson.JSONDecodeError as err:
        if is_json_lines(data):
            yield from as_lines()
        else:
            yield json_syntax_error(err, data, name, 0)
        return
    except ValueError as err:
        yield TrajectoryError(str(err), Location(name))
        return
    if isinstance(obj, dict):
        items, single = [obj], True
    elif isinstance(obj, list):
        items, single = obj, False
    else:
        yield TrajectoryError(
            f"a trajectory file holds an object or a list of objects, got {_type_word(obj)}", Location(name)
        )
        return
    stem = _stem(name)
    if single:  # the line where the object starts; items of a list have no line of their own
        start = data[: len(data) - len(data.lstrip())].count(b"\n") + 1
        source, first = Location(name, start), start
    else:
        source, first = Location(name), 1
    for index, item in enumerate(items, first):
        default_id = f"{stem}:{index}"
        try:
            if exact:
                yield parse_trajectory(item, source, default_id=default_id)
            else:
                yield _build(item, source, default_id, deep=True, holes=True)
        except TrajectoryError as err:
            if not single:
                err = TrajectoryError(f"item {index}: {err.message}", err.location)
            yield err
