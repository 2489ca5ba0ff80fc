"""Import Model Context Protocol sessions: the JSON-RPC ``tools/call`` requests a client sent and
the responses that answer them by ``id``.

Accepted records: a list of JSON-RPC messages (a session, or a batch), or one message. In a JSON
Lines log, consecutive messages are one session (``streams.assemble`` groups them; an
``initialize`` request starts the next). A result's ``structuredContent`` is the output when
present, else its ``content``: one text block is decoded when it is JSON, other blocks are kept
as they are. A tool error (``isError: true``) or a JSON-RPC ``error`` gives status 400 (the
error object is the output). Requests of other methods, notifications and their responses are
not calls of the contract's tools and are skipped.
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
    default_id,
    import_each,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.importers.streams import is_message
from envfactory.trajectory import Trajectory

FORMAT = "mcp"
CALL_METHOD = "tools/call"
_EXPECTED = "expected a JSON-RPC message or a list of them"


def import_mcp(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory for the session in ``data`` (a record read from ``source`` at ``line``)."""
    messages = data if isinstance(data, list) else [data] if is_message(data) else None
    if messages is not None and not all(is_message(m) for m in messages):
        messages = None
    tid = default_id(source, line, None)
    yield from import_each([(tid, messages, "")], _import, _EXPECTED, Location(source, line))


def _import(tid: str, messages: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    calls: dict[str, PendingStep] = {}
    others: set[str] = set()  # ids of requests of other methods: their responses are not ours
    for i, message in enumerate(messages):
        where = f"[{i}]"
        method = message.get("method")
        key = _key(message.get("id"))
        if method == CALL_METHOD:
            params = message.get("params")
            if not isinstance(params, dict):
                raise Problem(f"{where}.params: a tools/call request needs an object")
            meta: dict[str, Any] = {"message": i}
            if key is not None:
                if key in calls:
                    raise Problem(f"{where}.id: {message['id']!r} is used by an earlier call")
                meta["request_id"] = message["id"]
            name = require_str(params, "name", f"{where}.params")
            value = tool_input(params.get("arguments"), f"{where}.params.arguments", location, meta)
            step = PendingStep(name, value, meta)
            log.call(step, None, where)
            if key is not None:
                calls[key] = step
        elif isinstance(method, str):
            if key is not None:
                others.add(key)
        elif key is not None and ("result" in message or "error" in message):
            answered = calls.get(key)
            if answered is None:
                if key not in others:
                    log.unmatched.append(str(message.get("id")))
                continue
            if answered.has_output:
                raise Problem(f"{where}: a second response for request {message.get('id')!r}")
            _set_result(answered, message, where, location)
    return log.finish(tid, location, FORMAT)


def _key(request_id: Any) -> str | None:
    """A JSON-RPC id as a dict key (a string or an integer; ``1`` and ``"1"`` kept apart)."""
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return f"{type(request_id).__name__}:{request_id}"


def _set_result(step: PendingStep, message: dict[str, Any], where: str, location: Location) -> None:
    if "error" in message:
        step.output = check_value(message["error"], location=location, what=f"{where}.error")
        step.status = ERROR_STATUS
    else:
        result = message["result"]
        if isinstance(result, dict) and "structuredContent" in result:
            step.output = check_value(
                result["structuredContent"], location=location, what=f"{where}.result.structuredContent"
            )
        else:
            content = result.get("content") if isinstance(result, dict) else result
            blocks = content if isinstance(content, list) else None
            text = text_of(content) if blocks is None or len(blocks) == 1 else None
            step.output = (
                tool_output(text, f"{where}.result.content", location)
                if text is not None
                else check_value(content, location=location, what=f"{where}.result.content")
            )
        if isinstance(result, dict) and result.get("isError") is True:
            step.status = ERROR_STATUS
    step.has_output = True


__all__ = ["FORMAT", "import_mcp"]
