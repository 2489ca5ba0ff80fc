"""The batch envelopes vendors wrap conversations in, opened before a record is imported.

OpenAI's Batch API stores one request per line (``custom_id``, ``method``, ``url``, ``body``) and
one result per line (``custom_id``, ``response: {status_code, body}``, ``error``); Anthropic's
Message Batches take ``{custom_id, params}`` and return ``{custom_id, result: {type, message}}``.
Logs are often kept in exactly these files, so each line is opened to the request body or the
response inside it, which the format's importer then reads as it would a bare one. The
conversation's id is the ``custom_id`` the user chose (the vendor's own message id is meaningless
to them). A failed, expired or cancelled request has no conversation: it is an error in its place.
"""

from __future__ import annotations

from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError

_FAILED_RESULTS = ("errored", "canceled", "expired")


def open_envelope(data: Any, location: Location) -> Any:
    """``data`` itself, or the conversation inside its batch envelope (given the envelope's
    ``custom_id`` as its ``id``); a ``TrajectoryError`` for a request that produced nothing."""
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
        return data
    cid = data["custom_id"]
    if isinstance(data.get("body"), dict):  # OpenAI batch input
        return _named(data["body"], cid)
    if isinstance(data.get("params"), dict):  # Anthropic batch request
        return _named(data["params"], cid)
    if "response" in data or "error" in data:  # OpenAI batch output
        return _openai_result(data, cid, location)
    result = data.get("result")
    if isinstance(result, dict):  # Anthropic batch result
        return _anthropic_result(result, cid, location)
    return data


def _openai_result(data: dict[str, Any], cid: str, location: Location) -> Any:
    response = data.get("response")
    error = data.get("error")
    if error:
        return _failed(cid, _message_of(error), location)
    if not isinstance(response, dict) or not isinstance(response.get("body"), dict):
        return _failed(cid, "the result has no response body", location)
    status = response.get("status_code")
    if isinstance(status, int) and not isinstance(status, bool) and status >= 400:
        return _failed(cid, f"status {status}: {_message_of(response['body'].get('error'))}", location)
    return _named(response["body"], cid)


def _anthropic_result(result: dict[str, Any], cid: str, location: Location) -> Any:
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return _named(result["message"], cid)
    if kind in _FAILED_RESULTS:
        error = result.get("error")
        return _failed(cid, f"{kind}: {_message_of(error)}" if error else kind, location)
    return _failed(cid, f"unexpected result type {kind!r}", location)


def _named(record: dict[str, Any], cid: str) -> dict[str, Any]:
    return {**record, "id": cid}


def _failed(cid: str, why: str, location: Location) -> TrajectoryError:
    return TrajectoryError(f"batch request {cid!r} has no conversation ({why})", location)


def _message_of(error: Any) -> str:
    """The human part of a vendor error object (``{message}``, or Anthropic's nested ``error``)."""
    for _ in range(3):
        if not isinstance(error, dict):
            break
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        error = error.get("error")
    return "no reason given"


__all__ = ["open_envelope"]
