"""The state graph written out: node-link JSON, Graphviz DOT, Mermaid, and SVG/PNG via ``dot``.

Text formats are built here (no pydot/pygraphviz needed); SVG and PNG run the Graphviz ``dot``
executable on the DOT text when it is installed, and otherwise raise a ``UsageError`` that says
so. Labels come from contract text, so every label is quoted/escaped for its format.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import networkx as nx

from envfactory.contracts.errors import UsageError

FORMATS = ("json", "dot", "mmd", "svg", "png")


def to_node_link(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """networkx node-link data (``nodes``, ``edges``, graph attributes), JSON-ready."""
    data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
    return data


def to_json(graph: nx.MultiDiGraph) -> str:
    return json.dumps(to_node_link(graph), indent=2, sort_keys=True, default=str) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: nx.MultiDiGraph) -> str:
    """Graphviz DOT: initial states drawn double, edges labelled with their operation."""
    title = str(graph.graph.get("contract", "contract"))
    lines = [
        f"digraph {_dot_quote(title)} {{",
        "  rankdir=LR;",
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
    ]
    for node, data in graph.nodes(data=True):
        attrs = [f"label={_dot_quote(str(node) + chr(10) + str(data.get('label', '')))}"]
        if data.get("initial"):
            attrs.append("peripheries=2")
        lines.append(f"  {_dot_quote(str(node))} [{', '.join(attrs)}];")
    for source, target, data in graph.edges(data=True):
        label = _dot_quote(str(data.get("operation", "")))
        tooltip = _dot_quote(str(data.get("guard", "")))
        lines.append(
            f"  {_dot_quote(str(source))} -> {_dot_quote(str(target))} [label={label}, tooltip={tooltip}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid labels are quoted; quotes and markup-ish characters become entity codes
    text = text.replace("#", "#35;")
    for char, code in (("&", "#38;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;")):
        text = text.replace(char, code)
    return text.replace("\n", " ")


def to_mermaid(graph: nx.MultiDiGraph) -> str:
    """A Mermaid ``stateDiagram``-like flowchart (renders on GitHub)."""
    lines = ["flowchart LR"]
    names = {node: f"n{i}" for i, node in enumerate(graph.nodes)}
    for node, data in graph.nodes(data=True):
        label = _mermaid_text(f"{node}: {data.get('label', '')}")
        shape = f'(("{label}"))' if data.get("initial") else f'["{label}"]'
        lines.append(f"  {names[node]}{shape}")
    for source, target, data in graph.edges(data=True):
        label = _mermaid_text(str(data.get("operation", "")))
        lines.append(f'  {names[source]} -->|"{label}"| {names[target]}')
    return "\n".join(lines) + "\n"


def write(graph: nx.MultiDiGraph, path: str | Path) -> str:
    """Write the graph in the format named by the file's suffix; return the format."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UsageError(
            f"cannot tell the graph format from {target.name!r}: use a file ending in "
            + ", ".join("." + f for f in FORMATS)
        )
    if fmt == "json":
        target.write_text(to_json(graph), encoding="utf-8")
    elif fmt == "dot":
        target.write_text(to_dot(graph), encoding="utf-8")
    elif fmt == "mmd":
        target.write_text(to_mermaid(graph), encoding="utf-8")
    else:
        render(to_dot(graph), fmt, target)
    return fmt


def render(dot_text: str, fmt: str, target: Path, executable: str = "dot") -> None:
    """Run Graphviz on DOT text; a clear ``UsageError`` when it is not installed or fails."""
    found = shutil.which(executable)
    if found is None:
        raise UsageError(
            f"writing .{fmt} needs Graphviz's 'dot' program, which is not installed; "
            "install Graphviz, or write .dot, .mmd or .json instead"
        )
    try:
        result = subprocess.run(
            [found, f"-T{fmt}", "-o", str(target)],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise UsageError(f"Graphviz 'dot' failed: {err}") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"Graphviz 'dot' failed: {message[0] if message else result.returncode}")


__all__ = ["FORMATS", "render", "to_dot", "to_json", "to_mermaid", "to_node_link", "write"]
