"""Streamed responses put back together, so that a log of stream events imports like the response.

Vendors document streaming as a sequence of events, and logs often keep them as they came: one
JSON event a line, or the raw server-sent-events text (``event: ...`` / ``data: {...}`` lines,
``data: [DONE]``). Three families are read:

- OpenAI Chat Completions chunks (``object: chat.completion.chunk``): ``delta`` pieces per choice,
  tool calls by ``index`` with their ``arguments`` in fragments, grouped by the chunk ``id``;
- Anthropic Messages events (``message_start`` ... ``message_stop``): content blocks by ``index``,
  a ``tool_use`` block's input in ``input_json_delta`` fragments;
- OpenAI Responses events (``response.created`` ... ``response.completed``): the final response
  when the stream has one, else the items built from ``output_item`` and argument deltas (a
  stream cut short still shows the calls it made);
- Amazon Bedrock ConverseStream events (``messageStart`` ... ``messageStop``, then
  ``metadata``), each an object of one key: content blocks by ``contentBlockIndex``, a
  ``toolUse`` block's input in string fragments; they become a Converse response;
- Gemini ``streamGenerateContent`` chunks (responses with ``candidates`` and nothing of a
  request): each candidate's parts joined, text pieces into one text, until a chunk gives a
  ``finishReason`` (or another ``responseId`` starts);
- Cohere v2 ``chat_stream`` events (``message-start`` ... ``message-end``): tool calls by
  ``index`` with their ``arguments`` in fragments; they become a v2 chat response (one
  ``message``, OpenAI-style, which the ``openai-chat`` importer reads);
- Cohere v1 stream events (``event_type``: ``stream-start`` ... ``stream-end``): the response
  ``stream-end`` carries, else the calls of ``tool-calls-generation`` or of the
  ``tool-calls-chunk`` fragments (a stream cut short).

OpenAI Realtime API sessions (client and server events, each with an ``event_id``) become the
list of their ``function_call`` and ``function_call_output`` items (from ``conversation.item.*``
events, ``response.output_item.done`` and ``response.done``, each call once), which the
``openai-responses`` importer reads; ``session.created`` starts the next session.

MCP sessions logged a JSON-RPC message a line are grouped the same way, into one list; so are
the messages of a Claude Agent SDK session (``{"type": "user" | "assistant", "message": {...},
"session_id"}``, with its ``system`` and ``result`` lines) and of a Claude Code transcript
(``sessionId``): one Anthropic conversation per session, a subagent's messages
(``parent_tool_use_id``, ``isSidechain``) in a conversation of their own.

Each stream becomes one record, located at its first event, which the format's importer reads.
Fragments are only concatenated here; decoding (and its hostile-input checks) stays the
importer's, so arguments cut mid-way are the agent's broken-arguments finding, not a crash.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from envfactory.contracts.errors import Location, TrajectoryError

Record = tuple[Location, Any]

_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_BEDROCK_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop"}
)
_GEMINI_CHUNK_KEYS = frozenset(
    {"candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "createTime"}
)
_COHERE_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)
_COHERE_V1_EVENTS = frozenset(
    {
        "stream-start",
        "search-queries-generation",
        "search-results",
        "text-generation",
        "citation-generation",
        "tool-calls-chunk",
        "tool-calls-generation",
        "stream-end",
    }
)
_REALTIME_PREFIXES = (
    "session.",
    "conversation.",
    "response.",
    "input_audio_buffer.",
    "output_audio_buffer.",
    "rate_limits.",
    "transcription_session.",
    "error",
)
_SSE_FIELDS = (b"event:", b"id:", b"retry:", b":")


def sse_payload(line: bytes) -> bytes | None:
    """The JSON text of a server-sent-events line (``data: {...}``), ``b""`` for a line that is
    SSE framing (``event:``, ``id:``, comments, ``data: [DONE]``), None for any other line."""
    stripped = line.strip()
    if stripped.startswith(b"data:"):
        payload = stripped[5:].strip()
        return b"" if payload == b"[DONE]" else payload
    if stripped.startswith(_SSE_FIELDS):
        return b""
    return None


def looks_like_sse(data: bytes) -> bool:
    """True when a document's first non-empty line is SSE framing rather than JSON."""
    for line in data.split(b"\n", 16):
        if line.strip():
            return sse_payload(line) is not None
    return False


def is_message(data: Any) -> bool:
    """Whether ``data`` is a JSON-RPC 2.0 message (request, notification or response): MCP."""
    return isinstance(data, dict) and data.get("jsonrpc") == "2.0"


def starts_session(data: Any) -> bool:
    """Whether ``data`` is an MCP ``initialize`` request: the first message of a new session."""
    return is_message(data) and data.get("method") == "initialize"


_AGENT_LINES = frozenset({"user", "assistant", "system", "result", "summary"})


def _agent_session(data: dict[str, Any]) -> Any:
    """The session id of a Claude Agent SDK message or Claude Code transcript line, else None."""
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in _AGENT_LINES:
        return None
    sid = data.get("session_id", data.get("sessionId"))
    if isinstance(sid, str) and sid:
        return sid
    return "" if data.get("type") == "summary" and "leafUuid" in data else None  # Claude Code's title line


def family(data: Any) -> str | None:
    """Which stream an event belongs to (``chat``, ``anthropic``, ``responses``, ``bedrock``,
    ``gemini``, ``cohere``, ``cohere-v1``; ``mcp`` for the JSON-RPC messages of one session,
    ``agent`` for the messages of a Claude agent session, ``realtime`` for an OpenAI Realtime
    session's events), or None."""
    if not isinstance(data, dict):
        return None
    if is_message(data):
        return "mcp"
    if len(data) == 1:
        ((key, value),) = data.items()
        if isinstance(value, dict) and (
            key in _BEDROCK_EVENTS or (key == "metadata" and ("usage" in value or "metrics" in value))
        ):
            return "bedrock"
    if isinstance(data.get("candidates"), list) and _GEMINI_CHUNK_KEYS.issuperset(data):
        return "gemini"
    if data.get("object") == "chat.completion.chunk":
        return "chat"
    event = data.get("event_type")
    if isinstance(event, str) and event in _COHERE_V1_EVENTS:
        return "cohere-v1"
    if _agent_session(data) is not None:
        return "agent"
    kind = data.get("type")
    if not isinstance(kind, str):
        return None
    if kind in _ANTHROPIC_EVENTS:
        return "anthropic"
    if "event_id" in data and kind.startswith(_REALTIME_PREFIXES):
        return "realtime"
    if kind.startswith("response."):
        return "responses"
    if kind in _COHERE_EVENTS:
        return "cohere"
    return None


def assemble(records: Iterable[Record | TrajectoryError]) -> Iterator[Record | TrajectoryError]:
    """``records`` with each run of stream events replaced by the one record it streams."""
    stream: _Stream | None = None
    for record in records:
        kind = None if isinstance(record, TrajectoryError) else family(record[1])
        if stream is not None and (kind != stream.kind or stream.starts_anew(record)):
            yield from stream.records()
            stream = None
        if kind is None:
            yield record
            continue
        assert not isinstance(record, TrajectoryError)
        if stream is None:
            stream = _STREAMS[kind](record[0])
        stream.add(record[1])
        if stream.done:
            yield from stream.records()
            stream = None
    if stream is not None:
        yield from stream.records()


class _Stream:
    kind = ""

    def __init__(self, location: Location) -> None:
        self.location = location
        self.done = False

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return False

    def add(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def records(self) -> Iterator[Record]:
        """The one record the stream makes (none when its events hold no conversation)."""
        value = self.value()
        if value is not None:
            yield self.location, value


class _ChatStream(_Stream):
    """Chat Completions chunks of one completion (one ``id``)."""

    kind = "chat"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.id: Any = None
        self.choices: dict[int, dict[str, Any]] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and record[1].get("id") != self.id

    def add(self, event: dict[str, Any]) -> None:
        self.id = event.get("id")
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or not isinstance(choice.get("delta"), dict):
                continue
            message = self.choices.setdefault(_index(choice), {"role": "assistant"})
            delta = choice["delta"]
            if isinstance(delta.get("role"), str):
                message["role"] = delta["role"]
            if isinstance(delta.get("content"), str):
                message["content"] = message.get("content", "") + delta["content"]
            calls = message.setdefault("tool_calls", {})
            for piece in delta.get("tool_calls") or ():
                if isinstance(piece, dict):
                    call = calls.setdefault(_index(piece), {"type": "function", "function": {}})
                    if isinstance(piece.get("id"), str):
                        call["id"] = piece["id"]
                    _extend(call["function"], piece.get("function"), ("name", "arguments"))
            if isinstance(delta.get("function_call"), dict):  # the legacy single call
                _extend(
                    message.setdefault("function_call", {}), delta["function_call"], ("name", "arguments")
                )

    def value(self) -> Any:
        choices = []
        for index in sorted(self.choices):
            message = dict(self.choices[index])
            calls = message.pop("tool_calls")
            if calls:
                message["tool_calls"] = [calls[k] for k in sorted(calls)]
            choices.append({"index": index, "message": message})
        return {"id": self.id, "object": "chat.completion", "choices": choices}


class _AnthropicStream(_Stream):
    """Messages API events from ``message_start`` to ``message_stop``."""

    kind = "anthropic"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.message: dict[str, Any] = {"type": "message", "role": "assistant"}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, str] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and record[1].get("type") == "message_start"

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            start = event["message"]
            self.message.update({k: v for k, v in start.items() if k != "content"})
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            self.blocks[_index(event)] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index, delta = _index(event), event["delta"]
            block = self.blocks.setdefault(index, {})
            if delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                self.json[index] = self.json.get(index, "") + delta["partial_json"]
            elif isinstance(delta.get("text"), str):
                block["text"] = block.get("text", "") + delta["text"]
        elif kind == "message_stop":
            self.done = True

    def value(self) -> Any:
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.json:  # the streamed input replaces the empty one the block started with
                block = {**block, "input": self.json[index] or {}}
            content.append(block)
        return {**self.message, "content": content}


class _ResponsesStream(_Stream):
    """Responses API events from ``response.created`` to ``response.completed``."""

    kind = "responses"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.final: dict[str, Any] | None = None
        self.response: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and record[1].get("type") == "response.created"

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        response = event.get("response")
        if isinstance(response, dict):
            self.response = response
            if kind in ("response.completed", "response.incomplete", "response.failed"):
                self.final = response
                self.done = True
        item = event.get("item")
        if kind in ("response.output_item.added", "response.output_item.done") and isinstance(item, dict):
            self.items[_index(event, "output_index")] = dict(item)
        elif kind == "response.function_call_arguments.delta" and isinstance(event.get("delta"), str):
            target = self.items.setdefault(_index(event, "output_index"), {"type": "function_call"})
            target["arguments"] = str(target.get("arguments") or "") + event["delta"]
        elif kind == "response.function_call_arguments.done" and isinstance(event.get("arguments"), str):
            self.items.setdefault(_index(event, "output_index"), {"type": "function_call"})["arguments"] = (
                event["arguments"]
            )

    def value(self) -> Any:
        if self.final is not None:
            return self.final
        return {**self.response, "output": [self.items[k] for k in sorted(self.items)]}


class _BedrockStream(_Stream):
    """ConverseStream events from ``messageStart`` to ``metadata`` (which follows ``messageStop``)."""

    kind = "bedrock"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.role = "assistant"
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, str] = {}
        self.rest: dict[str, Any] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and "messageStart" in record[1]

    def add(self, event: dict[str, Any]) -> None:
        ((key, body),) = event.items()
        index = _index(body, "contentBlockIndex")
        if key == "messageStart" and isinstance(body.get("role"), str):
            self.role = body["role"]
        elif key == "contentBlockStart" and isinstance(body.get("start"), dict):
            use = body["start"].get("toolUse")
            if isinstance(use, dict):
                self.blocks[index] = {"toolUse": {**use, "input": {}}}
        elif key == "contentBlockDelta" and isinstance(body.get("delta"), dict):
            delta = body["delta"]
            use = delta.get("toolUse")
            if isinstance(use, dict) and isinstance(use.get("input"), str):
                self.inputs[index] = self.inputs.get(index, "") + use["input"]
            elif isinstance(delta.get("text"), str):
                block = self.blocks.setdefault(index, {"text": ""})
                block["text"] = str(block.get("text", "")) + delta["text"]
        elif key == "messageStop":
            self.rest["stopReason"] = body.get("stopReason")
        elif key == "metadata":
            self.rest.update(body)
            self.done = True

    def value(self) -> Any:
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if "toolUse" in block and index in self.inputs:  # the streamed input replaces the empty one
                block = {"toolUse": {**block["toolUse"], "input": self.inputs[index] or {}}}
            content.append(block)
        return {"output": {"message": {"role": self.role, "content": content}}, **self.rest}


class _GeminiStream(_Stream):
    """``streamGenerateContent`` chunks of one response; a lone chunk is kept as it came."""

    kind = "gemini"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.chunks: list[dict[str, Any]] = []

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        if isinstance(record, TrajectoryError) or not self.chunks:
            return False
        ids = (self.chunks[0].get("responseId"), record[1].get("responseId"))
        return None not in ids and ids[0] != ids[1]

    def add(self, event: dict[str, Any]) -> None:
        self.chunks.append(event)
        self.done = any(isinstance(c, dict) and c.get("finishReason") for c in event["candidates"])

    def value(self) -> Any:
        if len(self.chunks) == 1:
            return self.chunks[0]
        candidates: dict[int, dict[str, Any]] = {}
        for chunk in self.chunks:
            for position, candidate in enumerate(chunk["candidates"]):
                if not isinstance(candidate, dict):
                    continue
                index = candidate["index"] if isinstance(candidate.get("index"), int) else position
                merged = candidates.setdefault(index, {"content": {"role": "model", "parts": []}})
                merged.update({k: v for k, v in candidate.items() if k != "content"})
                content = candidate.get("content")
                parts = content.get("parts") if isinstance(content, dict) else None
                for part in parts if isinstance(parts, list) else ():
                    _join_part(merged["content"]["parts"], part)
        last = self.chunks[-1]
        return {**last, "candidates": [candidates[k] for k in sorted(candidates)]}


def _join_part(parts: list[Any], part: Any) -> None:
    """Append ``part``, or its text to the text part before it (text streams in pieces)."""
    if (
        isinstance(part, dict)
        and set(part) == {"text"}
        and parts
        and isinstance(parts[-1], dict)
        and set(parts[-1]) == {"text"}
        and isinstance(part["text"], str)
        and isinstance(parts[-1]["text"], str)
    ):
        parts[-1] = {"text": parts[-1]["text"] + part["text"]}
    else:
        parts.append(part)


class _CohereStream(_Stream):
    """Cohere v2 ``chat_stream`` events from ``message-start`` to ``message-end``."""

    kind = "cohere"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.response: dict[str, Any] = {}
        self.message: dict[str, Any] = {"role": "assistant"}
        self.text = ""
        self.calls: dict[int, dict[str, Any]] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and record[1].get("type") == "message-start"

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        delta: dict[str, Any] = event["delta"] if isinstance(event.get("delta"), dict) else {}
        message: dict[str, Any] = delta["message"] if isinstance(delta.get("message"), dict) else {}
        if kind == "message-start":
            if isinstance(event.get("id"), str):
                self.response["id"] = event["id"]
            if isinstance(message.get("role"), str):
                self.message["role"] = message["role"]
        elif kind == "content-delta" and isinstance(message.get("content"), dict):
            text = message["content"].get("text")
            self.text += text if isinstance(text, str) else ""
        elif kind == "tool-plan-delta" and isinstance(message.get("tool_plan"), str):
            self.message["tool_plan"] = self.message.get("tool_plan", "") + message["tool_plan"]
        elif kind in ("tool-call-start", "tool-call-delta") and isinstance(message.get("tool_calls"), dict):
            piece = message["tool_calls"]
            call = self.calls.setdefault(_index(event), {"type": "function", "function": {}})
            if isinstance(piece.get("id"), str):
                call["id"] = piece["id"]
            _extend(call["function"], piece.get("function"), ("name", "arguments"))
        elif kind == "message-end":
            if isinstance(delta.get("finish_reason"), str):
                self.response["finish_reason"] = delta["finish_reason"]
            self.done = True

    def value(self) -> Any:
        message = dict(self.message)
        if self.text:
            message["content"] = [{"type": "text", "text": self.text}]
        if self.calls:
            message["tool_calls"] = [self.calls[k] for k in sorted(self.calls)]
        return {**self.response, "message": message}


class _CohereV1Stream(_Stream):
    """Cohere v1 stream events (``event_type``) from ``stream-start`` to ``stream-end``."""

    kind = "cohere-v1"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.final: dict[str, Any] | None = None
        self.response: dict[str, Any] = {}
        self.text = ""
        self.generated: list[Any] | None = None
        self.chunks: dict[int, dict[str, Any]] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return not isinstance(record, TrajectoryError) and record[1].get("event_type") == "stream-start"

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("event_type")
        if kind == "stream-start" and isinstance(event.get("generation_id"), str):
            self.response["generation_id"] = event["generation_id"]
        elif kind == "text-generation" and isinstance(event.get("text"), str):
            self.text += event["text"]
        elif kind == "tool-calls-chunk" and isinstance(event.get("tool_call_delta"), dict):
            piece = event["tool_call_delta"]
            _extend(self.chunks.setdefault(_index(piece), {}), piece, ("name", "parameters"))
        elif kind == "tool-calls-generation" and isinstance(event.get("tool_calls"), list):
            self.generated = event["tool_calls"]
        elif kind == "stream-end":
            if isinstance(event.get("response"), dict):
                self.final = event["response"]
            self.done = True

    def value(self) -> Any:
        if self.final is not None:
            return self.final
        calls = (
            self.generated if self.generated is not None else [self.chunks[k] for k in sorted(self.chunks)]
        )
        return {**self.response, "text": self.text, "chat_history": [], "tool_calls": calls}


class _AgentSession(_Stream):
    """The messages of one Claude Agent SDK session or Claude Code transcript, a message a line."""

    kind = "agent"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.session: Any = None
        self.threads: dict[str, list[Any]] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        if isinstance(record, TrajectoryError) or not self.session:
            return False
        return _agent_session(record[1]) not in ("", self.session)

    def add(self, event: dict[str, Any]) -> None:
        self.session = _agent_session(event) or self.session
        message = event.get("message")
        if event.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            return  # the session's system, result and summary lines hold no calls
        parent = event.get("parent_tool_use_id")
        if isinstance(parent, str) and parent:
            thread = f"{self.session}/{parent}"
        elif event.get("isSidechain") is True:
            thread = f"{self.session}/sidechain"
        else:
            thread = str(self.session)
        self.threads.setdefault(thread, []).append(message)

    def value(self) -> Any:
        if not self.threads:
            return None  # only system, result or summary lines: no conversation
        return [{"id": name, "messages": messages} for name, messages in self.threads.items()]


class _RealtimeSession(_Stream):
    """The events of one OpenAI Realtime session: its function calls and their outputs."""

    kind = "realtime"
    _ITEMS = ("function_call", "function_call_output")

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.session: dict[str, Any] = {}
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.arguments: dict[str, str] = {}

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        if isinstance(record, TrajectoryError):
            return False
        return bool(self.items) and record[1].get("type") == "session.created"

    def add(self, event: dict[str, Any]) -> None:
        kind, call = event.get("type"), event.get("call_id")
        session = event.get("session")
        if kind == "session.created" and isinstance(session, dict) and isinstance(session.get("id"), str):
            self.session["id"] = session["id"]
        if isinstance(call, str) and kind == "response.function_call_arguments.delta":
            delta = event.get("delta")
            self.arguments[call] = self.arguments.get(call, "") + (delta if isinstance(delta, str) else "")
        elif isinstance(call, str) and kind == "response.function_call_arguments.done":
            done = event.get("arguments")
            self.arguments[call] = done if isinstance(done, str) else self.arguments.get(call, "")
        response = event.get("response")
        found = [event.get("item")]
        if isinstance(response, dict) and isinstance(response.get("output"), list):
            found += response["output"]
        for item in found:
            if (
                isinstance(item, dict)
                and item.get("type") in self._ITEMS
                and isinstance(item.get("call_id"), str)
            ):
                key = (item["type"], item["call_id"])
                self.items[key] = {**self.items.get(key, {}), **item}  # the later, completed copy wins

    def value(self) -> Any:
        if not self.items:
            return None
        items = []
        for item in self.items.values():
            streamed = self.arguments.get(item["call_id"])
            if item["type"] == "function_call" and not item.get("arguments") and streamed:
                item = {**item, "arguments": streamed}  # a call cut short keeps the fragments it streamed
            items.append(item)
        return {**self.session, "input": items}


class _Session(_Stream):
    """The JSON-RPC messages of one MCP session, a message a line; ``initialize`` starts the next."""

    kind = "mcp"

    def __init__(self, location: Location) -> None:
        super().__init__(location)
        self.messages: list[dict[str, Any]] = []

    def starts_anew(self, record: Record | TrajectoryError) -> bool:
        return bool(self.messages) and not isinstance(record, TrajectoryError) and starts_session(record[1])

    def add(self, event: dict[str, Any]) -> None:
        self.messages.append(event)

    def value(self) -> Any:
        return self.messages


_STREAMS: dict[str, type[_Stream]] = {
    "mcp": _Session,
    "chat": _ChatStream,
    "anthropic": _AnthropicStream,
    "responses": _ResponsesStream,
    "bedrock": _BedrockStream,
    "gemini": _GeminiStream,
    "cohere": _CohereStream,
    "cohere-v1": _CohereV1Stream,
    "agent": _AgentSession,
    "realtime": _RealtimeSession,
}


def _index(event: dict[str, Any], key: str = "index") -> int:
    value = event.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _extend(target: dict[str, Any], piece: Any, keys: tuple[str, ...]) -> None:
    """Append each string field of a delta ``piece`` to the same field of ``target``."""
    if isinstance(piece, dict):
        for key in keys:
            if isinstance(piece.get(key), str):
                target[key] = target.get(key, "") + piece[key]


__all__ = ["assemble", "family", "looks_like_sse", "sse_payload"]
