"""Import Cohere v1 Chat API logs: a ``CHATBOT`` turn's ``tool_calls`` and the ``tool_results``
that answer them.

Cohere's v1 API names no call ids: a call is ``{"name", "parameters"}`` and a result repeats the
call it answers (``{"call": {"name", "parameters"}, "outputs": [...]}``), so a result answers the
oldest unanswered call with the same name and parameters, else the oldest of that name. Accepted
records: a ``chat_history`` (a list of ``USER`` / ``CHATBOT`` / ``SYSTEM`` / ``TOOL`` turns); a
request (``chat_history`` with the top-level ``tool_results`` of the last turn's calls); a
response (``tool_calls``, with or without its ``chat_history``); a list of them. ``outputs`` is a
list of objects: one object is the output as it is, several are the output as a list. (Cohere's
v2 API writes OpenAI-style messages: the ``openai-chat`` format reads them.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers._common import (
    CallLog,
    PendingStep,
    Problem,
    check_value,
    import_records,
    require_str,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "cohere"
ROLES = frozenset({"USER", "CHATBOT", "SYSTEM", "TOOL"})
_EXPECTED = "expected a chat_history list, a request with 'chat_history', or a response with 'tool_calls'"


def import_cohere(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_records(data, source, line, is_record, _turns, _import, _EXPECTED)


def is_turn(item: Any) -> bool:
    """Whether ``item`` is a v1 chat-history turn (its ``role`` in Cohere's upper case)."""
    return isinstance(item, dict) and isinstance(item.get("role"), str) and item["role"] in ROLES


def is_record(item: Any) -> bool:
    """Whether ``item`` is a v1 request or response (not one turn): a ``chat_history``, top-level
    ``tool_results``, or top-level ``tool_calls`` in v1's ``{"name", "parameters"}`` shape."""
    if not isinstance(item, dict) or "role" in item:
        return False
    if isinstance(item.get("chat_history"), list) or isinstance(item.get("tool_results"), list):
        return True
    calls = item.get("tool_calls")
    return isinstance(calls, list) and any(isinstance(c, dict) and "parameters" in c for c in calls)


def _turns(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(is_turn(t) for t in record) else None
    if is_turn(record):
        return [record]
    if not is_record(record):
        return None
    history = record.get("chat_history")
    turns = list(history) if isinstance(history, list) else []
    calls = record.get("tool_calls")
    if isinstance(calls, list) and calls and not _already_in(turns, calls):
        turns.append({"role": "CHATBOT", "tool_calls": calls})  # a response's own calls
    results = record.get("tool_results")
    if isinstance(results, list):
        turns.append({"role": "TOOL", "tool_results": results})  # a request's answers to the last calls
    return turns


def _already_in(turns: list[Any], calls: list[Any]) -> bool:
    """Whether a response's ``chat_history`` already ends with the turn that made ``calls``."""
    last = next((t for t in reversed(turns) if isinstance(t, dict) and t.get("role") == "CHATBOT"), None)
    return last is not None and last.get("tool_calls") == calls


def _import(tid: str, turns: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, turn in enumerate(turns):
        where = f"chat_history[{i}]"
        if not isinstance(turn, dict):
            raise Problem(f"{where}: a turn must be an object")
        for j, call in enumerate(_list(turn, "tool_calls", where)):
            cwhere = f"{where}.tool_calls[{j}]"
            if not isinstance(call, dict):
                raise Problem(f"{cwhere}: must be an object with 'name' and 'parameters'")
            name = require_str(call, "name", cwhere)
            meta: dict[str, Any] = {"message": i}
            value = tool_input(call.get("parameters"), f"{cwhere}.parameters", location, meta)
            log.call(PendingStep(name, value, meta), None, cwhere)
        for j, result in enumerate(_list(turn, "tool_results", where)):
            rwhere = f"{where}.tool_results[{j}]"
            call = result.get("call") if isinstance(result, dict) else None
            if not isinstance(call, dict):
                raise Problem(f"{rwhere}.call: must be an object with 'name' and 'parameters'")
            target = log.result_by_name(call.get("name"), _parameters(call, f"{rwhere}.call", location))
            if target is not None:
                _set_result(target, result.get("outputs"), f"{rwhere}.outputs", location)
    return log.finish(tid, location, FORMAT)


def _list(turn: dict[str, Any], key: str, where: str) -> list[Any]:
    value = turn.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Problem(f"{where}.{key}: must be a list")
    return value


def _parameters(call: dict[str, Any], where: str, location: Location) -> Any:
    """The parameters a result repeats, read as a call's are (for matching it to its call)."""
    return tool_input(call.get("parameters"), f"{where}.parameters", location, {})


def _set_result(step: PendingStep, outputs: Any, where: str, location: Location) -> None:
    if isinstance(outputs, list):
        decoded = [tool_output(o, f"{where}[{k}]", location) for k, o in enumerate(outputs)]
        step.output = decoded[0] if len(decoded) == 1 else decoded
    elif outputs is not None:
        step.output = check_value(outputs, location=location, what=where)
    step.has_output = True


__all__ = ["FORMAT", "ROLES", "import_cohere", "is_record", "is_turn"]
