"""Helpers shared by the command modules: options, one-line errors, output files (exit codes and
safe terminal text come from ``envfactory._output``, shared with the report writers)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from envfactory._output import (
    EXIT_FINDING,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_UNDECIDED,
    EXIT_USAGE,
    plural,
    safe_text,
)

__all__ = [
    "EXIT_CODES",
    "EXIT_FINDING",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_UNDECIDED",
    "EXIT_USAGE",
    "plural",
    "safe_text",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CODES = (
    "Exit codes: 0 success (valid or feasible, proved, no finding); 1 a finding (an invalid "
    "trajectory, a broken invariant, a fuzz failure, no plan, a replay that differs); 2 bad usage or "
    "unreadable input; 3 undecided (unknown); 70 a bug in envfactory (please report it, with --debug)."
)
"""The epilog of every command's --help: one table of exit codes for the whole CLI."""


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

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def messages_console(out: str | None) -> Any:
    """The console for a command's own lines: standard error when the file it writes goes to
    standard output (``-o -``), so that the two never mix; else standard output."""
    return console(stderr=out == "-")


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


def output_option(
    help: str, *, dest: str = "out", required: bool = False, writable: bool = False
) -> Callable[[F], F]:
    """``-o/--output FILE``, the one spelling every command writes its file with."""
    return click.option(
        "-o",
        "--output",
        dest,
        required=required,
        type=click.Path(dir_okay=False, writable=writable),
        help=help,
    )


def timeout_option(
    default: float, help: str = "Z3 seconds in all.", minimum: float = 0.1
) -> Callable[[F], F]:
    """``--timeout SECONDS``: the solver's budget (in all, or per trajectory as ``help`` says)."""
    return click.option(
        "--timeout", type=click.FloatRange(min=minimum), default=default, show_default=True, help=help
    )


def slots_option(default: int, maximum: int, help: str) -> Callable[[F], F]:
    """``--slots N``: how many entries per collection a bounded Z3 encoding considers."""
    return click.option(
        "--slots", type=click.IntRange(min=1, max=maximum), default=default, show_default=True, help=help
    )


@contextlib.contextmanager
def output_stream(out: str) -> Iterator[IO[bytes]]:
    """The binary stream a command writes its trajectory file to: ``-`` is standard output.

    A regular file is written beside itself and renamed into place when the command succeeds,
    so a run that fails half-way leaves no partial file and the previous one as it was. Anything
    else that exists (``/dev/null``, a pipe, a symbolic link) is written to directly.
    """
    from envfactory.contracts.errors import UsageError

    if out == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    path = Path(out)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        try:
            stream = open(out, "wb")  # noqa: SIM115 - closed below, after the caller's writes
        except OSError as err:
            raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
        with stream:
            yield stream
        return
    remove_stale_parts(path)
    try:
        handle, part = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=".part", dir=path.parent
        )
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
        os.chmod(part, 0o666 & ~_umask())
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise


def remove_stale_parts(path: Path) -> list[Path]:
    """Remove the hidden ``.part`` files of ``path`` left by runs that were killed (SIGKILL gives
    no chance to clean up): each names the process that wrote it, and one whose process is gone
    is debris (issue 20 item 6). A live process's file is left alone. Returns what was removed."""
    removed = []
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".part")):
                continue
            pid = name[len(prefix) :].partition(".")[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_trace(out: str | None, traj: Any, empty: str) -> str:
    """Write one solver-made trajectory to ``out``; return its calls (or ``empty``) and where it
    went, as terminal-safe text for the command's one-line summary."""
    write_trajectory_file(out, [traj])
    calls = ", ".join(step.tool for step in traj.steps) or empty
    where = f" -> {out}" if out not in (None, "-") else ""
    return safe_text(calls + where)


def write_trajectory_file(out: str | None, trajectories: Iterable[Any]) -> None:
    """Write trajectories as JSON Lines to ``out`` (``-``: standard output; None: nowhere)."""
    if out is None:
        return
    from envfactory.trajectory import dumps_trajectory

    with output_stream(out) as stream:
        for traj in trajectories:
            stream.write(dumps_trajectory(traj) + b"\n")
