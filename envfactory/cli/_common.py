"""Helpers shared by the command modules: exit codes, one-line errors, safe terminal text."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

import click

from envfactory.contracts.errors import UsageError

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_USAGE = 2
EXIT_UNDECIDED = 3

_CONTROL = {i: f"\\x{i:02x}" for i in range(32) if i not in (9,)}
_CONTROL[127] = "\\x7f"
for _c in range(0x80, 0xA0):
    _CONTROL[_c] = f"\\x{_c:02x}"


def safe_text(text: str) -> str:
    """Escape control characters so that hostile names cannot drive the terminal."""
    return text.translate(_CONTROL)


def report_error(message: str, prefix: str = "envfactory: error: ") -> None:
    """Print one error line on stderr."""
    click.echo(prefix + safe_text(message), err=True)


def debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if isinstance(ctx.obj, dict) and ctx.obj.get("debug"):
            return True
        ctx = ctx.parent
    return "--debug" in sys.argv


def console(stderr: bool = False) -> Any:
    """A rich console; plain text when not on a terminal."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def contract_options(command: Any) -> Any:
    """``--with`` and ``--closed-world``: how every command that loads a contract may load it.

    The command receives them as ``with_state`` and ``closed_world``, to pass to ``load``.
    """
    command = click.option(
        "--closed-world",
        is_flag=True,
        help="Treat state inferred from OpenAPI as known (empty) at the start.",
    )(command)
    return click.option(
        "--with",
        "with_state",
        type=click.Path(dir_okay=False),
        default=None,
        help="Native state/clauses file joined to a tool list or OpenAPI document.",
    )(command)


@contextlib.contextmanager
def output_stream(out: str) -> Iterator[IO[bytes]]:
    """The binary stream a command writes its trajectory file to: ``-`` is standard output."""
    if out == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    try:
        stream = open(out, "wb")  # noqa: SIM115 - closed below, after the caller's writes
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
    with stream:
        yield stream


def write_trajectory_file(out: str | None, trajectories: Iterable[Any]) -> None:
    """Write trajectories as JSON Lines to ``out`` (``-``: standard output; None: nowhere)."""
    if out is None:
        return
    from envfactory.trajectory import dumps_trajectory

    with output_stream(out) as stream:
        for traj in trajectories:
            stream.write(dumps_trajectory(traj) + b"\n")
