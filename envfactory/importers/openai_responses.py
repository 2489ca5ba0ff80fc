"""Import OpenAI Responses API logs: ``function_call`` items and the ``function_call_output`` items
that answer them by ``call_id``; likewise ``custom_tool_call`` (free-form text input, kept as the
string) with ``custom_tool_call_output``, and remote MCP calls (``mcp_call``, whose item carries
its own ``output`` or ``error``: an error is status 400, as Anthropic's ``is_error``).

Accepted records: a list of items; a request (``input``), a response (``output``) or both in one
object; an input-items listing (``data``); a list of such objects. Items of other types
(messages, reasoning, built-in tools) are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers._common import (
    ERROR_STATUS,
    CallLog,
    PendingStep,
    Problem,
    check_value,
    import_records,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "openai-responses"
ITEM_TYPES = frozenset(
    {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "mcp_call"}
)
_CALLS = frozenset({"function_call", "custom_tool_call", "mcp_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
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
        kind = item.get("type") if isinstance(item.get("type"), str) else None  # hostile logs: anything
        if kind in _CALLS:
            name = require_str(item, "name", where)
            meta: dict[str, Any] = {"item": where}
            if kind == "custom_tool_call":
                value = check_value(item.get("input", ""), location=location, what=f"{where}.input")
            else:
                value = tool_input(item.get("arguments"), f"{where}.arguments", location, meta)
            step = PendingStep(name, value, meta)
            call_id = item.get("call_id", item.get("id"))
            log.call(step, call_id, f"{where}.call_id", "call_id")
            if kind == "mcp_call":
                _mcp_result(step, item, where, location)
        elif kind in _OUTPUTS:
            target = log.result_for(item.get("call_id"), where)
            if target is not None:
                _set_output(target, item.get("output"), f"{where}.output", location)
    return log.finish(tid, location, FORMAT)


def _set_output(step: PendingStep, output: Any, where: str, location: Location) -> None:
    text = text_of(output)
    step.output = tool_output(text if text is not None else output, where, location)
    step.has_output = True


def _mcp_result(step: PendingStep, item: dict[str, Any], where: str, location: Location) -> None:
    """An MCP call's result is in its own item: ``error`` (a failed call) or ``output``."""
    error = item.get("error")
    if error:
        step.status = ERROR_STATUS
        step.output = check_value(error, location=location, what=f"{where}.error")
        step.has_output = True
    elif item.get("output") is not None:
        _set_output(step, item["output"], f"{where}.output", location)


__all__ = ["FORMAT", "ITEM_TYPES", "import_openai_responses"]
