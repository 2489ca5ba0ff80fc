"""The text report writes a valid result's line itself, not through rich, when rich would add
nothing (issue 17 item 2); the bytes are the same as rich's, and rich still prints failures and
the summary. Hostile ids (markup, control and bidirectional characters, emoji codes, tabs) too."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from envfactory._output import safe_text
from envfactory.report import write_text
from envfactory.verification import Result

IDS = ["t1", "[bold]x[/bold]", "a\x1b[31mb", "\u202eevil", ":smile: face", "tab\there", "é" * 300, "[", "\\"]


class CountingConsole(Console):
    """Counts the lines that go through rich."""

    prints = 0

    def print(self, *args: Any, **kwargs: Any) -> None:
        self.prints += 1
        super().print(*args, **kwargs)


def _report(results: list[Result], *, through_rich: bool) -> tuple[str, int]:
    out = io.StringIO()
    console = CountingConsole(file=out, highlight=False, soft_wrap=True, record=through_rich)
    write_text(results, console)
    text = out.getvalue()
    return text[: text.index("verification summary")], console.prints


def _results(ids: list[str]) -> list[Result]:
    results = []
    for i, name in enumerate(ids):
        if i % 4 == 3:
            results.append(Result(name, "invalid", step=0, kind="precondition", operation="op", message="m"))
        else:
            results.append(Result(name, "valid", steps=3))
    return results


def test_lines_skip_rich_and_read_the_same() -> None:
    results = _results(IDS)
    plain, prints = _report(results, through_rich=False)
    rich, rich_prints = _report(results, through_rich=True)
    assert plain == rich
    # rich printed the results it would change (two lines for an invalid one, one for a valid
    # one), and the summary
    # (ids holding control characters are escaped with a backslash, which rich's markup reads)
    changed = [r for r in results if ":smile:" in r.id or "\t" in r.id or "\\" in safe_text(r.id)]
    assert prints <= sum(2 if r.verdict == "invalid" else 1 for r in changed) + 1
    assert rich_prints > prints


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(st.lists(st.text(max_size=20), min_size=1, max_size=8))
def test_any_id_reads_the_same_either_way(ids: list[str]) -> None:
    results = _results(ids)
    assert _report(results, through_rich=False)[0] == _report(results, through_rich=True)[0]


TEXTS = st.text(max_size=12) | st.sampled_from(["[bold]x", "a:b:c", ":smile:", "x\\", "\t", "\u202e", "é"])


@st.composite
def problems(draw: Any) -> Result:
    """A result of every verdict but valid, with hostile text in every field the report shows."""
    verdict = draw(st.sampled_from(["invalid", "unknown", "feasible", "unreadable"]))
    return Result(
        draw(TEXTS),
        verdict,
        step=draw(st.none() | st.integers(0, 9)),
        kind=draw(st.none() | TEXTS),
        operation=draw(st.none() | TEXTS),
        clause=draw(st.none() | TEXTS),
        location=draw(st.none() | TEXTS),
        message=draw(TEXTS),
        values=draw(
            st.dictionaries(TEXTS, st.none() | st.integers() | TEXTS | st.lists(st.integers()), max_size=3)
        ),
        witness=draw(st.none() | st.fixed_dictionaries({"holes": st.dictionaries(TEXTS, TEXTS, max_size=2)})),
        core=draw(st.none() | st.lists(TEXTS, max_size=2)),
    )


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.lists(problems(), min_size=1, max_size=5))
def test_any_failure_reads_the_same_either_way(results: list[Result]) -> None:
    assert _report(results, through_rich=False)[0] == _report(results, through_rich=True)[0]


def test_plain_failures_do_not_go_through_rich() -> None:
    failures = [
        Result(
            "t1",
            "invalid",
            step=2,
            kind="precondition",
            operation="op",
            clause="x > 0",
            location="c.yaml:3:5",
            message="step 2: op requires x > 0, but x is -1",
            values={"x": -1},
        ),
        Result("t2", "unknown", message="the solver gave up"),
    ]
    plain, prints = _report(failures, through_rich=False)
    assert prints == 1  # the summary only
    assert plain == _report(failures, through_rich=True)[0]
    assert "clause: x > 0  (c.yaml:3:5)" in plain and "    x = -1" in plain
