"""Import BFCL multi-turn ground truth: ``{"id", "ground_truth": [[call, ...], ...turns]}``.

Each call is a Python call string such as ``"mv(source='a.txt', destination='tmp')"``. It is parsed
with ``ast`` and never evaluated: arguments must be literals (constants, negative numbers, lists,
tuples, dicts with string keys), anything else is an error for that entry. Positional arguments
take the parameter names of the function's BFCL doc, in the order its ``properties`` list them.
All turns of an entry make one trajectory; each step's ``meta.turn`` is its 0-based turn index.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from envfactory.contracts.errors import InputError, Location, TrajectoryError
from envfactory.importers._common import Problem, read_records, record_id
from envfactory.trajectory import MAX_DEPTH, Step, Trajectory, check_value
from envfactory.trajectory._values import INT_MAX, INT_MIN

FORMAT = "bfcl"
MAX_CALL_CHARS = 1 << 20
"""Longest call string parsed; BFCL's longest is a few hundred characters."""


CLASS_DOC_FILES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
"""BFCL's API classes and their function-doc files under ``data/multi_turn_func_doc/`` (as in
``bfcl_eval.constants.executable_backend_config``, copied so that nothing of bfcl_eval is imported)."""

Docs = Mapping[str, Mapping[str, Any]]


def import_bfcl(
    data: Any,
    *,
    source: str,
    function_docs: Docs | None = None,
    line: int = 0,
    questions: Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per ground-truth entry in ``data`` (an entry, or a list of entries).

    ``function_docs`` name positional arguments; ``questions`` (entry id -> involved classes, see
    ``load_questions``; default: the installed ``bfcl_eval``'s test entries of the same id) add the
    docs of the entry's classes and are kept in the trajectory's ``meta.involved_classes``."""
    location = Location(source, line)
    entries = data if isinstance(data, list) else [data]
    many = isinstance(data, list)
    for index, entry in enumerate(entries, 1):
        label = f"[{index - 1}]: " if many else ""
        try:
            tid = record_id(entry, source, line, index if many else None)
            classes = questions.get(tid) if questions else None
            if classes is None and tid.startswith("multi_turn_"):
                classes = installed_questions().get(tid)
            yield _entry(entry, tid, _docs_for(function_docs, classes), classes, location)
        except Problem as problem:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                label = f"entry {entry['id']!r}: "
            yield TrajectoryError(label + problem.message, location)


class _Chained(Mapping[str, Mapping[str, Any]]):
    """The given docs first, then the docs of the entry's classes."""

    def __init__(self, *maps: Docs) -> None:
        self._maps = maps

    def __getitem__(self, key: str) -> Mapping[str, Any]:
        for docs in self._maps:
            if key in docs:
                return docs[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter({key: None for docs in self._maps for key in docs})

    def __len__(self) -> int:
        return len(set().union(*self._maps))


def _docs_for(given: Docs | None, classes: tuple[str, ...] | None) -> Docs:
    if not classes:
        return given or {}
    try:
        by_class = class_function_docs(classes)
    except InputError as err:
        raise Problem(f"function docs of {', '.join(classes)}: {err}") from None
    return _Chained(given, by_class) if given else by_class


def _entry(
    entry: Any, tid: str, docs: Docs, classes: tuple[str, ...] | None, location: Location
) -> Trajectory:
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
            if isinstance(turn, dict):
                raise Problem(
                    f"ground_truth[{t}]: this is single-turn BFCL ground truth (each function with its "
                    "acceptable argument values), not a call sequence; only multi-turn files import"
                )
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
    meta: dict[str, Any] = {"source": FORMAT}
    if classes:
        meta["involved_classes"] = list(classes)
    return Trajectory(tid, tuple(steps), meta=meta, source=location)


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


def bfcl_data_dir() -> Path | None:
    """The ``data/`` folder of the installed ``bfcl_eval`` package (found without importing it),
    or None when it is not installed."""
    try:
        spec = importlib.util.find_spec("bfcl_eval")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        data = Path(folder) / "data"
        if (data / "multi_turn_func_doc").is_dir():
            return data
    return None


def class_doc_files(classes: Iterable[str], data_dir: Path | None = None) -> list[Path]:
    """The function-doc files of BFCL API classes (``involved_classes`` of a test entry); raise
    ``InputError`` for an unknown class or when ``bfcl_eval`` is not installed."""
    root = data_dir or bfcl_data_dir()
    if root is None:
        raise InputError(
            "the BFCL function docs are not at hand: install bfcl-eval (pip install --no-deps "
            "bfcl-eval) or pass them with --functions FILE"
        )
    files = []
    for name in classes:
        file = CLASS_DOC_FILES.get(name)
        if file is None:
            raise InputError(f"unknown BFCL class {name!r}; known: {', '.join(CLASS_DOC_FILES)}")
        files.append(root / "multi_turn_func_doc" / file)
    return files


@functools.lru_cache(maxsize=64)
def class_function_docs(classes: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The union of the installed function docs of BFCL API classes, by function name (cached)."""
    return load_bfcl_function_docs(class_doc_files(classes))


def write_class_docs(classes: Iterable[str], dest: Path | str) -> Path:
    """Write the function docs of BFCL API classes, joined, to ``dest`` (JSON Lines), a tool list
    that ``envfactory.load`` reads as one contract for an entry's ``involved_classes``."""
    out = Path(dest)
    with open(out, "w", encoding="utf-8") as handle:
        for path in class_doc_files(classes):
            text = path.read_text(encoding="utf-8")
            handle.write(text if text.endswith("\n") else text + "\n")
    return out


def load_questions(path: Path | str) -> dict[str, tuple[str, ...]]:
    """Entry id -> ``involved_classes`` from a BFCL test-entry file (``BFCL_v4_multi_turn_*.json``,
    JSON Lines). Entries without classes are left out; raise ``InputError`` when unreadable."""
    out: dict[str, tuple[str, ...]] = {}
    for record in read_records(path):
        if isinstance(record, TrajectoryError):
            raise InputError(record.message, record.location)
        _location, value = record
        for entry in value if isinstance(value, list) else [value]:
            if not isinstance(entry, dict):
                continue
            tid, classes = entry.get("id"), entry.get("involved_classes")
            if (
                isinstance(tid, str)
                and isinstance(classes, list)
                and all(isinstance(c, str) for c in classes)
            ):
                out[tid] = tuple(classes)
    return out


@functools.lru_cache(maxsize=1)
def installed_questions() -> dict[str, tuple[str, ...]]:
    """Entry id -> involved classes of every multi-turn test entry of the installed ``bfcl_eval``
    (empty when it is not installed); read once, on the first entry that needs it."""
    root = bfcl_data_dir()
    out: dict[str, tuple[str, ...]] = {}
    if root is None:
        return out
    for path in sorted(root.glob("BFCL_v*_multi_turn_*.json")):
        try:
            out.update(load_questions(path))
        except InputError:
            continue
    return out


def questions_beside(path: Path | str) -> Path | None:
    """The test-entry file of a ground-truth file as BFCL lays them out (``data/X.json`` for
    ``data/possible_answer/X.json``), when it exists."""
    answer = Path(path)
    if answer.parent.name != "possible_answer":
        return None
    candidate = answer.parent.parent / answer.name
    return candidate if candidate.is_file() else None


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


__all__ = [
    "CLASS_DOC_FILES",
    "FORMAT",
    "bfcl_data_dir",
    "class_doc_files",
    "class_function_docs",
    "import_bfcl",
    "installed_questions",
    "load_bfcl_function_docs",
    "load_questions",
    "parse_call",
    "questions_beside",
    "write_class_docs",
]
