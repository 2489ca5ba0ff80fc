"""Import OpenAI Chat Completions logs: assistant ``tool_calls`` and the ``tool`` messages that answer them.

Accepted records (OpenAI's, and the same shape as Mistral, Ollama and Cohere v2 write it): a list
of messages; an object with ``messages`` (a request body, or a fine-tuning line with ``tools``); a
completion response (``choices[*].message``); a chat response with one ``message`` (Ollama's
``/api/chat``, Cohere v2); Assistants API run steps (one, or a ``list`` of them: one run); a stored
completion's ``list`` of messages; a list of such objects. A ``tool`` message answers its call by
``tool_call_id``, else by ``tool_name``/``name``, else in order; Cohere's ``document`` blocks give
their ``data``. The legacy ``function_call`` / ``role: function`` pair reads too. Arguments are
JSON strings; one that does not parse is an error for that conversation, pinned to the message.
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
    record_id,
    require_str,
    text_of,
    tool_input,
    tool_output,
)
from envfactory.trajectory import Trajectory

FORMAT = "openai-chat"
RUN_STEP = "thread.run.step"


def import_openai_chat(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    yield from import_each(
        _conversations(data, source, line),
        _import,
        "expected a list of chat messages, an object with 'messages', or a completion with 'choices'",
        Location(source, line),
    )


def _conversations(data: Any, source: str, line: int) -> list[tuple[str, list[Any] | None, str]]:
    if isinstance(data, list) and data and all(_is_container(x) for x in data):
        out = []
        for index, item in enumerate(data, 1):
            for tid, messages, label in _one_record(item, source, line, index):
                out.append((tid, messages, f"[{index - 1}]{'.' if not label else ''}{label}"))
        return out
    return _one_record(data, source, line, None)


def _one_record(
    data: Any, source: str, line: int, index: int | None
) -> list[tuple[str, list[Any] | None, str]]:
    tid = record_id(data, source, line, index)
    if isinstance(data, list):
        ok = all(isinstance(x, dict) and "role" in x for x in data)
        return [(tid, data if ok else None, "")]
    if isinstance(data, dict):
        if isinstance(data.get("messages"), list):
            return [(tid, data["messages"], "")]
        choices = data.get("choices")
        if isinstance(choices, list) and choices:
            out = []
            for k, choice in enumerate(choices):
                message = choice.get("message") if isinstance(choice, dict) else None
                ctid = tid if len(choices) == 1 else f"{tid}:{k}"
                label = f"choices[{k}]."
                out.append((ctid, [message] if isinstance(message, dict) else None, label))
            return out
        if data.get("object") == RUN_STEP:
            return [(tid, [data], "")]
        items = data.get("data")
        if data.get("object") == "list" and isinstance(items, list):
            if stored_messages(items):
                return [(tid, items, "data.")]
            if run_steps(items):
                runs = {step.get("run_id") for step in items} - {None}
                run = runs.pop() if len(runs) == 1 else None
                return [(run if isinstance(run, str) and index is None else tid, items, "")]
        message = data.get("message")
        if isinstance(message, dict) and "role" in message:  # an Ollama or Cohere v2 chat response
            return [(tid, [message], "message.")]
        if "role" in data:
            return [(tid, [data], "")]
    return [(default_id(source, line, index), None, "")]


def _is_container(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and ("messages" in item or "choices" in item or isinstance(item.get("message"), dict))
        and "role" not in item
    )


def stored_messages(items: list[Any]) -> bool:
    """Whether ``items`` are chat messages (``GET /v1/chat/completions/{id}/messages``); a
    Responses listing's items have a ``type``."""
    return bool(items) and all(isinstance(x, dict) and "role" in x and "type" not in x for x in items)


def run_steps(items: list[Any]) -> bool:
    """Whether ``items`` are Assistants API run steps (``GET .../runs/{id}/steps``)."""
    return bool(items) and all(isinstance(x, dict) and x.get("object") == RUN_STEP for x in items)


def _import(tid: str, messages: list[Any], location: Location) -> Trajectory:
    if run_steps(messages):
        return _importrun_steps(tid, messages, location)
    log = CallLog()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise Problem(f"{where}: a message must be an object")
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    raise Problem(f"{where}.tool_calls: must be a list")
                for j, call in enumerate(calls):
                    step = _tool_call(call, f"{where}.tool_calls[{j}]", i, location)
                    if step is not None:
                        log.call(step, step.meta.get("call_id"), f"{where}.tool_calls[{j}].id")
            function_call = message.get("function_call")
            if function_call is not None:
                log.call(_function(function_call, f"{where}.function_call", i, location), None, where)
        elif role == "tool":
            target = _answered(log, message, where)
            if target is not None:
                _set_output(target, message.get("content"), f"{where}.content", location)
        elif role == "function":
            target = log.result_by_name(message.get("name"))
            if target is not None:
                _set_output(target, message.get("content"), f"{where}.content", location)
    return log.finish(tid, location, FORMAT)


def _answered(log: CallLog, message: dict[str, Any], where: str) -> PendingStep | None:
    """The call a ``tool`` message answers: by ``tool_call_id`` (OpenAI, Mistral, Cohere), else by
    ``tool_name`` or ``name`` (Ollama), else the oldest unanswered call (Ollama's older logs)."""
    call_id = message.get("tool_call_id")
    if isinstance(call_id, str):
        return log.result_for(call_id, where)
    name = message.get("tool_name", message.get("name"))
    if isinstance(name, str):
        return log.result_by_name(name)
    return log.result_in_order()


def _importrun_steps(tid: str, steps: list[Any], location: Location) -> Trajectory:
    """An Assistants API run's steps, oldest first (the API lists the newest first by default):
    each ``function`` tool call of a ``tool_calls`` step, its ``output`` the result (none until
    submitted). A failed step's calls get status 400."""
    order = sorted(range(len(steps)), key=lambda i: (_created(steps[i]), i))
    log = CallLog()
    for i in order:
        where = f"data[{i}].step_details"
        details = steps[i].get("step_details")
        calls = details.get("tool_calls") if isinstance(details, dict) else None
        if not isinstance(calls, list):
            continue
        for j, call in enumerate(calls):
            step = _tool_call(call, f"{where}.tool_calls[{j}]", i, location)
            if step is None:
                continue
            step.meta = {
                "step": steps[i].get("id", i),
                **{k: v for k, v in step.meta.items() if k != "message"},
            }
            log.call(step, step.meta.get("call_id"), f"{where}.tool_calls[{j}].id")
            function = call.get("function")
            output = function.get("output") if isinstance(function, dict) else None
            if output is not None:
                _set_output(step, output, f"{where}.tool_calls[{j}].function.output", location)
            if steps[i].get("status") == "failed":
                step.status = ERROR_STATUS
    return log.finish(tid, location, FORMAT)


def _created(step: dict[str, Any]) -> float:
    created = step.get("created_at")
    return float(created) if isinstance(created, int | float) and not isinstance(created, bool) else 0.0


def _tool_call(call: Any, where: str, index: int, location: Location) -> PendingStep | None:
    if not isinstance(call, dict):
        raise Problem(f"{where}: a tool call must be an object")
    kind = call.get("type", "function")
    if kind == "custom":  # a custom tool's input is free text, kept as the string
        custom = call.get("custom")
        if not isinstance(custom, dict):
            raise Problem(f"{where}.custom: missing, or not an object")
        name = require_str(custom, "name", f"{where}.custom")
        text = check_value(custom.get("input", ""), location=location, what=f"{where}.custom.input")
        return PendingStep(name, text, _call_meta(call, index))
    if kind != "function":
        return None
    function = call.get("function")
    if not isinstance(function, dict):
        raise Problem(f"{where}.function: missing, or not an object")
    name = require_str(function, "name", f"{where}.function")
    meta = _call_meta(call, index)
    value = tool_input(function.get("arguments"), f"{where}.function.arguments", location, meta)
    return PendingStep(name, value, meta)


def _call_meta(call: dict[str, Any], index: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"message": index}
    if isinstance(call.get("id"), str):
        meta["call_id"] = call["id"]
    return meta


def _function(call: Any, where: str, index: int, location: Location) -> PendingStep:
    if not isinstance(call, dict):
        raise Problem(f"{where}: must be an object with 'name' and 'arguments'")
    name = require_str(call, "name", where)
    meta: dict[str, Any] = {"message": index}
    value = tool_input(call.get("arguments"), f"{where}.arguments", location, meta)
    return PendingStep(name, value, meta)


def _set_output(step: PendingStep, content: Any, where: str, location: Location) -> None:
    documents = _documents(content)
    if documents is not None:  # Cohere's tool results: document blocks holding the data
        decoded = [tool_output(d, f"{where}[{k}].document.data", location) for k, d in enumerate(documents)]
        step.output = decoded[0] if len(decoded) == 1 else decoded
        step.has_output = True
        return
    text = text_of(content)
    if text is not None:
        step.output = tool_output(text, where, location)
    elif content is not None:
        step.output = tool_output(content, where, location)
    step.has_output = True


def _documents(content: Any) -> list[Any] | None:
    """The ``data`` of each block when ``content`` is a list of Cohere ``document`` blocks."""
    if not isinstance(content, list) or not content:
        return None
    out = []
    for block in content:
        document = (
            block.get("document") if isinstance(block, dict) and block.get("type") == "document" else None
        )
        if not isinstance(document, dict) or "data" not in document:
            return None
        out.append(document["data"])
    return out
