"""JSON Lines read a block at a time (issue 17 item 3): ``iter_blocks`` (and ``iter_lines`` over it)
gives the lines of the file, numbered, and an error for each one too long, whatever the block
size, and ``parse_lines`` (byte scans once per block,
the fast decoder's structs kept as the steps) reads exactly what ``parse_line`` reads line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory.trajectory._jsonl as jsonl
from envfactory.contracts.errors import TrajectoryError
from envfactory.trajectory import Step, Trajectory, parse_line, read_trajectories
from envfactory.trajectory._decode import parse_lines
from envfactory.trajectory._wire import DecodedSteps

ROOT = Path(__file__).resolve().parents[2]

PIECES = [b"\n", b"{}", b'{"steps": []}', b"x" * 7, b"\r\n", b"  ", b"[", b'"\n', b"\xef\xbb\xbf"]
BOM = b"\xef\xbb\xbf"


def _reference(data: bytes, longest: int) -> list[Any]:
    """The lines of ``data`` as a user reads them: numbered from 1, a BOM at the very start
    dropped, a final newline ending the last line, a line longer than ``longest`` an error."""
    data = data.removeprefix(BOM)
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [("error", n) if len(line) > longest else (n, line) for n, line in enumerate(parts, 1)]


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.integers(1, 9), st.integers(4, 20))
def test_blocks_are_the_lines(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes], block: int, longest: int
) -> None:
    path = tmp_path_factory.mktemp("blocks") / "t.jsonl"
    data = b"".join(pieces)
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsonl, "BLOCK_BYTES", block)
        mp.setattr(jsonl, "MAX_LINE_BYTES", longest)
        read = [
            ("error", i.location.line) if isinstance(i, TrajectoryError) and i.location else i
            for i in jsonl.iter_lines(path)
        ]
    # an empty last piece (a file ending in a BOM alone) reads as no line; empty lines are skipped
    # by every reader, so only where the others fall is compared for them
    assert [i for i in read if i[1] != b""] == [i for i in _reference(data, longest) if i[1] != b""]


LINES = [
    b'{"id": "a", "steps": [{"tool": "t", "input": {"x": 1}, "output": null, "status": 200}]}',
    b'{"id": "hole", "steps": [{"tool": "t", "input": {"x": {"$var": "h"}}}]}',
    b'{"id": "big", "steps": [{"tool": "t", "input": {"x": 123456789012345678901234}}]}',
    b'{"id": "deep", "steps": [{"tool": "t", "input": ' + b"[" * 70 + b"]" * 70 + b"}]}",
    b'{"id": "esc", "steps": [{"tool": "t", "input": {"\\u0024var": "h"}}]}',
    b"",
    b"not json",
    b'{"id": "b", "steps": [{"tool": "t", "input": {}, "meta": {"k": [1, 2.5]}}], "initial": {"v": 1}}',
    b'{"steps": [{"tool": "", "input": {}}]}',
]


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(LINES), max_size=8))
def test_a_block_reads_as_its_lines(lines: list[bytes]) -> None:
    one_by_one = [p for n, line in enumerate(lines, 5) if (p := parse_line(line, "f", n, "f")) is not None]
    together = list(parse_lines(lines, 5, "f", "f"))
    assert [_shown(p) for p in together] == [_shown(p) for p in one_by_one]


def _shown(item: Trajectory | TrajectoryError) -> Any:
    if isinstance(item, TrajectoryError):
        return str(item)
    return (item.id, tuple(item.steps), item.initial, item.meta, item.source)


def test_decoded_steps_read_as_a_tuple_of_steps() -> None:
    traj = parse_line(LINES[0], "f", 1, "f")
    assert isinstance(traj, Trajectory) and isinstance(traj.steps, DecodedSteps)
    step = Step("t", {"x": 1}, None, 200, True)
    assert traj.steps == (step,) and (step,) == traj.steps
    assert traj.steps[0] == step and traj.steps[:1] == (step,) and list(traj.steps) == [step]
    assert len(traj.steps) == 1 and traj.steps.wire[0].has_output


def test_a_file_reads_the_same_in_blocks(tmp_path: Path) -> None:
    """Every bundled trajectory file, cut into tiny blocks, reads as line by line."""
    for name in ("bank", "petstore", "tickets"):
        data = (ROOT / "examples" / name / "trajectories.jsonl").read_bytes()
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data + b"\n".join(LINES))
        whole = [_shown(t) for t in read_trajectories(path)]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(jsonl, "BLOCK_BYTES", 97)
            small = [_shown(t) for t in read_trajectories(path)]
        expected = [
            _shown(p)
            for n, line in enumerate(path.read_bytes().split(b"\n"), 1)
            if (p := parse_line(line, str(path), n, name)) is not None
        ]
        assert whole == small == expected
        assert orjson.loads(data.splitlines()[0])  # the file is what it seems


ITEMS = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(["a", "b,c", "}, {", '"x"']),
            "steps": st.lists(st.just({"tool": "t", "input": {}}), max_size=3),
        }
    ),
    max_size=12,
)
STYLES = [
    lambda items: "[\n" + ",\n".join(orjson.dumps(i).decode() for i in items) + "\n]\n",
    lambda items: __import__("json").dumps(items, indent=1),
    lambda items: orjson.dumps(items).decode(),
    lambda items: "[" + " ,\n\n ".join(orjson.dumps(i).decode() for i in items) + "]",
]


@settings(max_examples=120, deadline=None, database=None, derandomize=True)
@given(ITEMS, st.integers(0, len(STYLES) - 1), st.sampled_from([64, 300, 1 << 20]))
def test_list_items_cut_in_batches_are_the_items_cut_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, items: list[Any], style: int, chunk: int
) -> None:
    """A ``.json`` list's items cut many at a time (``_batch``, issue 17) are the items, with their
    lines, that the item-by-item scan cuts, whatever the layout and the chunk size."""
    import envfactory.trajectory._jsonlist as jsonlist

    path = tmp_path_factory.mktemp("list") / "t.json"
    path.write_text(STYLES[style](items), "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsonlist, "_CHUNK", chunk)
        batched = [_item(i) for i in jsonlist.list_items(path)]
        mp.setattr(jsonlist, "_batch", lambda *args: None)
        single = [_item(i) for i in jsonlist.list_items(path)]
    assert batched == single  # the blank space after an item is not part of it either way
    assert [orjson.loads(i[2]) for i in batched if isinstance(i, tuple)] == items


def _item(item: Any) -> Any:
    return (item[0], item[1], item[2].rstrip()) if isinstance(item, tuple) else str(item)
