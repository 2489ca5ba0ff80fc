"""One JSON text decoded as a trajectory or a trajectory value: the hot path of reading.

A plain line (no hole, no deep nesting, no long number: all decided from the raw bytes in C) is
decoded and shape-checked in one msgspec call (``envfactory.trajectory._wire``); any other line, and any line
msgspec refuses, goes through ``orjson.loads`` and the checks of ``_shape`` and ``_values``, which
walk values only where the line could hold a hole or nest deeper than ``MAX_DEPTH``. Syntax errors
become one clear ``TrajectoryError`` at file:line:col. Imports nothing from envfactory beyond
``envfactory.contracts.errors`` and the trajectory format modules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory import _wire
from envfactory.trajectory._model import Trajectory
from envfactory.trajectory._shape import _build, parse_trajectory
from envfactory.trajectory._values import MAX_DEPTH, _Problem, _walk, check_value

MAX_LINE_BYTES = 16 << 20
"""Longest JSON Lines line (or item of a ``.json`` list); a longer one is an error for it alone."""

_BOM = b"\xef\xbb\xbf"
# A literal of 19+ digits may not fit in 64 bits, and orjson would silently turn it into a float:
# map digits to "0" and all else to " " (bytes.translate, C speed) and look for 19 zeros.
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_NINETEEN = b"0" * 19


def json_syntax_error(err: orjson.JSONDecodeError, data: bytes, file: str, line: int) -> TrajectoryError:
    """orjson's syntax error as one clear message at file:line:col."""
    msg = err.msg
    lineno = line or err.lineno
    col = err.colno
    if "BOM" in msg:
        text = "byte order mark (BOM) inside the file; only the very start of a file may carry one"
    elif "UTF-8" in msg:
        text = "text is not valid UTF-8"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            before = data[: bad.start]
            lineno = (line or 1) + before.count(b"\n")
            col = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
            text = f"invalid UTF-8 byte 0x{data[bad.start]:02x} (the file must be UTF-8)"
    elif "depth" in msg or "recursion" in msg:
        text = f"value nested deeper than {MAX_DEPTH} levels"
    elif "surrogate" in msg:
        text = "lone UTF-16 surrogate escape in a string (\\ud800-\\udfff must come in valid pairs)"
    elif "infinity" in msg.lower():
        text = "number too large for a 64-bit float"
    elif data[err.pos : err.pos + 10].lstrip(b"-").startswith((b"NaN", b"Infinity")):
        text = "NaN and Infinity are not valid JSON numbers"
    elif "zero-length" in msg:
        text = "empty document"
    else:
        text = f"invalid JSON: {msg}"
    return TrajectoryError(text, Location(file, lineno, col))


def _may_overflow(data: bytes) -> bool:
    return _NINETEEN in data.translate(_DIGITS)


def decode_json(data: bytes) -> tuple[Any, bool]:
    """One JSON document with the fast parser; ``(value, exact)``. When a literal might overflow
    64 bits (orjson turns it into a float silently) the document is re-read with the standard
    library, whose integers are exact, and ``exact`` is True: the caller must then check values
    with the strict walk. Raises ``orjson.JSONDecodeError`` or ``ValueError`` (too long a literal)."""
    value = orjson.loads(data)
    if not _may_overflow(data):
        return value, False
    try:
        return json.loads(data), True
    except RecursionError:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels") from None


def parse_json_value(text: str | bytes, *, location: Location | None = None, what: str = "value") -> Any:
    """A JSON text embedded in a log (tool-call arguments, a tool's output) as a trajectory value,
    with every hostile-input check of the file reader; raise ``TrajectoryError`` naming ``what``."""
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
    except UnicodeEncodeError:
        raise TrajectoryError(f"{what}: lone UTF-16 surrogate in the text", location) from None
    try:
        value, exact = decode_json(data)
    except orjson.JSONDecodeError as err:
        detail = json_syntax_error(err, data, "", 0)
        raise TrajectoryError(f"{what}: {detail.message} (at column {err.colno})", location) from None
    except ValueError as err:
        raise TrajectoryError(f"{what}: {err}", location) from None
    if exact:  # long number literals: Python's exact integers, checked in full
        return check_value(value, location=location, what=what)
    # orjson already refused NaN, lone surrogates and non-string keys; what remains to check
    # (depth) and to convert (holes) is decided from the bytes, as for a file's lines
    if not (b"$var" in data or b"\\u" in data or _maybe_deep(data)):
        return value
    try:
        return _walk(value, 0, True)
    except _Problem as problem:
        rest = problem.where()
        if rest and not rest.startswith("["):
            rest = "." + rest
        raise TrajectoryError(f"{what}{rest}: {problem.message}", location) from None


_NOT_BRACKET = bytes(i for i in range(256) if i not in b"[]{}")


def _maybe_deep(data: bytes) -> bool:
    """False when the JSON text as a whole surely nests no deeper than ``MAX_DEPTH`` (so no value
    inside it does), decided in C: the strings' contents dropped (a bracket inside a string could
    otherwise pair with a real one and hide a level), then every byte but brackets, then innermost
    pairs removed pass by pass (each pass removes at most two levels). True sends the parsed
    value through the exact walk (``_walk``). On a text that is not JSON the answer does not
    matter: the decoders refuse it."""
    if data.count(b"{") + data.count(b"[") <= MAX_DEPTH:
        return False
    if b'"' in data:
        data = _outside_strings(data)
    brackets = data.translate(None, _NOT_BRACKET)
    if len(brackets) <= 2 * MAX_DEPTH:
        return False  # at most MAX_DEPTH opening brackets are left (in JSON, as many close)
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return False
        shorter = brackets.replace(b"{}", b"").replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return True
        brackets = shorter
    return bool(brackets)


def _outside_strings(data: bytes) -> bytes:
    """The JSON text without the contents of its strings. In JSON every backslash is inside a
    string and begins an escape: removing the escaped backslashes (``\\\\``, paired from the
    left as a reader pairs them) and then the escaped quotes leaves only the quotes that open
    and close strings, and the text between an opening and a closing one goes."""
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(data.split(b'"')[::2])


def parse_line(data: bytes, file: str, line: int, stem: str) -> Trajectory | TrajectoryError | None:
    """One JSON Lines line of ``file`` (numbered ``line``; ``stem`` names trajectories without an
    id): the trajectory, its error, or None for a blank line. For readers that split files
    themselves (``envfactory.parallel`` hands byte ranges to workers)."""
    overflow = _may_overflow(data)
    deep = _maybe_deep(data)
    holes = b"$var" in data or b"\\u" in data
    if not (overflow or deep or holes):
        wire = _wire.decode(data)
        if wire is not None:
            return _from_wire(wire, Location(file, line), f"{stem}:{line}")
    return _parse_slow(data, file, line, stem, overflow, deep, holes)


def parse_lines(
    lines: list[bytes], first: int, file: str, stem: str, block: bytes | None = None
) -> Iterator[Trajectory | TrajectoryError]:
    """``parse_line`` over consecutive lines numbered from ``first`` (blank ones skipped), with
    the byte scans done once for them all: ``block`` is their text in one piece when the caller
    has it. A block without ``$``, without a backslash and without a 19-digit run (found by
    ``memchr`` and one ``translate``, in C) holds no hole, no escape and no literal beyond 64
    bits, so each of its lines needs only the cheap depth bound before the fast decoder."""
    if block is None:
        block = b"\n".join(lines)
    if b"$" in block or b"\\" in block or _may_overflow(block):
        for number, data in enumerate(lines, first):
            parsed = parse_line(data, file, number, stem)
            if parsed is not None:
                yield parsed
        return
    decode, errors = _wire.decode_strict, _wire.DECODE_ERRORS
    for number, data in enumerate(lines, first):
        # the hot loop: ``_maybe_deep``'s first test written out, the default id made only for
        # a line without one
        deep = data.count(b"{") + data.count(b"[") > MAX_DEPTH and _maybe_deep(data)
        if not deep:
            try:
                wire = decode(data)
            except errors:
                pass
            else:
                tid = wire.id
                yield _from_wire(wire, Location(file, number), f"{stem}:{number}" if tid is None else tid)
                continue
        parsed = _parse_slow(data, file, number, stem, False, deep, False)
        if parsed is not None:
            yield parsed


def _parse_slow(
    data: bytes, file: str, line: int, stem: str, overflow: bool, deep: bool, holes: bool
) -> Trajectory | TrajectoryError | None:
    """The thorough path of ``parse_line``: orjson, then the shape and value checks of ``_shape``."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if not data.strip():
            return None
        return json_syntax_error(err, data, file, line)
    source = Location(file, line)
    try:
        if overflow:
            return _parse_exact(data, source, f"{stem}:{line}")
        return _build(obj, source, f"{stem}:{line}", deep=deep, holes=holes)
    except TrajectoryError as err:
        return err


def _from_wire(wire: _wire.WireTrajectory, source: Location, default_id: str) -> Trajectory:
    """The model of a line that the fast decoder accepted: shape already checked, values plain;
    the steps stay the decoded structs until a reader asks for ``Step`` models."""
    tid = default_id if wire.id is None else wire.id
    steps = _wire.DecodedSteps(wire.steps)
    return Trajectory(tid, steps, wire.contract, wire.seed, wire.initial, wire.meta, source)  # type: ignore[arg-type]


def _parse_exact(data: bytes, source: Location, default_id: str) -> Trajectory:
    """The slow path for lines with very long number literals: exact integers, then strict checks."""
    try:
        obj = json.loads(data)
    except RecursionError:
        raise TrajectoryError(f"value nested deeper than {MAX_DEPTH} levels", source) from None
    except ValueError as err:  # Python's 4300-digit limit on int literals
        raise TrajectoryError(f"number literal too long: {err}", source) from None
    return parse_trajectory(obj, source, default_id=default_id)
