"""The fast line decoder (msgspec) and the thorough parser agree on every line.

``parse_line`` takes the fast path for plain lines; whatever it accepts there must be exactly the
trajectory the thorough parser builds, and whatever the thorough parser refuses the fast path must
refuse too (so the error, with its location, always comes from the thorough parser).
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory import Trajectory, _wire, parse_line
from envfactory.trajectory._shape import STEP_FIELDS, TRAJECTORY_FIELDS, _build


def thorough(data: bytes, line: int = 1) -> Trajectory | TrajectoryError | None:
    """Line ``line`` of file ``f`` through the Python checks only, never the fast decoder."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return TrajectoryError("bad json", Location("f", line))
    try:
        return _build(obj, Location("f", line), f"f:{line}", deep=False, holes=False)
    except TrajectoryError as err:
        return err


def test_the_wire_types_accept_exactly_the_formats_fields() -> None:
    top, step = _wire.FIELDS
    assert set(top) == set(TRAJECTORY_FIELDS)
    assert set(step) == set(STEP_FIELDS)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
records = st.dictionaries(st.text(max_size=3), values, max_size=2)
good_steps = st.fixed_dictionaries(
    {"tool": st.sampled_from(["open", "deposit"]), "input": values},
    optional={
        "output": values,
        "status": st.sampled_from([100, 200, 404, 599]),
        "meta": st.none() | records,
    },
)
good = st.fixed_dictionaries(
    {"steps": st.lists(good_steps, max_size=3)},
    optional={
        "id": st.none() | st.text(max_size=3),
        "contract": st.none() | st.text(max_size=3),
        "seed": st.none() | st.integers(-5, 5),
        "initial": st.none() | records,
        "meta": st.none() | records,
    },
)
# what can be wrong with one field: a value of another shape, or an out-of-range one
bad_values = values | st.sampled_from(["", 99, 600, 200.0, True, 1.5])
top_fields = st.sampled_from(["id", "contract", "seed", "initial", "meta", "steps", "bogus"])
step_fields = st.sampled_from(["tool", "input", "output", "status", "meta", "bogus"])


@st.composite
def trajectories(draw: st.DrawFn) -> Any:
    """A well-formed trajectory, half of the time with one field broken or dropped."""
    obj = draw(good)
    if draw(st.booleans()):
        return obj
    if obj["steps"] and draw(st.booleans()):
        target = obj["steps"][draw(st.integers(0, len(obj["steps"]) - 1))]
        field = draw(step_fields)
    else:
        target, field = obj, draw(top_fields)
    if draw(st.booleans()):
        target.pop(field, None)
    else:
        target[field] = draw(bad_values)
    return obj


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(trajectories() | values)
def test_fast_and_thorough_paths_agree(obj: Any) -> None:
    data = orjson.dumps(obj)
    fast = parse_line(data, "f", 1, "f")
    slow = thorough(data)
    if isinstance(slow, TrajectoryError):
        assert isinstance(fast, TrajectoryError)
    else:
        assert fast == slow
    wire = _wire.decode(data)
    if wire is not None:  # the fast decoder never accepts a line the thorough parser refuses
        assert isinstance(slow, Trajectory)


def test_a_recorded_null_output_is_not_a_missing_one() -> None:
    line = b'{"steps": [{"tool": "t", "input": {}, "output": null}, {"tool": "t", "input": {}}]}'
    traj = parse_line(line, "f", 3, "f")
    assert isinstance(traj, Trajectory)
    assert [s.has_output for s in traj.steps] == [True, False]
    assert traj.id == "f:3"
    assert traj == thorough(line, 3)


def test_models_are_named_by_their_published_module() -> None:
    import pickle

    traj = parse_line(b'{"id": "t", "steps": [{"tool": "a", "input": {"x": 1}}]}', "f", 1, "f")
    assert isinstance(traj, Trajectory)
    assert type(traj).__module__ == "envfactory.trajectory"
    data = pickle.dumps(traj)
    assert b"envfactory.trajectory._model" not in data
    assert pickle.loads(data) == traj
