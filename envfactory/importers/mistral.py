"""Import Mistral Conversations (Agents) API logs: ``function.call`` entries and the
``function.result`` entries that answer them by ``tool_call_id``.

Accepted records: a conversation's history (``{"object": "conversation.history",
"conversation_id", "entries"}``); a response (``outputs``, ``conversation.response``); a request
(``inputs``, a list of entries; a plain text input has no calls); a list of entries; a list of
such objects. Arguments are a JSON string or an object; a result is text, JSON-decoded when it
parses. Built-in tool runs (``tool.execution``), messages and agent handoffs are skipped.
(Mistral's Chat Completions API writes OpenAI-style messages: the ``openai-chat`` format reads
them.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers._common import (
    CallLog,
    PendingStep,
    Problem,
    import_records,
    require_str,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "mistral"
ENTRY_TYPES = frozenset(
    {"message.input", "message.output", "function.call", "function.result", "tool.execution", "agent.handoff"}
)
OBJECTS = frozenset({"conversation.history", "conversation.response", "conversation.messages"})
_LISTS = ("entries", "outputs", "inputs", "messages")
_EXPECTED = "expected a list of entries, or a conversation with 'entries', 'outputs' or 'inputs'"


def import_mistral(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    data = [_named(x) for x in data] if isinstance(data, list) else _named(data)
    yield from import_records(data, source, line, is_record, _entries, _import, _EXPECTED)


def is_entry(item: Any) -> bool:
    """Whether ``item`` is a Conversations API entry (``type`` such as ``function.call``)."""
    return isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"] in ENTRY_TYPES


def is_record(item: Any) -> bool:
    """Whether ``item`` is a conversation object (history, response or request) holding entries."""
    if not isinstance(item, dict) or is_entry(item):
        return False
    if isinstance(item.get("object"), str) and item["object"] in OBJECTS:
        return True
    return any(
        isinstance(item.get(key), list) and any(is_entry(e) for e in item[key])
        for key in ("entries", "outputs", "inputs")
    )


def _entries(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(is_entry(e) for e in record) else None
    if is_entry(record):
        return [record]
    if not is_record(record):
        return None
    out: list[Any] = []
    for key in _LISTS:
        items = record.get(key)
        if isinstance(items, list):
            out += items
    return out


def _import(tid: str, entries: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, entry in enumerate(entries):
        where = f"entries[{i}]"
        if not isinstance(entry, dict):
            raise Problem(f"{where}: an entry must be an object")
        kind = entry.get("type")
        if kind == "function.call":
            name = require_str(entry, "name", where)
            meta: dict[str, Any] = {"entry": i}
            value = tool_input(entry.get("arguments"), f"{where}.arguments", location, meta)
            log.call(
                PendingStep(name, value, meta), entry.get("tool_call_id"), f"{where}.tool_call_id", "call_id"
            )
        elif kind == "function.result":
            target = log.result_for(entry.get("tool_call_id"), where)
            if target is not None:
                target.output = tool_output(entry.get("result"), f"{where}.result", location)
                target.has_output = True
    return log.finish(tid, location, FORMAT)


def _named(record: Any) -> Any:
    """A conversation object with its ``conversation_id`` as the trajectory's id."""
    if is_record(record) and "id" not in record and isinstance(record.get("conversation_id"), str):
        return {**record, "id": record["conversation_id"]}
    return record


__all__ = ["ENTRY_TYPES", "FORMAT", "OBJECTS", "import_mistral", "is_entry", "is_record"]
