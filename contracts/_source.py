"""Reading contract documents (YAML, JSON, JSON Lines) into plain values that remember where they stand.

Every mapping becomes a ``LocDict`` and every list a ``LocList``: ordinary ``dict``/``list``
subclasses that also carry the file:line:column of themselves, of their keys and of their values,
so that any later error (schema, expression, ``$ref``) can name its place in the file.

The reader is hostile-input safe: only YAML's core tags are accepted (no Python objects), the
file size, nesting depth and alias expansion are bounded, duplicate keys are errors, and
``NaN``/``Infinity`` and absurdly long integers are refused. It imports nothing above the
contracts layer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from envfactory.contracts.errors import InputError, Location

MAX_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_INT_DIGITS = 300

try:  # libyaml when present: the same node graph, much faster
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_SCALAR_TAGS = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP})


class LocDict(dict[Any, Any]):
    """A mapping read from a file: a ``dict`` that knows where it, its keys and its values stand."""

    __slots__ = ("key_locs", "loc", "value_locs")

    def __init__(self, loc: Location) -> None:
        super().__init__()
        self.loc = loc
        self.key_locs: dict[Any, Location] = {}
        self.value_locs: dict[Any, Location] = {}


class LocList(list[Any]):
    """A list read from a file: a ``list`` that knows where it and each of its items stand."""

    __slots__ = ("item_locs", "loc")

    def __init__(self, loc: Location) -> None:
        super().__init__()
        self.loc = loc
        self.item_locs: list[Location] = []


def load_document(path: str | Path) -> Any:
    """Read a YAML, JSON or JSON Lines file; errors are ``InputError``s naming file:line:col."""
    path = Path(path)
    name = str(path)
    try:
        size = path.stat().st_size
    except OSError as err:
        raise InputError(f"cannot read {name}: {err.strerror or err}", Location(name)) from None
    if path.is_dir():
        raise InputError(f"{name} is a directory, not a contract file", Location(name))
    if size > MAX_BYTES:
        raise InputError(f"file too large ({size} bytes; the limit is {MAX_BYTES})", Location(name))
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read {name}: {err.strerror or err}", Location(name)) from None
    text = decode(data, name)
    if path.suffix.lower() == ".jsonl":
        return load_json_lines(text, name)
    return load_text(text, name)


def decode(data: bytes, name: str) -> str:
    """Strict UTF-8 (a BOM is allowed); a bad byte is reported with its line and column."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start]
        line = before.count(b"\n") + 1
        col = err.start - (before.rfind(b"\n") + 1) + 1
        raise InputError("invalid UTF-8 (the file must be UTF-8 text)", Location(name, line, col)) from None


def load_text(text: str, name: str = "<string>") -> Any:
    """Parse YAML or JSON text into ``LocDict``/``LocList`` values.

    A file that is not one YAML document but whose lines are each a JSON value (JSON Lines saved
    as ``.json``, as BFCL ships its function docs) is read as a list of those values.
    """
    if "\x00" in text:
        raise InputError("binary data (NUL byte) in a text file", _offset_loc(text, text.index("\x00"), name))
    _check_nesting(text, name)
    text = _surrogate_pairs(text)
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        if _looks_like_json_lines(text):
            return load_json_lines(text, name)
        mark = err.problem_mark or err.context_mark
        where = Location(name, mark.line + 1, mark.column + 1) if mark is not None else Location(name)
        problem = err.problem or err.context or "syntax error"
        raise InputError(f"not valid YAML/JSON: {problem}", where) from None
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML/JSON: {err}", Location(name)) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", Location(name)) from None
    if node is None:
        return None
    if _ANCHOR.search(text):  # no anchor, no alias: the node graph is a tree the builder counts
        _check_expansion(node, name)
    return _Builder(name).build(node)


_ANCHOR = re.compile(r"(?:^|[\s,\[{:])&[^\s,\[\]{}]")
"""Where a YAML anchor could stand (and more: the same text inside a string). A document with
none has no alias either (an alias names an anchor), so the pass over the distinct nodes that
refuses an alias bomb early is skipped: 2 s of Stripe's 5."""


# an escaped UTF-16 surrogate pair (JSON's way to write a character beyond U+FFFF), not itself escaped
_PAIR = re.compile(r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _surrogate_pairs(text: str) -> str:
    """JSON's escaped surrogate pairs (``"\\ud83d\\udc4d"``, read by Python's ``json``) as the
    ``\\U0001f44d`` escape YAML reads: the same string, which YAML's parser would refuse."""
    if "\\u" not in text or not text.lstrip().startswith(("{", "[")):
        return text  # YAML proper: a backslash outside double quotes is literal text

    def one(match: re.Match[str]) -> str:
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        return f"{match.group(1)}\\U{code:08x}"

    return _PAIR.sub(one, text)


def load_json_lines(text: str, name: str) -> LocList:
    """One JSON value per non-empty line, as a ``LocList`` whose items are located by line."""
    result = LocList(Location(name, 1, 1))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = Location(name, number, 1)
        _check_nesting(line, name, first_line=number)
        try:
            node = yaml.compose(line, Loader=_Loader)
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark
            col = mark.column + 1 if mark is not None else 1
            raise InputError(
                f"not valid JSON: {err.problem or 'syntax error'}", Location(name, number, col)
            ) from None
        if node is None:
            continue
        _check_expansion(node, name)
        value = _Builder(name, line_offset=number - 1).build(node)
        result.append(value)
        result.item_locs.append(where)
    return result


def _looks_like_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines[:3]:
        try:
            json.loads(line)
        except ValueError:
            return False
    return True


def _offset_loc(text: str, offset: int, name: str) -> Location:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Location(name, line, col)


_BLOCK_SCALAR = re.compile(r"(?:^|[\s:-])[|>][-+0-9]*[ \t]*$")
"""A line that opens a YAML block scalar (``key: |``, ``- >-``): what follows is text."""


def _check_nesting(text: str, name: str, first_line: int = 1) -> None:
    """Refuse flow nesting or indentation deeper than the limits before the parser recurses.

    A cheap scan: quoted strings and comments are skipped; a quote only opens a string where
    YAML would start one (after a space, ``:``, ``,``, ``[``, ``{`` or at the start of a line);
    the lines of a block scalar (``description: |`` and everything indented under it) are text,
    whatever brackets and quotes the code samples in them hold.
    """
    depth = 0
    quote = ""
    escaped = False
    block: int | None = None  # the indentation of the line that opened a block scalar
    for number, raw in enumerate(text.split("\n"), first_line):
        stripped = raw.lstrip(" ")
        indent = len(raw) - len(stripped)
        if block is not None:
            if indent > block or not stripped.strip():
                continue
            block = None
        if indent > 4 * MAX_DEPTH and not quote:
            raise InputError(
                f"indentation deeper than {4 * MAX_DEPTH} columns", Location(name, number, indent)
            )
        prev = "\n"
        code = len(stripped)  # where a comment starts
        for col, ch in enumerate(stripped, indent + 1):
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\" and quote == '"':
                    escaped = True
                elif ch == quote:
                    quote = ""
            elif ch in "\"'" and prev in " \t\n:,[{-":
                quote = ch
            elif ch in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise InputError(f"nesting deeper than {MAX_DEPTH} levels", Location(name, number, col))
            elif ch in "]}":
                depth = max(0, depth - 1)
            elif ch == "#" and prev in " \t\n":
                code = col - indent - 1
                break
            prev = ch
        if not quote and depth == 0 and _BLOCK_SCALAR.search(stripped[:code].rstrip()):
            block = indent


def _check_expansion(root: yaml.Node, name: str) -> None:
    """Refuse a document whose aliases expand to more than ``MAX_NODES`` values, before building it.

    Sizes are memoized per node, so this costs one pass over the distinct nodes however large
    the expansion would be (a billion-laughs document is refused at once). Recursive aliases are
    left to the builder, which names them.
    """
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            total = 1 + sum(sizes.get(id(child), 0) for child in children)
            sizes[key] = total
            if total > MAX_NODES:
                mark = node.start_mark
                raise InputError(
                    f"document expands to more than {MAX_NODES} values (an alias bomb?)",
                    Location(name, mark.line + 1, mark.column + 1),
                )
            continue
        if key in sizes or key in on_path:
            continue
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _Builder:
    """Turns a composed YAML node graph into located values, refusing what is unsafe."""

    def __init__(self, name: str, line_offset: int = 0) -> None:
        self.name = name
        self.line_offset = line_offset
        self.nodes = 0
        self.constructor = yaml.constructor.SafeConstructor()
        self.active: set[int] = set()

    def loc(self, node: yaml.Node) -> Location:
        mark = node.start_mark
        return Location(self.name, mark.line + 1 + self.line_offset, mark.column + 1)

    def build(self, node: yaml.Node, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise InputError(
                f"document expands to more than {MAX_NODES} values (an alias bomb?)", self.loc(node)
            )
        if depth > MAX_DEPTH:
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels", self.loc(node))
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        key = id(node)
        if key in self.active:
            raise InputError("recursive alias: a YAML anchor refers to itself", self.loc(node))
        self.active.add(key)
        try:
            if isinstance(node, yaml.SequenceNode):
                return self.sequence(node, depth)
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node, depth)
        finally:
            self.active.discard(key)
        raise InputError(f"unsupported YAML node {type(node).__name__}", self.loc(node))  # pragma: no cover

    def scalar(self, node: yaml.ScalarNode) -> Any:
        tag = node.tag
        if tag not in _SCALAR_TAGS:
            raise InputError(f"unsupported YAML tag {tag!r} (only plain data is read)", self.loc(node))
        if tag == _INT:
            digits = node.value.lstrip("+-").replace("_", "")
            if len(digits) > MAX_INT_DIGITS:
                raise InputError(f"integer longer than {MAX_INT_DIGITS} digits", self.loc(node))
        if tag == _TIMESTAMP:
            return node.value  # dates stay the strings that were written
        value = self.constructor.construct_object(node, deep=True)
        if tag == _FLOAT and (value != value or value in (float("inf"), float("-inf"))):
            raise InputError(f"{node.value!r} is not a finite number", self.loc(node))
        return value

    def sequence(self, node: yaml.SequenceNode, depth: int) -> LocList:
        if node.tag != _SEQ:
            raise InputError(f"unsupported YAML tag {node.tag!r} (only plain data is read)", self.loc(node))
        result = LocList(self.loc(node))
        for item in node.value:
            result.append(self.build(item, depth + 1))
            result.item_locs.append(self.loc(item))
        return result

    def mapping(self, node: yaml.MappingNode, depth: int) -> LocDict:
        if node.tag != _MAP:
            raise InputError(f"unsupported YAML tag {node.tag!r} (only plain data is read)", self.loc(node))
        result = LocDict(self.loc(node))
        merged: list[LocDict] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.extend(self.merge_sources(value_node, depth))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError("a mapping key must be a plain value", self.loc(key_node))
            key = self.scalar(key_node)
            if isinstance(key, float | bool) or key is None:
                key = key_node.value if key is not None else "null"
            if key in result:
                first = result.key_locs[key]
                raise InputError(f"duplicate key {key!r} (first at line {first.line})", self.loc(key_node))
            result[key] = self.build(value_node, depth + 1)
            result.key_locs[key] = self.loc(key_node)
            result.value_locs[key] = self.loc(value_node)
        for source in merged:
            for key, value in source.items():
                if key not in result:
                    result[key] = value
                    result.key_locs[key] = source.key_locs.get(key, source.loc)
                    result.value_locs[key] = source.value_locs.get(key, source.loc)
        return result

    def merge_sources(self, node: yaml.Node, depth: int) -> list[LocDict]:
        value = self.build(node, depth + 1)
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, LocDict) for item in items):
            raise InputError("'<<' merges mappings only", self.loc(node))
        return list(items)


def locate(doc: Any, path: Sequence[str | int], default: Location) -> Location:
    """The location of the value at ``path`` inside ``doc``: the deepest one the path reaches."""
    best = getattr(doc, "loc", None) or default
    current = doc
    for part in path:
        if isinstance(current, LocDict) and part in current:
            best = current.value_locs.get(part, best)
            current = current[part]
        elif isinstance(current, LocList) and isinstance(part, int) and 0 <= part < len(current):
            best = current.item_locs[part] if part < len(current.item_locs) else best
            current = current[part]
        elif isinstance(current, Mapping | list) and _has(current, part):
            current = current[part]  # type: ignore[index]
        else:
            break
    return best


def _has(container: Mapping[Any, Any] | list[Any], part: str | int) -> bool:
    if isinstance(container, list):
        return isinstance(part, int) and 0 <= part < len(container)
    return part in container


def key_location(doc: Any, key: Any, default: Location) -> Location:
    """Where a mapping's key is written (for errors about the key itself, e.g. unknown keys)."""
    if isinstance(doc, LocDict):
        return doc.key_locs.get(key, doc.loc)
    return getattr(doc, "loc", None) or default
