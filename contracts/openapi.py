"""OpenAPI 3.0 / 3.1 documents to contracts.

Each operation of the document becomes one contract operation, named by its ``operationId`` as
written (spaces included) or ``METHOD /path`` where it has none. Its input is one object: path,
query and header parameters by name, plus the properties of a JSON object request body at the top
level (the whole body under ``body`` where it is not an object or a name collides); its output is
the 2xx response's schema; its error statuses are kept, and an ``HttpBinding`` says how to call it.
Schemas are bundled (``$ref``s into the document and files beside it) and OpenAPI's dialect is
turned into JSON Schema 2020-12 before anything validates with them.

Clauses come from REST conventions and links (``_rest``, all marked inferred), from
``x-envfactory`` extensions (root: ``state``, ``invariants``, ``goals``, ``schemas``, ``infer``;
operations: ``requires``, ``effects``, ``ensures``, ``infer``), and from a native file joined with
``--with``. State inferred from a document starts unknown: the server already holds data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from envfactory.contracts import _refs, _rest, httpcodec
from envfactory.contracts._dialect import format_bounds
from envfactory.contracts._source import LocDict, LocList, locate
from envfactory.contracts._validate import SchemaValidator, normalize_openapi
from envfactory.contracts.errors import ContractError, Location, RefError
from envfactory.contracts.model import Contract, HttpBinding

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# header parameters OpenAPI says are ignored (the transport sets them)
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_ROOT_EXTENSION_KEYS = frozenset({"state", "invariants", "goals", "schemas", "infer", "description"})
_OP_EXTENSION_KEYS = frozenset({"requires", "effects", "ensures", "infer", "description"})
EXTENSION = "x-envfactory"
_BODY = "\x00body"
_Where = tuple[
    str | None, Any
]  # the file a node was written in, and that file's document  # where the request body waits inside the input schema until it is placed


def from_openapi(
    doc: Any, path: str | Path, with_state: str | Path | None = None, strict: bool = False
) -> Contract:
    """Translate an OpenAPI 3.x document to native form and build the contract from it.

    Defects that do not change what the document means (duplicate ``required`` entries, 3.0's
    boolean ``exclusiveMinimum`` in a 3.1 document, unknown formats) are read past and kept as
    warnings at their own location; ``strict`` makes the first of them an error.
    """
    from envfactory.contracts import loader, tools

    path = Path(path)
    translator = _Translator(doc, path, strict)
    native, http, locs, ops = translator.translate()
    root_ext = translator.root_extension()
    infer = root_ext.get("infer", True) is not False
    taken = set(root_ext.get("state") or {})
    inferred = _rest.infer(ops, taken) if infer else None
    explicit_effects: set[str] = set()
    for op in ops:
        spec = native["operations"][op.name]
        op_ext = translator.op_extension(op.name)
        use_inferred = inferred is not None and op_ext.get("infer", True) is not False
        for part in ("requires", "effects", "ensures"):
            items = LocList(locs[op.name])
            if use_inferred and inferred is not None:
                for index, item in enumerate(getattr(inferred, part)[op.name]):
                    items.append(item)
                    items.item_locs.append(inferred.locs.get((op.name, part, index), locs[op.name]))
            explicit = op_ext.get(part)
            if explicit is not None:
                if not isinstance(explicit, list):
                    raise ContractError(
                        f"{EXTENSION}.{part} of {op.name!r} must be a list",
                        locate(op_ext, [part], locs[op.name]),
                    )
                _extend(items, explicit, locate(op_ext, [part], locs[op.name]))
                if part == "effects" and explicit:
                    explicit_effects.add(op.name)
            if items:
                spec[part] = items
    inferred_state: frozenset[str] = frozenset()
    if inferred is not None:
        native["state"].update(inferred.state)
        for name, resource in inferred.resources.items():
            native["state"].value_locs[name] = resource.loc
        inferred_state = frozenset(inferred.state)
    _add_root_extension(native, root_ext, translator.file_loc, translator)
    if with_state is not None:
        explicit_effects |= tools.join_native(native, with_state)
    inferred_effects = frozenset(
        name
        for name, spec in native["operations"].items()
        if spec.get("effects") and name not in explicit_effects
    )
    contract = loader.build(
        native,
        path,
        document=doc,
        kind="openapi",
        http=http,
        open_world=True,
        # a state variable declared explicitly (x-envfactory, --with) is no longer the inferred one
        inferred_state=frozenset(
            n for n in inferred_state if inferred is not None and native["state"].get(n) is inferred.state[n]
        ),
        inferred_effects=inferred_effects if infer else frozenset(),
        operation_locs=locs,
    )
    return attrs.evolve(contract, load_defects=translator.defects()) if translator.found else contract


def _extend(items: LocList, explicit: Any, loc: Location) -> None:
    item_locs = getattr(explicit, "item_locs", None) or []
    for index, item in enumerate(explicit):
        items.append(item)
        items.item_locs.append(item_locs[index] if index < len(item_locs) else loc)


def _add_root_extension(
    native: dict[str, Any], ext: Mapping[str, Any], loc: Location, translator: _Translator
) -> None:
    state = ext.get("state")
    if state is not None:
        for name, decl in state.items():
            native["state"][name] = translator.state_decl(name, decl, locate(state, [name], loc))
        _copy_locs(native["state"], state)
    if ext.get("invariants") is not None:
        items = LocList(getattr(ext["invariants"], "loc", loc))
        _extend(items, ext["invariants"], loc)
        native["invariants"] = items
    if ext.get("goals") is not None:
        native["goals"] = ext["goals"]
    if ext.get("schemas") is not None:
        native.setdefault("schemas", {}).update(ext["schemas"])


def _copy_locs(target: Any, source: Any) -> None:
    """Carry ``value_locs`` of a located mapping over to the mapping it was merged into."""
    locs = getattr(source, "value_locs", None)
    if locs is None:
        return
    own = getattr(target, "value_locs", None)
    if own is not None:
        own.update(locs)


# formats JSON Schema 2020-12 and OpenAPI define; any other is an annotation nobody checks
KNOWN_FORMATS = frozenset(
    [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "binary",
        "password",
    ]
)


class _Translator:
    def __init__(self, doc: Any, path: Path, strict: bool = False) -> None:
        self.doc = doc
        self.path = path
        self.file_loc = getattr(doc, "loc", None) or Location(str(path))
        if not isinstance(doc, Mapping):
            raise ContractError("an OpenAPI document must be a mapping", self.file_loc)
        version = doc.get("openapi")
        if not isinstance(version, str) or not version.startswith("3."):
            raise ContractError(
                f"unsupported OpenAPI version {version!r}; expected 3.0.x or 3.1.x",
                locate(doc, ["openapi"], self.file_loc),
            )
        self.version = version
        self.strict = strict
        self.found: dict[tuple[str, str], tuple[Location, int]] = {}
        self.bundler = _refs.DocumentBundler(
            doc, path, transform=self._dialect, inspect=self._inspect, revise=self._revise
        )
        self.schemas: list[tuple[dict[str, Any], Location]] = []
        self.names: dict[tuple[str, str], str] = {}
        self.op_exts: dict[str, Mapping[str, Any]] = {}
        self.pending_links: dict[str, list[tuple[str, Any, Location]]] = {}

    # -- helpers --------------------------------------------------------------------------------

    def loc(self, *parts: str | int) -> Location:
        return locate(self.doc, list(parts), self.file_loc)

    def _inspect(self, node: Mapping[str, Any]) -> None:
        """Note a defect of a schema as written, at its own location (or stop on it if strict)."""
        required = node.get("required")
        if isinstance(required, list):
            seen: set[Any] = set()
            for name in required:
                if isinstance(name, str) and name in seen:
                    self.defect(
                        "duplicate-required", f"{name!r} is listed twice in required", node, "required"
                    )
                seen.add(name)
        if self.version.startswith("3.1"):
            for bound in ("exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(node.get(bound), bool):
                    self.defect(
                        "openapi-3.0-keyword",
                        f"boolean {bound} is OpenAPI 3.0; a 3.1 document gives the bound as a number "
                        "(read as 3.0 means it)",
                        node,
                        bound,
                    )
        for keyword in ("$recursiveAnchor", "$recursiveRef"):
            if keyword in node:
                self.defect(
                    "draft-2019-keyword",
                    f"{keyword} is JSON Schema 2019-09 (2020-12 replaced it); ignored",
                    node,
                    keyword,
                )
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in KNOWN_FORMATS and isinstance(node.get("type"), str | list):
            self.defect("unknown-format", f"unknown format {fmt!r} (not checked)", node, "format")

    def _revise(self, node: Mapping[str, Any], copy: dict[str, Any]) -> None:
        """Read a ``oneOf`` whose branches are the same schema as naming it once: as written, no
        value can match exactly one of them (PagerDuty's ``metadata.agent`` lists one reference
        twice, once by ``$ref`` and once inline, differing only in their examples), so nothing
        could ever answer it. Compared as the validator reads them: through references, in
        JSON Schema 2020-12 (annotations such as ``example`` dropped)."""
        branches = copy.get("oneOf")
        if not isinstance(branches, list) or len(branches) < 2:
            return
        first: dict[str, int] = {}
        kept: list[Any] = []
        for index, branch in enumerate(branches):
            key = self._meaning(branch)
            if key in first:
                self.defect(
                    "identical-oneof",
                    f"oneOf branches {first[key] + 1} and {index + 1} are the same schema, so no value "
                    "matches exactly one of them; read as one",
                    node,
                    "oneOf",
                    index,
                )
                continue
            first[key] = index
            kept.append(branch)
        if len(kept) < len(branches):
            copy["oneOf"] = kept

    def _meaning(self, branch: Any) -> str:
        """A branch's schema as text: a reference read as its target, the dialect normalized."""
        defs = self.bundler.defs
        seen: set[str] = set()
        while isinstance(branch, Mapping) and set(branch) == {"$ref"}:
            ref = branch["$ref"]
            name = ref[len("#/$defs/") :] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
            if name is None or name in seen or not defs.get(name):  # still being copied (a cycle)
                break
            seen.add(name)
            branch = defs[name]
        return json.dumps(_without_notes(self._dialect(branch)), sort_keys=True, default=str)

    def defect(self, kind: str, message: str, node: Any, key: str, *more: str | int) -> None:
        where = locate(node, [key, *more], getattr(node, "loc", None) or self.file_loc)
        if self.strict:
            raise ContractError(f"{message} (--strict)", where)
        first = (kind, message)
        if first in self.found:  # the same defect elsewhere: counted, reported once
            self.found[first] = (self.found[first][0], self.found[first][1] + 1)
        else:
            self.found[first] = (where, 1)

    def defects(self) -> tuple[tuple[str, str, Location], ...]:
        return tuple(
            (kind, message if count == 1 else f"{message}; {count} places like this one", where)
            for (kind, message), (where, count) in self.found.items()
        )

    def _dialect(self, schema: Any) -> Any:
        """OpenAPI's dialect to JSON Schema 2020-12, applied once to each node the bundler copies."""
        result = normalize_openapi(schema, self.version)
        return format_bounds(dict(result)) if isinstance(result, Mapping) else {}

    def schema(self, raw: Any, loc: Location, where: _Where | None = None) -> dict[str, Any]:
        """A JSON Schema 2020-12 whose ``$ref``s point into the document's shared ``$defs``.

        Each referenced schema is copied and normalized once per document, however many
        operations use it; validators compile on first use (``check_schemas`` checks them all).
        """
        if raw is None or raw is True:
            return {}
        if raw is False:
            return {"not": {}}
        if not isinstance(raw, Mapping):
            raise ContractError(f"a schema must be an object, got {type(raw).__name__}", loc)
        file, document = where if where is not None else (None, None)
        schema = self.bundler.bundle(raw, file, document)
        self.schemas.append((schema, loc))
        return schema

    def check_schemas(self) -> None:
        """Every schema is JSON Schema: one compile of all of them, then the first bad one, located."""
        tops = [{k: v for k, v in s.items() if k != "$defs"} for s, _ in self.schemas]
        try:
            SchemaValidator({"$defs": self.bundler.defs, "anyOf": tops}, location=self.file_loc)
        except ContractError as err:
            located = self.locate_schema_error(tops)
            if located is not None:
                raise ContractError(located[0], located[1]) from None
            for schema, loc in self.schemas:
                SchemaValidator(schema, location=loc)
            raise err from None

    def locate_schema_error(self, tops: list[dict[str, Any]]) -> tuple[str, Location] | None:
        """The first schema node that breaks JSON Schema's own rules, at the place it is written:
        a shared definition is reported where the document defines it, not where it is first used."""
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import best_match

        meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
        for name, node in self.bundler.defs.items():
            error = best_match(meta.iter_errors(node))
            if error is not None:
                origin = self.bundler.origin(name)
                path = list(error.absolute_path)
                loc = locate(origin, path, getattr(origin, "loc", None) or self.file_loc)
                return f"invalid JSON Schema: {error.message}", loc
        for top, (_, loc) in zip(tops, self.schemas, strict=True):
            error = best_match(meta.iter_errors(top))
            if error is not None:
                return f"invalid JSON Schema: {error.message}", loc
        return None

    def state_decl(self, name: str, decl: Any, loc: Location) -> Any:
        """An ``x-envfactory`` state declaration with its schema in JSON Schema 2020-12."""
        if not isinstance(decl, Mapping):
            raise ContractError(f"state variable {name!r} must be a mapping", loc)
        if isinstance(decl.get("collection"), Mapping):
            spec = dict(decl["collection"])
            if "value" in spec:
                spec["value"] = self.schema(spec["value"], locate(decl["collection"], ["value"], loc))
            fixed: dict[str, Any] = {**decl, "collection": spec}
        else:
            schema = self.schema({k: v for k, v in decl.items() if k not in ("initial", "description")}, loc)
            fixed = {**schema, **{k: decl[k] for k in ("initial", "description") if k in decl}}
        result = LocDict(getattr(decl, "loc", loc))
        result.update(fixed)
        result.value_locs.update(getattr(decl, "value_locs", {}))
        return result

    def deref(self, node: Any, loc: Location, where: _Where | None = None) -> tuple[Any, Location, _Where]:
        """Follow ``$ref`` chains of non-schema objects (path items, operations, parameters,
        request bodies, responses, links), into the document and files beside it.

        Returns the target, its location, and where it was written (file, document), against
        which the references inside it resolve. A reference that leads nowhere is an error.
        """
        file, document = where if where is not None else (None, None)
        try:
            target, loc, file, document = self.bundler.follow(node, loc, file, document)
        except RefError as err:
            raise ContractError(err.message, err.location or loc) from None
        return target, loc, (file, document)

    def root_extension(self) -> Mapping[str, Any]:
        ext = self.doc.get(EXTENSION)
        if ext is None:
            return {}
        where = self.loc(EXTENSION)
        if not isinstance(ext, Mapping):
            raise ContractError(f"{EXTENSION} must be a mapping", where)
        _check_keys(ext, _ROOT_EXTENSION_KEYS, EXTENSION, where)
        for key, kind, noun in (
            ("state", Mapping, "a mapping"),
            ("goals", Mapping, "a mapping"),
            ("schemas", Mapping, "a mapping"),
            ("invariants", list, "a list"),
            ("infer", bool, "true or false"),
        ):
            if key in ext and not isinstance(ext[key], kind):
                raise ContractError(f"{EXTENSION}.{key} must be {noun}", locate(ext, [key], where))
        return ext

    def op_extension(self, name: str) -> Mapping[str, Any]:
        return self.op_exts.get(name, {})

    # -- operations -----------------------------------------------------------------------------

    def translate(
        self,
    ) -> tuple[dict[str, Any], dict[str, HttpBinding], dict[str, Location], list[_rest.OpInfo]]:
        info = self.doc.get("info") if isinstance(self.doc.get("info"), Mapping) else {}
        assert isinstance(info, Mapping)
        native: dict[str, Any] = {
            "info": {
                "title": str(info.get("title") or self.path.stem),
                "version": str(info.get("version") or ""),
                **({"description": str(info["description"])} if info.get("description") else {}),
            },
            "state": LocDict(self.file_loc),
            "operations": {},
        }
        http: dict[str, HttpBinding] = {}
        locs: dict[str, Location] = {}
        ops: list[_rest.OpInfo] = []
        paths = self.doc.get("paths") or {}
        if not isinstance(paths, Mapping):
            raise ContractError("paths must be a mapping", self.loc("paths"))
        seen: dict[str, Location] = {}
        for route, item in paths.items():
            item_loc = self.loc("paths", route)
            item, item_loc, item_where = self.deref(item, item_loc)
            if not isinstance(item, Mapping):
                raise ContractError(f"path item {route!r} must be a mapping", item_loc)
            shared = [(p, item_where) for p in _located_items(item.get("parameters") or [], item_loc)]
            for method in [str(k) for k in item if str(k) in METHODS]:  # in document order
                operation, op_loc, where = self.deref(
                    item[method], locate(item, [method], item_loc), item_where
                )
                if not isinstance(operation, Mapping):
                    raise ContractError(f"{method.upper()} {route}: an operation must be a mapping", op_loc)
                name = operation.get("operationId")
                if name is None:
                    name = f"{method.upper()} {route}"
                if not isinstance(name, str) or not name:
                    raise ContractError("operationId must be a non-empty string", op_loc)
                if name in seen:
                    raise ContractError(
                        f"duplicate operationId {name!r} (first at line {seen[name].line})", op_loc
                    )
                seen[name] = op_loc
                self.names[(method, route)] = name
                spec, binding, op = self.operation(name, method, str(route), operation, shared, op_loc, where)
                native["operations"][name] = spec
                http[name] = binding
                locs[name] = op_loc
                ops.append(op)
        if not ops:
            raise ContractError("the document has no operations (paths is empty)", self.loc("paths"))
        ops = [attrs.evolve(op, links=self.links_of(op.name)) for op in ops]
        self.check_schemas()
        return native, http, locs, ops

    def operation(
        self,
        name: str,
        method: str,
        route: str,
        operation: Mapping[str, Any],
        shared: list[tuple[tuple[Any, Location], _Where]],
        loc: Location,
        where: _Where,
    ) -> tuple[dict[str, Any], HttpBinding, _rest.OpInfo]:
        ext = operation.get(EXTENSION)
        if ext is not None:
            ext_loc = locate(operation, [EXTENSION], loc)
            if not isinstance(ext, Mapping):
                raise ContractError(f"{EXTENSION} of {name!r} must be a mapping", ext_loc)
            _check_keys(ext, _OP_EXTENSION_KEYS, f"{EXTENSION} of {name!r}", ext_loc)
            if "infer" in ext and not isinstance(ext["infer"], bool):
                raise ContractError(
                    f"{EXTENSION}.infer of {name!r} must be true or false", locate(ext, ["infer"], ext_loc)
                )
            self.op_exts[name] = ext
        own = [(p, where) for p in _located_items(operation.get("parameters") or [], loc)]
        params = self.parameters(name, shared, own, loc)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param, (raw, raw_where), is_required in params:
            properties[param.name] = self.bundler.node(raw, *raw_where)
            if is_required:
                required.append(param.name)
        body_raw, body_required, body_where, media, form_styles = self.request_body(
            name, operation, loc, where
        )
        if body_raw is not None:
            properties[_BODY] = self.bundler.node(body_raw, *body_where)
        # every piece's $refs point into the document's one shared $defs
        input_schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "$defs": self.bundler.defs,
        }
        self.schemas.append((input_schema, loc))
        body, body_fields, extra = _place_body(input_schema, required, body_required)
        if required:
            input_schema["required"] = required
        input_schema["additionalProperties"] = extra
        output_schema, links, success = self.response(operation, loc, where)
        errors = self.errors(operation, loc, where)
        param_infos = tuple(
            attrs.evolve(p, schema=input_schema.get("properties", {}).get(p.name, {})) for p, _, _ in params
        )
        spec: dict[str, Any] = {"input": input_schema, "errors": errors}
        if output_schema is not None:
            spec["output"] = output_schema
        description = operation.get("summary") or operation.get("description")
        if isinstance(description, str) and description.strip():
            spec["description"] = description.strip().splitlines()[0]
        binding = HttpBinding(
            method=method.upper(),
            path=route,
            path_params=tuple(p.name for p in param_infos if p.where == "path"),
            query_params=tuple(p.name for p in param_infos if p.where == "query"),
            header_params=tuple(p.name for p in param_infos if p.where == "header"),
            body=body,
            body_fields=body_fields,
            success_status=success.status,
            success_body=success.body,
            success_statuses=success.statuses,
            media=media,
            styles=tuple((p.name, p.style, p.explode) for p in param_infos) + form_styles,
        )
        self.pending_links[name] = links
        op = _rest.OpInfo(
            name=name,
            method=method.upper(),
            path=route,
            params=param_infos,
            body=body,
            body_fields=body_fields,
            input_schema=input_schema,
            output_schema=output_schema,
            errors=errors,
            loc=loc,
            created=success.status == 201,
        )
        return spec, binding, op

    def parameters(
        self,
        op_name: str,
        shared: list[tuple[tuple[Any, Location], _Where]],
        own: list[tuple[tuple[Any, Location], _Where]],
        loc: Location,
    ) -> list[tuple[_rest.ParamInfo, tuple[Any, _Where], bool]]:
        merged: dict[tuple[str, str], tuple[Any, Location, _Where]] = {}
        for group in (shared, own):
            for (raw, at), written in group:
                param, where, param_where = self.deref(raw, at, written)
                if not isinstance(param, Mapping) or not isinstance(param.get("name"), str):
                    raise ContractError(f"{op_name}: a parameter needs a name", where)
                place = param.get("in")
                if place not in ("path", "query", "header", "cookie"):
                    raise ContractError(
                        f"{op_name}: parameter {param['name']!r} has in: {place!r}; "
                        "expected path, query, header or cookie",
                        locate(param, ["in"], where),
                    )
                merged[(str(param["name"]), str(place))] = (param, where, param_where)
        result: list[tuple[_rest.ParamInfo, tuple[Any, _Where], bool]] = []
        names: set[str] = set()
        for (name, place), (param, where, param_where) in merged.items():
            if place == "cookie" or (place == "header" and name.lower() in _IGNORED_HEADERS):
                continue
            if name in names:
                continue  # the same name in two places: the first one wins the input field
            names.add(name)
            raw = param.get("schema")
            style, explode = self.param_style(op_name, param, place, where)
            if raw is None and isinstance(param.get("content"), Mapping):
                media = _pick_media(param["content"])
                raw = media.get("schema") if isinstance(media, Mapping) else None
                style, explode = httpcodec.CONTENT, False
            is_required = place == "path" or param.get("required") is True
            info = _rest.ParamInfo(
                name=name,
                where=place,
                schema={},
                required=is_required,
                loc=where,
                wire_name=name,
                style=style,
                explode=explode,
            )
            result.append((info, (raw if raw is not None else {}, param_where), is_required))
        return result

    def param_style(
        self, op_name: str, param: Mapping[str, Any], place: str, where: Location
    ) -> tuple[str, bool]:
        """A parameter's (or form field's) ``style`` and ``explode``, OpenAPI's defaults where the
        document is silent; a style the place does not allow is an error at its location."""
        style = param.get("style", httpcodec.DEFAULT_STYLE.get(place, "form"))
        if place == "cookie":
            return str(style), param.get("explode", style == "form") is True
        if style not in httpcodec.PARAMETER_STYLES[place]:
            allowed = ", ".join(sorted(httpcodec.PARAMETER_STYLES[place]))
            raise ContractError(
                f"{op_name}: {param.get('name', 'a field')!r} has style {style!r}; in {place} "
                f"OpenAPI allows {allowed}",
                locate(param, ["style"], where),
            )
        explode = param.get("explode", style == "form")
        if not isinstance(explode, bool):
            raise ContractError(
                f"{op_name}: explode must be true or false", locate(param, ["explode"], where)
            )
        return style, explode

    def request_body(
        self, op_name: str, operation: Mapping[str, Any], loc: Location, written: _Where
    ) -> tuple[Any, bool, _Where, str, tuple[tuple[str, str, bool], ...]]:
        """The request body's schema as written (None without a body), whether it is required,
        where it was written, its media type, and its form fields' (name, style, explode)."""
        raw = operation.get("requestBody")
        if raw is None:
            return None, False, written, httpcodec.JSON, ()
        body, where, body_where = self.deref(raw, locate(operation, ["requestBody"], loc), written)
        if not isinstance(body, Mapping):
            raise ContractError(f"{op_name}: requestBody must be a mapping", where)
        content = body.get("content") or {}
        media_type = _pick_media_type(content) or httpcodec.JSON
        media = _pick_media(content)
        schema = media.get("schema") if isinstance(media, Mapping) else None
        base = media_type.split(";")[0].strip().lower()
        media_kind = base if base in (httpcodec.FORM, httpcodec.MULTIPART) else httpcodec.JSON
        styles: list[tuple[str, str, bool]] = []
        encoding = media.get("encoding") if isinstance(media, Mapping) else None
        if media_kind == httpcodec.FORM and isinstance(encoding, Mapping):
            media_loc = locate(content, [media_type], where)
            for field, spec in encoding.items():
                if isinstance(spec, Mapping) and ("style" in spec or "explode" in spec):
                    at = locate(encoding, [field], locate(media, ["encoding"], media_loc))
                    styles.append((str(field), *self.param_style(op_name, spec, "form", at)))
        required = body.get("required") is True
        return (schema if schema is not None else {}), required, body_where, media_kind, tuple(styles)

    def response(
        self, operation: Mapping[str, Any], loc: Location, written: _Where
    ) -> tuple[dict[str, Any] | None, list[Any], _Success]:
        """The success response: its schema (None without a JSON body), its links, and its status.

        The 2xx codes are read 200 first, then 201, then in order; the first one with content
        gives the schema and the status. Where none has content, the first code is the status
        and there is no body (``204`` never has one). ``default`` alone means 200.
        """
        responses = operation.get("responses") or {}
        if not isinstance(responses, Mapping):
            raise ContractError("responses must be a mapping", locate(operation, ["responses"], loc))
        keys = {str(code): code for code in responses}  # YAML reads an unquoted 200 as a number
        codes = sorted((c for c in keys if c.startswith("2")), key=lambda c: (c not in ("200", "201"), c))
        documented = tuple(sorted({_status_number(code) for code in codes})) or (200,)
        first = _status_number(codes[0]) if codes else 200
        for code in codes:
            response, where, response_where = self.deref(
                responses[keys[code]], locate(responses, [keys[code]], loc), written
            )
            if not isinstance(response, Mapping):
                continue
            links = list(self.raw_links(response, where, response_where))
            content = response.get("content")
            if code == "204" or not isinstance(content, Mapping) or not content:
                if code == codes[-1] or links:
                    status = _status_number(code) if links else first
                    return None, links, _Success(status, False, documented)
                continue
            success = _Success(_status_number(code), True, documented)
            media = _pick_media(content)
            raw = media.get("schema") if isinstance(media, Mapping) else None
            if raw is None:
                return None, links, success
            return self.schema(raw, locate(response, ["content"], where), response_where), links, success
        return None, [], _Success(first, True, documented)

    def raw_links(
        self, response: Mapping[str, Any], loc: Location, written: _Where
    ) -> list[tuple[str, Any, Location]]:
        links = response.get("links")
        if not isinstance(links, Mapping):
            return []
        result = []
        for name, raw in links.items():
            where = locate(links, [name], loc)
            result.append((str(name), self.deref(raw, where, written)[0], where))
        return result

    def errors(self, operation: Mapping[str, Any], loc: Location, written: _Where) -> dict[int, str]:
        result: dict[int, str] = {}
        for code, response in (operation.get("responses") or {}).items():
            text = str(code)
            if text.isdigit() and int(text) >= 400:
                response = self.deref(response, locate(operation, ["responses", code], loc), written)[0]
                description = response.get("description") if isinstance(response, Mapping) else None
                result[int(text)] = str(description or "")
        return result

    def links_of(self, name: str) -> tuple[_rest.LinkInfo, ...]:
        result: list[_rest.LinkInfo] = []
        for link_name, link, where in self.pending_links.get(name, []):
            if not isinstance(link, Mapping):
                continue
            target = link.get("operationId")
            ref = link.get("operationRef")
            if target is None and isinstance(ref, str) and ref.startswith("#/paths/"):
                parts = ref[len("#/paths/") :].split("/")
                if len(parts) == 2:
                    route = parts[0].replace("~1", "/").replace("~0", "~")
                    target = self.names.get((parts[1], route))
            params = link.get("parameters") or {}
            if not isinstance(target, str) or not isinstance(params, Mapping):
                continue
            result.append(
                _rest.LinkInfo(
                    name=link_name,
                    target=target,
                    parameters={str(k): v for k, v in params.items() if isinstance(v, str)},
                    loc=where,
                )
            )
        return tuple(result)


@attrs.frozen(slots=True)
class _Success:
    """An operation's documented success: its status, whether it has a body, every 2xx listed."""

    status: int = 200
    body: bool = True
    statuses: tuple[int, ...] = (200,)


_NOTES = frozenset(("description", "title", "examples", "example", "deprecated", "$comment"))
"""Annotations: two schemas that differ only in these accept the same values."""


def _without_notes(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        # a property named like an annotation is still a property: only schema keywords go
        return {
            k: (
                {name: _without_notes(v) for name, v in value.items()}
                if k in ("properties", "patternProperties", "$defs") and isinstance(value, Mapping)
                else value
                if k in ("enum", "const", "default")
                else _without_notes(value)
            )
            for k, value in schema.items()
            if k not in _NOTES
        }
    if isinstance(schema, list):
        return [_without_notes(v) for v in schema]
    return schema


def _status_number(code: str) -> int:
    """``"201"`` to 201; a range (``"2XX"``) to its first status, 200."""
    return int(code) if code.isdigit() and 200 <= int(code) < 300 else 200


def _place_body(
    schema: dict[str, Any], required: list[str], body_required: bool
) -> tuple[str | None, tuple[str, ...], Any]:
    """Put the bundled body in place: its properties at the top level where it is a plain object
    whose names do not collide with a parameter, else whole under ``body``.

    Returns the HTTP body binding, the body's fields, and the input's ``additionalProperties``.
    """
    props: dict[str, Any] = schema.setdefault("properties", {})
    if _BODY not in props:
        return None, (), False
    body_schema = props.pop(_BODY)
    resolved = _rest.resolve(schema, body_schema)
    flat = (
        isinstance(resolved, Mapping)
        and _rest.is_object(schema, resolved)
        and not any(k in resolved for k in ("oneOf", "anyOf", "not", "if"))
    )
    body_props, body_req = _rest.object_props(resolved, schema) if flat else ({}, frozenset())
    if flat and body_props and not (set(body_props) & set(props)):
        props.update(body_props)
        if body_required:
            required.extend(
                key
                for key in body_props
                if key in body_req and not _flag(schema, body_props[key], "readOnly")
            )
        extra = resolved.get("additionalProperties", False) if isinstance(resolved, Mapping) else False
        return "*", tuple(body_props), extra
    field = "body" if "body" not in props else "requestBody"
    props[field] = body_schema
    if body_required:
        required.append(field)
    return field, (), False


def _pick_media(content: Any) -> Any:
    """The media type object to read (see ``_pick_media_type``)."""
    key = _pick_media_type(content)
    return {} if key is None else content[key]


def _pick_media_type(content: Any) -> str | None:
    """The media type to read: JSON first, then form data, then whatever comes first."""
    if not isinstance(content, Mapping) or not content:
        return None
    keys = [str(k) for k in content]
    for key in keys:
        if key.lower() == httpcodec.JSON:
            return key
    for key in keys:
        if "json" in key.lower():
            return key
    for key in keys:
        if key.split(";")[0].strip().lower() in (httpcodec.FORM, httpcodec.MULTIPART):
            return key
    return keys[0]


def _flag(doc: Any, schema: Any, name: str) -> bool:
    resolved = _rest.resolve(doc, schema)
    return isinstance(resolved, Mapping) and resolved.get(name) is True


def _check_keys(ext: Mapping[str, Any], allowed: frozenset[str], what: str, loc: Location) -> None:
    import difflib

    for key in ext:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            suggestion = (
                f"; did you mean {hint[0]!r}?" if hint else f" (allowed: {', '.join(sorted(allowed))})"
            )
            raise ContractError(f"{what}: unknown key {key!r}{suggestion}", locate(ext, [key], loc))


def _located_items(group: Any, loc: Location) -> list[tuple[Any, Location]]:
    """A parameter list's items with their locations."""
    if not isinstance(group, list):
        raise ContractError("parameters must be a list", getattr(group, "loc", loc))
    item_locs = getattr(group, "item_locs", [])
    return [(raw, item_locs[i] if i < len(item_locs) else loc) for i, raw in enumerate(group)]
