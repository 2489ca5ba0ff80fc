"""The agent-log importers on real-shaped fixtures: OpenAI chat, OpenAI Responses, Anthropic,
sniffing, broken arguments as findings, hostile input, and round trips through the file format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from envfactory.contracts.errors import TrajectoryError, UsageError
from envfactory.importers import (
    BROKEN_ARGUMENTS,
    FORMATS,
    broken_arguments,
    import_anthropic,
    import_openai_chat,
    import_openai_responses,
    read,
    sniff,
)
from envfactory.trajectory import Hole, Trajectory, read_trajectories, to_json, write_trajectories

FIXTURES = Path(__file__).parent / "fixtures"


def items(fmt: str, name: str) -> list[Trajectory | TrajectoryError]:
    return list(read(fmt, FIXTURES / name))


def trajectories(fmt: str, name: str) -> list[Trajectory]:
    got = items(fmt, name)
    assert all(isinstance(t, Trajectory) for t in got), [str(t) for t in got]
    return [t for t in got if isinstance(t, Trajectory)]


def as_json(traj: Trajectory) -> list[dict[str, Any]]:
    return [{k: v for k, v in step.items() if k != "meta"} for step in to_json(traj)["steps"]]


# ------------------------------------------------------------------------------------ OpenAI chat


def test_openai_chat_conversation_matches_results_by_call_id() -> None:
    [traj] = trajectories("openai-chat", "openai_chat_conversation.json")
    assert traj.id == "openai_chat_conversation"
    assert as_json(traj) == [
        {"tool": "addPet", "input": {"id": 1, "name": "Rex"}, "output": {"id": 1, "name": "Rex"}},
        # the content came in two text parts, joined before decoding
        {"tool": "listPets", "input": {}, "output": [{"id": 1, "name": "Rex"}]},
        {"tool": "deletePet", "input": {"petId": 1}, "output": "Pet 1 deleted."},
    ]
    assert [s.meta["message"] for s in traj.steps if s.meta] == [2, 2, 5]
    assert traj.steps[1].meta is not None and traj.steps[1].meta["call_id"] == "call_Kp91Zd"
    assert traj.meta == {"source": "openai-chat"}


def test_openai_chat_results_out_of_order_and_unmatched(tmp_path: Path) -> None:
    messages = [
        {"role": "assistant", "tool_calls": [call("a", "f", "{}"), call("b", "g", '{"x": 1}')]},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "tool", "tool_call_id": "zzz", "content": "stray"},
        {"role": "tool", "tool_call_id": "a", "content": "not json"},
    ]
    [traj] = import_openai_chat(messages, source="log.json")
    assert isinstance(traj, Trajectory)
    assert [(s.tool, s.output) for s in traj.steps] == [("f", "not json"), ("g", 2)]
    assert traj.meta == {"source": "openai-chat", "unmatched_results": ["zzz"]}


def test_openai_chat_completion_has_unknown_outputs() -> None:
    [traj] = trajectories("openai-chat", "openai_chat_completion.json")
    assert traj.id == "chatcmpl-AbC123xyz"
    [step] = traj.steps
    assert step.tool == "get_weather" and step.input == {"location": "Paris, France", "unit": "celsius"}
    assert not step.has_output and step.status is None


def test_openai_chat_jsonl_keeps_going_after_bad_lines() -> None:
    got = items("openai-chat", "openai_chat_finetune.jsonl")
    assert [t.id if isinstance(t, Trajectory) else str(t.location) for t in got] == [
        "openai_chat_finetune:1",
        "openai_chat_finetune:2",
        f"{FIXTURES / 'openai_chat_finetune.jsonl'}:4:53",
        "openai_chat_finetune:5",
        "openai_chat_finetune:6",
    ]
    plain, legacy = got[3], got[4]
    assert isinstance(plain, Trajectory) and plain.steps == ()
    assert isinstance(legacy, Trajectory)
    assert as_json(legacy) == [
        {"tool": "addPet", "input": {"id": 3, "name": "Bo"}, "output": {"id": 3, "name": "Bo"}}
    ]


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# ------------------------------------------------------------------------------ broken arguments


def test_broken_arguments_are_a_finding_pinned_to_the_message() -> None:
    got = items("openai-chat", "openai_chat_finetune.jsonl")
    traj = got[1]
    assert isinstance(traj, Trajectory)
    [(index, step, reason)] = list(broken_arguments(traj))
    assert index == 0 and step.tool == "addPet"
    assert step.input == '{"id": 2, "name": "Tom"'  # the raw text: no object schema accepts it
    assert reason.startswith("messages[1].tool_calls[0].function.arguments: invalid JSON")
    assert step.output == "error"  # the rest of the call is still imported
    assert traj.source.line == 2


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"n": NaN}', "NaN"),
        ('{"n": ' + "9" * 40 + "}", "64 bits"),
        ("[" * 5000 + "]" * 5000, "nested deeper"),
        ('{"s": "\\ud800"}', "surrogate"),
        ("{'single': 'quotes'}", "invalid JSON"),
    ],
)
def test_hostile_arguments_are_findings_not_crashes(arguments: str, reason: str) -> None:
    messages = [
        {"role": "assistant", "tool_calls": [call("c1", "f", arguments), call("c2", "g", '{"ok": 1}')]}
    ]
    [traj] = import_openai_chat(messages, source="log.json")
    assert isinstance(traj, Trajectory)
    [(index, _step, why)] = list(broken_arguments(traj))
    assert index == 0 and reason in why
    assert traj.steps[1].input == {"ok": 1}


def test_broken_arguments_in_responses_and_anthropic() -> None:
    [resp] = import_openai_responses(
        [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"}], source="r.json"
    )
    assert isinstance(resp, Trajectory)
    [(_, step, why)] = list(broken_arguments(resp))
    assert step.meta is not None and step.meta["item"] == "[0]" and why.startswith("[0].arguments")
    [anth] = import_anthropic(
        [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{oops"}]}],
        source="a.json",
    )
    assert isinstance(anth, Trajectory)
    assert [i for i, _, _ in broken_arguments(anth)] == [0]
    assert anth.steps[0].meta is not None and BROKEN_ARGUMENTS in anth.steps[0].meta


# ------------------------------------------------------------------------------- OpenAI Responses


def test_openai_responses_input_items() -> None:
    [traj] = trajectories("openai-responses", "openai_responses_input.json")
    assert as_json(traj) == [
        {
            "tool": "get_weather",
            "input": {"location": "Paris, France"},
            "output": {"temperature": 14, "unit": "celsius"},
        },
        {"tool": "get_weather", "input": {"location": "Oslo, Norway"}, "output": "unavailable"},
    ]
    assert [s.meta["call_id"] for s in traj.steps if s.meta] == ["call_12345xyz", "call_2"]


def test_openai_responses_response_object() -> None:
    [traj] = trajectories("openai-responses", "openai_responses_response.json")
    assert traj.id == "resp_67ccd2bed1ec8190b14f964abc054267"
    assert [s.input["location"] for s in traj.steps] == ["Paris, France", "Bogotá, Colombia"]
    assert not any(s.has_output for s in traj.steps)


def test_openai_responses_request_and_response_together() -> None:
    record = {
        "input": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
        "output": [{"type": "function_call_output", "call_id": "c1", "output": '{"done": true}'}],
    }
    [traj] = import_openai_responses(record, source="x.jsonl", line=3)
    assert isinstance(traj, Trajectory)
    assert traj.id == "x:3" and traj.steps[0].output == {"done": True}


def test_duplicate_call_ids_are_an_error_for_that_conversation() -> None:
    items_ = [
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}"},
    ]
    [err] = import_openai_responses(items_, source="x.json")
    assert isinstance(err, TrajectoryError) and "'c' is used by an earlier call" in err.message


# -------------------------------------------------------------------------------------- Anthropic


def test_anthropic_request_with_error_result() -> None:
    [traj] = trajectories("anthropic", "anthropic_messages.json")
    assert as_json(traj) == [
        {"tool": "addPet", "input": {"id": 1, "name": "Rex"}, "output": {"id": 1, "name": "Rex"}},
        {"tool": "deletePet", "input": {"petId": 7}, "output": "pet 7 not found", "status": 400},
    ]
    assert [s.meta["message"] for s in traj.steps if s.meta] == [1, 3]


def test_anthropic_response_message() -> None:
    [traj] = trajectories("anthropic", "anthropic_response.json")
    assert traj.id == "msg_01Aq9w938a90dw8q"
    assert traj.steps[0].input == {"location": "San Francisco, CA", "unit": "celsius"}


def test_anthropic_tool_use_from_the_user_is_an_error() -> None:
    [err] = import_anthropic(
        [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}],
        source="a.json",
    )
    assert isinstance(err, TrajectoryError) and "messages[0].content[0]" in err.message


# --------------------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("openai_chat_conversation.json", "openai-chat"),
        ("openai_chat_completion.json", "openai-chat"),
        ("openai_responses_input.json", "openai-responses"),
        ("openai_responses_response.json", "openai-responses"),
        ("anthropic_messages.json", "anthropic"),
        ("anthropic_response.json", "anthropic"),
    ],
)
def test_sniff_tells_each_fixture_apart(name: str, fmt: str) -> None:
    data = json.loads((FIXTURES / name).read_text())
    assert sniff(data) == fmt
    assert [to_json(t) for t in trajectories("auto", name)] == [to_json(t) for t in trajectories(fmt, name)]


def test_sniff_native_and_bfcl_and_unknown() -> None:
    assert sniff({"steps": []}) == "native"
    assert sniff({"id": "x", "ground_truth": [["f()"]]}) == "bfcl"
    assert sniff([{"role": "user", "content": "hi"}]) == "openai-chat"  # plain chat: zero steps
    with pytest.raises(TrajectoryError, match="cannot tell the log format"):
        sniff({"name": "cd", "parameters": {}})
    with pytest.raises(TrajectoryError):
        sniff(42)


def test_auto_on_a_native_file_is_the_native_reader(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"id": "a", "steps": [{"tool": "f", "input": {"x": {"$var": "v"}}}]}\nnot json\n{"steps": []}\n'
    )
    auto, native = list(read("auto", path)), list(read_trajectories(path))
    assert [str(x) for x in auto] == [str(x) for x in native]
    assert isinstance(auto[0], Trajectory) and auto[0].steps[0].input == {"x": Hole("v")}
    assert (
        isinstance(auto[1], TrajectoryError) and auto[1].location is not None and auto[1].location.line == 2
    )


def test_auto_on_an_unknown_structure_is_one_error(tmp_path: Path) -> None:
    errors = list(read("auto", FIXTURES / "bfcl_functions.json"))  # three function docs, one a line
    assert len(errors) == 3
    assert all(isinstance(e, TrajectoryError) and "name it" in e.message for e in errors)
    assert [e.location.line for e in errors if isinstance(e, TrajectoryError) and e.location] == [1, 2, 3]


def test_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown log format"):
        read("csv", FIXTURES / "anthropic_response.json")
    assert set(FORMATS) == {
        "auto",
        "native",
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "bedrock",
        "cohere",
        "mistral",
        "langchain",
        "mcp",
        "bfcl",
    }


def test_unreadable_file_is_an_error_not_an_exception(tmp_path: Path) -> None:
    [err] = read("openai-chat", tmp_path / "missing.json")
    assert isinstance(err, TrajectoryError) and "cannot read file" in err.message
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"role": "user", "content": "\xff"}]')
    [err] = read("openai-chat", bad)
    assert isinstance(err, TrajectoryError) and "UTF-8" in err.message


def test_a_list_of_conversations_gives_one_trajectory_each() -> None:
    data = [
        {"id": "one", "messages": [{"role": "assistant", "tool_calls": [call("a", "f", "{}")]}]},
        {"messages": "not a list"},
        {"messages": [{"role": "assistant", "tool_calls": [call("b", "g", "{}")]}]},
    ]
    got = list(import_openai_chat(data, source="many.json"))
    assert [t.id if isinstance(t, Trajectory) else "error" for t in got] == ["one", "error", "many:3"]


# ------------------------------------------------------------------------------------ round trips


ALL_FIXTURES = [
    ("openai-chat", "openai_chat_conversation.json"),
    ("openai-chat", "openai_chat_finetune.jsonl"),
    ("openai-responses", "openai_responses_input.json"),
    ("anthropic", "anthropic_messages.json"),
]


@pytest.mark.parametrize(("fmt", "name"), ALL_FIXTURES)
def test_round_trip_write_then_read(tmp_path: Path, fmt: str, name: str) -> None:
    imported = [t for t in items(fmt, name) if isinstance(t, Trajectory)]
    out = tmp_path / "out.jsonl"
    assert write_trajectories(out, imported) == len(imported)
    back = list(read_trajectories(out))
    assert all(isinstance(t, Trajectory) for t in back)
    assert [to_json(t) for t in back] == [to_json(t) for t in imported]
    assert [orjson.loads(line)["id"] for line in out.read_bytes().splitlines()] == [t.id for t in imported]


def test_datasets_reads_imported_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    imported = [t for fmt, name in ALL_FIXTURES for t in items(fmt, name) if isinstance(t, Trajectory)]
    out = tmp_path / "train.jsonl"
    write_trajectories(out, imported)
    ds = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(tmp_path / "c"))
    assert ds.num_rows == len(imported)
    assert ds["id"] == [t.id for t in imported]
    assert [len(row["steps"]) for row in ds] == [len(t.steps) for t in imported]
    assert [s["tool"] for s in ds[0]["steps"]] == ["addPet", "listPets", "deletePet"]


# ------------------------------------------------------------------------------- through verify


def test_broken_arguments_verify_as_input_schema_at_that_step() -> None:
    import envfactory
    from envfactory.verification import verify

    contract = envfactory.load(Path(__file__).parents[2] / "examples" / "petstore" / "petstore.yaml")
    results = list(verify(contract, read("openai-chat", FIXTURES / "openai_chat_finetune.jsonl")))
    by_id = {r.id: r for r in results}
    broken = by_id["openai_chat_finetune:2"]
    assert (broken.verdict, broken.step, broken.kind, broken.operation) == (
        "invalid",
        0,
        "input_schema",
        "addPet",
    )
    assert "could not be decoded" in broken.message
    assert [r.verdict for r in results].count("unreadable") == 1  # the truncated line, reported in place
    assert by_id["openai_chat_finetune:5"].verdict == "valid"  # plain chat: no calls, nothing to break


def test_auto_sniffs_each_record_of_a_mixed_file(tmp_path: Path) -> None:
    anthropic = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "g", "input": {"y": 2}}]}
    ]
    lines = [
        {"messages": [{"role": "assistant", "tool_calls": [call("a", "f", '{"x": 1}')]}]},
        {"nothing": "recognisable"},
        {"messages": anthropic},
        {"messages": [{"role": "user", "content": "no calls"}]},
        {"id": "n", "steps": [{"tool": "h", "input": {}}]},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = list(read("auto", path))
    assert isinstance(got[1], TrajectoryError) and "cannot tell the log format" in got[1].message
    assert got[1].location is not None and got[1].location.line == 2
    steps = [[(s.tool, s.input) for s in t.steps] if isinstance(t, Trajectory) else None for t in got]
    assert steps == [[("f", {"x": 1})], None, [("g", {"y": 2})], [], [("h", {})]]
    assert [t.meta for t in got if isinstance(t, Trajectory)][:3] == [
        {"source": "openai-chat"},
        {"source": "anthropic"},
        {"source": "anthropic"},  # a plain conversation takes the format of the records before it
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b'{"messages": [{"role": "user", "content": "\xff"}]}', "UTF-8"),
        (b'{"messages": ' + b"[" * 3000 + b"]" * 3000 + b"}", "nested deeper"),
        (b'{"messages": [], "n": NaN}', "NaN"),
        (b'{"messages": [], "n": ' + b"9" * 5000 + b"}", "too large"),
        (b'{"messages": [{"role": "tool", "content": "x"}', "invalid JSON"),
    ],
)
def test_hostile_log_lines_are_one_error_each(tmp_path: Path, bad: bytes, message: str) -> None:
    good = json.dumps({"messages": [{"role": "assistant", "tool_calls": [call("a", "f", "{}")]}]}).encode()
    path = tmp_path / "log.jsonl"
    path.write_bytes(good + b"\n" + bad + b"\n" + good + b"\n")
    got = list(read("openai-chat", path))
    assert [type(x).__name__ for x in got] == ["Trajectory", "TrajectoryError", "Trajectory"]
    err = got[1]
    assert isinstance(err, TrajectoryError) and err.location is not None and err.location.line == 2
    assert message in err.message, err.message


def test_hostile_values_inside_a_conversation(tmp_path: Path) -> None:
    deep_output = json.dumps({"x": json.loads("[" * 80 + "]" * 80)})
    messages = [
        {"role": "assistant", "tool_calls": [call("a", "f", "{}")]},
        {"role": "tool", "tool_call_id": "a", "content": deep_output},  # too deep: kept as its text
    ]
    [traj] = import_openai_chat(messages, source="log.json")
    assert isinstance(traj, Trajectory) and traj.steps[0].output == deep_output
    [err] = import_anthropic(
        [{"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "", "input": {}}]}],
        source="a.json",
    )
    assert isinstance(err, TrajectoryError) and "name: must be a non-empty string" in err.message


def test_auto_streams_a_json_list_of_native_trajectories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``verify``'s default ``--input-format auto`` on a ``.json`` list of native trajectories
    decides from the first item and streams, as ``read_trajectories`` does: it used to decode the
    whole document to sniff it, 650 MB of memory for a 52 MB file."""
    import envfactory.importers as importers

    path = tmp_path / "runs.json"
    items = [{"id": f"t{i}", "steps": [{"tool": "ping", "input": {"n": i}}]} for i in range(5)]
    path.write_text(json.dumps(items, indent=1))

    def whole_document(*_: Any) -> Any:
        raise AssertionError("the whole document was decoded")

    monkeypatch.setattr(importers, "read_records", whole_document)
    got = list(importers.read("auto", path))
    assert [t.id for t in got if isinstance(t, Trajectory)] == [f"t{i}" for i in range(5)]
    assert got == list(read_trajectories(path))
    # a list whose first item is not a native trajectory still goes the general way
    other = tmp_path / "chat.json"
    other.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(AssertionError, match="whole document"):
        list(importers.read("auto", other))


def test_verify_offers_exactly_the_formats_the_importers_read() -> None:
    """``verify --input-format`` keeps its own literal list (its --help must not import the
    importers); the two lists are one list, checked here."""
    from envfactory.cli.verify import INPUT_FORMATS

    assert INPUT_FORMATS == FORMATS
