"""The text report writes a valid result's line itself, not through rich, when rich would add
nothing (issue 17 item 2); the bytes are the same as rich's, and rich still prints failures and
the summary. Hostile ids (markup, control and bidirectional characters, emoji codes, tabs) too."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

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


def test_valid_lines_skip_rich_and_read_the_same() -> None:
    results = _results(IDS)
    plain, prints = _report(results, through_rich=False)
    rich, rich_prints = _report(results, through_rich=True)
    assert plain == rich
    # rich printed the invalid results (two lines each), the ids it would change, and the summary
    failures = sum(r.verdict != "valid" for r in results)
    changed = sum(r.verdict == "valid" and (":" in r.id or "\t" in r.id or "\\" in r.id) for r in results)
    assert prints == 2 * failures + changed + 1
    assert rich_prints > prints


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(st.lists(st.text(max_size=20), min_size=1, max_size=8))
def test_any_id_reads_the_same_either_way(ids: list[str]) -> None:
    results = _results(ids)
    assert _report(results, through_rich=False)[0] == _report(results, through_rich=True)[0]
