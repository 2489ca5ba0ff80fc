"""The batch envelopes vendors wrap conversations in, opened before a record is imported.

OpenAI's Batch API stores one request per line (``custom_id``, ``method``, ``url``, ``body``) and
one result per line (``custom_id``, ``response: {status_code, body}``, ``error``); Anthropic's
Message Batches take ``{custom_id, params}`` and return ``{custom_id, result: {type, message}}``;
Gemini's batch mode ``{key, request}`` and ``{key, response | error}``; Vertex AI batch prediction
writes ``{request, response, status}`` and Bedrock batch inference ``{recordId, modelInput,
modelOutput}``; Bedrock's model invocation logging (CloudWatch or S3) writes ``{schemaType:
"ModelInvocationLog", requestId, operation, input: {inputBodyJson}, output: {outputBodyJson}}``,
a streamed operation's output as its list of events; Vertex AI's request-response logging
(BigQuery rows exported as JSON Lines) ``{request_id, api_method, full_request, full_response}``. Logs are often kept in exactly these files, so each line is opened to the request
or response inside it (or, where a line holds both, the request's conversation followed by the
response's message), which the format's importer then reads as it would a bare one. The
conversation's id is the one the user chose (``custom_id``, ``key``, ``recordId``; the vendor's
own message id is meaningless to them). A failed, expired or cancelled request has no
conversation: it is an error in its place.
"""

from __future__ import annotations

from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.importers.streams import assemble
from envfactory.trajectory import parse_json_value

_FAILED_RESULTS = ("errored", "canceled", "expired")


def open_envelope(data: Any, location: Location) -> Any:
    """``data`` itself, or the conversation inside its batch envelope (given the envelope's
    ``custom_id`` as its ``id``); a ``TrajectoryError`` for a request that produced nothing."""
    if not isinstance(data, dict):
        return data
    if data.get("schemaType") == "ModelInvocationLog":
        return _invocation_log(data, location)
    if "full_request" in data or "full_response" in data:  # Vertex AI request-response logging
        rid = data.get("request_id")
        name = str(rid) if isinstance(rid, str | int) and not isinstance(rid, bool) else None
        return _pair(
            {}, name, _body(data.get("full_request")), _body(data.get("full_response"), location), location
        )
    if isinstance(data.get("recordId"), str) and ("modelInput" in data or "modelOutput" in data):
        return _pair(data, data["recordId"], data.get("modelInput"), data.get("modelOutput"), location)
    if isinstance(data.get("key"), str) and any(
        k in data for k in ("request", "response", "error")
    ):  # Gemini
        return _pair(data, data["key"], data.get("request"), data.get("response"), location)
    if "custom_id" not in data and isinstance(data.get("request"), dict) and "status" in data:  # Vertex
        return _pair(data, None, data["request"], data.get("response"), location)
    if not isinstance(data.get("custom_id"), str):
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


def _invocation_log(data: dict[str, Any], location: Location) -> Any:
    """A Bedrock model invocation log entry: its request and response bodies, as one conversation
    named by the ``requestId``; a streamed response (a list of events) put back together first."""
    rid = data.get("requestId") if isinstance(data.get("requestId"), str) else None
    if data.get("errorCode"):
        return _failed(rid, str(data["errorCode"]), location)
    given: dict[str, Any] = data["input"] if isinstance(data.get("input"), dict) else {}
    got: dict[str, Any] = data["output"] if isinstance(data.get("output"), dict) else {}
    request, response = given.get("inputBodyJson"), _body(got.get("outputBodyJson"), location)
    if request is None and response is None and ("inputBodyS3Path" in given or "outputBodyS3Path" in got):
        return _failed(rid, "its bodies were delivered to S3 (inputBodyS3Path); import those files", location)
    return _pair({}, rid, request, response, location)


def _body(value: Any, location: Location | None = None) -> Any:
    """A logged request or response body: an object as it is, JSON text decoded, and a streamed
    response (its list of events or chunks, when ``location`` is given) put back together."""
    if isinstance(value, str):
        try:
            value = parse_json_value(value, location=location or Location("<log>", 0), what="the logged body")
        except TrajectoryError:
            return None
    if isinstance(value, list) and location is not None:
        events = [r for r in assemble((location, e) for e in value) if not isinstance(r, TrajectoryError)]
        return events[0][1] if len(events) == 1 else None
    return value


def _pair(data: dict[str, Any], cid: str | None, request: Any, response: Any, location: Location) -> Any:
    """A line holding a request, its response or both: the conversation they make together."""
    error = data.get("error") or (data.get("status") if isinstance(data.get("status"), str) else None)
    if error:
        return _failed(cid, _message_of(error) if not isinstance(error, str) else error, location)
    if not isinstance(request, dict):
        request = None
    if not isinstance(response, dict):
        response = None
    if request is None and response is None:
        return _failed(cid, "neither a request nor a response", location)
    if request is not None and response is not None:
        record = _joined(request, response)
    else:
        record = request if request is not None else response
    assert record is not None
    return record if cid is None else _named(record, cid)


def _joined(request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The request's conversation with the response's reply appended, in the request's format."""
    reply = _reply(response)
    if isinstance(request.get("messages"), list) and reply is not None:
        return {**request, "messages": [*request["messages"], reply]}
    candidates = response.get("candidates")
    if isinstance(request.get("contents"), list) and isinstance(candidates, list) and candidates:
        content = candidates[0].get("content") if isinstance(candidates[0], dict) else None
        if isinstance(content, dict):
            return {**request, "contents": [*request["contents"], content]}
    if isinstance(request.get("input"), list) and isinstance(response.get("output"), list):
        return {**request, "output": response["output"]}
    return response


def _reply(response: dict[str, Any]) -> Any:
    """The assistant message of a chat-style response (OpenAI, Anthropic, Bedrock), or None."""
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("message")
    output = response.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict):
        return output["message"]
    return response if "role" in response and "content" in response else None


def _named(record: dict[str, Any], cid: str) -> dict[str, Any]:
    return {**record, "id": cid}


def _failed(cid: str | None, why: str, location: Location) -> TrajectoryError:
    name = f" {cid!r}" if cid is not None else ""
    return TrajectoryError(f"batch request{name} has no conversation ({why})", location)


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
