"""Verification reports: rich text for people, one stable JSON document, JUnit XML for CI.

Every writer consumes results as a stream and keeps only the counts, so a report on millions of
trajectories runs in flat memory (JUnit excepted: its format puts the counts before the cases, so
it holds the cases' XML). Text from trajectories is hostile: terminal output escapes control
characters, XML output replaces characters XML cannot hold.
"""

from __future__ import annotations

import builtins
import itertools
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from envfactory._output import EXIT_FINDING, EXIT_OK, EXIT_UNDECIDED, EXIT_USAGE, plural, safe_text
from envfactory.verification import VERDICTS, Result

FORMATS = ("text", "json", "junit")


class Summary:
    """Counts over a stream of results: per verdict, per failing kind, steps and wall time."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.steps = 0
        self.started = time.perf_counter()
        self.seconds = 0.0

    def add(self, result: Result) -> Result:
        self.counts[result.verdict] += 1
        if result.kind is not None and result.verdict == "invalid":
            self.kinds[result.kind] += 1
        self.steps += result.steps
        return result

    def finish(self) -> Summary:
        self.seconds = time.perf_counter() - self.started
        return self

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def exit_code(self) -> int:
        """2 when any input was unreadable, else 1 on any invalid, else 3 on any unknown, else 0."""
        if self.counts["unreadable"]:
            return EXIT_USAGE
        if self.counts["invalid"]:
            return EXIT_FINDING
        if self.counts["unknown"]:
            return EXIT_UNDECIDED
        return EXIT_OK

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"total": self.total}
        for verdict in VERDICTS:
            doc[verdict] = self.counts[verdict]
        doc["kinds"] = dict(sorted(self.kinds.items()))
        doc["steps"] = self.steps
        doc["seconds"] = round(self.seconds, 6)
        return doc


def tally(results: Iterable[Result], summary: Summary) -> Iterator[Result]:
    """Pass results through, counting them."""
    for result in results:
        yield summary.add(result)


# ------------------------------------------------------------------------------------------- json


def write_json(results: Iterable[Result], out: IO[str], summary: Summary | None = None) -> Summary:
    """``{"results": [...], "summary": {...}}``, written as results arrive."""
    summary = summary or Summary()
    stream = iter(tally(results, summary))
    head = next(stream, None)  # workers start here: nothing of the report is buffered yet
    out.write('{"results": [')
    first = True
    for result in itertools.chain([head] if head is not None else [], stream):
        out.write("\n  " if first else ",\n  ")
        out.write(result_json(result))
        first = False
    summary.finish()
    out.write("\n],\n" if not first else "],\n")
    out.write(f'"summary": {json.dumps(summary.to_json())}}}\n')
    return summary


_ascii = json.encoder.encode_basestring_ascii  # what json.dumps writes for a str, in C
_VALID_TAIL = (
    ', "verdict": "valid", "step": null, "kind": null, "operation": null, "clause": null,'
    ' "location": null, "message": "", "values": {}, "witness": null, "core": null}'
)


def result_json(result: Result) -> str:
    """``json.dumps(result.to_json())``, ASCII (safe on any terminal encoding). A plain valid
    result is written out directly: one per trajectory, and ``json.dumps`` of the dict took a
    fifth of a ``--format json`` run."""
    if (
        result.verdict == "valid"
        and not result.values
        and result.witness is None
        and result.core is None
        and result.step is None
        and result.message == ""
        and result.kind is None
        and result.operation is None
        and result.clause is None
        and result.location is None
        and result.id.__class__ is str
    ):
        return '{"id": ' + _ascii(result.id) + _VALID_TAIL
    return json.dumps(result.to_json())


def json_document(results: Iterable[Result]) -> dict[str, Any]:
    """The same document as ``write_json``, in memory (for small runs and tests)."""
    summary = Summary()
    items = [r.to_json() for r in tally(results, summary)]
    return {"results": items, "summary": summary.finish().to_json()}


# ------------------------------------------------------------------------------------------ junit

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: characters it forbids become ``\\xNN`` / ``\\uNNNN`` escapes."""
    return _XML_BAD.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )


def write_junit(
    results: Iterable[Result],
    out: IO[str],
    *,
    suite: str = "envfactory verify",
    summary: Summary | None = None,
) -> Summary:
    """One ``<testcase>`` per trajectory: invalid is a failure, unreadable an error, unknown skipped."""
    import xml.etree.ElementTree as ET  # only here: the text report's start-up stays lean

    summary = summary or Summary()
    root = ET.Element("testsuites")
    cases: list[ET.Element] = []
    for result in tally(results, summary):
        case = ET.Element(
            "testcase",
            {
                "name": xml_text(result.id),
                "classname": xml_text(suite),
                "time": f"{result.seconds:.6f}",
            },
        )
        detail = _detail_lines(result)
        if result.verdict == "invalid":
            node = ET.SubElement(
                case,
                "failure",
                {"message": xml_text(result.message), "type": xml_text(result.kind or "invalid")},
            )
            node.text = xml_text("\n".join(detail))
        elif result.verdict == "unreadable":
            node = ET.SubElement(case, "error", {"message": xml_text(result.message), "type": "unreadable"})
            node.text = xml_text("\n".join(detail))
        elif result.verdict == "unknown":
            ET.SubElement(case, "skipped", {"message": xml_text(result.message)})
        elif result.verdict == "feasible" and result.witness is not None:
            out_node = ET.SubElement(case, "system-out")
            out_node.text = xml_text(json.dumps(result.to_json()["witness"], ensure_ascii=False))
        cases.append(case)
    summary.finish()
    attrs = {
        "name": xml_text(suite),
        "tests": str(summary.total),
        "failures": str(summary.counts["invalid"]),
        "errors": str(summary.counts["unreadable"]),
        "skipped": str(summary.counts["unknown"]),
        "time": f"{summary.seconds:.6f}",
    }
    root.attrib.update(attrs)
    testsuite = ET.SubElement(root, "testsuite", attrs)
    testsuite.extend(cases)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
    return summary


def _detail_lines(result: Result) -> list[str]:
    lines = [result.message]
    if result.step is not None:
        lines.append(f"step: {result.step} ({result.operation})")
    if result.clause:
        lines.append(f"clause: {result.clause}")
    if result.location:
        lines.append(f"location: {result.location}")
    for key, value in list(result.values.items())[:12]:
        lines.append(f"  {key} = {json.dumps(value, ensure_ascii=False, default=str)}")
    return lines


# ------------------------------------------------------------------------------------------- text

_STYLE = {
    "valid": "green",
    "feasible": "cyan",
    "invalid": "red",
    "unknown": "yellow",
    "unreadable": "magenta",
}


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(safe_text(text))


Line = list[tuple[str, str | None]]
"""One line of the text report: its segments of raw text (not escaped), each with its style."""


def _markup(line: Line) -> str:
    """A line as rich markup, hostile text escaped."""
    return "".join(f"[{style}]{_esc(text)}[/{style}]" if style else _esc(text) for text, style in line)


def _head(result: Result) -> Line:
    style = _STYLE.get(result.verdict, "white")
    head: Line = [(f"{result.verdict.upper():<10}", style), (" " + result.id, None)]
    if result.verdict == "invalid":
        head += [(f"  step {result.step} {result.operation or ''} ", None), (result.kind or "", "bold")]
    return head


def result_line(result: Result) -> str:
    """One line of rich markup for a result (hostile text escaped)."""
    return _markup(_head(result))


def _lines(result: Result) -> list[Line]:
    """Every line of a result in the text report: the head, and for a problem its detail."""
    lines = [_head(result)]
    if result.verdict == "valid":
        return lines
    indent = "    "
    where = (
        f"{result.location}: "
        if result.verdict == "unreadable" and result.location not in (None, result.id)
        else ""
    )
    lines.append([(indent + where + result.message, None)])
    if result.verdict == "invalid":
        if result.clause:
            where = f"  ({result.location})" if result.location else ""
            lines.append([(indent, None), ("clause:", "dim"), (f" {result.clause}{where}", None)])
        for key, value in list(result.values.items())[:8]:
            shown = json.dumps(value, ensure_ascii=False, default=str)
            if len(shown) > 100:
                shown = shown[:97] + "..."
            lines.append([(indent, None), (f"{key} =", "dim"), (f" {shown}", None)])
    if result.witness:
        shown = json.dumps(result.to_json()["witness"], ensure_ascii=False)
        lines.append([(indent, None), ("witness:", "dim"), (f" {shown[:300]}", None)])
    if result.core:
        for item in result.core[:8]:
            lines.append([(indent, None), ("core:", "dim"), (f" {json.dumps(item, default=str)}", None)])
    return lines


def write_text(
    results: Iterable[Result],
    console: Any,
    *,
    summary: Summary | None = None,
    show_valid: bool = True,
    progress: bool | None = None,
    total_hint: int | None = None,
) -> Summary:
    """Each result as it arrives (problems in detail), then a summary table; a progress bar only
    when the console is a terminal."""
    summary = summary or Summary()
    use_bar = console.is_terminal if progress is None else progress
    if use_bar:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("verifying"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("verify", total=total_hint)
            for result in tally(results, summary):
                _print_result(bar.console, result, show_valid)
                bar.advance(task)
    else:
        plain = _plain_write(console)
        for result in tally(results, summary):
            if result.ok and not show_valid:
                continue
            if plain is not None and result.verdict == "valid":
                shown = safe_text(result.id)
                if _plain_text(shown):
                    plain(_VALID + shown + "\n")  # the common case, without a list
                    continue
            lines = _lines(result)
            if plain is not None:
                parts = [[safe_text(t) for t, _ in line] for line in lines]
                if all(_plain_text(part) for line in parts for part in line):
                    plain("".join("".join(line) + "\n" for line in parts))
                    continue
            for line in lines:
                console.print(_markup(line), highlight=False)
    summary.finish()
    if isinstance(console, PlainConsole) and console.write_summary(summary):
        return summary
    console.print(summary_table(summary))
    return summary


class PlainConsole:
    """Stands for rich's console on a file that is not a terminal, where rich prints plain text:
    the text report writes what it can itself (valid results, plain failures, the summary table
    as rich draws it) and imports rich only for a line that needs it. ``plain_console`` says
    when it may stand in (issue 17 item 2: rich's import and rendering were a tenth of a run)."""

    is_terminal = False
    color_system = None
    record = False
    soft_wrap = True

    def __init__(self, file: IO[str], width: int) -> None:
        self.file = file
        self.width = width
        self._rich: Any = None

    def print(self, *objects: Any, **options: Any) -> None:
        if self._rich is None:
            from rich.console import Console

            # the width rich would measure itself (``plain_console`` measures it its way)
            self._rich = Console(
                file=self.file, highlight=False, soft_wrap=True, emoji=False, width=self.width
            )
        self._rich.print(*objects, **options)

    def write_summary(self, summary: Summary) -> bool:
        """Write ``summary_table`` as rich draws it here; False (nothing written) where the table
        is wider than the console, which rich would squeeze, or a kind is not a plain word (rich
        would read it as markup; the checks' kinds all are)."""
        if not all(kind.isascii() and kind.replace("_", "").isalpha() for kind in summary.kinds):
            return False
        lines = plain_summary(summary)
        if max(map(len, lines)) > self.width:
            return False
        self.file.write("\n".join(lines) + "\n")
        return True


def plain_console(file: IO[str], environ: Mapping[str, str] | None = None) -> PlainConsole | None:
    """A ``PlainConsole`` for ``file`` where rich's console (``highlight=False, soft_wrap=True``)
    would print no colour, no terminal codes and UTF-8 boxes; None in any doubt (a terminal,
    a variable that makes rich treat the file as one, Jupyter, Windows, another encoding), and
    then rich prints as before."""
    environ = os.environ if environ is None else environ
    if sys.platform == "win32" or "get_ipython" in vars(builtins):
        return None
    if any(name in environ for name in _RICH_TERMINAL_VARIABLES):
        return None
    if not (getattr(file, "encoding", "utf-8") or "utf-8").lower().startswith("utf"):
        return None
    try:
        if file.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    width = 0
    for descriptor in (0, 1, 2):  # as rich measures the console
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return PlainConsole(file, width or 80)


_RICH_TERMINAL_VARIABLES = (
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "DATABRICKS_RUNTIME_VERSION",
)
"""Environment variables that may make rich treat a file as a terminal (or a notebook)."""


def _summary_rows(summary: Summary) -> list[tuple[str, str, str | None]]:
    """The summary table's rows: (label, count, style of the label), in the table's order."""
    rows: list[tuple[str, str, str | None]] = []
    for verdict in VERDICTS:
        count = summary.counts[verdict]
        if count or verdict in ("valid", "invalid"):
            rows.append((verdict, str(count), _STYLE.get(verdict, "white")))
        if verdict == "invalid":
            for kind, n in sorted(summary.kinds.items()):
                rows.append(("  " + kind, str(n), "dim"))
    rows.append(("total", str(summary.total), "bold"))
    return rows


def _caption(summary: Summary) -> str:
    rate = summary.steps / summary.seconds if summary.seconds > 0 else 0.0
    return f"{plural(summary.steps, 'step')} in {summary.seconds:.2f} s ({rate:,.0f} steps/s)"


def plain_summary(summary: Summary) -> list[str]:
    """``summary_table``'s lines as rich prints them without colour on a soft-wrapping console
    wide enough for them (tests/verify/test_verify_report_plain.py compares the two)."""
    rows = _summary_rows(summary)
    head = ("verdict", "trajectories")
    left = max(len(head[0]), *(len(label) for label, _, _ in rows))
    right = max(len(head[1]), *(len(count) for _, count, _ in rows))
    lines = [
        _TITLE,
        f"┏{'━' * (left + 2)}┳{'━' * (right + 2)}┓",
        f"┃ {head[0]:<{left}} ┃ {head[1]:>{right}} ┃",
        f"┡{'━' * (left + 2)}╇{'━' * (right + 2)}┩",
    ]
    lines.extend(f"│ {label:<{left}} │ {count:>{right}} │" for label, count, _ in rows)
    lines.append(f"└{'─' * (left + 2)}┴{'─' * (right + 2)}┘")
    lines.append(_caption(summary))
    return lines


_TITLE = "verification summary"


_VALID = f"{'VALID':<10} "
"""The start of a valid result's line as rich prints ``result_line`` without colour."""


def _plain_write(console: Any) -> Any:
    """The file's own ``write`` where rich would add nothing to a valid result's line (no
    terminal, no colour, nothing recorded), else None. Writing the line ourselves costs about 1%
    of a ``console.print``, and most lines of a report are valid results (issue 17 item 2)."""
    if console.is_terminal or console.color_system is not None or console.record or not console.soft_wrap:
        return None
    return console.file.write


def _plain_text(text: str) -> bool:
    """Whether rich prints ``text`` (one segment of markup) as it is once escaped: no tabs to
    expand, no backslash that its escaping doubles before markup; anything else it prints
    verbatim, without wrapping, on a soft-wrap console with emoji codes off (``:100:`` in
    ``file.yaml:100:5`` stays text) (tests/verify/test_verify_report_plain.py)."""
    return "\t" not in text and "\\" not in text


def _print_result(console: Any, result: Result, show_valid: bool) -> None:
    if result.ok and not show_valid:
        return
    for line in _lines(result):
        console.print(_markup(line), highlight=False)


def summary_table(summary: Summary) -> Any:
    """The counts as a rich table."""
    from rich.table import Table

    table = Table(title=_TITLE, show_header=True, header_style="bold")
    table.add_column("verdict")
    table.add_column("trajectories", justify="right")
    for label, count, style in _summary_rows(summary):
        table.add_row(
            f"{label[: len(label) - len(label.lstrip())]}[{style}]{label.lstrip()}[/{style}]", count
        )
    table.caption = _caption(summary)
    return table


__all__ = [
    "FORMATS",
    "PlainConsole",
    "Summary",
    "json_document",
    "plain_console",
    "plain_summary",
    "result_json",
    "result_line",
    "summary_table",
    "tally",
    "write_json",
    "write_junit",
    "write_text",
    "xml_text",
]
