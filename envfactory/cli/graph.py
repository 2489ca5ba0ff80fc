"""`envfactory graph CONTRACT -o FILE`: the contract's state graph as JSON, DOT, Mermaid, SVG or PNG.

The format is the output file's suffix (``.json`` node-link, ``.dot``, ``.mmd``, ``.svg``/``.png``
through Graphviz where it is installed). Exit 0 when written, 2 on bad input or a missing Graphviz.
"""

from __future__ import annotations

import click

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_OK,
    console,
    contract_options,
    output_option,
    plural,
    safe_text,
    slots_option,
    timeout_option,
)
from envfactory.contracts import load
from envfactory.contracts.errors import UsageError


@click.command("graph", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@output_option(
    "File to write: .json (node-link), .dot, .mmd (Mermaid), .svg or .png (needs Graphviz).", required=True
)
@slots_option(2, 6, "Entries per collection the solver considers when deciding an edge.")
@timeout_option(30.0)
@click.option(
    "--cover",
    "cover_file",
    type=click.Path(dir_okay=False),
    help="Also write one valid trajectory taking every edge it can reach (seeds generate and fuzz).",
)
@contract_options
def command(
    contract: str,
    out: str,
    slots: int,
    timeout: float,
    with_state: str | None,
    closed_world: bool,
    cover_file: str | None,
) -> int:
    """Compile CONTRACT to its state graph (abstract states, operations as edges) and write it."""
    from envfactory.solver.graph import compile, cover_trajectory
    from envfactory.statemachine import export
    from envfactory.statemachine.graph import dead_ends, never_enabled
    from envfactory.trajectory import write_trajectories

    suffix = out.rsplit(".", 1)[-1].lower() if "." in out else ""
    if suffix not in export.FORMATS:
        raise UsageError(f"cannot tell the graph format from {out!r}: use .json, .dot, .mmd, .svg or .png")
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    graph = compile(loaded, slots=slots, timeout=timeout)
    export.write(graph, out)
    stdout = console()
    stdout.print(
        f"{graph.number_of_nodes()} abstract states, {graph.number_of_edges()} edges -> {safe_text(out)}",
        markup=False,
    )
    for op in never_enabled(graph, loaded):
        stdout.print(
            f"  operation {safe_text(op)} is never enabled (in states of at most {slots} entries per collection)",
            markup=False,
        )
    for node in dead_ends(graph):
        stdout.print(f"  dead end: {node} ({safe_text(graph.nodes[node]['label'])})", markup=False)
    if cover_file is not None:
        trajectory, taken = cover_trajectory(loaded, graph, timeout=timeout)
        write_trajectories(cover_file, [trajectory])
        stdout.print(
            f"  cover: {plural(len(trajectory.steps), 'call')} taking {taken} of {graph.number_of_edges()} edges "
            f"-> {safe_text(cover_file)}",
            markup=False,
        )
    if graph.graph.get("undecided"):
        stdout.print(
            f"  {len(graph.graph['undecided'])} edge question(s) left undecided (outside the solver's fragment, or past its effort or time limit)",
            markup=False,
        )
    return EXIT_OK
