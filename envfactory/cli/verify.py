"""`envfactory verify CONTRACT TRAJ...`: check trajectory files step by step against a contract.

Exit 0 when every trajectory is valid or feasible, 1 when any is invalid, 2 when any input could
not be read (the other inputs are still verified and reported), 3 when any is unknown.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import IO, Any

import click

from envfactory.cli._common import (
    EXIT_CODES,
    console,
    output_option,
    output_stream,
    report_error,
    timeout_option,
)
from envfactory.parallel import ENGINES, ContractRef, Options, verify_files
from envfactory.report import FORMATS, Summary, plain_console, write_json, write_junit, write_text
from envfactory.verification import Result

INPUT_FORMATS = (
    "auto",
    "native",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "bedrock",
    "cohere",
    "mistral",
    "langchain",
    "mcp",
    "bfcl",
)


@click.command("verify", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("trajectories", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--input-format",
    type=click.Choice(INPUT_FORMATS),
    default="auto",
    show_default=True,
    help="How the trajectory files are written: the native format or an agent-log format.",
)
@click.option(
    "--allow-rejected",
    is_flag=True,
    help="A forbidden call answered with its clause's error status counts as rejected, not invalid.",
)
@timeout_option(5.0, "Z3 seconds per trajectory.", minimum=0.01)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Worker processes."
)
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True)
@click.option(
    "--ray-address", default=None, help="Address of a running Ray cluster (default: start a local one)."
)
@click.option(
    "--closed-world", is_flag=True, help="Treat state inferred from OpenAPI as known (empty) at the start."
)
@click.option(
    "--with",
    "with_state",
    type=click.Path(dir_okay=False),
    help="Native state/clauses file joined to a tool list or OpenAPI document.",
)
@output_option("Write the report to FILE.", dest="output", writable=True)
def command(
    contract: str,
    trajectories: tuple[str, ...],
    fmt: str,
    input_format: str,
    allow_rejected: bool,
    timeout: float,
    jobs: int,
    engine: str,
    ray_address: str | None,
    closed_world: bool,
    with_state: str | None,
    output: str | None,
) -> int:
    """Verify the trajectories in TRAJECTORIES against CONTRACT, step by step.

    Exit 0 when every trajectory is valid or feasible, 1 when any is invalid, 2 when an input
    cannot be read (the others are still verified and reported), 3 when any is undecided.
    """
    ref = ContractRef(contract, with_state=with_state, closed_world=closed_world)
    loaded = ref.load()  # a contract that cannot be read is one line and exit 2 (raised to main)
    results = verify_files(
        ref,
        list(trajectories),
        input_format=input_format,
        options=Options(allow_rejected=allow_rejected, timeout=timeout),
        jobs=jobs,
        engine=engine,
        ray_address=ray_address,
        contract=loaded,
    )
    summary = Summary()
    if not (fmt == "text" and output is None):  # else the report itself shows them
        results = _tell_unreadable(results)
    with _sink(output) as out:
        if fmt == "json":
            write_json(results, out, summary)
        elif fmt == "junit":
            write_junit(results, out, suite=f"envfactory verify {loaded.title}", summary=summary)
        else:
            target: Any = plain_console(out)  # rich only where it adds something (issue 17 item 2)
            if target is None:
                from rich.console import Console

                target = (
                    console()
                    if output is None
                    else Console(file=out, highlight=False, soft_wrap=True, emoji=False)
                )
            write_text(results, target, summary=summary)
    return summary.exit_code()


def _tell_unreadable(results: Iterator[Result]) -> Iterator[Result]:
    """Every unreadable input is also one error line on stderr (file:line:col: message)."""
    for result in results:
        if result.verdict == "unreadable":
            report_error(f"{result.location}: {result.message}" if result.location else result.message)
        yield result


@contextlib.contextmanager
def _sink(path: str | None) -> Iterator[IO[str]]:
    """Where the report goes: standard output, or ``path`` written whole or not at all (a run
    that fails leaves the previous report, never half of a JUnit file a CI job would choke on)."""
    if path is None:
        yield sys.stdout
        return
    with output_stream(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8")
        try:
            yield text
        finally:
            text.detach()  # flushes; the stream stays open for output_stream to finish
