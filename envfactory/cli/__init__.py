"""The ``envfactory`` command line: one click group, one module per command.

Every error a user can cause ends here as one line on stderr and exit code 2 (3 for undecided
results is the commands' own business); a bug in envfactory is one line too, and exit code 70.
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import click

from envfactory.cli._common import EXIT_INTERNAL, EXIT_USAGE, report_error
from envfactory.contracts.errors import EnvfactoryError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="envfactory")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Turn an API or tool specification into a formally checked, executable, stateful environment."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _register() -> None:
    from envfactory.cli import (
        check,
        demo,
        fuzz,
        generate,
        graph,
        importcmd,
        plan,
        prove,
        replay,
        serve,
        verify,
    )

    for module in (check, demo, verify, importcmd, graph, plan, prove, fuzz, generate, replay, serve):
        cli.add_command(module.command)


_register()


def main(argv: list[str] | None = None) -> Any:
    """Entry point: run the CLI, turning every expected error into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    # Hypothesis keeps a cache of mined constants in ./.hypothesis; a command run in a user's
    # folder writes nothing there (an example database is written only where --database says)
    os.environ.setdefault(
        "HYPOTHESIS_STORAGE_DIRECTORY",
        os.path.join(tempfile.gettempdir(), f"envfactory-hypothesis-{os.getuid()}"),
    )
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
    except EnvfactoryError as err:
        if debug:
            raise
        report_error(str(err))
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as err:  # a bug: one line that says so, and an exit code no finding uses
        if debug:
            raise
        report_error(
            f"internal error ({type(err).__name__}: {err}); this is a bug in envfactory: "
            "please report it with the output of --debug"
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_prefix(err: click.ClickException) -> str:
    ctx = getattr(err, "ctx", None)
    return f"{ctx.command_path}: " if ctx is not None else "envfactory: "
