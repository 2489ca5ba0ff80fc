"""``--format json`` writes a result of plain fields (every valid one) itself, not through
``json.dumps`` of its dict (issue 17): the text must be the same, character for character, for
any result, hostile ids and messages included."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.report import result_json, write_json
from envfactory.verification import VERDICTS, Result

TEXT = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["", '"', "\\", "\x00", "\u2028", "é", "\U0001f600", "</script>"]
)
MAYBE_TEXT = st.none() | TEXT

RESULTS = st.builds(
    Result,
    id=TEXT,
    verdict=st.sampled_from(VERDICTS),
    step=st.none() | st.integers(0, 10**6),
    kind=MAYBE_TEXT,
    operation=MAYBE_TEXT,
    clause=MAYBE_TEXT,
    location=MAYBE_TEXT,
    message=TEXT,
    values=st.just({}) | st.dictionaries(TEXT, st.integers() | TEXT, max_size=2),
    witness=st.none() | st.just({"holes": {"x": 1}}),
    core=st.none() | st.lists(TEXT, max_size=2),
    seconds=st.floats(0, 1),
    steps=st.integers(0, 100),
    source=MAYBE_TEXT,
)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(RESULTS)
def test_a_result_is_written_as_json_dumps_writes_its_document(result: Result) -> None:
    assert result_json(result) == json.dumps(result.to_json())


def test_valid_results_take_the_short_way_and_read_back() -> None:
    results = [Result(f"t{i}\u00e9", "valid", seconds=0.1, steps=3) for i in range(3)]
    out = io.StringIO()
    write_json(results, out)
    doc = json.loads(out.getvalue())
    assert [r["id"] for r in doc["results"]] == ["t0\u00e9", "t1\u00e9", "t2\u00e9"]
    assert doc["results"][0] == results[0].to_json()
    assert out.getvalue().isascii()
