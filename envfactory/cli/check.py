"""`envfactory check CONTRACT`: load, validate and lint a contract."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from envfactory.cli._common import EXIT_OK, console, safe_text
from envfactory.contracts import Contract, Finding, lint, load
from envfactory.contracts.printer import to_source

# Later layers register extra finding sources here (reachability, inductiveness, ...).
FINDING_SOURCES: list[Callable[[Contract], list[Finding]]] = []


def operation_summary(contract: Contract) -> list[dict[str, Any]]:
    """One JSON object per operation: its clauses (marked inferred where they are) and effects."""
    result = []
    for name, op in contract.operations.items():
        entry: dict[str, Any] = {
            "name": name,
            "location": str(op.loc),
            "requires": [_clause(c) for c in op.requires],
            "effects": [
                {"effect": e.source, "location": str(e.loc), "inferred": op.inferred_effects}
                for e in op.effects
            ],
            "ensures": [_clause(c) for c in op.ensures],
            "input": dict(op.input_schema),
            "output": dict(op.output_schema) if op.output_schema is not None else None,
        }
        if op.description:
            entry["description"] = op.description
        if op.errors:
            entry["errors"] = {str(k): v for k, v in sorted(op.errors.items())}
        if op.http is not None:
            entry["http"] = {"method": op.http.method, "path": op.http.path}
        result.append(entry)
    return result


def _clause(clause: Any) -> dict[str, Any]:
    entry = {"check": clause.source, "location": str(clause.loc), "inferred": clause.inferred}
    if clause.error is not None:
        entry["error"] = {"status": clause.error.status, "message": clause.error.message}
    return entry


def all_findings(contract: Contract) -> list[Finding]:
    findings = lint(contract)
    for source in FINDING_SOURCES:
        findings.extend(source(contract))
    return findings


def report(contract: Contract, findings: list[Finding]) -> dict[str, Any]:
    return {
        "contract": {
            "title": contract.title,
            "version": contract.version,
            "path": contract.path,
            "kind": contract.kind,
            "open_world": contract.open_world,
        },
        "state": {
            name: {"collection": var.collection, "type": var.type.describe(), "inferred": var.inferred}
            for name, var in contract.state.items()
        },
        "operations": operation_summary(contract),
        "invariants": [_clause(c) for c in contract.invariants],
        "goals": {name: _clause(c) for name, c in contract.goals.items()},
        "findings": [f.to_json() for f in findings],
    }


@click.command("check")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option(
    "--with",
    "with_state",
    type=click.Path(dir_okay=False),
    help="Native state/clauses file joined to a tool list or OpenAPI document.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--closed-world", is_flag=True, help="Treat state inferred from OpenAPI as known (empty) at the start."
)
def command(contract: str, with_state: str | None, fmt: str, closed_world: bool) -> int:
    """Load, validate and lint CONTRACT. Exit 0 when it loads (findings are warnings), 2 when it cannot."""
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    findings = all_findings(loaded)
    if fmt == "json":
        click.echo(json.dumps(report(loaded, findings), indent=2, default=str))
        return EXIT_OK
    out = console()
    out.print(
        f"[bold]{safe_text(loaded.title)}[/bold] {safe_text(loaded.version)}  ({loaded.kind}, {len(loaded.operations)} operations, {len(loaded.state)} state variables)",
        highlight=False,
    )
    for name, op in loaded.operations.items():
        clauses = len(op.requires) + len(op.effects) + len(op.ensures)
        inferred = (
            " [dim](inferred)[/dim]" if op.inferred_effects or any(c.inferred for c in op.requires) else ""
        )
        out.print(f"  {safe_text(name)}: {clauses} clauses{inferred}", highlight=False)
        for clause in op.requires:
            mark = " (inferred)" if clause.inferred else ""
            out.print(
                f"    requires {safe_text(to_source(clause.expr))}{mark}", highlight=False, markup=False
            )
    if not findings:
        out.print("[green]no findings[/green]")
    for finding in findings:
        where = f"{finding.location}: " if finding.location else ""
        out.print(
            f"{where}{finding.severity}: {safe_text(finding.message)} [{finding.kind}]",
            highlight=False,
            markup=False,
        )
    return EXIT_OK
