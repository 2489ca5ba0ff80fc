"""`envfactory demo`: verify the bundled example trajectories and show the report.

Each example (``examples/<name>/<name>.yaml`` with its ``trajectories.jsonl``) mixes valid
trajectories with broken ones on purpose, so the demo shows both side by side. Broken examples
are the point of the demo, not a failure: it exits 0 whenever the examples could be read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from envfactory.cli._common import EXIT_CODES, EXIT_OK, console, safe_text, timeout_option
from envfactory.contracts.errors import UsageError
from envfactory.contracts.loader import load
from envfactory.report import Summary, json_document, summary_table
from envfactory.trajectory import read_trajectories
from envfactory.verification import Result, verify


def examples_dir() -> Path:
    """The bundled examples: inside the installed package (a wheel), or beside it in a checkout
    or an editable install."""
    import envfactory

    here = Path(envfactory.__file__).resolve().parent
    for candidate in (here / "examples", here.parent / "examples"):
        if candidate.is_dir():
            return candidate
    raise UsageError(
        f"the bundled examples were not found in {here / 'examples'} or beside it: "
        "reinstall envfactory (pip install --force-reinstall envfactory)"
    )


def examples(root: Path | None = None) -> Iterator[tuple[Path, Path]]:
    """``(contract, trajectories)`` for every example folder, sorted by name."""
    root = root or examples_dir()
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        trajectories = folder / "trajectories.jsonl"
        contracts = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.json"))
        if trajectories.is_file() and contracts:
            yield contracts[0], trajectories


@click.command("demo", epilog=EXIT_CODES)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@timeout_option(2.0, "Z3 seconds per trajectory.", minimum=0.01)
def command(fmt: str, timeout: float) -> int:
    """Verify the bundled examples and show valid and broken trajectories side by side.

    The examples contain broken trajectories on purpose; the demo exits 0 when it ran.
    """
    overall = Summary()
    runs: list[tuple[Any, Path, Path, list[Result]]] = []
    for contract_path, traj_path in examples():
        contract = load(contract_path)
        results = list(verify(contract, read_trajectories(traj_path), timeout=timeout))
        runs.append((contract, contract_path, traj_path, results))
    if not runs:
        raise UsageError(f"no examples found in {examples_dir()}")
    if fmt == "json":
        doc: dict[str, Any] = {
            "examples": [
                {
                    "contract": str(cpath),
                    "title": contract.title,
                    "trajectories": str(tpath),
                    **json_document(results),
                }
                for contract, cpath, tpath, results in runs
            ]
        }
        for *_rest, results in runs:
            for result in results:
                overall.add(result)
        doc["summary"] = overall.finish().to_json()
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return EXIT_OK
    _show(runs, overall)
    return EXIT_OK


SIDE_BY_SIDE = 140
"""Terminal columns from which the valid and the broken runs are shown side by side."""


def _show(runs: list[tuple[Any, Path, Path, list[Result]]], overall: Summary) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    out = console()
    for contract, cpath, tpath, results in runs:
        good = Table(show_header=True, header_style="bold green", expand=True)
        # names and clauses fold onto the next line instead of ending in "…": a reader must see
        # the whole trajectory id and the whole clause at any terminal width
        good.add_column("trajectory", overflow="fold")
        good.add_column("verdict", overflow="fold")
        bad = Table(show_header=True, header_style="bold red", expand=True)
        bad.add_column("trajectory", overflow="fold")
        bad.add_column("first failure", overflow="fold")
        for result in results:
            overall.add(result)
            name = escape(safe_text(result.id))
            if result.verdict in ("valid", "feasible"):
                note = result.verdict if result.verdict == "valid" else f"feasible: {result.message}"
                good.add_row(name, escape(safe_text(note)))
            else:
                head = f"[bold]{result.verdict}[/bold]"
                if result.kind:
                    head += f" {escape(result.kind)} at step {result.step}"
                bad.add_row(name, f"{head}\n[dim]{escape(safe_text(result.message))}[/dim]")
        title = (
            f"[bold]{escape(safe_text(contract.title))}[/bold]  {escape(str(cpath))} + {escape(tpath.name)}"
        )
        out.print(title, highlight=False)
        left, right = Panel(good, title="valid / feasible"), Panel(bad, title="broken (on purpose)")
        if out.width >= SIDE_BY_SIDE:
            grid = Table.grid(expand=True)
            grid.add_column(ratio=2)
            grid.add_column(ratio=3)
            grid.add_row(left, right)
            out.print(grid)
        else:
            out.print(left)
            out.print(right)
    out.print(summary_table(overall.finish()))
    out.print(
        "[dim]The examples are broken on purpose where they say so; "
        "run `envfactory verify CONTRACT TRAJ` on your own files.[/dim]"
    )
