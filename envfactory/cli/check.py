"""`envfactory check CONTRACT`: load, validate and lint a contract."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click
from rich.markup import escape

from envfactory.cli._common import EXIT_CODES, EXIT_OK, console, contract_options, plural, safe_text
from envfactory.contracts import Contract, Finding, _refs, lint, load
from envfactory.contracts.errors import EnvfactoryError
from envfactory.contracts.printer import to_source
from envfactory.contracts.values import to_json

# Later layers register extra finding sources here (reachability, inductiveness, ...).
FINDING_SOURCES: list[Callable[[Contract], list[Finding]]] = []


def _schema_json(schema: Any, defs: dict[str, Any]) -> Any:
    """A schema for the report: a document's shared ``$defs`` go once to the report's root
    (``#/$defs/NAME`` then points there), so the report grows with what it reports, not with
    how often the document's schemas are used."""
    if schema is None:
        return None
    if _refs.is_bundled(schema):
        defs.update(schema["$defs"])
        return {k: v for k, v in schema.items() if k != "$defs"}
    return dict(schema)


def operation_summary(contract: Contract, defs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One JSON object per operation: its clauses (marked inferred where they are) and effects."""
    defs = {} if defs is None else defs
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
            "input": _schema_json(op.input_schema, defs),
            "output": _schema_json(op.output_schema, defs),
        }
        if op.description:
            entry["description"] = op.description
        if op.errors:
            entry["errors"] = {str(k): v for k, v in sorted(op.errors.items())}
        if op.http is not None:
            entry["http"] = {
                "method": op.http.method,
                "path": op.http.path,
                "path_params": list(op.http.path_params),
                "query_params": list(op.http.query_params),
                "header_params": list(op.http.header_params),
                "body": op.http.body,
            }
        result.append(entry)
    return result


def _clause(clause: Any) -> dict[str, Any]:
    entry = {"check": clause.source, "location": str(clause.loc), "inferred": clause.inferred}
    if clause.error is not None:
        entry["error"] = {"status": clause.error.status, "message": clause.error.message}
    return entry


def all_findings(contract: Contract) -> list[Finding]:
    """Lint findings, then those of every registered source, then reachability (when available)."""
    findings = lint(contract)
    for source in FINDING_SOURCES:
        findings.extend(source(contract))
    findings.extend(reachability(contract))
    return findings


def reachability(contract: Contract) -> list[Any]:
    """The state-graph layer's findings; nothing when that layer is not installed."""
    try:
        from envfactory.solver.reachability import reachability_findings
    except ImportError:
        return []
    try:
        return list(reachability_findings(contract))
    except EnvfactoryError as err:
        return [
            Finding(
                "reachability_skipped",
                "info",
                f"reachability was not decided: {err.message}",
                err.location,
            )
        ]


def _finding_json(finding: Any) -> dict[str, Any]:
    if hasattr(finding, "to_json"):
        result: dict[str, Any] = finding.to_json()
        return result
    return {
        "kind": getattr(finding, "kind", "finding"),
        "severity": getattr(finding, "severity", "warning"),
        "message": str(getattr(finding, "message", finding)),
        "location": str(finding.location) if getattr(finding, "location", None) is not None else None,
        "operation": getattr(finding, "operation", None),
    }


def report(contract: Contract, findings: list[Finding]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    result = {
        "contract": {
            "title": contract.title,
            "version": contract.version,
            "path": contract.path,
            "kind": contract.kind,
            "open_world": contract.open_world,
        },
        "state": {
            name: {
                "collection": var.collection,
                "type": var.type.describe(),
                "inferred": var.inferred,
                "initial": to_json(var.initial) if var.known else "unknown",
                "location": str(var.loc),
            }
            for name, var in contract.state.items()
        },
        "operations": operation_summary(contract, defs),
        "invariants": [_clause(c) for c in contract.invariants],
        "goals": {name: _clause(c) for name, c in contract.goals.items()},
        "findings": [_finding_json(f) for f in findings],
    }
    if defs:
        result["$defs"] = defs  # every schema the operations refer to, once
    return result


@click.command("check", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--strict",
    is_flag=True,
    help="Defects an OpenAPI document is read past (duplicate required, unknown formats...) are errors.",
)
@contract_options
def command(contract: str, with_state: str | None, fmt: str, closed_world: bool, strict: bool) -> int:
    """Load, validate and lint CONTRACT. Exit 0 when it loads (findings are warnings), 2 when it cannot."""
    loaded = load(contract, with_state=with_state, closed_world=closed_world, strict=strict)
    findings = all_findings(loaded)
    if fmt == "json":
        click.echo(json.dumps(report(loaded, findings), indent=2, default=str))
        return EXIT_OK
    print_text(loaded, findings)
    return EXIT_OK


def print_text(contract: Contract, findings: list[Any]) -> None:
    """The human report: each operation with its clauses (inferred ones marked), then findings."""
    out = console()
    world = "open world: state starts unknown" if contract.open_world else "closed world"
    out.print(
        f"[bold]{escape(safe_text(contract.title))}[/bold] {escape(safe_text(contract.version))}  "
        f"({contract.kind}, {plural(len(contract.operations), 'operation')}, {plural(len(contract.state), 'state variable')}, {world})",
        highlight=False,
    )
    for name, var in contract.state.items():
        mark = " (inferred)" if var.inferred else ""
        initial = "unknown" if not var.known else json.dumps(to_json(var.initial), default=str)
        out.print(
            f"  state {safe_text(name)}: {safe_text(var.type.describe())}, initially {safe_text(initial)}{mark}",
            highlight=False,
            markup=False,
        )
    for name, op in contract.operations.items():
        where = f" [{op.http.method} {op.http.path}]" if op.http is not None else ""
        out.print(f"  [bold]{escape(safe_text(name))}[/bold]{escape(safe_text(where))}", highlight=False)
        for clause in op.requires:
            mark = " (inferred)" if clause.inferred else ""
            status = f" -> {clause.error.status}" if clause.error is not None else ""
            out.print(
                f"    requires {safe_text(to_source(clause.expr))}{status}{mark}",
                highlight=False,
                markup=False,
            )
        for effect in op.effects:
            mark = " (inferred)" if op.inferred_effects else ""
            out.print(f"    effect   {safe_text(effect.source)}{mark}", highlight=False, markup=False)
        for clause in op.ensures:
            mark = " (inferred)" if clause.inferred else ""
            out.print(
                f"    ensures  {safe_text(to_source(clause.expr))}{mark}", highlight=False, markup=False
            )
    for clause in contract.invariants:
        out.print(f"  invariant {safe_text(clause.source)}", highlight=False, markup=False)
    for goal, clause in contract.goals.items():
        out.print(f"  goal {safe_text(goal)}: {safe_text(clause.source)}", highlight=False, markup=False)
    if not findings:
        out.print("[green]no findings[/green]")
    for finding in findings:
        data = _finding_json(finding)
        where = f"{data['location']}: " if data.get("location") else ""
        out.print(
            f"{where}{data['severity']}: {safe_text(str(data['message']))} [{data['kind']}]",
            highlight=False,
            markup=False,
        )
