"""Cohere logs as Cohere documents them: the v1 Chat API (``chat_history`` turns, ``tool_calls`` of
``{"name", "parameters"}``, ``tool_results`` that repeat their call) and both streaming APIs
(v1 ``event_type`` events, v2 ``chat_stream`` events), each line of a log or raw SSE."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import TrajectoryError
from envfactory.importers import BROKEN_ARGUMENTS, read
from envfactory.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"


def _call(name: str, **parameters: Any) -> dict[str, Any]:
    return {"name": name, "parameters": parameters}


def _result(call: dict[str, Any], *outputs: Any) -> dict[str, Any]:
    return {"call": call, "outputs": list(outputs)}


def _steps(item: Trajectory | TrajectoryError) -> list[tuple[str, Any, Any]]:
    assert isinstance(item, Trajectory), str(item)
    return [(s.tool, s.input, s.output) for s in item.steps]


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def test_results_answer_the_call_they_repeat_not_the_oldest_of_that_name(tmp_path: Path) -> None:
    first, second = _call("balance", account="A"), _call("balance", account="B")
    history = [
        {"role": "USER", "message": "balances of A and B?"},
        {"role": "CHATBOT", "message": "", "tool_calls": [first, second]},
        {"role": "TOOL", "tool_results": [_result(second, {"balance": 2}), _result(first, {"balance": 1})]},
        {"role": "CHATBOT", "message": "A has 1, B has 2."},
    ]
    [got] = read("cohere", _jsonl(tmp_path / "log.jsonl", [{"chat_history": history}]))
    assert _steps(got) == [
        ("balance", {"account": "A"}, {"balance": 1}),
        ("balance", {"account": "B"}, {"balance": 2}),
    ]


def test_a_request_and_a_response_as_the_v1_api_takes_and_gives_them(tmp_path: Path) -> None:
    call = _call("deposit", account="AA01", amount=5)
    request = {  # the follow-up request: the history, and the results of the last turn's calls
        "message": "",
        "chat_history": [
            {"role": "USER", "message": "put 5 in AA01"},
            {"role": "CHATBOT", "message": "", "tool_calls": [call]},
        ],
        "tool_results": [_result(call, {"account": "AA01", "balance": 5})],
    }
    response = {  # a response repeats its own calls at the end of its chat_history: once only
        "response_id": "r1",
        "text": "",
        "generation_id": "g1",
        "tool_calls": [call],
        "chat_history": [
            {"role": "USER", "message": "put 5 in AA01"},
            {"role": "CHATBOT", "tool_calls": [call]},
        ],
        "finish_reason": "COMPLETE",
    }
    one, two = read("auto", _jsonl(tmp_path / "log.jsonl", [request, response]))
    assert _steps(one) == [("deposit", {"account": "AA01", "amount": 5}, {"account": "AA01", "balance": 5})]
    assert _steps(two) == [("deposit", {"account": "AA01", "amount": 5}, None)]
    assert isinstance(one, Trajectory) and one.meta["source"] == "cohere"


def test_several_outputs_are_a_list_and_a_json_text_output_is_decoded(tmp_path: Path) -> None:
    search, get = _call("search", q="x"), _call("get", id=1)
    history = [
        {"role": "CHATBOT", "tool_calls": [search, get]},
        {"role": "TOOL", "tool_results": [_result(search, {"id": 1}, {"id": 2}), _result(get, '{"id": 1}')]},
    ]
    [got] = read("cohere", _jsonl(tmp_path / "log.jsonl", [history]))
    assert _steps(got) == [("search", {"q": "x"}, [{"id": 1}, {"id": 2}]), ("get", {"id": 1}, {"id": 1})]


def test_a_broken_record_is_one_error_and_the_others_import(tmp_path: Path) -> None:
    good = {"chat_history": [{"role": "CHATBOT", "tool_calls": [_call("open", account="A", owner="x")]}]}
    bad = {"chat_history": [{"role": "CHATBOT", "tool_calls": {"name": "open"}}]}
    items = list(read("cohere", _jsonl(tmp_path / "log.jsonl", [bad, good])))
    assert isinstance(items[0], TrajectoryError) and items[0].location is not None
    assert items[0].location.line == 1 and "chat_history[0].tool_calls: must be a list" in items[0].message
    assert _steps(items[1]) == [("open", {"account": "A", "owner": "x"}, None)]


def test_a_file_mixing_cohere_and_openai_chat_is_told_apart_per_record(tmp_path: Path) -> None:
    chat = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "open", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    cohere = [{"role": "CHATBOT", "tool_calls": [_call("close", account="A")]}]
    one, two = read("auto", _jsonl(tmp_path / "log.jsonl", [chat, cohere]))
    assert isinstance(one, Trajectory) and one.meta["source"] == "openai-chat"
    assert isinstance(two, Trajectory) and two.meta["source"] == "cohere"
    assert _steps(two) == [("close", {"account": "A"}, None)]


def _v1_stream(fragments: list[str], *, end: bool) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"is_finished": False, "event_type": "stream-start", "generation_id": "g1"},
        {"is_finished": False, "event_type": "text-generation", "text": "I will deposit."},
        {
            "is_finished": False,
            "event_type": "tool-calls-chunk",
            "tool_call_delta": {"index": 0, "name": "deposit"},
        },
    ]
    events += [
        {
            "is_finished": False,
            "event_type": "tool-calls-chunk",
            "tool_call_delta": {"index": 0, "parameters": f},
        }
        for f in fragments
    ]
    if end:
        call = _call("deposit", **json.loads("".join(fragments)))
        events += [
            {"is_finished": False, "event_type": "tool-calls-generation", "text": "", "tool_calls": [call]},
            {
                "is_finished": True,
                "event_type": "stream-end",
                "finish_reason": "COMPLETE",
                "response": {"generation_id": "g1", "text": "", "tool_calls": [call], "chat_history": []},
            },
        ]
    return events


def _sse(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(f"data: {json.dumps(e)}\n\n" for e in events), "utf-8")
    return path


def test_v1_stream_events_import_as_the_stream_end_response(tmp_path: Path) -> None:
    events = _v1_stream(['{"account": "AA', '01", "amount": 5}'], end=True)
    for path in (_jsonl(tmp_path / "v1.jsonl", events), _sse(tmp_path / "v1.txt", events)):
        [got] = read("auto", path)
        assert _steps(got) == [("deposit", {"account": "AA01", "amount": 5}, None)]


def test_a_v1_stream_cut_mid_parameters_is_the_agents_broken_call(tmp_path: Path) -> None:
    [got] = read(
        "cohere", _jsonl(tmp_path / "cut.jsonl", _v1_stream(['{"account": "AA01", "amo'], end=False))
    )
    assert isinstance(got, Trajectory) and got.steps[0].tool == "deposit"
    assert got.steps[0].meta is not None and "invalid JSON" in got.steps[0].meta[BROKEN_ARGUMENTS]


def _v2_stream(calls: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "type": "message-start",
            "id": "m2",
            "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": []}},
        },
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will call tools."}}},
    ]
    for index, (name, fragments) in enumerate(calls):
        start = {"id": f"{name}_{index}", "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(
            {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": start}}}
        )
        events += [
            {
                "type": "tool-call-delta",
                "index": index,
                "delta": {"message": {"tool_calls": {"function": {"arguments": f}}}},
            }
            for f in fragments
        ]
        events.append({"type": "tool-call-end", "index": index})
    return [*events, {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}]


def _cuts(text: str, points: list[int]) -> list[str]:
    marks = sorted({min(p, len(text)) for p in points})
    return [text[a:b] for a, b in zip([0, *marks], [*marks, len(text)], strict=True)]


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(
    args=st.dictionaries(
        st.sampled_from(["account", "amount"]), st.integers(-(2**63), 2**63 - 1) | st.text(max_size=6)
    ),
    points=st.lists(st.integers(0, 60), max_size=5),
    sse=st.booleans(),
)
def test_v2_stream_events_split_anywhere_give_the_calls_back(
    tmp_path_factory: Any, args: dict[str, Any], points: list[int], sse: bool
) -> None:
    folder = tmp_path_factory.mktemp("c")
    events = _v2_stream([("deposit", _cuts(json.dumps(args), points)), ("balance", ["{}"])])
    path = _sse(folder / "log.txt", events) if sse else _jsonl(folder / "log.jsonl", events)
    [got] = read("auto", path)
    assert [(s.tool, s.input) for s in got.steps] == [("deposit", args), ("balance", {})]  # type: ignore[union-attr]
    assert isinstance(got, Trajectory) and got.id == "m2"


def test_verify_reads_cohere_logs_and_finds_the_overdraft(tmp_path: Path) -> None:
    calls = [
        (_call("open", account="AA01", owner="ana"), {}),
        (_call("open", account="BB02", owner="bo"), {}),
        (_call("deposit", account="AA01", amount=50), {"balance": 50}),
        (_call("transfer", source="AA01", target="BB02", amount=80), {}),
    ]
    history: list[dict[str, Any]] = []
    for call, output in calls:
        history.append({"role": "CHATBOT", "tool_calls": [call]})
        history.append({"role": "TOOL", "tool_results": [_result(call, output)]})
    log = _jsonl(tmp_path / "cohere.jsonl", [{"chat_history": history}])
    run = subprocess.run(
        [sys.executable, "-m", "envfactory", "verify", str(BANK), str(log), "--input-format", "cohere"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "INVALID" in run.stdout and "step 3" in run.stdout and "transfer" in run.stdout
