"""Import Google Gemini API logs (Gemini API and Vertex AI ``generateContent``): the
``functionCall`` parts of ``model`` turns and the ``functionResponse`` parts that answer them.

Accepted records: a list of contents; a request (``contents``; ``tools`` and
``systemInstruction`` ignored); a response (``candidates[*].content``, one trajectory per
candidate); a list of requests. Parts are read in camelCase, as the REST API writes them, and in
snake_case, as the Python SDK's ``to_dict`` does. A response answers the call with the same ``id``
when both carry one, else the oldest unanswered call of the same name (the API's own rule). The
response object is the output, or its ``output`` when that is all it holds (the key the API
documents for a function's result); one holding only an ``error`` (the key it documents for a
failed function) gives status 400.
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
    tool_input,
)
from envfactory.trajectory import Trajectory

FORMAT = "gemini"
CALL_KEYS = ("functionCall", "function_call")
RESPONSE_KEYS = ("functionResponse", "function_response")
_EXPECTED = "expected a list of contents, an object with 'contents', or a response with 'candidates'"


def import_gemini(data: Any, *, source: str, line: int = 0) -> Iterator[Trajectory | TrajectoryError]:
    """One trajectory per conversation in ``data`` (a record read from ``source`` at ``line``)."""
    if isinstance(data, dict) and isinstance(data.get("candidates"), list):
        yield from _candidates(data, source, line)
        return
    yield from import_records(data, source, line, _is_container, _contents, _import, _EXPECTED)


def _candidates(data: dict[str, Any], source: str, line: int) -> Iterator[Trajectory | TrajectoryError]:
    """A response: each candidate's content is one conversation (the id gets ``:k`` when several)."""
    candidates = data["candidates"]
    for k, candidate in enumerate(candidates):
        content = candidate.get("content") if isinstance(candidate, dict) else None
        record: dict[str, Any] = {"contents": [content] if isinstance(content, dict) else None}
        own = data.get("id", data.get("responseId"))
        if isinstance(own, str) and own:
            record["id"] = own if len(candidates) == 1 else f"{own}:{k}"
        for item in import_records(record, source, line, _is_container, _contents, _import, _EXPECTED):
            if isinstance(item, TrajectoryError) and len(candidates) > 1:
                yield TrajectoryError(f"candidates[{k}].{item.message}", item.location)
            else:
                yield item


def _is_container(item: Any) -> bool:
    return isinstance(item, dict) and "contents" in item


def _contents(record: Any) -> list[Any] | None:
    if isinstance(record, list):
        return record if all(isinstance(c, dict) and "parts" in c for c in record) else None
    if _is_container(record):
        contents = record["contents"]
        return list(contents) if isinstance(contents, list) else None
    if isinstance(record, dict) and "parts" in record:
        return [record]
    return None


def _part(part: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    for key in keys:
        if key in part:
            return key, part[key]
    return None


def _import(tid: str, contents: list[Any], location: Location) -> Trajectory:
    log = CallLog()
    for i, _content, pwhere, part in each_block(contents, "parts", "contents", "a content"):
        call = _part(part, CALL_KEYS)
        if call is not None:
            key, value = call
            if not isinstance(value, dict):
                raise Problem(f"{pwhere}.{key}: must be an object with 'name' and 'args'")
            name = require_str(value, "name", f"{pwhere}.{key}")
            meta: dict[str, Any] = {"content": i}
            args = tool_input(value.get("args"), f"{pwhere}.{key}.args", location, meta)
            log.call(PendingStep(name, args, meta), value.get("id"), f"{pwhere}.{key}.id", "call_id")
            continue
        answer = _part(part, RESPONSE_KEYS)
        if answer is not None:
            key, value = answer
            if not isinstance(value, dict):
                raise Problem(f"{pwhere}.{key}: must be an object with 'name' and 'response'")
            own = value.get("id")
            target = (
                log.result_for(own, pwhere) if isinstance(own, str) else log.result_by_name(value.get("name"))
            )
            if target is not None:
                _set_result(target, value.get("response"), f"{pwhere}.{key}.response", location)
    return log.finish(tid, location, FORMAT)


def _set_result(step: PendingStep, response: Any, where: str, location: Location) -> None:
    if isinstance(response, dict) and set(response) == {"output"}:  # the API's own wrapper
        response, where = response["output"], f"{where}.output"
    step.output = check_value(response, location=location, what=where)
    if isinstance(response, dict) and set(response) == {"error"}:
        step.status = ERROR_STATUS
    step.has_output = True


__all__ = ["CALL_KEYS", "FORMAT", "RESPONSE_KEYS", "import_gemini"]
