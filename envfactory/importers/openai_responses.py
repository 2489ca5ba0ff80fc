"""Import OpenAI Responses API logs: ``function_call`` items and the ``function_call_output`` items
that answer them by ``call_id``.

Accepted records: a list of items; a request (``input``), a response (``output``) or both in one
object; an input-items listing (``data``); a list of such objects. Items of other types
(messages, reasoning, built-in tools) are skipped.
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
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "openai-responses"
ITEM_TYPES = frozenset({"function_call", "function_call_output"})
_KEYS = ("input", "output", "data")
_EXPECTED = "expected a list of Responses API items, or an object with 'input', 'output' or 'data'"


def import_openai_responses(
    data: Any, *, source: str, line: int = 0
) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_records(data, source, line, _is_container, _items, _import, _EXPECTED)


def _is_container(item: Any) -> bool:
    return isinstance(item, dict) and "type" not in item and any(isinstance(item.get(k), list) for k in _KEYS)


def _items(record: Any) -> list[tuple[str, Any]] | None:
    """The items with their paths, request input first, then the response output."""
    if isinstance(record, list):
        return [(f"[{i}]", item) for i, item in enumerate(record)]
    if _is_container(record):
        out: list[tuple[str, Any]] = []
        for key in _KEYS:
            items = record.get(key)
            if isinstance(items, list):
                out.extend((f"{key}[{i}]", item) for i, item in enumerate(items))
        return out
    if isinstance(record, dict) and isinstance(record.get("type"), str) and record["type"] in ITEM_TYPES:
        return [("", record)]
    return None


def _import(tid: str, items: list[tuple[str, Any]], location: Location) -> Trajectory:
    log = CallLog()
    for where, item in items:
        if not isinstance(item, dict):
            raise Problem(f"{where}: an item must be an object")
        kind = item.get("type")
        if kind == "function_call":
            name = require_str(item, "name", where)
            meta: dict[str, Any] = {"item": where}
            value = tool_input(item.get("arguments"), f"{where}.arguments", location, meta)
            call_id = item.get("call_id", item.get("id"))
            log.call(PendingStep(name, value, meta), call_id, f"{where}.call_id", "call_id")
        elif kind == "function_call_output":
            target = log.result_for(item.get("call_id"), where)
            if target is not None:
                output = item.get("output")
                text = text_of(output)
                target.output = tool_output(text if text is not None else output, f"{where}.output", location)
                target.has_output = True
    return log.finish(tid, location, FORMAT)


__all__ = ["FORMAT", "import_openai_responses"]
