"""`envfactory import FORMAT FILE -o OUT.jsonl`: agent logs to a trajectory file.

Streams: trajectories are written as they are imported, each input that cannot be read is one
line on stderr (with file:line), and the good ones are written regardless. Exit 0 when every
record imported, 2 when any could not be read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

import click

from envfactory.cli._common import EXIT_OK, EXIT_USAGE, report_error, safe_text
from envfactory.errors import TrajectoryError, UsageError
from envfactory.importers import FORMATS, import_file, load_bfcl_function_docs
from envfactory.trajectory import dumps_trajectory


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Trajectory file to write (JSON Lines); '-' for stdout.",
)
@click.option(
    "--functions",
    "functions",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True),
    help="BFCL function docs (JSON Lines), for positional arguments; repeatable.",
)
def command(fmt: str, file: str, out: str, functions: tuple[str, ...]) -> int:
    """Import agent logs (OpenAI chat or Responses, Anthropic Messages, BFCL ground truth) as trajectories.

    FORMAT is one of auto, native, openai-chat, openai-responses, anthropic, bfcl.
    """
    if functions and fmt not in ("bfcl", "auto"):
        raise UsageError(f"--functions is for the bfcl format, not {fmt}")
    if out != "-" and Path(out).resolve() == Path(file).resolve():
        raise UsageError("the output file is the input file; write to another file")
    docs = load_bfcl_function_docs(functions) if functions else None
    written = errors = 0
    stream: IO[bytes] = sys.stdout.buffer if out == "-" else open(out, "wb")  # noqa: SIM115
    try:
        for item in import_file(fmt, file, function_docs=docs):
            if isinstance(item, TrajectoryError):
                errors += 1
                report_error(str(item))
                continue
            stream.write(dumps_trajectory(item) + b"\n")
            written += 1
    finally:
        if out == "-":
            stream.flush()
        else:
            stream.close()
    summary = f"imported {written} trajector{'y' if written == 1 else 'ies'}, {errors} error{'' if errors == 1 else 's'}"
    target = "" if out == "-" else f" -> {safe_text(out)}"
    click.echo(summary + target, err=out == "-")
    return EXIT_USAGE if errors else EXIT_OK


__all__ = ["command"]
