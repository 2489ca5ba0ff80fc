"""Import Anthropic Messages API logs: assistant ``tool_use`` blocks and the user ``tool_result``
blocks that answer them by ``tool_use_id``; likewise the MCP connector's ``mcp_tool_use`` and
``mcp_tool_result`` (both in the assistant's message). Server tools that Anthropic runs itself
(``server_tool_use``, web search) are not the user's API and are skipped.

Accepted records: a list of messages; a request body (``messages``, with ``system`` and ``tools``
ignored); a response message (``type: message``); a list of request bodies. A result with
``is_error: true`` gets status 400 and its text as output; other results have an unknown status
and their text, JSON-decoded when it parses, as output.
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
    each_block,
    import_records,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "anthropic"
_CALLS = frozenset({"tool_use", "mcp_tool_use"})
_RESULTS = frozenset({"tool_result", "mcp_tool_result"})
BLOCK_TYPES = _CALLS | _RESULTS
_EXPECTED = "expected a list of messages, an object with 'messages', or a response message"


def import_anthropic(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_records(data, source, line, _is_container, _messages, _import, _EXPECTED)


def _is_container(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("messages"), list)


def _messages(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(isinstance(m, dict) and "role" in m for m in record) else None
    if _is_container(record):
        return list(record["messages"])
    if isinstance(record, dict) and "role" in record and "content" in record:
        return [record]
    return None


def _import(tid: str, messages: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, message, bwhere, block in each_block(messages):
        kind = block.get("type") if isinstance(block.get("type"), str) else None  # hostile logs: anything
        if kind in _CALLS:
            if message.get("role") != "assistant":
                raise Problem(f"{bwhere}: a tool_use block in a {message.get('role')!r} message")
            name = require_str(block, "name", bwhere)
            meta: dict[str, Any] = {"message": i}
            value = tool_input(block.get("input"), f"{bwhere}.input", location, meta)
            log.call(PendingStep(name, value, meta), block.get("id"), f"{bwhere}.id", "tool_use_id")
        elif kind in _RESULTS:
            target = log.result_for(block.get("tool_use_id"), bwhere)
            if target is not None:
                _set_result(target, block, bwhere, location)
    return log.finish(tid, location, FORMAT)


def _set_result(step: PendingStep, block: dict[str, Any], where: str, location: Location) -> None:
    content = block.get("content")
    text = text_of(content)
    if block.get("is_error") is True:
        step.status = ERROR_STATUS
        step.output = check_value(
            text if text is not None else content, location=location, what=f"{where}.content"
        )
    elif text is not None:
        step.output = tool_output(text, f"{where}.content", location)
    else:  # no content, or only non-text blocks (images): keep them as they are
        step.output = check_value(content, location=location, what=f"{where}.content")
    step.has_output = True


__all__ = ["BLOCK_TYPES", "FORMAT", "import_anthropic"]
