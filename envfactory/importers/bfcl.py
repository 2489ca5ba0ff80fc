"""Import BFCL multi-turn ground truth: ``{"id", "ground_truth": [[call, ...], ...turns]}``.

Each call is a Python call string such as ``"mv(source='a.txt', destination='tmp')"``. It is parsed
with ``ast`` and never evaluated: arguments must be literals (constants, negative numbers, lists,
tuples, dicts with string keys), anything else is an error for that entry. Positional arguments
take the parameter names of the function's BFCL doc, in the order its ``properties`` list them.
All turns of an entry make one trajectory; each step's ``meta.turn`` is its 0-based turn index.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from envfactory.contracts.errors import InputError, Location, TrajectoryError
from envfactory.importers._common import Problem, read_records, record_id
from envfactory.trajectory import INT_MAX, INT_MIN, MAX_DEPTH, Step, Trajectory, check_value

FORMAT = "bfcl"
MAX_CALL_CHARS = 1 << 20
"""Longest call string parsed; BFCL's longest is a few hundred characters."""


def import_bfcl(
    data: Any, *, source: str, function_docs: Mapping[str, Mapping[str, Any]] | None = None, line: int = 0
) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per ground-truth entry in ``data`` (an entry, or a list of entries)."""
    location = Location(source, line)
    docs = function_docs or {}
    entries = data if isinstance(data, list) else [data]
    many = isinstance(data, list)
    for index, entry in enumerate(entries, 1):
        label = f"[{index - 1}]: " if many else ""
        try:
            yield _entry(entry, record_id(entry, source, line, index if many else None), docs, location)
        except Problem as problem:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                label = f"entry {entry['id']!r}: "
            yield TrajectoryError(label + problem.message, location)


def _entry(entry: Any, tid: str, docs: Mapping[str, Mapping[str, Any]], location: Location) -> Trajectory:
    if not isinstance(entry, dict):
        raise Problem("a BFCL ground-truth entry must be an object with 'id' and 'ground_truth'")
    turns = entry.get("ground_truth")
    if not isinstance(turns, list):
        if "question" in entry:
            raise Problem(
                "no 'ground_truth': this is a BFCL question entry; import the matching file under "
                "possible_answer/ instead"
            )
        raise Problem("'ground_truth' must be a list of turns, each a list of call strings")
    steps: list[Step] = []
    for t, turn in enumerate(turns):
        if not isinstance(turn, list):
            raise Problem(f"ground_truth[{t}]: a turn must be a list of call strings")
        for c, call in enumerate(turn):
            where = f"ground_truth[{t}][{c}]"
            if not isinstance(call, str):
                raise Problem(f"{where}: a call must be a string such as \"cd(folder='docs')\"")
            name, arguments = parse_call(call, docs, where)
            try:
                value = check_value(arguments, location=location, what=where)
            except TrajectoryError as err:
                raise Problem(err.message) from None
            steps.append(Step(name, value, meta={"turn": t}))
    return Trajectory(tid, tuple(steps), meta={"source": FORMAT}, source=location)


def parse_call(
    text: str, docs: Mapping[str, Mapping[str, Any]], where: str = "call"
) -> tuple[str, dict[str, Any]]:
    """``(function name, arguments by parameter name)`` of one BFCL call string, or ``Problem``."""
    if len(text) > MAX_CALL_CHARS:
        raise Problem(f"{where}: call longer than {MAX_CALL_CHARS} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError) as err:
        raise Problem(f"{where}: not a Python call: {getattr(err, 'msg', err)} in {_clip(text)}") from None
    except (RecursionError, MemoryError):
        raise Problem(f"{where}: call nested too deeply: {_clip(text)}") from None
    node = tree.body
    if not isinstance(node, ast.Call):
        raise Problem(f"{where}: expected a function call such as \"cd(folder='docs')\", got {_clip(text)}")
    name = _name(node.func)
    if name is None:
        raise Problem(f"{where}: the function must be a plain (or dotted) name, got {_clip(text)}")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise Problem(f"{where}: '**' arguments are not literals: {_clip(text)}")
        arguments[keyword.arg] = _literal(keyword.value, 0, f"{where}.{keyword.arg}")
    if node.args:
        params = _parameter_names(name, docs, where)
        if len(node.args) > len(params):
            raise Problem(
                f"{where}: {name}() takes {len(params)} parameters ({', '.join(params) or 'none'}), "
                f"got {len(node.args)} positional arguments"
            )
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                raise Problem(f"{where}: '*' arguments are not literals: {_clip(text)}")
            param = params[position]
            if param in arguments:
                raise Problem(f"{where}: {name}() got argument {param!r} both by position and by keyword")
            arguments[param] = _literal(arg, 0, f"{where}.{param}")
    return name, arguments


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _parameter_names(name: str, docs: Mapping[str, Mapping[str, Any]], where: str) -> list[str]:
    doc = docs.get(name)
    if doc is None and "." in name:
        doc = docs.get(name.rsplit(".", 1)[1])
    if doc is None:
        raise Problem(
            f"{where}: {name}() has positional arguments, which need its function doc to be named "
            "(pass the BFCL function docs: --functions FILE)"
        )
    params = doc.get("parameters")
    properties = params.get("properties") if isinstance(params, Mapping) else None
    if not isinstance(properties, Mapping):
        raise Problem(f"{where}: the function doc of {name}() has no 'parameters.properties'")
    return [str(key) for key in properties]


def _literal(node: ast.expr, depth: int, where: str) -> Any:
    if depth > MAX_DEPTH:
        raise Problem(f"{where}: value nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, ast.Constant):
        return _constant(node.value, where)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = node.operand
        number = operand.value if isinstance(operand, ast.Constant) else None
        if isinstance(number, int | float) and not isinstance(number, bool):
            return _constant(number if isinstance(node.op, ast.UAdd) else -number, where)
    if isinstance(node, ast.List | ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise Problem(f"{where}: '*' inside a list is not a literal")
        return [_literal(e, depth + 1, f"{where}[{i}]") for i, e in enumerate(node.elts)]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, item in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise Problem(f"{where}: dict keys must be string literals")
            out[key.value] = _literal(item, depth + 1, f"{where}.{key.value}")
        return out
    kind = "a set" if isinstance(node, ast.Set) else f"{type(node).__name__} expression"
    raise Problem(f"{where}: only literal arguments are allowed, got {kind} `{_clip(ast.unparse(node))}`")


def _constant(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise Problem(f"{where}: integer does not fit in 64 bits")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Problem(f"{where}: number is not finite")
        return value
    raise Problem(f"{where}: a {type(value).__name__} literal is not a JSON value")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def load_bfcl_function_docs(paths: Iterable[Path | str]) -> dict[str, dict[str, Any]]:
    """Function docs by name from BFCL doc files (JSON Lines, one doc a line, as BFCL ships them
    under ``data/multi_turn_func_doc/``; a JSON list reads too). Raise ``InputError`` for an
    unreadable file, a doc without a name, or one name documented differently twice."""
    docs: dict[str, dict[str, Any]] = {}
    where: dict[str, Location] = {}
    for path in paths:
        for record in read_records(path):
            if isinstance(record, TrajectoryError):
                raise InputError(record.message, record.location)
            location, value = record
            for index, doc in enumerate(value if isinstance(value, list) else [value]):
                at = location if location.line else Location(location.file, 0)
                label = f"[{index}]: " if isinstance(value, list) else ""
                if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                    raise InputError(f"{label}a function doc must be an object with a 'name'", at)
                name = doc["name"]
                if name in docs and docs[name] != doc:
                    raise InputError(
                        f"{label}function {name!r} is already documented differently at {where[name]}", at
                    )
                docs[name] = doc
                where.setdefault(name, at)
    return docs


__all__ = ["FORMAT", "import_bfcl", "load_bfcl_function_docs", "parse_call"]
