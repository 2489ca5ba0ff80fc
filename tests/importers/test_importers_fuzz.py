"""Every importer on arbitrary log-shaped JSON: never an exception, only trajectories (which write
and read back unchanged) or errors; and on valid chat logs built by Hypothesis, every call kept."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import TrajectoryError
from envfactory.importers import IMPORTERS, import_openai_chat, read, sniff
from envfactory.trajectory import Trajectory, read_trajectories_text, to_json, write_trajectories

KEYS = [
    "role", "content", "tool_calls", "tool_call_id", "function", "name", "arguments", "id", "type",
    "call_id", "output", "input", "messages", "choices", "message", "tool_use_id", "is_error", "text",
    "ground_truth", "steps", "data", "function_call",
    "chat_history", "tool_results", "parameters", "outputs", "call", "entries", "result", "args", "lc",
    "kwargs", "event_type", "session_id", "sessionId", "schemaType", "inputBodyJson", "full_request",
    "full_response", "event_id", "delta", "index", "invalid_tool_calls", "status", "parent_tool_use_id",
]  # fmt: skip
WORDS = st.sampled_from(
    ["assistant", "user", "tool", "function", "function_call", "function_call_output", "tool_use",
     "tool_result", "text", "f", "c1", "{}", '{"a": 1}', "{bad", "cd('x')", "ls(a=True)", "f(x=__import__('os'))",
     "CHATBOT", "TOOL", "function.call", "function.result", "ai", "AIMessage", "ToolMessage", "stream-end",
     "tool-calls-chunk", "message-start", "tool-call-delta", "ModelInvocationLog", "session.created",
     "response.done", "conversation.item.created", "error"]
)  # fmt: skip
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), WORDS, st.text(max_size=5)
)
records = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.sampled_from(sorted(IMPORTERS)))
def test_importers_never_raise_on_arbitrary_records(data: Any, fmt: str) -> None:
    out = list(IMPORTERS[fmt](data, source="log.jsonl", line=1))
    assert out or (fmt == "bfcl" and data == [])  # an empty list of BFCL entries holds none
    assert all(isinstance(x, Trajectory | TrajectoryError) for x in out)
    trajs = [x for x in out if isinstance(x, Trajectory)]
    buffer = io.BytesIO()
    write_trajectories(buffer, trajs)
    back = list(read_trajectories_text(buffer.getvalue(), "back.jsonl"))
    assert [to_json(t) for t in back if isinstance(t, Trajectory)] == [to_json(t) for t in trajs]
    with contextlib.suppress(TrajectoryError):  # sniffing never fails otherwise
        sniff(data)


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(records, min_size=1, max_size=6))
def test_a_log_of_arbitrary_lines_reads_without_raising(tmp_path_factory: Any, lines: list[Any]) -> None:
    """The whole reading path (stream assembly, vendor envelopes, sniffing, every importer) on a
    file: each line is a trajectory or an error, never an exception."""
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    out = list(read("auto", path))
    assert all(isinstance(x, Trajectory | TrajectoryError) for x in out)


arguments = st.dictionaries(
    st.text(max_size=4), st.one_of(st.integers(-5, 5), st.text(max_size=4)), max_size=3
)


@settings(max_examples=150, deadline=None, database=None)
@given(
    st.lists(st.tuples(st.sampled_from(["f", "g", "h"]), arguments, st.booleans(), st.booleans()), max_size=6)
)
def test_chat_logs_keep_every_call_in_order(calls: list[tuple[str, dict[str, Any], bool, bool]]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    results = []
    for index, (name, args, answered, together) in enumerate(calls):
        call = {
            "id": f"c{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        if together and messages[-1].get("tool_calls"):
            messages[-1]["tool_calls"].append(call)  # parallel calls in one message
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        if answered:
            results.append({"role": "tool", "tool_call_id": f"c{index}", "content": json.dumps({"n": index})})
    messages.extend(reversed(results))  # results in any order: matched by id
    [traj] = import_openai_chat(messages, source="chat.json")
    assert isinstance(traj, Trajectory)
    assert [(s.tool, s.input) for s in traj.steps] == [(name, args) for name, args, _, _ in calls]
    assert [s.output if s.has_output else None for s in traj.steps] == [
        {"n": i} if answered else None for i, (_, _, answered, _) in enumerate(calls)
    ]
