"""The ``envfactory`` command line: one click group, one module per command.

Every error a user can cause ends here as one line on stderr and exit code 2 (3 for undecided
results is the commands' own business); a bug in envfactory is one line too, and exit code 70.
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import tempfile
from typing import Any

import click

from envfactory.cli._common import EXIT_INTERNAL, EXIT_USAGE, report_error

COMMANDS = {
    "check": (
        "check",
        "Load, validate and lint CONTRACT. Exit 0 when it loads (findings are warnings), 2 when it cannot.",
    ),
    "demo": ("demo", "Verify the bundled examples and show valid and broken trajectories side by side."),
    "fuzz": (
        "fuzz",
        "Fuzz TARGET against CONTRACT with Hypothesis; every finding shrunk to a minimal call sequence.",
    ),
    "generate": ("generate", "Generate N valid, diverse trajectories of CONTRACT into a JSON Lines file."),
    "graph": (
        "graph",
        "Compile CONTRACT to its state graph (abstract states, operations as edges) and write it.",
    ),
    "import": (
        "importcmd",
        "Import agent logs (OpenAI, Anthropic, Gemini, Bedrock, Cohere, Mistral, LangChain, MCP, BFCL) as trajectories.",
    ),
    "plan": (
        "plan",
        "Plan the shortest sequence of calls from the initial state to a state where GOAL holds.",
    ),
    "prove": (
        "prove",
        "Prove CONTRACT's invariants (or --invariant) by k-induction, or find the shortest counterexample.",
    ),
    "replay": (
        "replay",
        "Re-execute TRAJECTORIES against a target; report where answers differ from the recording and the contract.",
    ),
    "serve": (
        "serve",
        "Serve CONTRACT over HTTP: POST /{operation} (native) or the OpenAPI paths; GET /_state,\n    POST /_reset, GET /_trajectory; sessions by the X-Envfactory-Session header.",
    ),
    "verify": ("verify", "Verify the trajectories in TRAJECTORIES against CONTRACT, step by step."),
}
"""Each command: its module under ``envfactory.cli`` and the first paragraph of its help, which
``envfactory --help`` shortens as click does (a test checks both against the command's own). A command's module, and what it needs (Z3,
Hypothesis, Faker), is imported only when that command runs: ``--help`` and ``verify`` stay fast."""


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use (click's documented lazy pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        command: click.Command = importlib.import_module(f"envfactory.cli.{entry[0]}").command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)) for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="envfactory")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Turn an API or tool specification into a formally checked, executable, stateful environment."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main(argv: list[str] | None = None) -> Any:
    """Entry point: run the CLI, turning every expected error into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    if debug:  # accepted anywhere on the line, as the error message that asks for it implies
        args = ["--debug", *(a for a in args if a != "--debug")]
    # Hypothesis keeps a cache of mined constants in ./.hypothesis; a command run in a user's
    # folder writes nothing there (an example database is written only where --database says)
    os.environ.setdefault(
        "HYPOTHESIS_STORAGE_DIRECTORY",
        os.path.join(tempfile.gettempdir(), f"envfactory-hypothesis-{os.getuid()}"),
    )
    _terminate_as_interrupt()
    try:
        code = cli.main(args=args, prog_name="envfactory", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("envfactory: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:  # usage errors: one line, exit 2
        if debug:
            raise
        report_error(f"{err.format_message()}", prefix=_usage_prefix(err))
        sys.exit(err.exit_code if err.exit_code else EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as err:
        if debug:
            raise
        # imported here: the error classes live in the contracts package, which --help never needs
        from envfactory.contracts.errors import EnvfactoryError

        if isinstance(err, EnvfactoryError):
            report_error(str(err))
            sys.exit(EXIT_USAGE)
        # a bug: one line that says so, and an exit code no finding uses
        report_error(
            f"internal error ({type(err).__name__}: {err}); this is a bug in envfactory: "
            "please report it with the output of --debug"
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


def _terminate_as_interrupt() -> None:
    """SIGTERM does what Ctrl-C does (issue 20 item 6): KeyboardInterrupt unwinds the command, so
    partial output files are removed and worker pools shut down, and the exit code is 130."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (embedded use): leave it be
        signal.signal(signal.SIGTERM, interrupt)


def _usage_prefix(err: click.ClickException) -> str:
    ctx = getattr(err, "ctx", None)
    return f"{ctx.command_path}: " if ctx is not None else "envfactory: "
