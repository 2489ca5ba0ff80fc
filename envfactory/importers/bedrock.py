"""Import Amazon Bedrock Converse API logs: the ``toolUse`` blocks of assistant messages and the
``toolResult`` blocks that answer them by ``toolUseId``.

Accepted records: a list of messages; a request (``messages``; ``toolConfig`` and ``system``
ignored); a response (``output.message``); a list of requests. A result's ``content`` is a list of
blocks: a single ``json`` block is the output as it is, text blocks are joined (and decoded when
the text is JSON); ``status: error`` gives status 400.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers._common import (
    ERROR_STATUS,
    CallLog,
    PendingStep,
    check_value,
    each_block,
    import_records,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "bedrock"
BLOCK_KEYS = frozenset({"toolUse", "toolResult"})
_EXPECTED = "expected a list of messages, an object with 'messages', or a response with 'output.message'"


def import_bedrock(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_records(data, source, line, _is_container, _messages, _import, _EXPECTED)


def _is_container(item: Any) -> bool:
    return isinstance(item, dict) and (
        isinstance(item.get("messages"), list) or isinstance(response_message(item), dict)
    )


def response_message(record: dict[str, Any]) -> Any:
    """A Converse response's message (``output.message``), or None."""
    output = record.get("output")
    return output.get("message") if isinstance(output, dict) else None


def _messages(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(isinstance(m, dict) and "role" in m for m in record) else None
    if isinstance(record, dict):
        if isinstance(record.get("messages"), list):
            return list(record["messages"])
        message = response_message(record)
        if isinstance(message, dict):
            return [message]
        if "role" in record and "content" in record:
            return [record]
    return None


def _import(tid: str, messages: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, _message, bwhere, block in each_block(messages):
        use, result = block.get("toolUse"), block.get("toolResult")
        if isinstance(use, dict):
            name = require_str(use, "name", f"{bwhere}.toolUse")
            meta: dict[str, Any] = {"message": i}
            value = tool_input(use.get("input"), f"{bwhere}.toolUse.input", location, meta)
            log.call(PendingStep(name, value, meta), use.get("toolUseId"), f"{bwhere}.toolUse", "tool_use_id")
        elif isinstance(result, dict):
            target = log.result_for(result.get("toolUseId"), bwhere)
            if target is not None:
                _set_result(target, result, f"{bwhere}.toolResult", location)
    return log.finish(tid, location, FORMAT)


def _set_result(step: PendingStep, result: dict[str, Any], where: str, location: Location) -> None:
    content = result.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if len(blocks) == 1 and "json" in blocks[0]:
        step.output = check_value(blocks[0]["json"], location=location, what=f"{where}.content[0].json")
    else:
        text = text_of(content)
        step.output = (
            tool_output(text, f"{where}.content", location)
            if text is not None
            else check_value(content, location=location, what=f"{where}.content")
        )
    if result.get("status") == "error":
        step.status = ERROR_STATUS
    step.has_output = True


__all__ = ["BLOCK_KEYS", "FORMAT", "import_bedrock", "response_message"]
