"""Tool lists to contracts, and joining a native state file to a tool list or an OpenAPI document.

Reads the tool lists agents are given: OpenAI function-calling arrays (``{type: function,
function: {name, description, parameters}}`` and bare ``{name, parameters}``), MCP ``tools/list``
results (``{tools: [{name, inputSchema, outputSchema}]}``, also inside a JSON-RPC ``result``),
Anthropic tool definitions (``input_schema``), Gemini ``functionDeclarations``, and BFCL function
docs (JSON Lines or a JSON array, with their ``dict``/``float``/``tuple``/``any`` spellings and
``response`` schemas). Each tool becomes an operation with no clauses; a native file joined with
``--with`` adds state, per-operation ``requires``/``effects``/``ensures`` keyed by tool name,
invariants and goals.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envfactory.contracts import _refs, _source
from envfactory.contracts._dialect import normalize_tool_schema
from envfactory.contracts._source import LocDict, LocList, locate
from envfactory.contracts._validate import SchemaValidator
from envfactory.contracts.errors import ContractError, Location
from envfactory.contracts.model import Contract

_INPUT_KEYS = ("parameters", "inputSchema", "input_schema", "parametersJsonSchema")
_OUTPUT_KEYS = ("outputSchema", "output_schema", "response", "returns")
_WITH_KEYS = frozenset({"envfactory", "info", "state", "operations", "invariants", "goals", "schemas"})
_WITH_OP_KEYS = frozenset({"requires", "effects", "ensures", "output", "description", "errors"})
MAX_TOOLS = 10_000


def from_tools(doc: Any, path: str | Path, with_state: str | Path | None = None) -> Contract:
    """Translate a tool list to native form (optionally joined with a native file) and build it."""
    from envfactory.contracts import loader

    path = Path(path)
    file_loc = getattr(doc, "loc", None) or Location(str(path))
    native: dict[str, Any] = {
        "info": {"title": path.stem, "version": ""},
        "state": LocDict(file_loc),
        "operations": LocDict(file_loc),
    }
    locs: dict[str, Location] = {}
    for name, tool, where in tool_items(doc, file_loc):
        if name in native["operations"]:
            raise ContractError(f"duplicate tool name {name!r} (first at {locs[name]})", where)
        native["operations"][name] = operation_spec(name, tool, where)
        locs[name] = where
    if not locs:
        raise ContractError("the tool list is empty", file_loc)
    if isinstance(doc, Mapping) and isinstance(doc.get("info"), Mapping):
        native["info"].update({k: str(v) for k, v in doc["info"].items() if k in ("title", "version")})
    if with_state is not None:
        join_native(native, with_state)
    return loader.build(native, path, kind="tools", operation_locs=locs)


def tool_items(doc: Any, file_loc: Location) -> list[tuple[str, Mapping[str, Any], Location]]:
    """Every tool of a tool-list document as (name, definition, where it stands)."""
    items, container = _tool_list(doc, file_loc)
    if len(items) > MAX_TOOLS:
        raise ContractError(f"more than {MAX_TOOLS} tools", file_loc)
    item_locs = getattr(container, "item_locs", None) or []
    result: list[tuple[str, Mapping[str, Any], Location]] = []
    for index, item in enumerate(items):
        where = item_locs[index] if index < len(item_locs) else getattr(item, "loc", None) or file_loc
        if isinstance(item, Mapping) and isinstance(item.get("functionDeclarations"), list):
            result.extend(tool_items(item["functionDeclarations"], where))
            continue
        if not isinstance(item, Mapping):
            raise ContractError(f"a tool must be an object, got {type(item).__name__}", where)
        definition: Mapping[str, Any] = item
        if isinstance(item.get("function"), Mapping):
            definition = item["function"]
            where = getattr(definition, "loc", None) or where
        name = definition.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ContractError("a tool needs a non-empty string 'name'", locate(definition, ["name"], where))
        result.append((name, definition, where))
    return result


def _tool_list(doc: Any, file_loc: Location) -> tuple[list[Any], Any]:
    if isinstance(doc, list):
        return list(doc), doc
    if isinstance(doc, Mapping):
        for holder in (doc, doc.get("result")):
            if not isinstance(holder, Mapping):
                continue
            for key in ("tools", "functions"):
                value = holder.get(key)
                if isinstance(value, list):
                    return list(value), value
        if "name" in doc:
            return [doc], [doc]
    raise ContractError(
        "not a tool list: expected a list of tools, {tools: [...]} (MCP) or a single {name, parameters}",
        file_loc,
    )


def operation_spec(name: str, tool: Mapping[str, Any], where: Location) -> dict[str, Any]:
    """A native operation for one tool: its input (and output, where declared) schema."""
    raw_input = next((tool[k] for k in _INPUT_KEYS if k in tool), None)
    spec: dict[str, Any] = {"input": _schema(raw_input, name, "parameters", tool, where, default_object=True)}
    raw_output = next((tool[k] for k in _OUTPUT_KEYS if k in tool), None)
    if raw_output is not None:
        spec["output"] = _schema(raw_output, name, "output", tool, where, default_object=False)
    description = tool.get("description")
    if isinstance(description, str) and description.strip():
        spec["description"] = description.strip()
    return spec


def _schema(
    raw: Any, name: str, what: str, tool: Mapping[str, Any], where: Location, *, default_object: bool
) -> dict[str, Any]:
    if raw is None:
        return {"type": "object"} if default_object else {}
    if not isinstance(raw, Mapping) and not isinstance(raw, bool):
        raise ContractError(f"tool {name!r}: {what} must be a JSON Schema object", where)
    bundled = _refs.bundle(raw, document=raw, document_path=None) if isinstance(raw, Mapping) else raw
    schema = normalize_tool_schema(bundled)
    if default_object and "type" not in schema and "properties" in schema:
        schema["type"] = "object"
    try:
        SchemaValidator(schema, location=where)
    except ContractError as err:
        raise ContractError(f"tool {name!r}: {what}: {err.message}", where) from None
    return schema


# -- joining a native file ---------------------------------------------------------------------


def join_native(native: dict[str, Any], with_state: str | Path) -> set[str]:
    """Add a native file's state, clauses, invariants and goals to ``native`` (in place).

    Returns the names of operations that got explicit effects. Schemas in the file resolve their
    ``$ref``s against the file itself (``#/schemas/...``) and files beside it.
    """
    wpath = Path(with_state)
    wdoc = _source.load_document(wpath)
    wloc = getattr(wdoc, "loc", None) or Location(str(wpath))
    if not isinstance(wdoc, Mapping):
        raise ContractError("a --with file must be a mapping (state, operations, invariants, goals)", wloc)
    _check_keys(wdoc, _WITH_KEYS, "the --with file", wloc)
    version = wdoc.get("envfactory")
    if version is not None and version != "1":
        raise ContractError(
            f'unsupported contract version {version!r}; this envfactory reads envfactory: "1"',
            locate(wdoc, ["envfactory"], wloc),
        )

    def bundle(schema: Any) -> Any:
        if not isinstance(schema, Mapping):
            return schema
        return _refs.bundle(schema, document=wdoc, document_path=wpath)

    state = wdoc.get("state") or {}
    if not isinstance(state, Mapping):
        raise ContractError("state must be a mapping", locate(wdoc, ["state"], wloc))
    target_state = native.setdefault("state", LocDict(wloc))
    for name, decl in state.items():
        where = locate(state, [name], wloc)
        if not isinstance(decl, Mapping):
            raise ContractError(f"state variable {name!r} must be a mapping", where)
        if isinstance(decl.get("collection"), Mapping):
            spec = dict(decl["collection"])
            if "value" in spec:
                spec["value"] = bundle(spec["value"])
            fixed: dict[str, Any] = {**decl, "collection": spec}
        else:
            schema = bundle({k: v for k, v in decl.items() if k not in ("initial", "description")})
            fixed = {**schema, **{k: decl[k] for k in ("initial", "description") if k in decl}}
        target_state[name] = _relocated(fixed, decl)
        if isinstance(target_state, LocDict):
            target_state.value_locs[name] = where
            target_state.key_locs[name] = where

    operations = wdoc.get("operations") or {}
    if not isinstance(operations, Mapping):
        raise ContractError("operations must be a mapping", locate(wdoc, ["operations"], wloc))
    explicit: set[str] = set()
    known = native["operations"]
    for name, spec in operations.items():
        where = _source.key_location(operations, name, wloc)
        if name not in known:
            hint = difflib.get_close_matches(str(name), list(known), n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ContractError(
                f"--with names operation {name!r}, which the tool list does not have{suggestion}", where
            )
        if not isinstance(spec, Mapping):
            raise ContractError(f"operation {name!r} must be a mapping", where)
        if "input" in spec:
            raise ContractError(
                f"operation {name!r}: the input comes from the tool list; --with adds requires, effects, ensures",
                locate(spec, ["input"], where),
            )
        _check_keys(spec, _WITH_OP_KEYS, f"operation {name!r}", where)
        target = known[name]
        for part in ("requires", "effects", "ensures"):
            items = spec.get(part)
            if items is None:
                continue
            part_loc = locate(spec, [part], where)
            if not isinstance(items, list):
                raise ContractError(f"operation {name!r}: {part} must be a list", part_loc)
            merged = target.get(part)
            if not isinstance(merged, LocList):
                previous = merged or []
                merged = LocList(part_loc)
                for item in previous:
                    merged.append(item)
                    merged.item_locs.append(part_loc)
                target[part] = merged
            item_locs = getattr(items, "item_locs", None) or []
            for index, item in enumerate(items):
                merged.append(item)
                merged.item_locs.append(item_locs[index] if index < len(item_locs) else part_loc)
            if part == "effects" and items:
                explicit.add(name)
        if "output" in spec:
            target["output"] = bundle(spec["output"])
        if "errors" in spec and isinstance(spec["errors"], Mapping):
            target.setdefault("errors", {}).update(spec["errors"])
        if isinstance(spec.get("description"), str):
            target["description"] = spec["description"]

    invariants = wdoc.get("invariants")
    if invariants is not None:
        if not isinstance(invariants, list):
            raise ContractError("invariants must be a list", locate(wdoc, ["invariants"], wloc))
        merged_inv = native.get("invariants")
        if not isinstance(merged_inv, LocList):
            old = list(merged_inv or [])
            merged_inv = LocList(locate(wdoc, ["invariants"], wloc))
            for item in old:
                merged_inv.append(item)
                merged_inv.item_locs.append(merged_inv.loc)
            native["invariants"] = merged_inv
        inv_locs = getattr(invariants, "item_locs", None) or []
        for index, item in enumerate(invariants):
            merged_inv.append(item)
            merged_inv.item_locs.append(inv_locs[index] if index < len(inv_locs) else merged_inv.loc)
    goals = wdoc.get("goals")
    if goals is not None:
        if not isinstance(goals, Mapping):
            raise ContractError("goals must be a mapping", locate(wdoc, ["goals"], wloc))
        existing = native.get("goals")
        if isinstance(existing, Mapping) and existing:
            combined = LocDict(getattr(goals, "loc", wloc))
            for source in (existing, goals):
                for key, value in source.items():
                    combined[key] = value
                    combined.value_locs[key] = locate(source, [key], wloc)
            native["goals"] = combined
        else:
            native["goals"] = goals
    if isinstance(wdoc.get("schemas"), Mapping):
        native.setdefault("schemas", {}).update(wdoc["schemas"])
    if isinstance(wdoc.get("info"), Mapping):
        for key in ("title", "version", "description"):
            if key in wdoc["info"]:
                native.setdefault("info", {})[key] = str(wdoc["info"][key])
    return explicit


def _relocated(fixed: dict[str, Any], original: Any) -> Any:
    """``fixed`` as a LocDict carrying ``original``'s locations (so errors point into the file)."""
    loc = getattr(original, "loc", None)
    if loc is None:
        return fixed
    result = LocDict(loc)
    for key, value in fixed.items():
        result[key] = value
        if key in getattr(original, "value_locs", {}):
            result.value_locs[key] = original.value_locs[key]
    return result


def _check_keys(doc: Mapping[str, Any], allowed: frozenset[str], what: str, loc: Location) -> None:
    for key in doc:
        if key in allowed or str(key).startswith("x-"):
            continue
        hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else f" (allowed: {', '.join(sorted(allowed))})"
        raise ContractError(f"{what}: unknown key {key!r}{suggestion}", _source.key_location(doc, key, loc))
