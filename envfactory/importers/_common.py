"""What the importers share: reading records from a log file, default ids, tool-result decoding.

Imports only the trajectory format (``envfactory.trajectory``, ``_decode``, ``_jsonl``,
``_values``) and the error types: nothing here runs what it reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers.streams import looks_like_sse, sse_payload
from envfactory.trajectory import BROKEN_ARGUMENTS, Step, Trajectory, check_value, parse_json_value
from envfactory.trajectory._decode import decode_json, json_syntax_error
from envfactory.trajectory._jsonl import is_json_lines, iter_lines, read_document

_LINE_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")

Items = TypeVar("Items")


class Problem(Exception):
    """One conversation that cannot be imported: a message with the path into the record."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def read_records(path: Path | str) -> Iterator[tuple[Location, Any] | TrajectoryError]:
    """The JSON records of a log file: one per line for JSON Lines (streamed; also a ``.json``
    file that turns out to be JSON Lines, as BFCL ships them, and server-sent-events text, one
    record per ``data:`` line), else the whole document as one record at line 0. A record that
    cannot be parsed is a ``TrajectoryError`` in its place."""
    name = str(path)
    if Path(path).suffix.lower() not in _LINE_SUFFIXES:
        data = read_document(path, "a JSON document")
        if isinstance(data, TrajectoryError):
            yield data
            return
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if not looks_like_sse(data):
            try:
                value, _exact = decode_json(data)
            except orjson.JSONDecodeError as err:
                if not is_json_lines(data):
                    yield json_syntax_error(err, data, name, 0)
                    return
            except ValueError as err:
                yield TrajectoryError(str(err), Location(name))
                return
            else:
                yield Location(name), value
                return
    for item in iter_lines(path):
        if isinstance(item, TrajectoryError):
            yield item
            continue
        number, line = item
        payload = sse_payload(line)  # server-sent events: the JSON after "data:", framing skipped
        if payload is not None:
            if not payload:
                continue
            line = payload
        try:
            value, _exact = decode_json(line)
        except orjson.JSONDecodeError as err:
            if line.strip():
                yield json_syntax_error(err, line, name, number)
            continue
        except ValueError as err:
            yield TrajectoryError(str(err), Location(name, number))
            continue
        yield Location(name, number), value


def default_id(source: str, line: int, index: int | None) -> str:
    """``<file-stem>:<line>`` for a JSON Lines record, ``<file-stem>:<n>`` for the n-th of a list,
    ``<file-stem>`` for a whole document holding one conversation."""
    stem = Path(source).stem or source
    if line:
        return f"{stem}:{line}" if index is None else f"{stem}:{line}:{index}"
    return stem if index is None else f"{stem}:{index}"


def record_id(record: Any, source: str, line: int, index: int | None) -> str:
    """A conversation's own ``id`` when it carries a string one, else the default."""
    if isinstance(record, dict):
        own = record.get("id")
        if isinstance(own, str) and own:
            return own
        if isinstance(own, int) and not isinstance(own, bool):
            return str(own)
    return default_id(source, line, index)


def split_records(
    data: Any, source: str, line: int, is_container: Callable[[Any], bool]
) -> list[tuple[Any, str, str]]:
    """``(record, id, label)`` for each conversation record in ``data``: the items of a list of
    containers (labelled ``[i].``, the index in the list), else ``data`` itself (no label)."""
    if isinstance(data, list) and data and all(is_container(x) for x in data):
        return [(x, record_id(x, source, line, i), f"[{i - 1}].") for i, x in enumerate(data, 1)]
    return [(data, record_id(data, source, line, None), "")]


def import_records(
    data: Any,
    source: str,
    line: int,
    is_container: Callable[[Any], bool],
    items_of: Callable[[Any], Items | None],
    convert: Callable[[str, Items, Location], Trajectory],
    expected: str,
) -> Iterator[Trajectory | TrajectoryError]:
    """``import_each`` over ``split_records``: ``items_of`` reads a record's conversation items
    (None for a record of the wrong shape, which is told what was ``expected``)."""
    found = (
        (tid, items_of(record), label)
        for record, tid, label in split_records(data, source, line, is_container)
    )
    yield from import_each(found, convert, expected, Location(source, line))


def import_each(
    found: Iterable[tuple[str, Items | None, str]],
    convert: Callable[[str, Items, Location], Trajectory],
    expected: str,
    location: Location,
) -> Iterator[Trajectory | TrajectoryError]:
    """Each conversation ``(id, items, label)`` converted to a trajectory; items None (a record of
    the wrong shape) is an error saying what was ``expected``. A conversation that cannot be
    imported is one error, prefixed with its label, and the others go on."""
    for tid, items, label in found:
        try:
            if items is None:
                raise Problem(expected)
            yield convert(tid, items, location)
        except (Problem, TrajectoryError) as err:
            yield TrajectoryError(label + err.message, location)


ERROR_STATUS = 400
"""The status of a call whose result the log marks as an error (Anthropic ``is_error``, Bedrock
``status: error``, Gemini ``error``, MCP ``isError``, a failed run step): the tool refused it."""


def tool_input(value: Any, where: str, location: Location, meta: dict[str, Any]) -> Any:
    """Tool-call arguments: a JSON string (decoded, with every hostile-input check) or an object.

    Arguments an agent botched (not JSON, or hostile JSON) are the agent's finding, not an import
    error: the step keeps the raw text as its input, which no object input schema accepts, and
    ``meta["invalid_arguments"]`` says why, so that ``verify`` reports the step as ``input_schema``.
    """
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            return parse_json_value(value, location=location, what=where)
        except TrajectoryError as err:
            meta[BROKEN_ARGUMENTS] = err.message
            return _raw_text(value)
    if value is None:
        return {}
    try:
        return check_value(value, location=location, what=where)
    except TrajectoryError as err:
        meta[BROKEN_ARGUMENTS] = err.message
        return "<unreadable arguments>"


def _raw_text(text: str) -> str:
    """The text as a valid Unicode string (lone surrogates replaced)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def broken_arguments(traj: Trajectory) -> Iterator[tuple[int, Step, str]]:
    """``(step index, step, reason)`` for each step whose arguments could not be decoded."""
    for index, step in enumerate(traj.steps):
        reason = step.meta.get(BROKEN_ARGUMENTS) if step.meta else None
        if isinstance(reason, str):
            yield index, step, reason


def tool_output(value: Any, where: str, location: Location) -> Any:
    """A tool's result: a string is JSON-decoded when it parses as JSON, else kept as the string."""
    if isinstance(value, str):
        try:
            return parse_json_value(value, location=location, what=where)
        except TrajectoryError:
            return check_value(value, location=location, what=where)
    return check_value(value, location=location, what=where)


def text_of(content: Any) -> str | None:
    """The text of a content value: a string, or a list of parts with ``text`` (OpenAI ``text``,
    ``input_text``, ``output_text``; Anthropic ``text`` blocks). None when there is no text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        texts += [part for part in content if isinstance(part, str)]
        if texts:
            return "".join(texts)
    return None


def each_block(
    messages: list[Any], field: str = "content", name: str = "messages", what: str = "a message"
) -> Iterator[tuple[int, dict[str, Any], str, dict[str, Any]]]:
    """``(message index, message, path, block)`` for each object in each message's ``field`` list
    (Anthropic and Bedrock content blocks, Gemini parts); text-only messages have none."""
    for i, message in enumerate(messages):
        where = f"{name}[{i}]"
        if not isinstance(message, dict):
            raise Problem(f"{where}: {what} must be an object")
        blocks = message.get(field)
        if not isinstance(blocks, list):
            continue
        for j, block in enumerate(blocks):
            if isinstance(block, dict):
                yield i, message, f"{where}.{field}[{j}]", block


class PendingStep:
    """A tool call whose result may arrive later in the log."""

    __slots__ = ("has_output", "input", "meta", "output", "status", "tool")

    def __init__(self, tool: str, value: Any, meta: dict[str, Any]) -> None:
        self.tool = tool
        self.input = value
        self.meta = meta
        self.output: Any = None
        self.has_output = False
        self.status: int | None = None

    def step(self) -> Step:
        return Step(self.tool, self.input, self.output, self.status, self.has_output, self.meta)


_ANY: Any = object()
"""No input given: any input matches."""


class CallLog:
    """The calls of one conversation in order, with their results matched to them by call id.

    Every log format pairs a call (``tool_calls``, ``function_call``, ``tool_use``) with a later
    result that names it; this is that pairing, once.
    """

    __slots__ = ("by_id", "pending", "unmatched")

    def __init__(self) -> None:
        self.pending: list[PendingStep] = []
        self.by_id: dict[str, PendingStep] = {}
        self.unmatched: list[str] = []

    def call(self, step: PendingStep, call_id: Any, where: str, meta_key: str | None = None) -> None:
        """Record a call; ``call_id`` (when a string) must be new, and is kept in ``meta_key``."""
        if isinstance(call_id, str):
            if call_id in self.by_id:
                raise Problem(f"{where}: {call_id!r} is used by an earlier call")
            if meta_key is not None:
                step.meta[meta_key] = call_id
            self.by_id[call_id] = step
        self.pending.append(step)

    def result_for(self, call_id: Any, where: str) -> PendingStep | None:
        """The call a result answers, or None (noted as unmatched) when no call has that id."""
        target = self.by_id.get(call_id) if isinstance(call_id, str) else None
        if target is None:
            self.unmatched.append(str(call_id))
            return None
        if target.has_output:
            raise Problem(f"{where}: a second result for call {call_id!r}")
        return target

    def result_by_name(self, name: Any, value: Any = _ANY) -> PendingStep | None:
        """The oldest unanswered call of tool ``name`` (for logs whose results carry no call id),
        preferring one whose input equals ``value`` when the result repeats the call's arguments
        (Cohere v1), or None (noted as unmatched)."""
        open_calls = [s for s in self.pending if s.tool == name and not s.has_output]
        same = (s for s in open_calls if value is not _ANY and s.input == value)
        target = next(same, open_calls[0] if open_calls else None)
        if target is None:
            self.unmatched.append(str(name))
        return target

    def result_in_order(self) -> PendingStep | None:
        """The oldest unanswered call (for logs whose results name neither call nor tool, as
        Ollama's ``tool`` messages may), or None (noted as unmatched)."""
        target = next((s for s in self.pending if not s.has_output), None)
        if target is None:
            self.unmatched.append("None")
        return target

    def finish(self, tid: str, source: Location, fmt: str) -> Trajectory:
        return finish(tid, self.pending, source, fmt, self.unmatched)


def finish(
    tid: str, pending: list[PendingStep], source: Location, fmt: str, unmatched: list[str]
) -> Trajectory:
    meta: dict[str, Any] = {"source": fmt}
    if unmatched:
        meta["unmatched_results"] = unmatched
    return Trajectory(tid, tuple(p.step() for p in pending), meta=meta, source=source)


def require_str(container: dict[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value:
        if key not in container:
            raise Problem(f"{where}: missing {key!r}")
        raise Problem(f"{where}.{key}: must be a non-empty string, got {type(value).__name__}")
    return value


def conversations(
    data: Any, *, is_item: Any, is_container: Any, container_key: str
) -> list[tuple[Any, list[Any] | None, int | None]]:
    """Split the data of one record into conversations: ``(record, items, index)``.

    ``data`` is one conversation (a list of items, or a container object holding them under
    ``container_key``), or a list of containers. ``items`` is None when the shape is wrong.
    """
    if isinstance(data, list):
        if data and all(isinstance(x, dict) and is_container(x) for x in data):
            return [(x, _items(x, container_key), i) for i, x in enumerate(data, 1)]
        if all(isinstance(x, dict) and is_item(x) for x in data):
            return [(data, data, None)]
        return [(data, None, None)]
    if isinstance(data, dict) and is_container(data):
        return [(data, _items(data, container_key), None)]
    return [(data, None, None)]


def _items(container: dict[str, Any], key: str) -> list[Any] | None:
    items = container.get(key)
    return items if isinstance(items, list) else None
