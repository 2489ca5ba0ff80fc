"""Streamed responses logged as they came (one event a line, or raw server-sent events) import
like the response they stream: OpenAI chat chunks, Anthropic Messages events, Responses events,
Bedrock ConverseStream events and Gemini streamGenerateContent chunks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import TrajectoryError
from envfactory.importers import BROKEN_ARGUMENTS, read
from envfactory.trajectory import Trajectory

DEPOSIT = {"account": "AA01", "amount": 5}


def _chunk(cid: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _call_piece(index: int, arguments: str, name: str | None = None) -> dict[str, Any]:
    piece: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if name is not None:
        piece.update(id=f"call_{index}", type="function")
        piece["function"]["name"] = name
    return piece


def _chat_stream(cid: str, calls: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """The chunks of one completion making ``calls``, each ``(name, argument fragments)``."""
    chunks = [_chunk(cid, {"role": "assistant", "content": None})]
    for index, (name, fragments) in enumerate(calls):
        chunks.append(_chunk(cid, {"tool_calls": [_call_piece(index, "", name)]}))
        chunks += [_chunk(cid, {"tool_calls": [_call_piece(index, part)]}) for part in fragments]
    return [*chunks, _chunk(cid, {}, "tool_calls")]


def _write(path: Path, events: list[dict[str, Any]], *, sse: bool = False) -> Path:
    if sse:
        text = "".join(f"event: {e.get('type', 'chunk')}\ndata: {json.dumps(e)}\n\n" for e in events)
        path.write_text(text + "data: [DONE]\n\n", "utf-8")
    else:
        path.write_text("".join(json.dumps(e) + "\n" for e in events), "utf-8")
    return path


def _calls(item: Trajectory | TrajectoryError) -> list[tuple[str, Any]]:
    assert isinstance(item, Trajectory), str(item)
    return [(s.tool, s.input) for s in item.steps]


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    args=st.dictionaries(
        st.sampled_from(["account", "amount", "note"]), st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
    ),
    cuts=st.lists(st.integers(0, 80), max_size=6),
    sse=st.booleans(),
)
def test_chat_chunks_split_anywhere_give_the_arguments_back(
    tmp_path_factory: Any, args: dict[str, Any], cuts: list[int], sse: bool
) -> None:
    text = json.dumps(args)
    path = tmp_path_factory.mktemp("s") / ("log.txt" if sse else "log.jsonl")
    _write(path, _chat_stream("chatcmpl-1", [("deposit", _split(text, cuts))]), sse=sse)
    [got] = list(read("auto", path))
    assert _calls(got) == [("deposit", args)]
    assert isinstance(got, Trajectory) and got.id == "chatcmpl-1"


def test_two_completions_and_parallel_calls(tmp_path: Path) -> None:
    first = _chat_stream("c1", [("deposit", ['{"account": "AA', '01", "amount": 5}']), ("balance", ["{}"])])
    second = _chat_stream("c2", [("withdraw", ['{"account": "AA01", "amount": 1}'])])
    one, two = read("openai-chat", _write(tmp_path / "log.jsonl", first + second))
    assert _calls(one) == [("deposit", DEPOSIT), ("balance", {})]
    assert _calls(two) == [("withdraw", {"account": "AA01", "amount": 1})]


def _anthropic_events(fragments: list[str], *, stop: bool = True) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "deposit", "input": {}}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On it."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "ping"},
        {"type": "content_block_start", "index": 1, "content_block": use},
    ]
    events += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": f}}
        for f in fragments
    ]
    events += [
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
    ]
    return [*events, {"type": "message_stop"}] if stop else events


def test_anthropic_server_sent_events(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "stream.txt", _anthropic_events(["", '{"account": "AA01",', ' "amount": 5}']), sse=True
    )
    [got] = list(read("auto", path))
    assert _calls(got) == [("deposit", DEPOSIT)] and isinstance(got, Trajectory) and got.id == "msg_1"


def test_a_stream_cut_mid_arguments_is_the_agents_broken_call(tmp_path: Path) -> None:
    path = _write(tmp_path / "cut.jsonl", _anthropic_events(['{"account": "AA01", "amo'], stop=False))
    [got] = list(read("anthropic", path))
    assert isinstance(got, Trajectory) and got.steps[0].tool == "deposit"
    assert got.steps[0].meta is not None and "invalid JSON" in got.steps[0].meta[BROKEN_ARGUMENTS]


def test_responses_events_final_response_wins_and_a_cut_stream_keeps_its_calls(tmp_path: Path) -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "deposit", "arguments": ""}
    head = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {"id": "resp_1", "object": "response", "output": []},
        },
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": call},
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 2,
            "output_index": 0,
            "delta": '{"account":"AA01",',
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 3,
            "output_index": 0,
            "delta": '"amount":5}',
        },
    ]
    final = {**call, "arguments": json.dumps({"account": "AA01", "amount": 7})}
    done = {
        "type": "response.completed",
        "sequence_number": 4,
        "response": {"id": "resp_1", "object": "response", "output": [final]},
    }
    plain = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "x", "type": "function", "function": {"name": "balance", "arguments": "{}"}}
                ],
            }
        ]
    }
    completed, cut, after = read("auto", _write(tmp_path / "events.jsonl", [*head, done, *head, plain]))
    assert _calls(completed) == [("deposit", {"account": "AA01", "amount": 7})]  # the final response
    assert _calls(cut) == [("deposit", DEPOSIT)]
    assert _calls(after) == [("balance", {})]  # a record after a stream is read on its own


def _bedrock_stream(calls: list[tuple[str, str, list[str]]], text: str = "") -> list[dict[str, Any]]:
    """ConverseStream events as boto3 yields them: a text block, then ``(id, name, fragments)``."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    if text:
        events.append({"contentBlockDelta": {"delta": {"text": text}, "contentBlockIndex": 0}})
        events.append({"contentBlockStop": {"contentBlockIndex": 0}})
    for index, (tid, name, fragments) in enumerate(calls, start=1 if text else 0):
        start = {"toolUse": {"toolUseId": tid, "name": name}}
        events.append({"contentBlockStart": {"start": start, "contentBlockIndex": index}})
        for part in fragments:
            events.append(
                {"contentBlockDelta": {"delta": {"toolUse": {"input": part}}, "contentBlockIndex": index}}
            )
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
    events.append({"messageStop": {"stopReason": "tool_use"}})
    events.append(
        {"metadata": {"usage": {"inputTokens": 9, "outputTokens": 4}, "metrics": {"latencyMs": 80}}}
    )
    return events


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(cuts=st.lists(st.integers(0, 40), max_size=5), text=st.sampled_from(["", "Depositing now."]))
def test_bedrock_converse_stream_events_import_as_the_response(
    tmp_path_factory: Any, cuts: list[int], text: str
) -> None:
    path = tmp_path_factory.mktemp("b") / "log.jsonl"
    first = _bedrock_stream([("tooluse_a", "deposit", _split(json.dumps(DEPOSIT), cuts))], text)
    second = _bedrock_stream([("tooluse_b", "balance", ['{"account": ', '"AA01"}'])])
    _write(path, [*first, *second])
    for fmt in ("auto", "bedrock"):
        got = list(read(fmt, path))
        assert [_calls(item) for item in got] == [[("deposit", DEPOSIT)], [("balance", {"account": "AA01"})]]


def test_gemini_stream_chunks_join_until_the_finish_reason(tmp_path: Path) -> None:
    def chunk(rid: str, parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": rid}

    call = {"functionCall": {"name": "deposit", "args": DEPOSIT}}
    events = [
        chunk("r1", [{"text": "Let me "}]),
        chunk("r1", [{"text": "deposit."}, call]),
        chunk("r1", [{"functionCall": {"name": "balance", "args": {"account": "AA01"}}}], "STOP"),
        chunk("r2", [call], "STOP"),  # a whole response in one chunk stays as it came
    ]
    for sse in (False, True):
        got = list(read("auto", _write(tmp_path / f"log{sse}.txt", events, sse=sse)))
        assert [_calls(item) for item in got] == [
            [("deposit", DEPOSIT), ("balance", {"account": "AA01"})],
            [("deposit", DEPOSIT)],
        ]
        assert [item.id for item in got if isinstance(item, Trajectory)] == ["r1", "r2"]


def _realtime(session: str, call: str, arguments: str, *, done: bool) -> list[dict[str, Any]]:
    """One OpenAI Realtime session's client and server events, a function call and its output."""
    item = {"id": f"item_{call}", "type": "function_call", "name": "deposit", "call_id": call}
    events: list[dict[str, Any]] = [
        {
            "event_id": "e1",
            "type": "session.created",
            "session": {"id": session, "object": "realtime.session"},
        },
        {
            "event_id": "e2",
            "type": "input_audio_buffer.speech_started",
            "audio_start_ms": 10,
            "item_id": "i1",
        },
        {
            "event_id": "e3",
            "type": "response.created",
            "response": {"id": "r1", "status": "in_progress", "output": []},
        },
        {
            "event_id": "e4",
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "arguments": ""},
        },
    ]
    half = len(arguments) // 2
    events += [
        {
            "event_id": f"e5{k}",
            "type": "response.function_call_arguments.delta",
            "call_id": call,
            "delta": part,
        }
        for k, part in enumerate((arguments[:half], arguments[half:]))
    ]
    if done:
        events += [
            {
                "event_id": "e6",
                "type": "response.function_call_arguments.done",
                "call_id": call,
                "arguments": arguments,
            },
            {
                "event_id": "e7",
                "type": "response.done",
                "response": {"id": "r1", "status": "completed", "output": [{**item, "arguments": arguments}]},
            },
            {
                "event_id": "e8",
                "type": "conversation.item.create",
                "item": {"type": "function_call_output", "call_id": call, "output": '{"balance": 5}'},
            },
            {
                "event_id": "e9",
                "type": "conversation.item.created",
                "item": {
                    "id": "i9",
                    "type": "function_call_output",
                    "call_id": call,
                    "output": '{"balance": 5}',
                },
            },
        ]
    return events


def test_realtime_sessions_import_their_calls_once_each(tmp_path: Path) -> None:
    events = _realtime("sess_1", "call_1", json.dumps(DEPOSIT), done=True) + _realtime(
        "sess_2", "call_2", '{"account": "AA01", "amo', done=False
    )
    first, cut = read("auto", _write(tmp_path / "realtime.jsonl", events))
    assert isinstance(first, Trajectory) and first.id == "sess_1"
    assert [(s.tool, s.input, s.output) for s in first.steps] == [("deposit", DEPOSIT, {"balance": 5})]
    assert isinstance(cut, Trajectory) and cut.id == "sess_2" and cut.steps[0].meta is not None
    assert "invalid JSON" in cut.steps[0].meta[BROKEN_ARGUMENTS]
