"""The trajectory file format: the models, a streaming reader and a writer.

A trajectory file is JSON Lines, one trajectory per line; a ``.json`` file holding one trajectory
or a list of them also reads (see DESIGN.md "Trajectories" and ``schemas/trajectory.schema.json``,
the published form of the same rules). ``{"$var": "name"}`` anywhere in ``input``, ``output`` or
``initial`` is a *hole*: an unknown value, the same name standing for the same value.

The reader is on the hot path of verification. A plain line (no hole, no deep nesting, no long
number: all decided from the raw bytes in C) is decoded and shape-checked in one msgspec call
(``envfactory._wire``); any other line, and any line msgspec refuses, goes through ``orjson.loads``
and the checks here, which walk values only where the line could hold a hole or nest deeper than
``MAX_DEPTH`` and say precisely what is wrong. A ``.json`` list streams too: each item is
cut out of the file in chunks (orjson finds where an object ends) and parsed like a line. Every
malformed line or item becomes one ``TrajectoryError`` in place and reading goes on: one bad line
never loses the others.

This module must import nothing from envfactory beyond ``envfactory.contracts.errors``, so that
every layer (solver, fuzz, CLI) can read and write trajectories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, NoReturn

import attrs
import orjson

from envfactory import _wire
from envfactory.contracts.errors import Location, TrajectoryError

MAX_DEPTH = 64
"""Deepest nesting of a value (``input``, ``output``, ``initial``, ``meta``): ``{}`` is 1 level."""
MAX_LINE_BYTES = 16 << 20
"""Longest JSON Lines line (or item of a ``.json`` list); a longer one is an error for it alone."""
MAX_DOCUMENT_BYTES = 256 << 20
"""Largest ``.json`` document holding one object, which is read whole (lists and lines stream)."""
INT_MIN = -(1 << 63)
INT_MAX = (1 << 64) - 1
"""Integers must fit in 64 bits (signed or unsigned), as everywhere JSON is read fast."""

IN_MEMORY = Location("<memory>")
SCHEMA_ID = "https://envfactory.dev/schemas/trajectory.schema.json"
SCHEMA_PATH = Path(__file__).parent / "schemas" / "trajectory.schema.json"

TRAJECTORY_FIELDS = ("id", "contract", "seed", "initial", "steps", "meta")
STEP_FIELDS = ("tool", "input", "output", "status", "meta")
_TOP = frozenset(TRAJECTORY_FIELDS)
_STEP = frozenset(STEP_FIELDS)
_BOM = b"\xef\xbb\xbf"
_LINE_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
_VAR = "$var"
# A literal of 19+ digits may not fit in 64 bits, and orjson would silently turn it into a float:
# map digits to "0" and all else to " " (bytes.translate, C speed) and look for 19 zeros.
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_NINETEEN = b"0" * 19
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


# ---------------------------------------------------------------------------------------- models


@attrs.frozen(slots=True)
class Hole:
    """An unknown value in a trajectory, written ``{"$var": name}``; equal names are equal values."""

    name: str

    def __repr__(self) -> str:
        return f"Hole({self.name!r})"


@attrs.frozen(slots=True)
class Step:
    """One tool call: its input, and its output and status where they were recorded.

    ``has_output`` tells a recorded ``null`` output (``output=None, has_output=True``) from an
    unknown one. Holes inside ``input`` and ``output`` are ``Hole`` instances.
    """

    tool: str
    input: Any
    output: Any = None
    status: int | None = None
    has_output: bool = False
    meta: Mapping[str, Any] | None = None

    @property
    def has_holes(self) -> bool:
        """True when the input, or the recorded output, holds an unknown value."""
        if _any_hole(self.input):
            return True
        return self.has_output and _any_hole(self.output)


@attrs.frozen(slots=True)
class Trajectory:
    """A recorded sequence of tool calls, with the contract, seed and initial state it assumes.

    ``source`` is where it was read (file and line); ``id`` defaults to ``"<file-stem>:<line>"``.
    """

    id: str
    steps: tuple[Step, ...]
    contract: str | None = None
    seed: int | None = None
    initial: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    source: Location = attrs.field(factory=lambda: IN_MEMORY)

    @property
    def has_holes(self) -> bool:
        """True when any step or the initial state holds an unknown value."""
        return any(step.has_holes for step in self.steps) or _any_hole(self.initial)

    def holes(self) -> tuple[str, ...]:
        """The distinct hole names, in order of first appearance (initial state first)."""
        seen: dict[str, None] = {}
        for hole in iter_holes(self.initial):
            seen.setdefault(hole.name)
        for step in self.steps:
            for hole in iter_holes(step.input):
                seen.setdefault(hole.name)
            if step.has_output:
                for hole in iter_holes(step.output):
                    seen.setdefault(hole.name)
        return tuple(seen)


def iter_holes(value: Any) -> Iterator[Hole]:
    """Every ``Hole`` inside a value, depth first, in document order (repeats included)."""
    if isinstance(value, Hole):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_holes(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_holes(item)


def _any_hole(value: Any) -> bool:
    return next(iter_holes(value), None) is not None


# ------------------------------------------------------------------------------- value checking


class _Problem(Exception):
    """A shape error inside one trajectory; the path is filled in while the walk unwinds."""

    def __init__(self, message: str, *path: str | int) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = list(reversed(path))  # innermost first, reversed when shown

    def where(self) -> str:
        """The path as text; a hostile nesting shows only its two ends."""
        path = list(reversed(self.path))
        if len(path) > 12:
            tail = format_path(path[-2:])
            tail = tail if tail.startswith("[") else "." + tail
            return f"{format_path(path[:6])}...{tail} ({len(path)} levels)"
        return format_path(path)

    def text(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


def format_path(path: Iterable[str | int]) -> str:
    """``steps[2].input.user["first name"]``: the path into a trajectory, as a user reads it."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def _show(value: Any) -> str:
    """A short rendering of an offending value for messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=False) if _is_json_scalar(value) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _type_word(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _hole(obj: dict[str, Any]) -> Hole:
    if len(obj) != 1:
        others = ", ".join(repr(k) for k in obj if k != _VAR)
        raise _Problem(f'a hole {{"$var": ...}} must have no other keys, found {others}')
    name = obj[_VAR]
    if not isinstance(name, str) or not name:
        raise _Problem(f'a hole\'s "$var" must be a non-empty string, got {_show(name)}')
    return Hole(name)


def _walk(value: Any, depth: int, holes: bool) -> Any:
    """Check the nesting depth of a value already known to be JSON, and turn ``$var`` objects into
    holes when ``holes``. Copy-on-write: returns ``value`` itself when nothing changes."""
    cls = value.__class__
    if cls is not dict and cls is not list:
        return value
    if cls is dict and holes and _VAR in value:
        return _hole(value)
    if depth >= MAX_DEPTH:
        raise _Problem(f"value nested deeper than {MAX_DEPTH} levels")
    out = None
    for key, item in value.items() if cls is dict else enumerate(value):
        icls = item.__class__
        if icls is dict or icls is list:
            try:
                new = _walk(item, depth + 1, holes)
            except _Problem as problem:
                problem.path.append(key)
                raise
            if new is not item:
                if out is None:
                    out = cls(value)
                out[key] = new
    return value if out is None else out


def _normalize(value: Any, depth: int, limit: int) -> Any:
    """Turn a Python value that should be JSON into plain JSON (dict, list, str, int, float, bool,
    None, and ``Hole``), or raise: non-string keys, non-finite floats, integers beyond 64 bits,
    lone surrogates, other types, nesting beyond ``limit``."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _Problem("string holds a lone UTF-16 surrogate (not valid Unicode)") from None
        return value
    if isinstance(value, bool):  # bool subclasses int; numpy-style bools end here too
        return bool(value)
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise _Problem(f"integer {_short_int(value)} does not fit in 64 bits")
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _Problem("NaN and Infinity are not JSON numbers")
        return float(value)
    if isinstance(value, Hole):
        return value
    if isinstance(value, Mapping):
        if depth >= limit:
            raise _Problem(f"value nested deeper than {MAX_DEPTH} levels")
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Problem(f"object keys must be strings, got {_show(key)}")
            try:
                out[str(key)] = _normalize(item, depth + 1, limit)
            except _Problem as problem:
                problem.path.append(key)
                raise
        return out
    if isinstance(value, list | tuple):
        if depth >= limit:
            raise _Problem(f"value nested deeper than {MAX_DEPTH} levels")
        lout: list[Any] = []
        for index, item in enumerate(value):
            try:
                lout.append(_normalize(item, depth + 1, limit))
            except _Problem as problem:
                problem.path.append(index)
                raise
        return lout
    raise _Problem(f"{type(value).__name__} is not a JSON value")


def _short_int(value: int) -> str:
    text = str(value)
    return text if len(text) <= 30 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"


def check_value(value: Any, *, location: Location | None = None, what: str = "value") -> Any:
    """A Python value made into a trajectory value: plain JSON with ``{"$var": n}`` turned into
    ``Hole``, checked for JSON-ness and depth. For importers and programmatic construction."""
    try:
        return _walk(_normalize(value, 0, MAX_DEPTH), 0, True)
    except _Problem as problem:
        rest = problem.where()
        if rest and not rest.startswith("["):
            rest = "." + rest
        raise TrajectoryError(f"{what}{rest}: {problem.message}", location) from None


# ------------------------------------------------------------------------------------- parsing


def parse_trajectory(obj: Any, source: Location, *, default_id: str | None = None) -> Trajectory:
    """A trajectory from an already-parsed JSON object (any Python mapping); raise
    ``TrajectoryError`` with a path into the object on any shape error."""
    try:
        plain = _normalize(obj, 0, MAX_DEPTH + 4)  # steps[i].input is 4 levels below the top
    except _Problem as problem:
        raise TrajectoryError(problem.text(), source) from None
    return _build(plain, source, default_id or _default_id(source), deep=True, holes=True)


def _stem(file: str) -> str:
    return Path(file).stem or file


def _default_id(source: Location, index: int = 0) -> str:
    stem = _stem(source.file)
    if index:
        return f"{stem}:{index}"
    return f"{stem}:{source.line}" if source.line else stem


def _build(obj: Any, source: Location, default_id: str, *, deep: bool, holes: bool) -> Trajectory:
    try:
        return _parse(obj, source, default_id, deep, holes)
    except _Problem as problem:
        message = problem.text()
        tid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(tid, str) and source.line == 0:
            message += f" (trajectory {tid!r})"
        raise TrajectoryError(message, source) from None


def _parse(obj: Any, source: Location, default_id: str, deep: bool, holes: bool) -> Trajectory:
    if obj.__class__ is not dict:
        raise _Problem(f"a trajectory must be a JSON object, got {_type_word(obj)}")
    if not _TOP.issuperset(obj):
        _unknown(obj, _TOP, "trajectory")
    raw_steps = obj.get("steps")
    if raw_steps.__class__ is not list:
        if "steps" not in obj:
            raise _Problem("missing required field 'steps' (a list of tool calls)")
        raise _Problem(f"must be a list of steps, got {_type_word(raw_steps)}", "steps")
    steps = []
    for index, raw in enumerate(raw_steps):
        try:
            steps.append(_parse_step(raw, deep, holes))
        except _Problem as problem:
            problem.path.extend((index, "steps"))
            raise
    tid = obj.get("id")
    if tid is None:
        tid = default_id
    elif tid.__class__ is not str:
        raise _Problem(f"must be a string, got {_show(tid)}", "id")
    contract = obj.get("contract")
    if contract is not None and contract.__class__ is not str:
        raise _Problem(f"must be a string (the contract's path), got {_show(contract)}", "contract")
    seed = obj.get("seed")
    if seed is not None and seed.__class__ is not int:
        seed = _integral(seed)
        if seed is None:
            raise _Problem(f"must be an integer, got {_show(obj['seed'])}", "seed")
    initial = obj.get("initial")
    if initial is not None:
        if initial.__class__ is not dict:
            raise _Problem(
                f"must be an object (state variable -> value), got {_type_word(initial)}", "initial"
            )
        if _VAR in initial:
            raise _Problem("the initial state must be an object of state variables, not a hole", "initial")
        if deep or holes:
            initial = _walk_at(initial, holes, "initial")
    meta = obj.get("meta")
    if meta is not None:
        if meta.__class__ is not dict:
            raise _Problem(f"must be an object, got {_type_word(meta)}", "meta")
        if deep:
            _walk_at(meta, False, "meta")
    return Trajectory(tid, tuple(steps), contract, seed, initial, meta, source)


def _parse_step(raw: Any, deep: bool, holes: bool) -> Step:
    if raw.__class__ is not dict:
        raise _Problem(f"a step must be an object with 'tool' and 'input', got {_type_word(raw)}")
    if not _STEP.issuperset(raw):
        _unknown(raw, _STEP, "step")
    tool = raw.get("tool")
    if tool.__class__ is not str or not tool:
        if "tool" not in raw:
            raise _Problem("missing required field 'tool' (the operation's name)")
        raise _Problem(f"must be a non-empty string, got {_show(tool)}", "tool")
    if "input" not in raw:
        raise _Problem("missing required field 'input' (use {} for a call without arguments)")
    value = raw["input"]
    if deep or holes:
        value = _walk_at(value, holes, "input")
    has_output = "output" in raw
    output = raw.get("output")
    if has_output and (deep or holes):
        output = _walk_at(output, holes, "output")
    status = raw.get("status")
    if status is not None and (status.__class__ is not int or not 100 <= status <= 599):
        status = _integral(status)
        if status is None or not 100 <= status <= 599:
            raise _Problem(f"must be an integer HTTP status 100..599, got {_show(raw['status'])}", "status")
    meta = raw.get("meta")
    if meta is not None:
        if meta.__class__ is not dict:
            raise _Problem(f"must be an object, got {_type_word(meta)}", "meta")
        if deep:
            _walk_at(meta, False, "meta")
    return Step(tool, value, output, status, has_output, meta)


def _integral(value: Any) -> int | None:
    """An integer written as ``200.0`` (JSON Schema calls it an integer too); None otherwise."""
    if value.__class__ is int:
        return value
    if value.__class__ is float and value.is_integer() and INT_MIN <= value <= INT_MAX:
        return int(value)
    return None


def _walk_at(value: Any, holes: bool, field: str) -> Any:
    cls = value.__class__
    if cls is not dict and cls is not list:
        return value
    try:
        return _walk(value, 0, holes)
    except _Problem as problem:
        problem.path.append(field)
        raise


def _unknown(obj: dict[str, Any], allowed: frozenset[str], what: str) -> NoReturn:
    extra = sorted(set(obj) - allowed)
    order = TRAJECTORY_FIELDS if what == "trajectory" else STEP_FIELDS
    names = ", ".join(repr(k) for k in extra[:3]) + (", ..." if len(extra) > 3 else "")
    plural = "s" if len(extra) > 1 else ""
    raise _Problem(
        f"unknown {what} field{plural} {names} (allowed: {', '.join(order)}; put provenance under 'meta')"
    )


# ---------------------------------------------------------------------------------- JSON input


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
    inside it does), decided in C: every byte but brackets dropped, innermost pairs removed pass
    by pass (each pass removes at least one level). True sends the parsed value through the exact
    walk (``_walk``)."""
    if data.count(b"{") + data.count(b"[") <= MAX_DEPTH:
        return False
    brackets = data.translate(None, _NOT_BRACKET)  # brackets inside strings only make it cautious
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return False
        shorter = brackets.replace(b"{}", b"").replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return True
        brackets = shorter
    return bool(brackets)


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
    """The model of a line that the fast decoder accepted: shape already checked, values plain."""
    unset = _wire.UNSET
    steps = tuple(
        Step(s.tool, s.input, None, s.status, False, s.meta)
        if s.output is unset
        else Step(s.tool, s.input, s.output, s.status, True, s.meta)
        for s in wire.steps
    )
    tid = default_id if wire.id is None else wire.id
    return Trajectory(tid, steps, wire.contract, wire.seed, wire.initial, wire.meta, source)


def _parse_exact(data: bytes, source: Location, default_id: str) -> Trajectory:
    """The slow path for lines with very long number literals: exact integers, then strict checks."""
    try:
        obj = json.loads(data)
    except RecursionError:
        raise TrajectoryError(f"value nested deeper than {MAX_DEPTH} levels", source) from None
    except ValueError as err:  # Python's 4300-digit limit on int literals
        raise TrajectoryError(f"number literal too long: {err}", source) from None
    return parse_trajectory(obj, source, default_id=default_id)


def iter_lines(path: Path | str) -> Iterator[tuple[int, bytes] | TrajectoryError]:
    """The lines of a file as ``(line number, bytes)``, in bounded memory: a line longer than
    ``MAX_LINE_BYTES`` becomes an error and is skipped; a UTF-8 BOM at the start is dropped."""
    name = str(path)
    try:
        handle: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except OSError as err:
        yield TrajectoryError(f"cannot read file: {err.strerror or err}", Location(name))
        return
    with handle:
        number = 0
        while True:
            try:
                data = handle.readline(MAX_LINE_BYTES + 1)
            except OSError as err:
                yield TrajectoryError(f"cannot read file: {err.strerror or err}", Location(name, number + 1))
                return
            if not data:
                return
            number += 1
            if len(data) > MAX_LINE_BYTES and not (len(data) == MAX_LINE_BYTES + 1 and data.endswith(b"\n")):
                while data and not data.endswith(b"\n"):
                    data = handle.readline(1 << 20)
                yield TrajectoryError(f"line longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, number))
                continue
            if number == 1 and data.startswith(_BOM):
                data = data[3:]
            yield number, data


def read_trajectories(path: Path | str) -> Iterator[Trajectory | TrajectoryError]:
    """Every trajectory of a file, streamed, with each unreadable one as a ``TrajectoryError`` in
    its place. A ``.json`` file holding a list is streamed item by item (each item at most
    ``MAX_LINE_BYTES``, located at the line where it starts); a ``.json`` file holding one
    trajectory is read whole (at most ``MAX_DOCUMENT_BYTES``; one that is really JSON Lines reads
    too); any other file is JSON Lines, read line by line in memory bounded by ``MAX_LINE_BYTES``."""
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
        size = Path(path).stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            yield TrajectoryError(
                f"a .json file holding one object is read whole and this one is larger than "
                f"{MAX_DOCUMENT_BYTES >> 20} MiB; write it as JSON Lines (.jsonl) to stream it",
                Location(name),
            )
            return
        data = Path(path).read_bytes()
    except OSError as err:
        yield TrajectoryError(f"cannot read file: {err.strerror or err}", Location(name))
        return
    yield from _read_document(data, name, lambda: _read_lines(path))


_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{},]', re.DOTALL)
"""A whole string (skipped in one match), a lone quote (a string the chunk cut), or structure."""
_CHUNK = 1 << 20


def _stream_list(path: Path | str) -> Iterator[Trajectory | TrajectoryError]:
    """The items of a ``.json`` file holding a list, parsed one at a time as they are found."""
    name = str(path)
    stem = _stem(name)
    index = 0
    for item in _list_items(path):
        if isinstance(item, TrajectoryError):
            yield item
            continue
        index += 1
        line, data = item
        parsed = _parse_item(data, name, line, f"{stem}:{index}")
        if isinstance(parsed, TrajectoryError):
            parsed = TrajectoryError(f"item {index}: {parsed.message}", parsed.location)
        yield parsed


def _parse_item(data: bytes, file: str, line: int, default_id: str) -> Trajectory | TrajectoryError:
    """One list item (possibly spread over several lines) as a trajectory, located at ``line``."""
    source = Location(file, line)
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if not data.strip():
            return TrajectoryError("empty list item (two commas in a row, or a trailing comma)", source)
        return json_syntax_error(err, data, file, line + err.lineno - 1)
    try:
        if _may_overflow(data):
            return _parse_exact(data, source, default_id)
        deep = _maybe_deep(data)
        holes = b"$var" in data or b"\\u" in data
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


def _list_items(path: Path | str) -> Iterator[tuple[int, bytes] | TrajectoryError]:
    """``(line, bytes)`` of each top-level item of a JSON list, read in chunks. An object item is
    skipped by orjson (``_skip_object``); otherwise one regular expression finds the brackets,
    braces and commas and skips whole strings (C speed), and Python counts the nesting. Memory stays bounded by one item (at most ``MAX_LINE_BYTES``; a larger
    item is an error and is skipped) and one chunk."""
    name = str(path)
    depth = 0  # 1 inside the list
    line = 1  # line of data[counted]
    item: list[bytes] = []  # pieces of the current item
    item_size = item_line = 0
    too_big = after_comma = False
    carry = b""  # a string cut by the chunk's end, scanned again with the next chunk
    guess = 4096  # the expected size of the next item
    try:
        handle: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except OSError as err:
        yield TrajectoryError(f"cannot read file: {err.strerror or err}", Location(name))
        return
    with handle:
        first = True
        while True:
            try:
                chunk = handle.read(_CHUNK)
            except OSError as err:
                yield TrajectoryError(f"cannot read file: {err.strerror or err}", Location(name, line))
                return
            if first and chunk.startswith(_BOM):
                chunk = chunk[3:]
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
                            return
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
                    guess = max(4096, 2 * len(piece))
                    pos = _skip_object(data, view, pos, guess, plain)
                    continue
                if char == 0x7D:
                    yield TrajectoryError("'}' where the list should close", Location(name, item_line))
                if not _blank_rest(data[at + 1 :], handle):
                    yield TrajectoryError("text after the end of the list", Location(name, item_line))
                return
            if depth >= 1 and not too_big:
                piece = data[start:stop]
                item_size += len(piece)
                if item_size > MAX_LINE_BYTES:
                    too_big, item = True, []
                elif piece:
                    item.append(piece)
            if len(carry) > MAX_LINE_BYTES:
                yield TrajectoryError(f"string longer than {MAX_LINE_BYTES >> 20} MiB", Location(name, line))
                return
            line += data.count(b"\n", counted, stop)
    where = Location(name, item_line or line)
    yield TrajectoryError("the list is not closed: the file ends inside it (truncated?)", where)


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
    for item in iter_lines(path):
        if isinstance(item, TrajectoryError):
            yield item
            continue
        parsed = parse_line(item[1], name, item[0], stem)
        if parsed is not None:
            yield parsed


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


# ---------------------------------------------------------------------------------------- output


def _default(value: Any) -> Any:
    if isinstance(value, Hole):
        return {_VAR: value.name}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _unholed(value: Any) -> Any:
    if isinstance(value, Hole):
        return {_VAR: value.name}
    if isinstance(value, Mapping):
        return {key: _unholed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_unholed(item) for item in value]
    return value


def _shallow(traj: Trajectory) -> dict[str, Any]:
    """The written form with holes still ``Hole`` (orjson's ``default`` writes them)."""
    out: dict[str, Any] = {"id": traj.id}
    if traj.contract is not None:
        out["contract"] = traj.contract
    if traj.seed is not None:
        out["seed"] = traj.seed
    if traj.initial is not None:
        out["initial"] = traj.initial
    steps = []
    for step in traj.steps:
        entry: dict[str, Any] = {"tool": step.tool, "input": step.input}
        if step.has_output:
            entry["output"] = step.output
        if step.status is not None:
            entry["status"] = step.status
        if step.meta is not None:
            entry["meta"] = step.meta
        steps.append(entry)
    out["steps"] = steps
    if traj.meta is not None:
        out["meta"] = traj.meta
    return out


def to_json(traj: Trajectory) -> dict[str, Any]:
    """The trajectory as plain JSON data: holes back to ``{"$var": name}``, unknown output and
    status omitted, keys in the written order (id, contract, seed, initial, steps, meta)."""
    result: dict[str, Any] = _unholed(_shallow(traj))
    return result


def dumps_trajectory(traj: Trajectory) -> bytes:
    """One trajectory as one line of JSON (no newline)."""
    try:
        return orjson.dumps(_shallow(traj), default=_default)
    except TypeError as err:  # orjson.JSONEncodeError is a TypeError
        raise TrajectoryError(
            f"trajectory {traj.id!r} cannot be written as JSON: {err}", traj.source
        ) from None


def dumps_jsonl(trajs: Iterable[Trajectory]) -> str:
    """Trajectories as JSON Lines text, one per line, each line ending in a newline."""
    return "".join(dumps_trajectory(t).decode("utf-8") + "\n" for t in trajs)


def write_trajectories(path: Path | str | IO[bytes], trajs: Iterable[Trajectory]) -> int:
    """Write trajectories as JSON Lines (streamed); return how many were written.

    The file loads with HuggingFace ``datasets`` as JSON Lines. ``input``, ``output``,
    ``initial`` and ``meta`` are free-form, so their Arrow types may differ from row to row;
    ``datasets`` (>= 4) stores such mixed fields as JSON when it sees the mix in the first chunk
    it reads (10 MB). For files whose rows differ later on, pass
    ``features=trajectory_features()`` to ``datasets.load_dataset`` (robust for any file).
    """
    if isinstance(path, str | Path):
        with open(path, "wb") as handle:
            return _write(handle, trajs)
    return _write(path, trajs)


def _write(handle: IO[bytes], trajs: Iterable[Trajectory]) -> int:
    count = 0
    for traj in trajs:
        handle.write(dumps_trajectory(traj) + b"\n")
        count += 1
    return count


def trajectory_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of one trajectory."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def trajectory_features() -> Any:
    """``datasets.Features`` for a trajectory file: free-form values as ``Json`` so that rows with
    different shapes load together. Imports ``datasets`` (an optional dependency) on call."""
    from datasets import Features, Json, List, Value

    return Features(
        {
            "id": Value("string"),
            "contract": Value("string"),
            "seed": Value("int64"),
            "initial": Json(),
            "steps": List(
                {
                    "tool": Value("string"),
                    "input": Json(),
                    "output": Json(),
                    "status": Value("int64"),
                    "meta": Json(),
                }
            ),
            "meta": Json(),
        }
    )


__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "SCHEMA_ID",
    "Hole",
    "Step",
    "Trajectory",
    "check_value",
    "dumps_jsonl",
    "dumps_trajectory",
    "iter_holes",
    "parse_json_value",
    "parse_line",
    "parse_trajectory",
    "read_trajectories",
    "read_trajectories_text",
    "to_json",
    "trajectory_features",
    "trajectory_schema",
    "write_trajectories",
]
