"""Logs kept the way the vendors' own tools write them: OpenAI Batch API input and output files,
Anthropic Message Batches requests and results, Responses custom-tool and MCP items, Anthropic
MCP connector blocks. Each line opens to the conversation inside; a failed request is one error
in its place and the other lines still import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envfactory.contracts.errors import TrajectoryError
from envfactory.importers import BROKEN_ARGUMENTS, read
from envfactory.trajectory import Trajectory

DEPOSIT = {"account": "AA01", "amount": 5}
CALL = {"id": "call_1", "type": "function", "function": {"name": "deposit", "arguments": json.dumps(DEPOSIT)}}
CHAT = [
    {"role": "user", "content": "Put 5 in AA01"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"balance": 105}'},
]


def _jsonl(tmp_path: Path, name: str, records: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _steps(item: Trajectory | TrajectoryError) -> list[tuple[str, Any, Any, int | None]]:
    assert isinstance(item, Trajectory), str(item)
    return [(s.tool, s.input, s.output if s.has_output else "-", s.status) for s in item.steps]


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


@pytest.mark.parametrize("fmt", ["auto", "openai-chat"])
def test_openai_batch_input_and_output_files(tmp_path: Path, fmt: str) -> None:
    requests = _jsonl(
        tmp_path,
        "batch_input.jsonl",
        [
            {
                "custom_id": "req-1",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "gpt-4o", "messages": CHAT},
            },
        ],
    )
    [got] = list(read(fmt, requests))
    assert isinstance(got, Trajectory) and got.id == "req-1"
    assert _steps(got) == [("deposit", DEPOSIT, {"balance": 105}, None)]

    results = _jsonl(
        tmp_path,
        "batch_output.jsonl",
        [
            {
                "id": "batch_req_1",
                "custom_id": "req-1",
                "error": None,
                "response": {
                    "status_code": 200,
                    "request_id": "r1",
                    "body": _completion({"role": "assistant", "content": None, "tool_calls": [CALL]}),
                },
            },
            {
                "id": "batch_req_2",
                "custom_id": "req-2",
                "response": None,
                "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                },
            },
            {
                "id": "batch_req_3",
                "custom_id": "req-3",
                "error": None,
                "response": {
                    "status_code": 400,
                    "body": {"error": {"message": "Invalid 'messages'", "type": "invalid_request_error"}},
                },
            },
        ],
    )
    first, expired, refused = read(fmt, results)
    assert isinstance(first, Trajectory) and first.id == "req-1"
    assert _steps(first) == [("deposit", DEPOSIT, "-", None)]
    assert isinstance(expired, TrajectoryError) and expired.location is not None
    assert "'req-2'" in expired.message and "completion window expired" in expired.message
    assert expired.location.line == 2
    assert isinstance(refused, TrajectoryError) and "status 400: Invalid 'messages'" in refused.message


def test_openai_batch_of_responses_requests(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        "responses_batch.jsonl",
        [
            {
                "custom_id": "r-1",
                "method": "POST",
                "url": "/v1/responses",
                "body": {
                    "model": "gpt-4.1",
                    "input": [
                        {"role": "user", "content": "go"},
                        {
                            "type": "function_call",
                            "call_id": "c1",
                            "name": "deposit",
                            "arguments": json.dumps(DEPOSIT),
                        },
                        {"type": "function_call_output", "call_id": "c1", "output": '{"balance": 105}'},
                    ],
                },
            },
        ],
    )
    [got] = list(read("auto", path))
    assert isinstance(got, Trajectory) and got.id == "r-1" and got.meta["source"] == "openai-responses"
    assert _steps(got) == [("deposit", DEPOSIT, {"balance": 105}, None)]


def test_anthropic_message_batches_requests_and_results(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "deposit", "input": DEPOSIT}
    requests = _jsonl(
        tmp_path,
        "requests.jsonl",
        [
            {
                "custom_id": "a-1",
                "params": {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 1024,
                    "messages": [
                        {"role": "user", "content": "go"},
                        {"role": "assistant", "content": [use]},
                        {
                            "role": "user",
                            "content": [
                                {
                                    "type": "tool_result",
                                    "tool_use_id": "toolu_1",
                                    "content": "no such account",
                                    "is_error": True,
                                }
                            ],
                        },
                    ],
                },
            },
        ],
    )
    [got] = list(read("auto", requests))
    assert isinstance(got, Trajectory) and got.id == "a-1"
    assert _steps(got) == [("deposit", DEPOSIT, "no such account", 400)]

    results = _jsonl(
        tmp_path,
        "results.jsonl",
        [
            {
                "custom_id": "a-1",
                "result": {
                    "type": "succeeded",
                    "message": {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": "Depositing."}, use],
                        "stop_reason": "tool_use",
                    },
                },
            },
            {
                "custom_id": "a-2",
                "result": {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
                    },
                },
            },
            {"custom_id": "a-3", "result": {"type": "expired"}},
        ],
    )
    ok, errored, expired = read("anthropic", results)
    assert isinstance(ok, Trajectory) and ok.id == "a-1" and _steps(ok) == [("deposit", DEPOSIT, "-", None)]
    assert isinstance(errored, TrajectoryError) and "errored: max_tokens: Field required" in errored.message
    assert isinstance(expired, TrajectoryError) and expired.message.endswith("(expired)")


def test_responses_custom_tool_and_mcp_items(tmp_path: Path) -> None:
    path = tmp_path / "response.json"
    path.write_text(
        json.dumps(
            {
                "id": "resp_1",
                "object": "response",
                "output": [
                    {"type": "reasoning", "id": "rs_1", "summary": []},
                    {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "bank", "tools": []},
                    {
                        "type": "mcp_call",
                        "id": "mcp_1",
                        "server_label": "bank",
                        "name": "deposit",
                        "arguments": json.dumps(DEPOSIT),
                        "output": '{"balance": 105}',
                        "error": None,
                    },
                    {
                        "type": "mcp_call",
                        "id": "mcp_2",
                        "server_label": "bank",
                        "name": "withdraw",
                        "arguments": '{"account": "AA01", "amount": 500}',
                        "output": None,
                        "error": "insufficient funds",
                    },
                    {
                        "type": "custom_tool_call",
                        "id": "ctc_1",
                        "call_id": "call_9",
                        "name": "run_sql",
                        "input": "SELECT 1",
                    },
                    {"type": "custom_tool_call_output", "call_id": "call_9", "output": "1"},
                ],
            }
        ),
        "utf-8",
    )
    [got] = list(read("auto", path))
    assert _steps(got) == [
        ("deposit", DEPOSIT, {"balance": 105}, None),
        ("withdraw", {"account": "AA01", "amount": 500}, "insufficient funds", 400),
        ("run_sql", "SELECT 1", 1, None),  # free-form input stays text; the output decodes as JSON
    ]


def test_anthropic_mcp_connector_blocks_and_server_tools(tmp_path: Path) -> None:
    path = tmp_path / "message.json"
    path.write_text(
        json.dumps(
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {"query": "rates"},
                    },
                    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                    {
                        "type": "mcp_tool_use",
                        "id": "mcptoolu_1",
                        "name": "deposit",
                        "server_name": "bank",
                        "input": DEPOSIT,
                    },
                    {
                        "type": "mcp_tool_result",
                        "tool_use_id": "mcptoolu_1",
                        "is_error": False,
                        "content": [{"type": "text", "text": '{"balance": 105}'}],
                    },
                ],
            }
        ),
        "utf-8",
    )
    [got] = list(read("auto", path))
    assert _steps(got) == [("deposit", DEPOSIT, {"balance": 105}, None)]


# ------------------------------------------------------------------------- Gemini and Bedrock

GEMINI_CALLS = {
    "role": "model",
    "parts": [
        {"functionCall": {"name": "deposit", "args": DEPOSIT}},
        {"functionCall": {"name": "deposit", "args": {"account": "AA02", "amount": 1}}},
    ],
}
GEMINI_ANSWERS = {
    "role": "user",
    "parts": [
        {"functionResponse": {"name": "deposit", "response": {"balance": 105}}},
        {"functionResponse": {"name": "deposit", "response": {"error": "no such account"}}},
    ],
}


def test_gemini_request_answers_by_name_in_order_and_errors_are_400(tmp_path: Path) -> None:
    path = tmp_path / "gemini.json"
    user = {"role": "user", "parts": [{"text": "go"}]}
    path.write_text(json.dumps({"contents": [user, GEMINI_CALLS, GEMINI_ANSWERS], "tools": []}), "utf-8")
    [got] = list(read("auto", path))
    assert isinstance(got, Trajectory) and got.meta["source"] == "gemini"
    assert _steps(got) == [
        ("deposit", DEPOSIT, {"balance": 105}, None),
        ("deposit", {"account": "AA02", "amount": 1}, {"error": "no such account"}, 400),
    ]


def test_gemini_response_snake_case_ids_and_candidates(tmp_path: Path) -> None:
    call = {"function_call": {"id": "c1", "name": "deposit", "args": DEPOSIT}}
    answer = {"function_response": {"id": "c1", "name": "deposit", "response": {"output": 105}}}
    path = tmp_path / "response.json"
    path.write_text(
        json.dumps(
            {
                "responseId": "abc",
                "candidates": [
                    {"content": {"role": "model", "parts": [call, answer]}, "finishReason": "STOP"},
                    {"content": {"role": "model", "parts": [{"text": "no"}]}},
                ],
            }
        ),
        "utf-8",
    )
    first, second = read("gemini", path)
    assert isinstance(first, Trajectory) and first.id == "abc:0"
    assert _steps(first) == [("deposit", DEPOSIT, 105, None)]  # the documented 'output' wrapper is unwrapped
    assert isinstance(second, Trajectory) and second.id == "abc:1" and not second.steps


def test_bedrock_converse_request_and_response(tmp_path: Path) -> None:
    use = {"toolUse": {"toolUseId": "t1", "name": "deposit", "input": DEPOSIT}}
    result = {"toolResult": {"toolUseId": "t1", "content": [{"json": {"balance": 105}}], "status": "success"}}
    failed = {"toolResult": {"toolUseId": "t2", "content": [{"text": "frozen"}], "status": "error"}}
    second = {"toolUse": {"toolUseId": "t2", "name": "withdraw", "input": {"account": "AA01", "amount": 1}}}
    path = _jsonl(
        tmp_path,
        "converse.jsonl",
        [
            {
                "modelId": "m",
                "messages": [
                    {"role": "user", "content": [{"text": "go"}]},
                    {"role": "assistant", "content": [{"text": "ok"}, use, second]},
                    {"role": "user", "content": [result, failed]},
                ],
            },
            {"output": {"message": {"role": "assistant", "content": [use]}}, "stopReason": "tool_use"},
        ],
    )
    request, response = read("auto", path)
    assert _steps(request) == [
        ("deposit", DEPOSIT, {"balance": 105}, None),
        ("withdraw", {"account": "AA01", "amount": 1}, "frozen", 400),
    ]
    assert isinstance(response, Trajectory) and response.meta["source"] == "bedrock"
    assert _steps(response) == [("deposit", DEPOSIT, "-", None)]


def test_gemini_vertex_and_bedrock_batch_lines(tmp_path: Path) -> None:
    user = {"role": "user", "parts": [{"text": "go"}]}
    claude_call = {"type": "tool_use", "id": "toolu_1", "name": "deposit", "input": DEPOSIT}
    path = _jsonl(
        tmp_path,
        "batches.jsonl",
        [
            {"key": "g-1", "response": {"candidates": [{"content": GEMINI_CALLS}]}},
            {"key": "g-2", "error": {"code": 3, "message": "bad request"}},
            {
                "request": {"contents": [user]},
                "status": "",
                "response": {"candidates": [{"content": GEMINI_CALLS}]},
            },
            {
                "recordId": "CALL0000001",
                "modelInput": {
                    "anthropic_version": "bedrock-2023-05-31",
                    "messages": [{"role": "user", "content": "go"}],
                },
                "modelOutput": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [claude_call],
                },
            },
        ],
    )
    gemini, failed, vertex, bedrock = read("auto", path)
    assert isinstance(gemini, Trajectory) and gemini.id == "g-1" and len(gemini.steps) == 2
    assert (
        isinstance(failed, TrajectoryError) and "'g-2'" in failed.message and "bad request" in failed.message
    )
    assert isinstance(vertex, Trajectory) and [s.tool for s in vertex.steps] == ["deposit", "deposit"]
    assert isinstance(bedrock, Trajectory) and bedrock.id == "CALL0000001"
    assert _steps(bedrock) == [("deposit", DEPOSIT, "-", None)]


def _invocation(rid: str, operation: str, request: Any, response: Any, **more: Any) -> dict[str, Any]:
    """A Bedrock model invocation log entry as CloudWatch or S3 receives it."""
    return {
        "schemaType": "ModelInvocationLog",
        "schemaVersion": "1.0",
        "timestamp": "2026-11-25T10:00:00Z",
        "accountId": "123456789012",
        "identity": {"arn": "arn:aws:sts::123456789012:assumed-role/agent"},
        "region": "us-east-1",
        "requestId": rid,
        "operation": operation,
        "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
        "input": {"inputContentType": "application/json", "inputBodyJson": request, "inputTokenCount": 35},
        "output": {
            "outputContentType": "application/json",
            "outputBodyJson": response,
            "outputTokenCount": 9,
        },
        **more,
    }


def test_bedrock_model_invocation_logs(tmp_path: Path) -> None:
    use = {"toolUse": {"toolUseId": "t1", "name": "deposit", "input": DEPOSIT}}
    answer = {"toolResult": {"toolUseId": "t1", "content": [{"json": {"balance": 5}}]}}
    converse = _invocation(
        "r-1",
        "Converse",
        {
            "messages": [
                {"role": "user", "content": [{"text": "go"}]},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [answer]},
            ]
        },
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
            "stopReason": "end_turn",
        },
    )
    claude = _invocation(  # InvokeModel with a Claude body: the Anthropic request and message
        "r-2",
        "InvokeModel",
        {"anthropic_version": "bedrock-2023-05-31", "messages": [{"role": "user", "content": "go"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "deposit", "input": DEPOSIT}],
        },
    )
    streamed = _invocation(  # ConverseStream: the output is the list of events
        "r-3",
        "ConverseStream",
        {"messages": [{"role": "user", "content": [{"text": "go"}]}]},
        [
            {"messageStart": {"role": "assistant"}},
            {
                "contentBlockStart": {
                    "contentBlockIndex": 0,
                    "start": {"toolUse": {"toolUseId": "t9", "name": "deposit"}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"toolUse": {"input": '{"account": "AA01",'}},
                }
            },
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ' "amount": 5}'}}}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "tool_use"}},
            {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4}}},
        ],
    )
    throttled = _invocation("r-4", "Converse", None, None, errorCode="ThrottlingException")
    offloaded = _invocation("r-5", "Converse", None, None)
    offloaded["input"] = {"inputBodyS3Path": "s3://logs/r-5/input.json.gz"}
    got = list(
        read(
            "auto", _jsonl(tmp_path, "invocations.jsonl", [converse, claude, streamed, throttled, offloaded])
        )
    )
    one, two, three, four, five = got
    assert (
        isinstance(one, Trajectory)
        and one.id == "r-1"
        and _steps(one) == [("deposit", DEPOSIT, {"balance": 5}, None)]
    )
    assert (
        isinstance(two, Trajectory) and two.id == "r-2" and _steps(two) == [("deposit", DEPOSIT, "-", None)]
    )
    assert (
        isinstance(three, Trajectory)
        and three.id == "r-3"
        and _steps(three) == [("deposit", DEPOSIT, "-", None)]
    )
    assert (
        isinstance(four, TrajectoryError)
        and "'r-4'" in four.message
        and "ThrottlingException" in four.message
    )
    assert isinstance(five, TrajectoryError) and "S3" in five.message
    assert four.location is not None and four.location.line == 4


def test_an_unhashable_type_field_is_no_crash(tmp_path: Path) -> None:
    """A hostile log may put a list or an object where ``type`` is a string (the fuzz test found
    the Responses importer raising TypeError on one)."""
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps({"input": [{"type": {"x": 1}}, {"type": ["function_call"]}]}), "utf-8")
    anthropic = tmp_path / "anthropic.json"
    anthropic.write_text(
        json.dumps({"messages": [{"role": "assistant", "content": [{"type": ["tool_use"]}]}]}), "utf-8"
    )
    for fmt, path in (("openai-responses", responses), ("anthropic", anthropic)):
        [got] = list(read(fmt, path))
        assert isinstance(got, Trajectory) and not got.steps


OPENED = {"account": "AA01", "owner": "ann", "balance": 0}


@pytest.mark.parametrize("fmt", ["auto", "openai-chat"])
def test_chat_logs_of_ollama_mistral_and_cohere(tmp_path: Path, fmt: str) -> None:
    """The OpenAI chat shape as other vendors write it: Ollama's arguments as objects and tool
    messages without a call id (by ``tool_name``, or in order), its ``/api/chat`` response with one
    ``message``; Mistral's short ids; Cohere v2's ``tool_plan`` and ``document`` results."""
    ollama_call = {"function": {"name": "open", "arguments": {"account": "AA01", "owner": "ann"}}}
    deposit_call = {"function": {"name": "deposit", "arguments": DEPOSIT}}
    records = [
        {  # Ollama, results in order and by tool_name
            "model": "llama3.1",
            "messages": [
                {"role": "assistant", "content": "", "tool_calls": [ollama_call, deposit_call]},
                {"role": "tool", "content": json.dumps(OPENED)},
                {"role": "tool", "tool_name": "deposit", "content": '{"balance": 5}'},
            ],
        },
        {  # Ollama: tool_name answers the matching call even when it is not the oldest
            "messages": [
                {"role": "assistant", "content": "", "tool_calls": [ollama_call, deposit_call]},
                {"role": "tool", "tool_name": "deposit", "content": '{"balance": 5}'},
                {"role": "tool", "tool_name": "open", "content": json.dumps(OPENED)},
            ],
        },
        {  # Ollama /api/chat response
            "model": "llama3.2",
            "created_at": "2025-07-07T20:22:19Z",
            "message": {"role": "assistant", "content": "", "tool_calls": [deposit_call]},
            "done": True,
        },
        {  # Mistral
            "messages": [
                {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "D681PevKs"}]},
                {"role": "tool", "name": "deposit", "tool_call_id": "D681PevKs", "content": '{"balance": 5}'},
            ]
        },
        {  # Cohere v2 request, then its response
            "messages": [
                {
                    "role": "assistant",
                    "tool_plan": "I will deposit.",
                    "tool_calls": [{**CALL, "id": "deposit_1b"}],
                },
                {
                    "role": "tool",
                    "tool_call_id": "deposit_1b",
                    "content": [{"type": "document", "document": {"data": '{"balance": 5}'}}],
                },
            ]
        },
        {
            "id": "c14c80c3",
            "message": {"role": "assistant", "tool_plan": "I will deposit.", "tool_calls": [CALL]},
            "finish_reason": "TOOL_CALL",
        },
    ]
    got = [_steps(t) for t in read(fmt, _jsonl(tmp_path, "chats.jsonl", records))]
    opened = ("open", {"account": "AA01", "owner": "ann"}, OPENED, None)
    deposited = ("deposit", DEPOSIT, {"balance": 5}, None)
    unanswered = ("deposit", DEPOSIT, "-", None)
    assert got == [
        [opened, deposited],
        [opened, deposited],
        [unanswered],
        [deposited],
        [deposited],
        [unanswered],
    ]


def test_a_result_that_answers_nothing_is_noted_not_matched(tmp_path: Path) -> None:
    records = [
        {"messages": [{"role": "tool", "content": "{}"}, {"role": "tool", "tool_name": "x", "content": "1"}]}
    ]
    (only,) = read("openai-chat", _jsonl(tmp_path, "orphans.jsonl", records))
    assert isinstance(only, Trajectory) and only.steps == ()
    assert only.meta["unmatched_results"] == ["None", "x"]


def _run_step(sid: str, created: int, calls: list[Any], status: str = "completed") -> dict[str, Any]:
    return {
        "id": sid,
        "object": "thread.run.step",
        "created_at": created,
        "run_id": "run_abc",
        "type": "tool_calls",
        "status": status,
        "step_details": {"type": "tool_calls", "tool_calls": calls},
    }


@pytest.mark.parametrize("fmt", ["auto", "openai-chat"])
def test_assistants_run_steps_oldest_first_with_their_outputs(tmp_path: Path, fmt: str) -> None:
    """``GET /v1/threads/{thread}/runs/{run}/steps`` lists the newest step first; each function
    call carries its own ``output`` (null until submitted); other tools are not calls of ours."""
    opened = {
        **CALL,
        "id": "call_0",
        "function": {"name": "open", "arguments": '{"account": "AA01", "owner": "ann"}'},
    }
    opened["function"]["output"] = json.dumps(OPENED)
    deposit = {**CALL, "function": {**CALL["function"], "output": '{"balance": 5}'}}
    code = {"id": "call_c", "type": "code_interpreter", "code_interpreter": {"input": "1+1", "outputs": []}}
    pending = {**CALL, "id": "call_9", "function": {**CALL["function"], "output": None}}
    listing = {
        "object": "list",
        "data": [
            _run_step("step_3", 30, [pending], status="failed"),
            _run_step("step_2", 20, [deposit]),
            {
                "id": "step_0",
                "object": "thread.run.step",
                "created_at": 5,
                "step_details": {"type": "message_creation"},
            },
            _run_step("step_1", 10, [opened, code]),
        ],
        "has_more": False,
    }
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(listing), "utf-8")
    (run,) = read(fmt, path)
    assert isinstance(run, Trajectory) and run.id == "run_abc"
    assert _steps(run) == [
        ("open", {"account": "AA01", "owner": "ann"}, OPENED, None),
        ("deposit", DEPOSIT, {"balance": 5}, None),
        ("deposit", DEPOSIT, "-", 400),
    ]
    assert [s.meta["step"] for s in run.steps] == ["step_1", "step_2", "step_3"]


def _rpc(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def _call(rid: Any, name: str, arguments: Any) -> dict[str, Any]:
    return _rpc(id=rid, method="tools/call", params={"name": name, "arguments": arguments})


def _text(rid: Any, text: str, **more: Any) -> dict[str, Any]:
    return _rpc(id=rid, result={"content": [{"type": "text", "text": text}], **more})


MCP_SESSION = [
    _rpc(id=0, method="initialize", params={"protocolVersion": "2025-06-18", "capabilities": {}}),
    _rpc(id=0, result={"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}),
    _rpc(method="notifications/initialized"),
    _rpc(id=1, method="tools/list"),
    _rpc(id=1, result={"tools": []}),
    _call(2, "open", {"account": "AA01", "owner": "ann"}),
    _call("3", "deposit", DEPOSIT),  # answered first, and by a string id
    _text("3", "ok", structuredContent={"balance": 5}),
    _text(2, json.dumps(OPENED)),
    _call(4, "deposit", {"account": "AA01", "amount": -1}),
    _text(4, "amount must be positive", isError=True),
    _call(5, "deposit", DEPOSIT),
    _rpc(id=5, error={"code": -32602, "message": "Unknown tool"}),
    _call(6, "deposit", DEPOSIT),  # never answered
]


@pytest.mark.parametrize("fmt", ["auto", "mcp"])
def test_mcp_sessions_a_message_a_line_and_as_one_list(tmp_path: Path, fmt: str) -> None:
    """An MCP session logged as JSON-RPC messages: ``tools/call`` requests answered by ``id``
    (in any order; ``1`` and ``"1"`` are different ids), ``structuredContent`` before ``content``,
    ``isError`` and JSON-RPC errors as status 400; other methods are not tool calls. A JSON Lines
    log is one session until the next ``initialize``."""
    second = [
        _rpc(id=0, method="initialize", params={}),
        _call(1, "open", {"account": "BB02", "owner": "bo"}),
    ]
    lines = _jsonl(tmp_path, "session.jsonl", MCP_SESSION + second)
    whole = tmp_path / "session.json"
    whole.write_text(json.dumps(MCP_SESSION), "utf-8")
    expected = [
        ("open", {"account": "AA01", "owner": "ann"}, OPENED, None),
        ("deposit", DEPOSIT, {"balance": 5}, None),
        ("deposit", {"account": "AA01", "amount": -1}, "amount must be positive", 400),
        ("deposit", DEPOSIT, {"code": -32602, "message": "Unknown tool"}, 400),
        ("deposit", DEPOSIT, "-", None),
    ]
    first, nxt = read(fmt, lines)
    assert _steps(first) == expected
    assert _steps(nxt) == [("open", {"account": "BB02", "owner": "bo"}, "-", None)]
    assert isinstance(nxt, Trajectory) and nxt.source is not None and nxt.source.line == len(MCP_SESSION) + 1
    (only,) = read(fmt, whole)
    assert _steps(only) == expected


def test_mcp_broken_sessions_are_one_error_each(tmp_path: Path) -> None:
    reused = [_call(1, "open", {}), _call(1, "open", {})]
    twice = [_call(1, "open", {}), _text(1, "{}"), _text(1, "{}")]
    no_params = [_rpc(id=1, method="tools/call", params=[1])]
    stray = [_call(1, "open", {}), _text(9, "{}"), _text("1", "{}")]
    got = [next(iter(read("mcp", _write(tmp_path, n, s)))) for n, s in enumerate([reused, twice, no_params])]
    messages = [g.message if isinstance(g, TrajectoryError) else g for g in got]
    assert "1 is used by an earlier call" in messages[0]
    assert "a second response for request 1" in messages[1]
    assert "[0].params: a tools/call request needs an object" in messages[2]
    (loose,) = read("mcp", _write(tmp_path, 9, stray))
    assert isinstance(loose, Trajectory) and loose.meta["unmatched_results"] == ["9", "1"]


def _write(tmp_path: Path, n: int, messages: list[Any]) -> Path:
    path = tmp_path / f"s{n}.json"
    path.write_text(json.dumps(messages), "utf-8")
    return path


@pytest.mark.parametrize("fmt", ["auto", "openai-chat"])
def test_a_stored_completions_message_list(tmp_path: Path, fmt: str) -> None:
    """``GET /v1/chat/completions/{id}/messages`` lists chat messages under ``data``; before, it
    was read as a Responses listing and gave a run of zero steps."""
    listing = {
        "object": "list",
        "data": [{"id": f"chatcmpl-AB-{n}", **m} for n, m in enumerate(CHAT)],
        "first_id": "chatcmpl-AB-0",
        "has_more": False,
    }
    path = tmp_path / "stored.json"
    path.write_text(json.dumps(listing), "utf-8")
    (only,) = read(fmt, path)
    assert _steps(only) == [("deposit", DEPOSIT, {"balance": 105}, None)]


def test_a_responses_item_listing_still_reads_as_responses(tmp_path: Path) -> None:
    items = [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "c1",
            "name": "deposit",
            "arguments": json.dumps(DEPOSIT),
        },
        {"type": "function_call_output", "id": "fo_1", "call_id": "c1", "output": '{"balance": 105}'},
    ]
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"object": "list", "data": items, "has_more": False}), "utf-8")
    (only,) = read("auto", path)
    assert _steps(only) == [("deposit", DEPOSIT, {"balance": 105}, None)]
    assert isinstance(only, Trajectory) and only.meta["source"] == "openai-responses"


def _sdk(kind: str, session: str, content: Any, **more: Any) -> dict[str, Any]:
    """A Claude Agent SDK message line (``query()`` output logged as it came)."""
    role = "assistant" if kind == "assistant" else "user"
    return {"type": kind, "message": {"role": role, "content": content}, "session_id": session, **more}


def test_claude_agent_sdk_and_claude_code_sessions_a_message_a_line(tmp_path: Path) -> None:
    def use(uid: str, name: str, args: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": uid, "name": name, "input": args}

    def result(uid: str, text: str, **more: Any) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": uid, "content": text, **more}

    sdk = [
        {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["deposit"]},
        _sdk("user", "s1", "put 5 in AA01", parent_tool_use_id=None),
        _sdk("assistant", "s1", [use("toolu_1", "deposit", DEPOSIT)], parent_tool_use_id=None),
        _sdk("assistant", "s1", [use("toolu_2", "lookup", {"q": "x"})], parent_tool_use_id="toolu_9"),
        _sdk("user", "s1", [result("toolu_2", '{"hits": 1}')], parent_tool_use_id="toolu_9"),
        _sdk("user", "s1", [result("toolu_1", '{"balance": 5}')], parent_tool_use_id=None),
        {"type": "result", "subtype": "success", "session_id": "s1", "is_error": False, "result": "Done."},
    ]
    code = [  # Claude Code's transcript: camelCase, a title line first, one content block a line
        {"type": "summary", "summary": "Deposits", "leafUuid": "u9"},
        {**_sdk("assistant", "", [use("toolu_3", "deposit", DEPOSIT)]), "sessionId": "s2", "uuid": "u1"},
        {**_sdk("user", "", [result("toolu_3", "no such account", is_error=True)]), "sessionId": "s2"},
    ]
    for item in code:
        item.pop("session_id", None)
    main, sub, second = read("auto", _jsonl(tmp_path, "sessions.jsonl", sdk + code))
    assert isinstance(main, Trajectory) and main.id == "s1"
    assert _steps(main) == [("deposit", DEPOSIT, {"balance": 5}, None)]
    assert isinstance(sub, Trajectory) and sub.id == "s1/toolu_9"
    assert _steps(sub) == [("lookup", {"q": "x"}, {"hits": 1}, None)]
    assert isinstance(second, Trajectory) and second.id == "s2"
    assert _steps(second) == [("deposit", DEPOSIT, "no such account", 400)]


def test_vertex_request_response_logging_rows(tmp_path: Path) -> None:
    call = {"functionCall": {"name": "deposit", "args": DEPOSIT}}
    answer = {"functionResponse": {"name": "deposit", "response": {"balance": 5}}}
    user = {"role": "user", "parts": [{"text": "put 5"}]}
    rows = [
        {  # generateContent: the request holds the call and its answer, the response the reply
            "logging_time": "2026-11-25T10:00:00Z",
            "request_id": "7213",
            "api_method": "generateContent",
            "full_request": {
                "contents": [user, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer]}]
            },
            "full_response": {"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}}]},
        },
        {  # streamGenerateContent, exported with the request as JSON text and the chunks as a list
            "request_id": 7214,
            "api_method": "streamGenerateContent",
            "full_request": json.dumps({"contents": [user]}),
            "full_response": [
                {"candidates": [{"content": {"role": "model", "parts": [call]}}], "responseId": "x"},
                {
                    "candidates": [
                        {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}
                    ],
                    "responseId": "x",
                },
            ],
        },
    ]
    one, two = read("auto", _jsonl(tmp_path, "vertex.jsonl", rows))
    assert (
        isinstance(one, Trajectory)
        and one.id == "7213"
        and _steps(one) == [("deposit", DEPOSIT, {"balance": 5}, None)]
    )
    assert (
        isinstance(two, Trajectory) and two.id == "7214" and _steps(two) == [("deposit", DEPOSIT, "-", None)]
    )


def test_mistral_conversations_history_response_and_request(tmp_path: Path) -> None:
    def call(cid: str, arguments: Any) -> dict[str, Any]:
        return {
            "object": "entry",
            "type": "function.call",
            "tool_call_id": cid,
            "name": "deposit",
            "arguments": arguments,
        }

    def result(cid: str, text: str) -> dict[str, Any]:
        return {"object": "entry", "type": "function.result", "tool_call_id": cid, "result": text}

    user = {"object": "entry", "type": "message.input", "role": "user", "content": "put 5 twice"}
    history = {
        "object": "conversation.history",
        "conversation_id": "conv_1",
        "entries": [
            user,
            call("c1", json.dumps(DEPOSIT)),
            call("c2", DEPOSIT),
            result("c2", '{"balance": 10}'),
            result("c1", '{"balance": 5}'),
        ],
    }
    response = {
        "object": "conversation.response",
        "conversation_id": "conv_2",
        "outputs": [call("c3", '{"account": "AA01", "amo')],
    }
    request = {"inputs": [result("c9", "ok")], "stream": False}  # answers a call of an earlier response
    one, two, three = read("auto", _jsonl(tmp_path, "mistral.jsonl", [history, response, request]))
    assert isinstance(one, Trajectory) and one.id == "conv_1" and one.meta["source"] == "mistral"
    assert _steps(one) == [
        ("deposit", DEPOSIT, {"balance": 5}, None),
        ("deposit", DEPOSIT, {"balance": 10}, None),
    ]
    assert isinstance(two, Trajectory) and two.id == "conv_2" and two.steps[0].meta is not None
    assert "invalid JSON" in two.steps[0].meta[BROKEN_ARGUMENTS]
    assert isinstance(three, Trajectory) and not three.steps and three.meta["unmatched_results"] == ["c9"]


def test_langchain_messages_in_each_serialization(tmp_path: Path) -> None:
    ai = {
        "content": "",
        "tool_calls": [{"name": "deposit", "args": DEPOSIT, "id": "call_1", "type": "tool_call"}],
        "invalid_tool_calls": [
            {
                "name": None,
                "args": '{"account": "AA',
                "id": "call_2",
                "error": "bad JSON",
                "type": "invalid_tool_call",
            }
        ],
    }
    tool = {"content": '{"balance": 5}', "tool_call_id": "call_1", "name": "deposit", "status": "success"}
    failed = {"content": "no such account", "tool_call_id": "call_2", "status": "error"}
    as_dicts = [  # messages_to_dict
        {"type": "human", "data": {"content": "go", "type": "human"}},
        {"type": "ai", "data": {**ai, "type": "ai"}},
        {"type": "tool", "data": {**tool, "type": "tool"}},
        {"type": "tool", "data": {**failed, "type": "tool"}},
    ]
    dumped = {  # dumpd, as LangSmith and LangGraph checkpoints keep them, in a state's messages
        "messages": [
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "HumanMessage"],
                "kwargs": {"content": "go"},
            },
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "AIMessage"],
                "kwargs": ai,
            },
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "ToolMessage"],
                "kwargs": tool,
            },
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "ToolMessage"],
                "kwargs": failed,
            },
        ]
    }
    model_dump = [
        {"type": "human", "content": "go"},
        {**ai, "type": "ai"},
        {**tool, "type": "tool"},
        {**failed, "type": "tool"},
    ]
    for got in read("auto", _jsonl(tmp_path, "langchain.jsonl", [as_dicts, dumped, model_dump])):
        assert isinstance(got, Trajectory) and got.meta["source"] == "langchain"
        first, second = got.steps
        assert (first.tool, first.input, first.output, first.status) == (
            "deposit",
            DEPOSIT,
            {"balance": 5},
            None,
        )
        assert (second.tool, second.output, second.status) == ("<unnamed>", "no such account", 400)
        assert second.meta is not None and "invalid JSON" in second.meta[BROKEN_ARGUMENTS]


def test_empty_request_or_response_bodies_are_one_error_each(tmp_path: Path) -> None:
    """An empty body is falsy but present: ``{}`` alone is still a record (found by the reading
    path's property test: ``{"full_request": {}}`` was an internal error)."""
    lines = [{"full_request": {}}, {"key": "k", "request": {}}, {"key": "k", "request": {}, "response": {}}]
    got = list(read("auto", _jsonl(tmp_path, "empty.jsonl", lines)))
    assert len(got) == 3 and all(isinstance(x, TrajectoryError) for x in got)
    assert [x.location.line for x in got if isinstance(x, TrajectoryError) and x.location] == [1, 2, 3]
