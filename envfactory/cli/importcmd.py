"""`envfactory import FORMAT FILE -o OUT.jsonl`: agent logs to a trajectory file.

Streams: trajectories are written as they are imported, each record that cannot be read is one
line on stderr (with file:line), and the good ones are written regardless. Tool-call arguments an
agent botched (not JSON) are findings: the step is written with the raw text as its input (which
``verify`` then reports as ``input_schema``) and one warning line names the message it came from.
Exit 0 when everything imported cleanly, 1 when a call had broken arguments, 2 when any record
could not be read.
"""

from __future__ import annotations

from pathlib import Path

import click

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_FINDING,
    EXIT_OK,
    EXIT_USAGE,
    output_option,
    output_stream,
    report_error,
    safe_text,
)
from envfactory.contracts.errors import TrajectoryError, UsageError
from envfactory.importers import FORMATS, broken_arguments, read
from envfactory.trajectory import dumps_trajectory


@click.command("import", epilog=EXIT_CODES)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@output_option("Trajectory file to write (JSON Lines); '-' for stdout.", required=True)
@click.option(
    "--functions",
    "functions",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True),
    help="BFCL function docs (JSON Lines), for positional arguments; repeatable. Default: the docs "
    "of each entry's involved classes, from the installed bfcl-eval.",
)
@click.option(
    "--questions",
    "questions",
    type=click.Path(dir_okay=False, exists=True),
    help="BFCL test-entry file giving each entry's involved classes. Default: the file beside a "
    "possible_answer/ file.",
)
def command(fmt: str, file: str, out: str, functions: tuple[str, ...], questions: str | None) -> int:
    """Import agent logs (OpenAI, Anthropic, Gemini, Bedrock, Cohere, Mistral, LangChain, MCP, BFCL) as trajectories.

    FORMAT is one of auto, native, openai-chat, openai-responses, anthropic, gemini, bedrock, cohere, mistral,
    langchain, mcp, bfcl.
    """
    if (functions or questions) and fmt not in ("bfcl", "auto"):
        raise UsageError(f"--functions and --questions are for the bfcl format, not {fmt}")
    if out != "-" and Path(out).resolve() == Path(file).resolve():
        raise UsageError("the output file is the input file; write to another file")
    items = read(fmt, file, functions=functions, questions=questions)
    written = errors = findings = 0
    with output_stream(out) as stream:
        for item in items:
            if isinstance(item, TrajectoryError):
                errors += 1
                report_error(str(item))
                continue
            for index, step, reason in broken_arguments(item):
                findings += 1
                where = f"{item.source}: " if item.source.file else ""
                report_error(
                    f"{where}trajectory {item.id!r} step {index} ({step.tool}): {reason}",
                    prefix="envfactory: finding: ",
                )
            stream.write(dumps_trajectory(item) + b"\n")
            written += 1
    noun = "trajectory" if written == 1 else "trajectories"
    summary = f"imported {written} {noun}, {findings} broken call{'' if findings == 1 else 's'}"
    summary += f", {errors} error{'' if errors == 1 else 's'}"
    target = "" if out == "-" else f" -> {safe_text(out)}"
    click.echo(summary + target, err=out == "-")
    if errors:
        return EXIT_USAGE
    return EXIT_FINDING if findings else EXIT_OK


__all__ = ["command"]
