"""`envfactory serve CONTRACT`: the contract as a stateful mock HTTP server (see ``envfactory.server``)."""

from __future__ import annotations

import click

from envfactory.cli._common import EXIT_CODES, EXIT_OK, console, contract_options, plural, safe_text
from envfactory.contracts.loader import load


@click.command("serve", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every session's simulator.")
@contract_options
def command(
    contract: str, host: str, port: int, seed: int, with_state: str | None, closed_world: bool
) -> int:
    """Serve CONTRACT over HTTP: POST /{operation} (native) or the OpenAPI paths; GET /_state,
    POST /_reset, GET /_trajectory; sessions by the X-Envfactory-Session header."""
    from envfactory.server import serve

    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    console(stderr=True).print(
        f"serving {safe_text(loaded.title)} ({plural(len(loaded.operations), 'operation')}) on http://{host}:{port}"
    )
    serve(loaded, host, port, seed=seed)
    return EXIT_OK
