"""The depth bound of the byte scans (``_maybe_deep``) cannot be fooled by brackets inside strings.

Before, the scan paired the brackets of the whole text, strings included: a value such as
``["]", ["]", ..., "["], "["]`` nested 65+ deep read as flat, so a line went past the fast path
without the "nested deeper than 64 levels" error (issue 17 item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import TrajectoryError
from envfactory.trajectory import Trajectory, parse_line, read_trajectories
from envfactory.trajectory._decode import _maybe_deep, parse_json_value
from envfactory.trajectory._values import MAX_DEPTH

MESSAGE = f"value nested deeper than {MAX_DEPTH} levels"


def hidden(depth: int) -> Any:
    """A list nested ``depth`` deep whose string brackets pair with every real one."""
    value: Any = 1
    for _ in range(depth):
        value = ["]", value, "["]
    return value


def line(value: Any) -> bytes:
    return orjson.dumps({"id": "t", "steps": [{"tool": "a", "input": {"v": value}}]})


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def test_brackets_in_strings_do_not_hide_depth(tmp_path: Path) -> None:
    deep = line(hidden(MAX_DEPTH))  # plus the object around it: MAX_DEPTH + 1 inside the input
    parsed = parse_line(deep, "t.jsonl", 1, "t")
    assert isinstance(parsed, TrajectoryError)
    assert MESSAGE in parsed.message
    path = tmp_path / "t.jsonl"
    path.write_bytes(deep + b"\n" + line(hidden(MAX_DEPTH - 1)) + b"\n")
    first, second = read_trajectories(path)
    assert isinstance(first, TrajectoryError) and MESSAGE in first.message
    assert isinstance(second, Trajectory)  # exactly MAX_DEPTH deep: allowed
    bad = parse_line(orjson.dumps({"steps": [], "meta": {"m": hidden(MAX_DEPTH)}}), "t.jsonl", 1, "t")
    assert isinstance(bad, TrajectoryError) and MESSAGE in bad.message


def test_embedded_json_values_are_bounded_too() -> None:
    try:
        parse_json_value(orjson.dumps(hidden(MAX_DEPTH + 1)))
    except TrajectoryError as err:
        assert MESSAGE in err.message
    else:
        raise AssertionError("a value nested too deep was accepted")


TEXT = st.text(alphabet='[]{}"\\a', max_size=4)


@st.composite
def values(draw: st.DrawFn) -> Any:
    """Values up to 80 deep, every level beside strings full of brackets, quotes and backslashes."""
    value: Any = draw(TEXT)
    for _ in range(draw(st.integers(0, 80))):
        if draw(st.booleans()):
            value = {draw(TEXT): value, draw(TEXT) + "x": draw(TEXT)}
        else:
            value = [draw(TEXT), value, draw(TEXT)][draw(st.integers(0, 1)) :]
    return value


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(values())
def test_a_text_nested_too_deep_is_always_flagged(value: Any) -> None:
    data = orjson.dumps(value)
    if depth(value) > MAX_DEPTH:
        assert _maybe_deep(data)
    parsed = parse_line(line(value), "t.jsonl", 1, "t")
    if depth(value) + 1 > MAX_DEPTH:  # the input object around it adds a level
        assert isinstance(parsed, TrajectoryError) and MESSAGE in parsed.message
    else:
        assert isinstance(parsed, Trajectory)
