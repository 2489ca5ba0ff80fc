"""The trajectory format: models, the streaming reader on good and hostile input, the writer, the
published JSON Schema (the reader and the schema must agree), and loading with HF ``datasets``."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envfactory import trajectory as tr
from envfactory.contracts.errors import Location, TrajectoryError
from envfactory.trajectory import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
    SCHEMA_ID,
    Hole,
    Step,
    Trajectory,
    _jsonl,
    _jsonlist,
    check_value,
    dumps_jsonl,
    iter_holes,
    parse_json_value,
    parse_trajectory,
    read_trajectories,
    read_trajectories_text,
    to_json,
    trajectory_schema,
    write_trajectories,
)

EXAMPLE = {
    "id": "t1",
    "contract": "petstore.yaml",
    "seed": 7,
    "initial": {"user": "ann"},
    "steps": [
        {
            "tool": "addPet",
            "input": {"id": 1, "name": "Rex"},
            "output": {"id": 1, "name": "Rex"},
            "status": 200,
        },
        {"tool": "deletePet", "input": {"petId": {"$var": "p"}}},
    ],
}


def read(text: str | bytes, filename: str = "t.jsonl") -> list[Trajectory | TrajectoryError]:
    return list(read_trajectories_text(text, filename))


def one(text: str | bytes) -> Trajectory:
    [item] = read(text)
    assert isinstance(item, Trajectory), str(item)
    return item


def error(text: str | bytes) -> TrajectoryError:
    [item] = read(text)
    assert isinstance(item, TrajectoryError), item
    return item


def line(obj: Any) -> bytes:
    return orjson.dumps(obj)


def traj_line(value: Any, field: str = "input") -> bytes:
    """A one-step trajectory line with ``value`` as the step's input (or output)."""
    step: dict[str, Any] = {"tool": "t", "input": {}}
    step[field] = value
    return line({"steps": [step]})


# ------------------------------------------------------------------------------------- reading


def test_reads_the_design_example() -> None:
    traj = one(json.dumps(EXAMPLE))
    assert traj.id == "t1" and traj.contract == "petstore.yaml" and traj.seed == 7
    assert traj.initial == {"user": "ann"}
    add, delete = traj.steps
    assert add == Step("addPet", {"id": 1, "name": "Rex"}, {"id": 1, "name": "Rex"}, 200, True)
    assert delete.input == {"petId": Hole("p")}
    assert delete.has_output is False and delete.status is None
    assert traj.has_holes and not add.has_holes and delete.has_holes
    assert traj.holes() == ("p",)
    assert traj.source == Location("t.jsonl", 1)


def test_streams_lines_with_errors_in_place(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                line(EXAMPLE),
                b"",
                b"   ",
                b'{"steps": [1]}',
                b"{broken",
                line({"steps": []}) + b"\r",
            ]
        )
        + b"\n"
    )
    items = list(read_trajectories(path))
    assert [type(i).__name__ for i in items] == [
        "Trajectory",
        "TrajectoryError",
        "TrajectoryError",
        "Trajectory",
    ]
    assert str(items[1]).startswith(f"{path}:4: steps[0]: a step must be an object")
    assert str(items[2]).startswith(f"{path}:5:2: invalid JSON")
    last = items[3]
    assert isinstance(last, Trajectory) and last.id == "runs:6" and last.source == Location(str(path), 6)


def test_default_id_is_stem_and_line() -> None:
    traj = one(b'\n{"steps": []}')
    assert traj.id == "t:2"


def test_null_optional_fields_read_as_absent() -> None:
    traj = one(
        line(
            {
                "id": None,
                "contract": None,
                "seed": None,
                "initial": None,
                "meta": None,
                "steps": [{"tool": "a", "input": {}, "status": None, "meta": None, "output": None}],
            }
        )
    )
    assert traj.id == "t:1" and traj.seed is None and traj.initial is None
    [step] = traj.steps
    assert step.has_output and step.output is None and step.status is None


def test_holes_everywhere_and_same_name() -> None:
    traj = one(
        line(
            {
                "initial": {"user": {"$var": "u"}, "pets": [{"$var": "p"}]},
                "steps": [
                    {"tool": "a", "input": {"$var": "whole"}},
                    {
                        "tool": "b",
                        "input": {"x": {"deep": [1, {"$var": "u"}]}},
                        "output": {"id": {"$var": "p"}},
                    },
                ],
                "meta": {"note": {"$var": "not-a-hole-in-meta"}},
            }
        )
    )
    assert traj.initial == {"user": Hole("u"), "pets": [Hole("p")]}
    assert traj.steps[0].input == Hole("whole")
    assert traj.steps[1].input == {"x": {"deep": [1, Hole("u")]}}
    assert traj.holes() == ("u", "p", "whole")
    assert [h.name for h in iter_holes(traj.steps[1].input)] == ["u"]
    assert traj.meta == {"note": {"$var": "not-a-hole-in-meta"}}


def test_escaped_var_key_is_still_a_hole() -> None:
    traj = one(b'{"steps": [{"tool": "a", "input": {"x": {"\\u0024var": "h"}}}]}')
    assert traj.steps[0].input == {"x": Hole("h")}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"$var": "x", "other": 1},
            "steps[0].input: a hole {\"$var\": ...} must have no other keys, found 'other'",
        ),
        ({"a": [{"$var": 3}]}, 'steps[0].input.a[0]: a hole\'s "$var" must be a non-empty string, got 3'),
        ({"$var": ""}, "must be a non-empty string"),
    ],
)
def test_bad_holes(value: Any, message: str) -> None:
    assert message in str(error(traj_line(value)))


def test_initial_may_not_be_a_hole() -> None:
    assert "initial: the initial state must be an object" in str(
        error(line({"initial": {"$var": "s"}, "steps": []}))
    )


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1], "a trajectory must be a JSON object, got a list"),
        ({"steps": {"tool": "a"}}, "steps: must be a list of steps, got an object"),
        ({"id": "x"}, "missing required field 'steps'"),
        ({"steps": ["addPet"]}, "steps[0]: a step must be an object"),
        ({"steps": [{"tool": 3, "input": {}}]}, "steps[0].tool: must be a non-empty string, got 3"),
        ({"steps": [{"input": {}}]}, "steps[0]: missing required field 'tool'"),
        ({"steps": [{"tool": "a"}]}, "steps[0]: missing required field 'input'"),
        (
            {"steps": [{"tool": "a", "input": {}, "status": "ok"}]},
            'steps[0].status: must be an integer HTTP status 100..599, got "ok"',
        ),
        ({"steps": [{"tool": "a", "input": {}, "status": 99}]}, "status 100..599, got 99"),
        ({"steps": [{"tool": "a", "input": {}, "status": 600}]}, "status 100..599, got 600"),
        ({"steps": [{"tool": "a", "input": {}, "status": True}]}, "status 100..599, got true"),
        ({"steps": [{"tool": "a", "input": {}, "status": 200.5}]}, "status 100..599, got 200.5"),
        (
            {"steps": [], "extra": 1},
            "unknown trajectory field 'extra' (allowed: id, contract, seed, initial, steps, meta",
        ),
        (
            {"steps": [{"tool": "a", "input": {}, "args": 1, "why": 2}]},
            "steps[0]: unknown step fields 'args', 'why'",
        ),
        ({"id": 5, "steps": []}, "id: must be a string, got 5"),
        ({"seed": "7", "steps": []}, 'seed: must be an integer, got "7"'),
        ({"contract": ["a"], "steps": []}, "contract: must be a string"),
        ({"initial": [1], "steps": []}, "initial: must be an object (state variable -> value), got a list"),
        ({"meta": "x", "steps": []}, "meta: must be an object"),
        ({"steps": [{"tool": "a", "input": {}, "meta": 1}]}, "steps[0].meta: must be an object"),
    ],
)
def test_shape_errors(obj: Any, message: str) -> None:
    err = error(line(obj))
    assert message in str(err)
    assert err.location == Location("t.jsonl", 1)


def test_integral_float_status_reads_as_integer() -> None:
    assert one(traj_line(201.0, "status")).steps[0].status == 201


@pytest.mark.parametrize(
    ("raw", "message", "col"),
    [
        (
            b'{"steps": [{"tool": "a", "input": {"x": NaN}}]}',
            "NaN and Infinity are not valid JSON numbers",
            41,
        ),
        (b'{"steps": [{"tool": "a", "input": {"x": Infinity}}]}', "NaN and Infinity", 41),
        (b'{"steps": [{"tool": "a", "input": {"x": -Infinity}}]}', "NaN and Infinity", None),
        (b'{"steps": [{"tool": "a", "input": {"x": 1e400}}]}', "number too large for a 64-bit float", 41),
        (b'{"steps": [{"tool": "a", "input": {"x": "\\ud800"}}]}', "lone UTF-16 surrogate escape", None),
        (b'{"steps": [{"tool": "a", "input": {"x": "\\udc00 tail"}}]}', "lone UTF-16 surrogate escape", None),
        (b'{"steps": [{"tool": "a", "input": {"x": "caf\xe9"}}]}', "invalid UTF-8 byte 0xe9", 45),
        (b'{"steps": [{"tool": "a", "input": {"x": "\xed\xa0\x80"}}]}', "invalid UTF-8 byte 0xed", 42),
        (b'{"steps": [}', "invalid JSON", 12),
    ],
)
def test_hostile_json(raw: bytes, message: str, col: int | None) -> None:
    err = error(raw)
    assert message in err.message
    assert err.location is not None and err.location.line == 1
    if col is not None:
        assert err.location.col == col


def test_valid_surrogate_pair_reads() -> None:
    assert one(traj_line({"x": "\U0001f600"})).steps[0].input == {"x": "\U0001f600"}
    assert one(b'{"steps": [{"tool": "a", "input": {"x": "\\ud83d\\ude00"}}]}').steps[0].input == {
        "x": "\U0001f600"
    }


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30, -(10**19)])
def test_integers_beyond_64_bits_are_rejected(value: int) -> None:
    raw = b'{"steps": [{"tool": "a", "input": {"n": [%d]}}]}' % value
    err = error(raw)
    assert "steps[0].input.n[0]: integer" in err.message and "does not fit in 64 bits" in err.message


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63), 10**18, 1234567890123456789])
def test_integers_within_64_bits_are_exact(value: int) -> None:
    raw = b'{"seed": %d, "steps": [{"tool": "a", "input": {"n": %d, "s": "%d%d"}}]}' % (
        value,
        value,
        value,
        value,
    )
    traj = one(raw)
    assert traj.seed == value and traj.steps[0].input["n"] == value
    assert isinstance(traj.steps[0].input["n"], int)


def test_long_digit_strings_are_not_numbers() -> None:
    traj = one(traj_line({"phone": "12345678901234567890123"}))
    assert traj.steps[0].input == {"phone": "12345678901234567890123"}


def test_integer_literal_beyond_python_limit_is_one_error() -> None:
    raw = b'{"steps": [{"tool": "a", "input": {"n": ' + b"9" * 5000 + b"}}]}"
    assert isinstance(error(raw), TrajectoryError)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("field", ["input", "output"])
def test_depth_limit(field: str) -> None:
    assert one(traj_line(nested(MAX_DEPTH), field))
    err = error(traj_line(nested(MAX_DEPTH + 1), field))
    assert f"value nested deeper than {MAX_DEPTH} levels" in err.message
    assert err.message.startswith(f"steps[0].{field}")


def test_depth_limit_in_initial_and_meta() -> None:
    assert "initial" in error(line({"initial": {"a": nested(MAX_DEPTH)}, "steps": []})).message
    assert "meta" in error(line({"meta": {"a": nested(MAX_DEPTH)}, "steps": []})).message


def test_nesting_beyond_orjson_limit_is_one_clean_error() -> None:
    raw = b'{"steps": [{"tool": "a", "input": ' + b"[" * 5000 + b"]" * 5000 + b"}]}"
    err = error(raw)
    assert err.message == f"value nested deeper than {MAX_DEPTH} levels"


def test_bom_at_start_accepted_elsewhere_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line(EXAMPLE) + b"\n\xef\xbb\xbf" + line(EXAMPLE) + b"\n")
    first, second = read_trajectories(path)
    assert isinstance(first, Trajectory)
    assert isinstance(second, TrajectoryError) and "byte order mark" in second.message
    assert isinstance(one(b"\xef\xbb\xbf" + line(EXAMPLE)), Trajectory)


def test_line_over_16_mib_is_an_error_for_that_line_only(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(line(EXAMPLE) + b"\n")
        handle.write(b'{"steps": [], "meta": {"pad": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}}\n')
        handle.write(line({"id": "after", "steps": []}) + b"\n")
    tracemalloc.start()
    items = list(read_trajectories(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [getattr(i, "id", None) for i in items] == ["t1", None, "after"]
    assert isinstance(items[1], TrajectoryError)
    assert str(items[1]) == f"{path}:2: line longer than 16 MiB"
    assert peak < 3 * MAX_LINE_BYTES  # the long line is skipped in chunks, never held twice


def test_reading_is_lazy(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    write_trajectories(path, (Trajectory(f"t{i}", ()) for i in range(1000)))
    iterator = read_trajectories(path)
    first = next(iterator)
    assert isinstance(first, Trajectory) and first.id == "t0"


def test_missing_file_is_one_error(tmp_path: Path) -> None:
    [err] = read_trajectories(tmp_path / "nope.jsonl")
    assert isinstance(err, TrajectoryError) and "cannot read file" in err.message
    [err] = read_trajectories(tmp_path / "nope.json")
    assert isinstance(err, TrajectoryError) and "cannot read file" in err.message


# ----------------------------------------------------------------------------------- .json files


def test_json_file_with_one_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "single.json"
    path.write_text(json.dumps(EXAMPLE, indent=2))
    [traj] = read_trajectories(path)
    assert isinstance(traj, Trajectory) and traj.id == "t1"


def test_json_file_with_a_list_keeps_good_items(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(
        json.dumps(
            [{"steps": []}, {"steps": 3}, {"id": "z", "steps": [{"tool": "a", "input": {"$var": "h"}}]}],
            indent=1,
        )
    )
    first, bad, last = read_trajectories(path)
    assert isinstance(first, Trajectory) and first.id == "list:1"
    assert isinstance(bad, TrajectoryError) and bad.message.startswith("item 2: steps: must be a list")
    assert isinstance(last, Trajectory) and last.steps[0].input == Hole("h")


def test_json_file_holding_json_lines_reads_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_bytes(line(EXAMPLE) + b"\n" + line({"steps": []}) + b"\n")
    items = list(read_trajectories(path))
    assert [getattr(i, "id", None) for i in items] == ["t1", "lines:2"]


def test_json_file_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "steps": [\n    {"tool": "a",, "input": {}}\n  ]\n}\n')
    [err] = read_trajectories(path)
    assert isinstance(err, TrajectoryError) and err.location == Location(str(path), 3, 18)


def test_json_file_with_one_object_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_jsonl, "MAX_DOCUMENT_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text(json.dumps({**EXAMPLE, "meta": {"pad": "x" * 200}}))
    [err] = read_trajectories(path)
    assert isinstance(err, TrajectoryError) and "write it as JSON Lines" in err.message


def test_json_list_streams_in_flat_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_jsonlist, "_CHUNK", 64 << 10)
    path = tmp_path / "big.json"
    item = {**EXAMPLE, "meta": {"pad": "x" * 1000}}
    count = 3000  # ~3.4 MB on disk
    with open(path, "wb") as handle:
        handle.write(b"[\n")
        for i in range(count):
            handle.write(orjson.dumps({**item, "id": f"t{i}"}) + (b",\n" if i < count - 1 else b"\n"))
        handle.write(b"]\n")
    tracemalloc.start()
    seen = 0
    for traj in read_trajectories(path):  # consumed one at a time, never listed
        assert isinstance(traj, Trajectory) and traj.id == f"t{seen}" and traj.source.line == seen + 2
        seen += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seen == count
    assert path.stat().st_size > 3_000_000
    assert peak < 1_000_000  # a few read chunks, whatever the file size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[]", []),
        ('[{"steps": []},]', ["ok", "item 2: empty list item"]),
        ('[{"steps": []},,{"steps": []}]', ["ok", "item 2: empty list item", "ok"]),
        ('[{"steps": []}', ["the list is not closed"]),
        ('[{"steps": []}] junk', ["ok", "text after the end of the list"]),
        (
            '[1, {"steps": []}}',
            ["item 1: a trajectory must be a JSON object", "ok", "'}' where the list should close"],
        ),
        ('[{"id": "a]},[\\"", "steps": []}]', ["ok"]),
    ],
)
def test_json_list_structure_errors(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = tmp_path / "l.json"
    path.write_text(text)
    got = ["ok" if isinstance(x, Trajectory) else x.message for x in read_trajectories(path)]
    assert len(got) == len(expected) and all(g.startswith(e) for g, e in zip(got, expected)), got


def test_json_file_with_big_integer_rejects_only_its_item(tmp_path: Path) -> None:
    path = tmp_path / "ints.json"
    path.write_text('[{"steps": []}, {"seed": 123456789012345678901234, "steps": []}]')
    good, bad = read_trajectories(path)
    assert isinstance(good, Trajectory)
    assert isinstance(bad, TrajectoryError) and bad.message.startswith("item 2: seed: integer")


def test_json_document_of_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "num.json"
    path.write_text("3")
    [err] = read_trajectories(path)
    assert isinstance(err, TrajectoryError) and "object or a list of objects" in err.message


# -------------------------------------------------------------------------------- python objects


def test_parse_trajectory_from_python_objects() -> None:
    source = Location("mem", 3)
    traj = parse_trajectory({"steps": ({"tool": "a", "input": {"x": ({"$var": "h"},)}},)}, source)
    assert traj.steps[0].input == {"x": [Hole("h")]} and traj.id == "mem:3"
    with pytest.raises(TrajectoryError, match=r"steps\[0\]\.input\.x: NaN and Infinity"):
        parse_trajectory({"steps": [{"tool": "a", "input": {"x": float("nan")}}]}, source)
    with pytest.raises(TrajectoryError, match="object keys must be strings"):
        parse_trajectory({"steps": [{"tool": "a", "input": {1: 2}}]}, source)
    with pytest.raises(TrajectoryError, match="set is not a JSON value"):
        parse_trajectory({"steps": [{"tool": "a", "input": {"s": {1}}}]}, source)
    with pytest.raises(TrajectoryError, match="lone UTF-16 surrogate"):
        parse_trajectory({"steps": [{"tool": "\ud800", "input": {}}]}, source)


def test_parse_trajectory_does_not_mutate_its_argument() -> None:
    obj = {"steps": [{"tool": "a", "input": {"x": {"$var": "h"}}}]}
    snapshot = json.dumps(obj)
    parse_trajectory(obj, Location("m"))
    assert json.dumps(obj) == snapshot


def test_check_value_and_parse_json_value_paths() -> None:
    assert check_value({"a": [{"$var": "x"}]}) == {"a": [Hole("x")]}
    with pytest.raises(TrajectoryError, match=r"^args\.a\[0\]: integer"):
        check_value({"a": [2**70]}, what="args")
    with pytest.raises(TrajectoryError, match=r"^args: invalid JSON"):
        parse_json_value('{"a": ', what="args")
    with pytest.raises(TrajectoryError, match=r"^args: NaN"):
        parse_json_value('{"a": NaN}', what="args")
    assert parse_json_value('{"n": 18446744073709551615}') == {"n": 2**64 - 1}


# --------------------------------------------------------------------------------------- writing


def test_write_round_trip_and_key_order(tmp_path: Path) -> None:
    traj = one(json.dumps(EXAMPLE))
    text = dumps_jsonl([traj])
    assert text == json.dumps(EXAMPLE, separators=(",", ":")) + "\n"
    path = tmp_path / "out.jsonl"
    assert write_trajectories(path, [traj, traj]) == 2
    again = [t for t in read_trajectories(path) if isinstance(t, Trajectory)]
    assert [to_json(t) for t in again] == [EXAMPLE, EXAMPLE]


def test_to_json_omits_unknowns_and_keeps_null_output() -> None:
    traj = Trajectory("x", (Step("a", {"k": Hole("h")}), Step("b", [], None, None, True, {"turn": 1})))
    assert to_json(traj) == {
        "id": "x",
        "steps": [
            {"tool": "a", "input": {"k": {"$var": "h"}}},
            {"tool": "b", "input": [], "output": None, "meta": {"turn": 1}},
        ],
    }


def test_writing_a_non_json_value_is_a_trajectory_error() -> None:
    with pytest.raises(TrajectoryError, match="cannot be written as JSON"):
        dumps_jsonl([Trajectory("x", (Step("a", {"s": {1, 2}}),))])


# ----------------------------------------------------------------------------- schema agreement

SCHEMA = trajectory_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_published_and_valid() -> None:
    assert SCHEMA["$id"] == SCHEMA_ID
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert VALIDATOR.is_valid(EXAMPLE)


names = st.sampled_from(["a", "b", "p", "user"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
keys = st.sampled_from(["id", "name", "x", "$var", "$ref", "tags"])


def json_values(holes: bool) -> st.SearchStrategy[Any]:
    base = st.one_of(scalars, st.builds(lambda n: {"$var": n}, names)) if holes else scalars
    return st.recursive(
        base,
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
        max_leaves=8,
    )


steps = st.fixed_dictionaries(
    {"tool": st.sampled_from(["addPet", "deletePet"]), "input": json_values(True)},
    optional={
        "output": json_values(True),
        "status": st.one_of(st.none(), st.integers(100, 599)),
        "meta": st.dictionaries(st.text(max_size=4), json_values(False), max_size=2),
    },
)
valid_objects = st.fixed_dictionaries(
    {"steps": st.lists(steps, max_size=3)},
    optional={
        "id": st.text(max_size=6),
        "contract": st.text(max_size=6),
        "seed": st.integers(-(2**63), 2**63 - 1),
        "initial": st.dictionaries(st.sampled_from(["user", "pets"]), json_values(True), max_size=2),
        "meta": st.dictionaries(st.text(max_size=4), json_values(False), max_size=2),
    },
)
junk = st.one_of(scalars, st.lists(scalars, max_size=2), st.dictionaries(keys, scalars, max_size=2))


@st.composite
def mutated_objects(draw: st.DrawFn) -> Any:
    """A valid trajectory object with one random part replaced by junk (often still valid)."""
    obj: Any = draw(valid_objects)
    where = draw(st.sampled_from(["top", "field", "step", "stepfield", "value"]))
    if where == "top":
        return draw(junk)
    if where == "field":
        obj[draw(st.sampled_from(["id", "contract", "seed", "initial", "steps", "meta", "other"]))] = draw(
            junk
        )
    elif obj["steps"]:
        index = draw(st.integers(0, len(obj["steps"]) - 1))
        if where == "step":
            obj["steps"][index] = draw(junk)
        elif where == "stepfield":
            field = draw(st.sampled_from(["tool", "input", "output", "status", "meta", "extra"]))
            obj["steps"][index][field] = draw(junk)
        else:
            obj["steps"][index]["input"] = {
                "v": draw(junk),
                "h": draw(st.dictionaries(keys, junk, max_size=2)),
            }
    return obj


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_objects())
def test_reader_and_schema_agree(obj: Any) -> None:
    [item] = read(orjson.dumps(obj))
    assert isinstance(item, Trajectory) == VALIDATOR.is_valid(obj), (obj, item)


@settings(max_examples=100, deadline=None, database=None)
@given(valid_objects)
def test_fast_reader_and_python_parser_agree(obj: Any) -> None:
    [from_line] = read(orjson.dumps(obj))
    from_python: Trajectory | TrajectoryError
    try:
        from_python = parse_trajectory(obj, Location("t.jsonl", 1))
    except TrajectoryError as err:  # e.g. a "$var" key beside others: both readers must refuse it
        from_python = err
    if isinstance(from_line, Trajectory):
        assert from_line == from_python
    else:
        assert isinstance(from_python, TrajectoryError)
        assert from_python.message == from_line.message


hole_values = st.recursive(
    st.one_of(scalars, st.builds(Hole, names)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["id", "x", "y"]), inner, max_size=3)
    ),
    max_leaves=8,
)
model_steps = st.builds(
    lambda tool, value, out, has_output, status, meta: Step(
        tool, value, out if has_output else None, status, has_output, meta
    ),
    st.sampled_from(["addPet", "login"]),
    hole_values,
    hole_values,
    st.booleans(),
    st.one_of(st.none(), st.integers(100, 599)),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=3), scalars, max_size=2)),
)
models = st.builds(
    Trajectory,
    st.text(min_size=1, max_size=6),
    st.lists(model_steps, max_size=4).map(tuple),
    st.one_of(st.none(), st.text(max_size=5)),
    st.one_of(st.none(), st.integers(0, 2**32)),
    st.one_of(st.none(), st.dictionaries(st.sampled_from(["user", "n"]), hole_values, max_size=2)),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=3), scalars, max_size=2)),
)


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(models, max_size=3))
def test_everything_written_validates_and_reads_back(trajs: list[Trajectory]) -> None:
    text = dumps_jsonl(trajs)
    lines = text.split("\n")[:-1]  # not splitlines(): U+0085 and friends may sit inside strings
    assert len(lines) == len(trajs)
    assert text.endswith("\n") or not trajs
    for written in lines:
        VALIDATOR.validate(json.loads(written))
    again = read(text)
    assert all(isinstance(t, Trajectory) for t in again)
    assert [to_json(t) for t in again] == [to_json(t) for t in trajs]
    assert [t.steps for t in again] == [t.steps for t in trajs]


# ------------------------------------------------------------------------------ HF datasets


def heterogeneous() -> list[Trajectory]:
    """Rows whose free-form values differ in shape and type from row to row."""
    return [
        one(json.dumps(EXAMPLE)),
        Trajectory("t2", (Step("deletePet", {"petId": 3}, "deleted", 204, True),)),
        Trajectory("t3", (Step("search", [1, "a"], [None, {"x": 1}], None, True, {"turn": 2}),), seed=3),
        Trajectory(
            "t4", (Step("login", {"name": Hole("n"), "tags": ["x"]}),), initial={"user": None, "n": 5}
        ),
        Trajectory("t5", ()),
    ]


@pytest.fixture
def offline_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    return datasets


def test_datasets_loads_a_written_file(tmp_path: Path, offline_datasets: Any) -> None:
    path = tmp_path / "train.jsonl"
    trajs = heterogeneous()
    write_trajectories(path, trajs)
    ds = offline_datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "c")
    )
    assert ds.num_rows == len(trajs)
    assert ds["id"] == [t.id for t in trajs]
    row = ds[2]
    assert row["steps"][0]["input"] == [1, "a"] and row["steps"][0]["output"] == [None, {"x": 1}]
    assert ds[3]["steps"][0]["input"] == {"name": {"$var": "n"}, "tags": ["x"]}


def test_datasets_with_trajectory_features_survives_late_heterogeneity(
    tmp_path: Path, offline_datasets: Any
) -> None:
    """Rows alike for the first chunks and different later: datasets infers the Arrow types from
    the first chunk, so only explicit features (free-form values as Json) load such a file."""
    path = tmp_path / "late.jsonl"
    alike = [
        Trajectory(f"a{i}", (Step("addPet", {"id": i, "name": "Rex"}, {"id": i}, 200, True),))
        for i in range(400)
    ]
    trajs = alike + heterogeneous()
    write_trajectories(path, trajs)
    ds = offline_datasets.load_dataset(
        "json",
        data_files=str(path),
        split="train",
        cache_dir=str(tmp_path / "c"),
        features=tr.trajectory_features(),
        chunksize=4096,
    )
    assert ds.num_rows == len(trajs)
    assert ds[len(alike) + 1]["steps"][0]["output"] == "deleted"
    assert ds[len(alike) + 3]["steps"][0]["input"] == {"name": {"$var": "n"}, "tags": ["x"]}
    back = parse_trajectory(ds[len(alike)], Location("ds", 1))  # rows read back as trajectories
    assert back.steps[1].input == {"petId": Hole("p")} and back.initial == {"user": "ann"}


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(valid_objects, max_size=4), st.integers(1, 64), st.booleans())
def test_json_list_streaming_agrees_with_whole_parse(objs: list[Any], chunk: int, pretty: bool) -> None:
    """Chunk boundaries anywhere (inside strings, escapes, numbers) change nothing."""
    import tempfile

    text = json.dumps(objs, indent=1 if pretty else None, ensure_ascii=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.json"
        path.write_text(text, encoding="utf-8")
        old = _jsonlist._CHUNK
        _jsonlist._CHUNK = chunk
        try:
            streamed = list(read_trajectories(path))
        finally:
            _jsonlist._CHUNK = old
    whole = []
    for index, obj in enumerate(objs, 1):
        try:
            whole.append(parse_trajectory(obj, Location(str(path), 1), default_id=f"l:{index}").steps)
        except TrajectoryError as err:
            whole.append(err.message)
    assert [x.steps if isinstance(x, Trajectory) else x.message.split(": ", 1)[1] for x in streamed] == whole
