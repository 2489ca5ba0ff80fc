"""Import LangChain / LangGraph message logs: an ``AIMessage``'s ``tool_calls`` and the
``ToolMessage`` that answers each by ``tool_call_id``.

LangChain serializes a message three ways, and logs keep all three: ``messages_to_dict``
(``{"type": "ai", "data": {...}}``), ``dumpd`` / LangSmith (``{"lc": 1, "type": "constructor",
"id": [..., "AIMessage"], "kwargs": {...}}``) and ``model_dump`` (``{"type": "ai", "content",
"tool_calls", ...}``). Accepted records: a list of messages; a LangGraph state or request
(``messages``); a list of them. A tool call's ``args`` is an object; an ``invalid_tool_calls``
entry (arguments the model botched, a string) is imported as the agent's broken call. A
``ToolMessage`` with ``status: "error"`` gives status 400.
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
    import_records,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "langchain"
_KINDS = {
    "ai": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "human": "human",
    "HumanMessage": "human",
    "system": "system",
    "SystemMessage": "system",
}
_EXPECTED = "expected a list of LangChain messages, or an object with 'messages'"


def import_langchain(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_records(data, source, line, _is_container, _messages, _import, _EXPECTED)


def message_fields(item: Any) -> tuple[str, dict[str, Any]] | None:
    """``(kind, fields)`` of a LangChain message in any of its serializations (``kind`` is
    ``ai``, ``tool``, ``human`` or ``system``), or None for anything else."""
    if not isinstance(item, dict):
        return None
    if item.get("lc") == 1 and isinstance(item.get("id"), list) and item["id"]:
        name, fields = item["id"][-1], item.get("kwargs")
    elif isinstance(item.get("data"), dict) and set(item) <= {"type", "data"}:
        name, fields = item.get("type"), item["data"]
    else:
        name, fields = item.get("type"), item
    kind = _KINDS.get(name) if isinstance(name, str) else None
    return (kind, fields) if kind is not None and isinstance(fields, dict) else None


def calls_tools(item: Any) -> bool:
    """Whether ``item`` is a LangChain message that makes or answers a tool call."""
    found = message_fields(item)
    if found is None:
        return False
    kind, fields = found
    return kind == "tool" or bool(fields.get("tool_calls")) or bool(fields.get("invalid_tool_calls"))


def _is_container(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("messages"), list) and message_fields(item) is None


def _messages(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(message_fields(m) is not None for m in record) else None
    if _is_container(record):
        return list(record["messages"])
    if message_fields(record) is not None:
        return [record]
    return None


def _import(tid: str, messages: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        found = message_fields(message)
        if found is None:
            raise Problem(f"{where}: not a LangChain message")
        kind, fields = found
        if kind == "ai":
            for j, call in enumerate(_list(fields, "tool_calls", where)):
                _call(log, call, f"{where}.tool_calls[{j}]", i, location)
            for j, call in enumerate(_list(fields, "invalid_tool_calls", where)):
                if isinstance(call, dict) and not isinstance(call.get("name"), str):
                    call = {**call, "name": "<unnamed>"}  # the model's botched call may lack a name
                _call(log, call, f"{where}.invalid_tool_calls[{j}]", i, location)
        elif kind == "tool":
            target = log.result_for(fields.get("tool_call_id"), where)
            if target is not None:
                content = fields.get("content")
                text = text_of(content)
                value = text if text is not None else content
                target.output = tool_output(value, f"{where}.content", location)
                target.status = ERROR_STATUS if fields.get("status") == "error" else None
                target.has_output = True
    return log.finish(tid, location, FORMAT)


def _list(fields: dict[str, Any], key: str, where: str) -> list[Any]:
    value = fields.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Problem(f"{where}.{key}: must be a list")
    return value


def _call(log: CallLog, call: Any, where: str, index: int, location: Location) -> None:
    if not isinstance(call, dict):
        raise Problem(f"{where}: must be an object with 'name' and 'args'")
    name = require_str(call, "name", where)
    meta: dict[str, Any] = {"message": index}
    value = tool_input(call.get("args"), f"{where}.args", location, meta)
    log.call(PendingStep(name, value, meta), call.get("id"), f"{where}.id", "call_id")


__all__ = ["FORMAT", "calls_tools", "import_langchain", "message_fields"]
