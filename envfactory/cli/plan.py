"""`envfactory plan`: placeholder until its layer lands (replace this module whole)."""

from __future__ import annotations

import click

from envfactory.errors import UsageError


@click.command("plan", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1)
def command(args: tuple[str, ...]) -> None:
    """Not built yet."""
    raise UsageError("'envfactory plan' is not available in this build yet")
