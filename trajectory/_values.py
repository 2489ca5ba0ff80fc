"""Trajectory values checked as hostile input: nesting depth, 64-bit integers, finite floats,
string keys, lone surrogates, and ``{"$var": name}`` objects turned into ``Hole``.

The walks here raise ``_Problem``, whose path is filled in as the walk unwinds, so that the caller
can say exactly where in a trajectory a value is wrong. Imports nothing from envfactory beyond
``envfactory.contracts.errors`` and the trajectory models.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory._model import Hole

MAX_DEPTH = 64
"""Deepest nesting of a value (``input``, ``output``, ``initial``, ``meta``): ``{}`` is 1 level."""
INT_MIN = -(1 << 63)
INT_MAX = (1 << 64) - 1
"""Integers must fit in 64 bits (signed or unsigned), as everywhere JSON is read fast."""

_VAR = "$var"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


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
