"""The text report writes a valid result's line itself, not through rich, when rich would add
nothing (issue 17 item 2); the bytes are the same as rich's, and rich still prints failures and
the summary. Hostile ids (markup, control and bidirectional characters, emoji codes, tabs) too."""

from __future__ import annotations

import io
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from envfactory._output import safe_text
from envfactory.report import (
    PlainConsole,
    Summary,
    _lines,
    _markup,
    plain_console,
    plain_summary,
    summary_table,
    write_text,
)
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
    console = CountingConsole(file=out, highlight=False, soft_wrap=True, emoji=False, record=through_rich)
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


# -- the whole report without rich: the summary table drawn as rich draws it ---------------------

KINDS = ["unknown_tool", "input_schema", "precondition", "output_schema", "postcondition", "invariant"]


@st.composite
def summaries(draw: Any) -> Summary:
    summary = Summary()
    for verdict in ("valid", "feasible", "invalid", "unknown", "unreadable"):
        summary.counts[verdict] = draw(st.integers(0, 10**12) | st.integers(0, 3))
    for kind in draw(st.lists(st.sampled_from(KINDS), unique=True, max_size=4)):
        summary.kinds[kind] = draw(st.integers(1, 10**9))
    summary.steps = draw(st.integers(0, 10**10))
    summary.seconds = draw(st.floats(0, 10**5, allow_nan=False))
    return summary


def _rich_text(renderable: Any, width: int = 80) -> str:
    out = io.StringIO()
    Console(file=out, highlight=False, soft_wrap=True, emoji=False, width=width).print(renderable)
    return out.getvalue()


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(summaries())
def test_the_plain_summary_is_the_table_rich_draws(summary: Summary) -> None:
    assert "\n".join(plain_summary(summary)) + "\n" == _rich_text(summary_table(summary))


@settings(max_examples=100, derandomize=True, database=None, deadline=None)
@given(st.lists(problems(), max_size=4), st.lists(st.sampled_from(IDS), max_size=4))
def test_a_report_without_rich_reads_as_rich_prints_it(problems: list[Result], ids: list[str]) -> None:
    """The whole text report through ``PlainConsole`` (rich loaded only for a line that needs
    it) is byte for byte what rich's own console prints, summary table included."""
    results = problems + _results(ids)
    summary = Summary()
    plain = io.StringIO()
    stand_in = plain_console(plain, {})
    assert isinstance(stand_in, PlainConsole)
    write_text(results, stand_in, summary=summary)
    rich = io.StringIO()
    console = Console(file=rich, highlight=False, soft_wrap=True, emoji=False, width=stand_in.width)
    for result in results:
        for line in _lines(result):
            console.print(_markup(line), highlight=False)
    console.print(summary_table(summary))
    assert plain.getvalue() == rich.getvalue()


def test_a_console_too_narrow_for_the_table_gets_rich_s_table() -> None:
    summary = Summary()
    summary.counts["valid"] = 3
    out = io.StringIO()
    stand_in = plain_console(out, {"COLUMNS": "20"})
    assert stand_in is not None and stand_in.width == 20
    write_text([], stand_in, summary=summary)
    assert out.getvalue() == _rich_text(summary_table(summary), width=20)
    assert out.getvalue() != "\n".join(plain_summary(summary)) + "\n"  # rich squeezed it


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rich_prints_wherever_it_might_add_something() -> None:
    assert plain_console(_Terminal(), {}) is None
    assert plain_console(io.StringIO(), {"FORCE_COLOR": "1"}) is None
    assert plain_console(io.StringIO(), {"TTY_COMPATIBLE": "1"}) is None
    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    assert plain_console(latin, {}) is None  # rich would draw the table in ASCII
    assert isinstance(plain_console(io.StringIO(), {}), PlainConsole)


def test_a_text_report_of_a_file_loads_no_rich_console(tmp_path: Any) -> None:
    """``verify`` with its output not a terminal renders the report without rich's console;
    checked through ``sys.modules`` in a fresh interpreter."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lines = [
        line
        for line in (root / "examples" / "tickets" / "trajectories.jsonl").read_text("utf-8").splitlines()
        if "$var" not in line
    ]
    concrete = tmp_path / "concrete.jsonl"
    concrete.write_text("\n".join(lines) + "\n", "utf-8")
    probe = (
        "import json, sys, contextlib, io\nfrom envfactory.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        main(['verify', {str(root / 'examples' / 'tickets' / 'tickets.yaml')!r}, {str(concrete)!r}])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps([sorted(m for m in sys.modules if m.startswith('rich.')), out.getvalue()]))"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    }
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    modules, report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "INVALID" in report and "verification summary" in report  # failures and the summary
    assert "rich.console" not in modules and "rich.table" not in modules


def test_emoji_codes_in_ids_and_locations_print_as_text(tmp_path: Any) -> None:
    """rich reads ``:100:`` (in ``file.yaml:100:5``) and ``:smile:`` as emoji codes; the report
    prints them as the text they are, through rich (a terminal) and without it (a file)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    bank = Path(__file__).resolve().parents[2] / "examples" / "bank" / "bank.yaml"
    opened = {"tool": "open", "input": {"account": "AA01", "owner": "ana"}}
    lines = [
        {"id": "log.yaml:100:5", "steps": [opened]},
        {
            "id": "run :smile: 2",
            "steps": [opened, {"tool": "deposit", "input": {"account": "ZZ99", "amount": 1}}],
        },
    ]
    path = tmp_path / "emoji.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    for extra in ({}, {"FORCE_COLOR": "1", "NO_COLOR": "1"}):
        env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")} | extra
        run = subprocess.run(
            [sys.executable, "-m", "envfactory", "verify", str(bank), str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        assert run.returncode == 1, run.stderr
        assert "log.yaml:100:5" in run.stdout and "run :smile: 2" in run.stdout, run.stdout
        assert "\U0001f4af" not in run.stdout and "\U0001f604" not in run.stdout
