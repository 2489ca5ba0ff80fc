"""A ``.json`` file holding a list of trajectories, streamed item by item.

Each item is cut out of the file in chunks (orjson finds where an object ends, one regular
expression finds the structure elsewhere) and parsed like a line, located at the line where it
starts; memory stays bounded by one item and one chunk. Imports nothing from envfactory beyond
``envfactory.contracts.errors`` and the trajectory format modules.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

import msgspec
import orjson

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory import _wire
from envfactory.trajectory._decode import (
    _BOM,
    MAX_LINE_BYTES,
    _from_wire,
    _may_overflow,
    _maybe_deep,
    _parse_exact,
    json_syntax_error,
)
from envfactory.trajectory._model import Trajectory
from envfactory.trajectory._shape import _build, _stem

_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{},]', re.DOTALL)
"""A whole string (skipped in one match), a lone quote (a string the chunk cut), or structure."""
_CHUNK = 1 << 20


def _stream_list(path: Path | str) -> Iterator[Trajectory | TrajectoryError]:
    """The items of a ``.json`` file holding a list, parsed one at a time as they are found."""
    name = str(path)
    for item in list_items(path):
        yield item if isinstance(item, TrajectoryError) else parse_list_item(name, *item)


def list_items(path: Path | str) -> Iterator[tuple[int, int, bytes] | TrajectoryError]:
    """``(index, line, bytes)`` of each item of a ``.json`` list, unparsed (1-based index; the
    line where it starts), or the error in its place: for readers that parse elsewhere, as pool
    workers do with ``parse_list_item``."""
    index = 0
    for item in _list_items(path):
        if isinstance(item, TrajectoryError):
            yield item
            continue
        index += 1
        yield index, item[0], item[1]


def parse_list_item(file: str, index: int, line: int, data: bytes) -> Trajectory | TrajectoryError:
    """Item ``index`` of the list in ``file`` (its text ``data``, starting at ``line``) as a
    trajectory, or the error that names the item."""
    parsed = _parse_item(data, file, line, f"{_stem(file)}:{index}")
    if isinstance(parsed, TrajectoryError):
        return TrajectoryError(f"item {index}: {parsed.message}", parsed.location)
    return parsed


def holds_native_list(path: Path | str) -> bool:
    """Whether ``path`` is a ``.json`` file holding a list whose first item is a trajectory in
    the native format (it has ``steps``): what ``auto`` decides, without decoding the rest."""
    if Path(path).suffix.lower() != ".json":
        return False
    first = first_item(path)
    return isinstance(first, dict) and isinstance(first.get("steps"), list)


def first_item(path: Path | str) -> object | None:
    """The first item of a ``.json`` file holding a list, decoded; None when the file is not a
    list, is empty, or its first item cannot be read. Reads that one item only (a format sniffer
    need not decode a whole file to look at its start)."""
    items = _list_items(path)
    try:
        for item in items:
            if isinstance(item, TrajectoryError):
                return None
            try:
                return orjson.loads(item[1])
            except orjson.JSONDecodeError:
                return None
    finally:
        items.close()
    return None


def _parse_item(data: bytes, file: str, line: int, default_id: str) -> Trajectory | TrajectoryError:
    """One list item (possibly spread over several lines) as a trajectory, located at ``line``."""
    source = Location(file, line)
    overflow = _may_overflow(data)
    deep = _maybe_deep(data)
    holes = b"$" in data or b"\\" in data
    if not (overflow or deep or holes):  # plain: straight into the model, as a plain line
        wire = _wire.decode(data)
        if wire is not None:
            return _from_wire(wire, source, default_id)
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if not data.strip():
            return TrajectoryError("empty list item (two commas in a row, or a trailing comma)", source)
        return json_syntax_error(err, data, file, line + err.lineno - 1)
    try:
        if overflow:
            return _parse_exact(data, source, default_id)
        return _build(obj, source, default_id, deep=deep, holes=holes)
    except TrajectoryError as err:
        return err


def _located(line: int, data: bytes) -> tuple[int, bytes]:
    """An item without its leading blank space, at the line where its text starts."""
    text = data.lstrip()
    return line + data.count(b"\n", 0, len(data) - len(text)), text


def _blank_rest(tail: bytes, handle: IO[bytes]) -> bool:
    """True when nothing but blank space follows the list (read in chunks, not whole)."""
    while True:
        if tail.strip():
            return False
        tail = handle.read(_CHUNK)
        if not tail:
            return True


_BLANK = re.compile(rb"[ \t\r\n]*")


def _skip_object(data: bytes, view: memoryview, begin: int, guess: int, plain: bool) -> int:
    """Where the list item starting at ``data[begin:]`` ends, when it is an object that orjson
    parses whole within ``data`` (C speed); else ``begin``, and the scan walks the item token by
    token (an item cut by the chunk's end, or a malformed one, whose error the parse reports)."""
    first = _BLANK.match(data, begin).end()  # type: ignore[union-attr] # matches the empty string
    if first >= len(data) or data[first] != 0x7B:
        return begin
    size = guess
    while True:
        end = min(len(data), first + size)
        try:
            orjson.loads(view[first:end])
        except orjson.JSONDecodeError as err:
            if err.msg.startswith("unexpected content after document"):
                if plain:
                    return first + err.pos
                return first + len(data[first:end].decode("utf-8", "replace")[: err.pos].encode("utf-8"))
            if end < len(data) and ("end of data" in err.msg or "UTF-8" in err.msg):
                size *= 4  # cut short by the view: look further
                continue
            return begin
        return end


_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


def _separator(data: bytes, comma: int) -> bytes | None:
    """The text between two object items around the top-level comma at ``comma``, with the
    closing and opening braces (``b"},\\n  {"``), when both sides are within ``data``: the
    pattern ``_batch`` looks for to cut many items at once."""
    end = len(data[:comma].rstrip(b" \t\r\n"))
    begin = len(data) - len(data[comma + 1 :].lstrip(b" \t\r\n"))
    if end == 0 or begin >= len(data) or data[end - 1] != 0x7D or data[begin] != 0x7B:
        return None
    return data[end - 1 : begin + 1]


def _batch(data: bytes, begin: int, pattern: bytes) -> tuple[int, list[tuple[int, int]]] | bool | None:
    """The items from ``data[begin:]`` on, cut at once: the last top-level comma found by the
    separator ``pattern`` that the list's items were seen to be written with, and each item's
    ``(start, end)`` before it; None when there is no such comma, False when the text up to the
    one found is no list of whole values. Exact whatever the text: msgspec
    checks that the text up to that comma is a list of whole JSON values (it is not when the
    pattern matched inside an item, which it can only do where items are written irregularly)."""
    found = data.rfind(pattern, begin)
    if found < 0:
        return None
    comma = data.index(b",", found)
    try:
        raws = _RAW_LIST.decode(b"[" + data[begin:comma] + b"]")
    except msgspec.DecodeError:
        return False
    spans = []
    cursor = begin
    for raw in raws:
        text = bytes(raw)
        start = data.find(text, cursor)
        spans.append((start, start + len(text)))
        cursor = start + len(text)
    return comma, spans


def _list_items(
    path: Path | str, offset: int = 0, line: int = 1, nested: bool = False
) -> Generator[tuple[int, bytes] | TrajectoryError, None, int | None]:
    """``(line, bytes)`` of each top-level item of a JSON list, read in chunks. An object item is
    skipped by orjson (``_skip_object``); otherwise one regular expression finds the brackets,
    braces and commas and skips whole strings (C speed), and Python counts the nesting. Memory stays bounded by one item (at most ``MAX_LINE_BYTES``; a larger
    item is an error and is skipped) and one chunk. ``offset`` and ``line``: where the list
    starts in the file (a list ``nested`` in a document, after which the document goes on; the
    generator's return value is then the file offset just past its ``]``)."""
    name = str(path)
    depth = 0  # 1 inside the list
    item: list[bytes] = []  # pieces of the current item
    item_size = item_line = 0
    too_big = after_comma = False
    carry = b""  # a string cut by the chunk's end, scanned again with the next chunk
    guess = 4096  # the expected size of the next item
    pattern: bytes | None = None  # how items are separated, once seen (``_batch``)
    misses = 0  # batches that failed: after a few, items are cut one at a time
    try:
        handle: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except OSError as err:
        yield TrajectoryError.unreadable_file(err, Location(name))
        return None
    with handle:
        first = offset == 0
        if offset:
            handle.seek(offset)
        position = offset  # the file offset of the next read
        while True:
            try:
                chunk = handle.read(_CHUNK)
            except OSError as err:
                yield TrajectoryError.unreadable_file(err, Location(name, line))
                return None
            base = position - len(carry)  # the file offset of data[0], below
            position += len(chunk)
            if first and chunk.startswith(_BOM):
                chunk = chunk[3:]
                base += 3
            first = False
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            carry = b""
            start = 0  # where the current item's piece begins in data
            counted = 0  # data[:counted] is counted in line
            stop = len(data)  # where the scan of data ended
            view, plain = memoryview(data), data.isascii()
            pos = 0
            while True:
                match = _TOKENS.search(data, pos)
                if match is None:
                    break
                at, pos = match.start(), match.end()
                char = data[at]
                if char == 0x22:  # "
                    if match.end() - at == 1:  # an unterminated string: it goes on in the next chunk
                        stop, carry = at, data[at:]
                        break
                    continue
                if char == 0x5B or char == 0x7B:  # [ {
                    depth += 1
                    if depth == 1:  # the list opens: items start after it
                        if data[:at].strip():
                            yield TrajectoryError(
                                "a .json trajectory list must start with '['", Location(name, 1)
                            )
                            return None
                        line += data.count(b"\n", counted, at)
                        start, item_line, counted = at + 1, line, at
                        pos = _skip_object(data, view, pos, guess, plain)
                    continue
                if depth != 1:  # ] } or a comma inside an item
                    if char != 0x2C:
                        depth -= 1
                    continue
                piece = data[start:at]  # the end of an item: a comma, or the list's end
                if too_big:
                    yield TrajectoryError(
                        f"list item longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, item_line)
                    )
                elif char == 0x2C or item or piece.strip() or after_comma:
                    item.append(piece)
                    yield _located(item_line, b"".join(item))
                item, item_size, too_big, after_comma = [], 0, False, char == 0x2C
                line += data.count(b"\n", counted, at)
                start, item_line, counted = at + 1, line, at
                if char == 0x2C:
                    if pattern is None and misses < 3:
                        pattern = _separator(data, at)
                    cut = _batch(data, at + 1, pattern) if pattern is not None and misses < 3 else None
                    if cut is False:
                        misses += 1
                    elif cut is not None and cut is not True:  # many items, then on after their comma
                        at, spans = cut
                        for begin, end in spans:
                            line += data.count(b"\n", counted, begin)
                            counted = begin
                            yield line, data[begin:end]
                        line += data.count(b"\n", counted, at)
                        start, item_line, counted, pos = at + 1, line, at, at + 1
                    guess = max(4096, 2 * len(piece))
                    pos = _skip_object(data, view, pos, guess, plain)
                    continue
                if char == 0x7D:
                    yield TrajectoryError("'}' where the list should close", Location(name, item_line))
                if nested:
                    return base + at + 1
                if not _blank_rest(data[at + 1 :], handle):
                    yield TrajectoryError("text after the end of the list", Location(name, item_line))
                return None
            if depth >= 1 and not too_big:
                piece = data[start:stop]
                item_size += len(piece)
                if item_size > MAX_LINE_BYTES:
                    too_big, item = True, []
                elif piece:
                    item.append(piece)
            if len(carry) > MAX_LINE_BYTES:
                yield TrajectoryError(f"string longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, line))
                return None
            line += data.count(b"\n", counted, stop)
    where = Location(name, item_line or line)
    yield TrajectoryError("the list is not closed: the file ends inside it (truncated?)", where)
    return None
