"""Loading: a file to a checked ``Contract``.

Native contracts are validated against the published contract schema, then built; OpenAPI
documents and tool lists are first translated to the native form by their importers and built by
the same ``build`` so that there is one path to the model. Every error names file:line:col.
"""

from __future__ import annotations

import difflib
import importlib.resources
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envfactory.contracts import _refs, _source, _validate
from envfactory.contracts import types as T
from envfactory.contracts.errors import ContractError, ExpressionError, Location
from envfactory.contracts.model import (
    UNKNOWN,
    Clause,
    Contract,
    ErrorSpec,
    HttpBinding,
    Operation,
    StateVar,
)
from envfactory.contracts.parser import Effect, parse_effect, parse_expr
from envfactory.contracts.typecheck import TypeChecker

if TYPE_CHECKING:
    import jsonschema

SUPPORTED_VERSIONS = ("1",)


@cache
def contract_schema() -> dict[str, Any]:
    """The published JSON Schema of native contracts (also for editors)."""
    text = (
        importlib.resources.files("envfactory.contracts").joinpath("contract.schema.json").read_text("utf-8")
    )
    result: dict[str, Any] = json.loads(text)
    return result


def load(
    path: str | Path,
    *,
    with_state: str | Path | None = None,
    closed_world: bool = False,
    strict: bool = False,
) -> Contract:
    """Load a contract: native, OpenAPI 3.x, or a tool list (optionally joined with ``with_state``).

    ``strict``: a defect an OpenAPI document is otherwise read past (a warning finding) is an error.
    """
    path = Path(path)
    doc = _source.load_document(path)
    kind = sniff(doc, path)
    if kind == "native":
        if with_state is not None:
            raise ContractError(
                "--with joins a native state file to a tool list or an OpenAPI document, not to a native contract",
                Location(str(path)),
            )
        contract = load_native(doc, path)
    elif kind == "openapi":
        from envfactory.contracts import openapi

        contract = openapi.from_openapi(doc, path, with_state=with_state, strict=strict)
    else:
        from envfactory.contracts import tools

        contract = tools.from_tools(doc, path, with_state=with_state)
    return contract.with_closed_world() if closed_world else contract


def sniff(doc: Any, path: Path) -> str:
    """Which way in: ``native``, ``openapi`` or ``tools``."""
    where = getattr(doc, "loc", Location(str(path)))
    if isinstance(doc, Mapping):
        if "envfactory" in doc:
            return "native"
        if "openapi" in doc:
            return "openapi"
        if "swagger" in doc:
            raise ContractError("Swagger 2.0 documents are not supported; convert to OpenAPI 3 first", where)
        result = doc.get("result")
        if (
            "tools" in doc
            or (isinstance(result, Mapping) and "tools" in result)
            or "functions" in doc
            or ("name" in doc and ("parameters" in doc or "inputSchema" in doc))
        ):
            return "tools"
        raise ContractError(
            "not a contract: expected 'envfactory: \"1\"' (native), 'openapi: 3.x', or a tool list", where
        )
    if isinstance(doc, list):
        return "tools"
    raise ContractError(f"a contract must be a mapping, got {type(doc).__name__}", where)


def load_native(doc: Any, path: Path) -> Contract:
    """Validate a native document against the contract schema, then build the model."""
    validate_document(doc, path)
    return build(doc, path)


def validate_document(doc: Any, path: Path) -> None:
    if isinstance(doc, Mapping) and doc.get("envfactory") not in SUPPORTED_VERSIONS:
        version = doc.get("envfactory")
        raise ContractError(
            f'unsupported contract version {version!r}; this envfactory reads envfactory: "1"',
            _source.locate(doc, ["envfactory"], Location(str(path))),
        )
    if _document_valid(doc):  # the common yes, without importing jsonschema (~50 ms of start-up)
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(contract_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return
    where = _source.locate(doc, list(error.absolute_path), Location(str(path)))
    extra = _extra_key(error)
    if extra is not None:  # point at the offending key itself
        where = _source.key_location(error.instance, extra, where)
    field = "/".join(str(p) for p in error.absolute_path) or "the document"
    message = _schema_message(error)
    raise ContractError(f"{field}: {message}", where)


@cache
def _document_test() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(contract_schema()).is_valid


def _document_valid(doc: Any) -> bool:
    """Whether the compiled validator surely accepts ``doc`` (its regular expressions are no
    more lenient than Python's); a no, or anything it cannot take, goes to ``jsonschema``, which
    says what is wrong."""
    try:
        return bool(_document_test()(doc))
    except Exception:
        return False


def _allowed_keys(error: jsonschema.ValidationError) -> list[str]:
    schema = error.schema
    return list((schema.get("properties") or {}).keys()) if isinstance(schema, Mapping) else []


def _extra_key(error: jsonschema.ValidationError) -> Any | None:
    """The first key that ``additionalProperties: false`` refused, if that is the error."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, Mapping):
        return None
    allowed = _allowed_keys(error)
    return next((k for k in error.instance if k not in allowed and not str(k).startswith("x-")), None)


def _schema_message(error: jsonschema.ValidationError) -> str:
    extra = _extra_key(error)
    if extra is not None:
        allowed = _allowed_keys(error)
        hint = difflib.get_close_matches(str(extra), allowed, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else f" (allowed: {', '.join(allowed)})"
        return f"unknown key {extra!r}{suggestion}"
    if error.validator == "oneOf":
        return "expected an expression string or {check: ..., error: {status: ...}}"
    message = error.message
    return message if len(message) <= 200 else message[:197] + "..."


def _loc(container: Any, key: str | int, fallback: Location) -> Location:
    """Where a value stands: the LocDict/LocList value location, else the container's, else fallback."""
    if isinstance(key, int):
        locs = getattr(container, "item_locs", None)
        if locs is not None and 0 <= key < len(locs):
            return locs[key]
    else:
        locs = getattr(container, "value_locs", None)
        if locs is not None and key in locs:
            return locs[key]
    return getattr(container, "loc", None) or fallback


class _Builder:
    """Builds one Contract from a native-form document (native, or translated by an importer)."""

    def __init__(self, doc: Mapping[str, Any], path: Path, document: Any | None = None) -> None:
        self.doc = doc
        self.path = path
        self.document = document if document is not None else doc
        self.file_loc = Location(str(path))
        self._validators: dict[int, tuple[Mapping[str, Any], _validate.SchemaValidator]] = {}
        self._type_caches: dict[int, dict[Any, T.Type]] = {}

    # -- schemas ------------------------------------------------------------------------------

    def schema(self, schema: Any, loc: Location) -> dict[str, Any]:
        if schema is True or schema is None:
            return {}
        if schema is False:
            return {"not": {}}
        if not isinstance(schema, Mapping):
            raise ContractError(f"a schema must be an object, got {type(schema).__name__}", loc)
        bundled = _refs.bundle(schema, document=self.document, document_path=self.path)
        # compile now: a schema that is not valid JSON Schema is reported here, with its place,
        # before anything else (the type reader, the solver) reads it
        # (a schema of a document's shared $defs was checked whole when the document loaded:
        # compile it on first use, so loading stays proportional to the document)
        lazy = _refs.is_bundled(schema)
        self._validators[id(bundled)] = (bundled, _validate.SchemaValidator(bundled, location=loc, lazy=lazy))
        return bundled

    def type_of(self, bundled: Mapping[str, Any]) -> T.Type:
        # schemas of one document share their $defs, so a reference's type is read once for all
        cache = self._type_caches.setdefault(id(bundled["$defs"]), {}) if _refs.is_bundled(bundled) else None
        return T.from_schema(bundled, lambda ref: _refs.resolve_local(bundled, ref), cache=cache)

    def validator(self, bundled: Mapping[str, Any], loc: Location) -> _validate.SchemaValidator:
        cached = self._validators.get(id(bundled))
        if cached is not None and cached[0] is bundled:
            return cached[1]
        return _validate.SchemaValidator(dict(bundled), location=loc, lazy=_refs.is_bundled(bundled))

    # -- state ----------------------------------------------------------------------------------

    def state(self, open_world: bool, inferred: frozenset[str]) -> dict[str, StateVar]:
        decls = self.doc.get("state") or {}
        result: dict[str, StateVar] = {}
        for name, decl in decls.items():
            loc = _source.locate(decls, [name], self.file_loc)
            if not isinstance(decl, Mapping):
                raise ContractError(f"state variable {name!r} must be a mapping", loc)
            if "collection" in decl:
                result[name] = self.collection(
                    name, decl, loc, open_world and "initial" not in decl, name in inferred
                )
            else:
                result[name] = self.scalar(
                    name, decl, loc, open_world and "initial" not in decl, name in inferred
                )
        return result

    def collection(
        self, name: str, decl: Mapping[str, Any], loc: Location, unknown: bool, inferred: bool
    ) -> StateVar:
        spec = decl["collection"]
        key_schema = dict(spec.get("key") or {"type": "string"})
        value_schema = self.schema(spec.get("value", {}), _loc(spec, "value", loc))
        key_type = T.INT if key_schema.get("type") == "integer" else T.STRING
        value_type = self.type_of(value_schema)
        initial: Any = UNKNOWN if unknown else decl.get("initial", {})
        if initial is not UNKNOWN:
            initial = self._collection_initial(
                name, initial, key_type, value_schema, _loc(decl, "initial", loc)
            )
        return StateVar(
            name,
            T.MapType(key_type, value_type),
            value_schema,
            initial,
            loc,
            collection=True,
            key_type=key_type,
            key_schema=key_schema,
            inferred=inferred,
        )

    def _collection_initial(
        self, name: str, initial: Any, key_type: T.Type, value_schema: dict[str, Any], loc: Location
    ) -> dict[Any, Any]:
        entries: dict[Any, Any] = {}
        if isinstance(initial, list):
            for item in initial:
                if not (isinstance(item, Mapping) and "id" in item):
                    raise ContractError(f"initial {name}: a list of records needs an 'id' in each", loc)
                entries[item["id"]] = item
        elif isinstance(initial, Mapping):
            entries = dict(initial)
        else:
            raise ContractError(f"initial {name} must be an object of key -> record", loc)
        result: dict[Any, Any] = {}
        validator = self.validator(value_schema, loc)
        for key, value in entries.items():
            typed = key
            if key_type == T.INT and isinstance(key, str):
                try:
                    typed = int(key)
                except ValueError:
                    raise ContractError(f"initial {name}: key {key!r} is not an integer", loc) from None
            violation = validator.first(_plain(value))
            if violation is not None:
                raise ContractError(f"initial {name}[{key!r}]: {violation.message}", loc)
            result[typed] = _plain(value)
        return result

    def scalar(
        self, name: str, decl: Mapping[str, Any], loc: Location, unknown: bool, inferred: bool
    ) -> StateVar:
        raw = {k: v for k, v in decl.items() if k not in ("initial", "description")}
        bundled = self.schema(raw, loc)
        typ = self.type_of(bundled)
        if unknown:
            initial: Any = UNKNOWN
        elif "initial" in decl:
            initial = _plain(decl["initial"])
        elif T.is_nullable(typ):
            initial = None
        elif "default" in raw:
            initial = _plain(raw["default"])
        else:
            raise ContractError(f"state variable {name!r} needs an initial value (initial: ...)", loc)
        if initial is not UNKNOWN:
            violation = self.validator(bundled, loc).first(initial)
            if violation is not None:
                raise ContractError(
                    f"initial value of {name!r} does not match its type: {violation.message}",
                    _loc(decl, "initial", loc),
                )
        return StateVar(name, typ, bundled, initial, loc, inferred=inferred)

    # -- clauses ----------------------------------------------------------------------------------

    def clause(
        self, item: Any, loc: Location, kind: str, checker: TypeChecker, name: str | None = None
    ) -> Clause:
        error: ErrorSpec | None = None
        inferred = False
        if isinstance(item, Mapping):
            text = item.get("check")
            loc = _loc(item, "check", loc)
            name = item.get("name", name)
            inferred = bool(item.get("inferred", False))
            spec = item.get("error")
            if isinstance(spec, Mapping):
                error = ErrorSpec(int(spec["status"]), spec.get("message"))
        else:
            text = item
        if not isinstance(text, str):
            raise ExpressionError(f"a {kind} clause must be an expression string", loc)
        expr = parse_expr(text, loc)
        checker.check_bool(expr)
        return Clause(expr, " ".join(text.split()), loc, kind, name=name, error=error, inferred=inferred)

    def clauses(self, items: Any, loc: Location, kind: str, checker: TypeChecker) -> tuple[Clause, ...]:
        if items is None:
            return ()
        return tuple(self.clause(item, _loc(items, i, loc), kind, checker) for i, item in enumerate(items))

    def effect(
        self,
        text: Any,
        loc: Location,
        state: Mapping[str, StateVar],
        checker: TypeChecker,
        *,
        inferred: bool = False,
    ) -> Effect:
        """One effect, type-checked. An ``inferred`` one (from a REST document, which seldom marks
        a response's fields required) may store a value its schema lets be absent: the
        response a create answers holds the record, and one that does not fails its step."""
        source = text.get("effect") if isinstance(text, Mapping) else text
        if not isinstance(source, str):
            raise ExpressionError("an effect must be a string like 'x = e' or 'del c[k]'", loc)
        effect = parse_effect(source, loc)
        target = effect.target
        var = state.get(target.var)
        if var is None:
            hint = difflib.get_close_matches(target.var, list(state), n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ExpressionError(f"assignment to undeclared state {target.var!r}{suggestion}", target.loc)
        target_type: T.Type = var.type
        if target.key is not None:
            if not var.collection:
                raise ExpressionError(
                    f"{target.var} is not a collection; assign it whole: {target.var} = ...", target.loc
                )
            key_type = checker.check(target.key)
            checker._expect_key(
                target.key, key_type, var.key_type or T.ANY, parse_expr(target.var, target.loc)
            )
            target_type = var.type.value if isinstance(var.type, T.MapType) else T.ANY
            for field in target.fields:
                record = T.strip_null(target_type)
                if isinstance(record, T.RecordType):
                    sub = record.field(field)
                    if sub is None and not record.open:
                        hint = difflib.get_close_matches(field, list(record.names), n=1)
                        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
                        raise ExpressionError(
                            f"{target.var} records have no field {field!r}{suggestion}", target.loc
                        )
                    target_type = sub or T.ANY
                else:
                    target_type = T.ANY
        elif var.collection and effect.value is not None:
            pass  # whole-collection assignment: checked like any value below
        if effect.value is not None:
            value_type = checker.check(effect.value)
            if inferred:
                value_type = T.strip_null(value_type)
            if not _assignable(value_type, target_type):
                raise ExpressionError(
                    f"cannot assign {value_type.describe()} to {effect.source.split('=')[0].strip()}, "
                    f"which is {target_type.describe()}",
                    effect.value.loc,
                )
        return effect

    # -- the whole -------------------------------------------------------------------------------

    def build(
        self,
        *,
        kind: str = "native",
        http: Mapping[str, HttpBinding] | None = None,
        open_world: bool = False,
        inferred_state: frozenset[str] = frozenset(),
        inferred_effects: frozenset[str] = frozenset(),
        operation_locs: Mapping[str, Location] | None = None,
    ) -> Contract:
        doc = self.doc
        info = doc.get("info") or {}
        state = self.state(open_world, inferred_state)
        state_types = {name: var.type for name, var in state.items()}
        operations: dict[str, Operation] = {}
        ops = doc.get("operations") or {}
        for name, spec in ops.items():
            loc = (operation_locs or {}).get(name) or _source.locate(ops, [name], self.file_loc)
            operations[name] = self.operation(
                name, spec, loc, state, state_types, http, name in inferred_effects
            )
        state_checker = TypeChecker(state_types, context="invariant")
        invariants = self.clauses(
            doc.get("invariants"), _loc(doc, "invariants", self.file_loc), "invariant", state_checker
        )
        goals: dict[str, Clause] = {}
        goal_decls = doc.get("goals") or {}
        goal_checker = TypeChecker(state_types, context="goal")
        for goal, text in goal_decls.items():
            goals[goal] = self.clause(
                text, _loc(goal_decls, goal, self.file_loc), "goal", goal_checker, name=goal
            )
        return Contract(
            title=str(info.get("title") or self.path.stem),
            version=str(info.get("version") or ""),
            path=str(self.path),
            kind=kind,
            state=state,
            operations=operations,
            invariants=invariants,
            goals=goals,
            schemas=dict(doc.get("schemas") or {}),
            open_world=open_world,
            description=info.get("description"),
        )

    def operation(
        self,
        name: str,
        spec: Mapping[str, Any],
        loc: Location,
        state: Mapping[str, StateVar],
        state_types: Mapping[str, T.Type],
        http: Mapping[str, HttpBinding] | None,
        inferred_effects: bool,
    ) -> Operation:
        input_schema = self.schema(spec.get("input", {"type": "object"}), _loc(spec, "input", loc))
        output_raw = spec.get("output")
        output_schema = self.schema(output_raw, _loc(spec, "output", loc)) if output_raw is not None else None
        input_type = self.type_of(input_schema)
        output_type = self.type_of(output_schema) if output_schema is not None else T.ANY
        pre = TypeChecker({**state_types, "input": input_type}, context=f"{name} requires")
        post = TypeChecker(
            {**state_types, "input": input_type, "output": output_type}, context=f"{name} ensures"
        )
        effect_checker = TypeChecker(
            {**state_types, "input": input_type, "output": output_type}, context=f"{name} effects"
        )
        requires = self.clauses(spec.get("requires"), _loc(spec, "requires", loc), "requires", pre)
        effects_decl = spec.get("effects") or []
        effects = tuple(
            self.effect(text, _loc(effects_decl, i, loc), state, effect_checker, inferred=inferred_effects)
            for i, text in enumerate(effects_decl)
        )
        ensures = self.clauses(spec.get("ensures"), _loc(spec, "ensures", loc), "ensures", post)
        errors = {int(k): str(v) for k, v in (spec.get("errors") or {}).items()}
        return Operation(
            name=name,
            input_schema=input_schema,
            output_schema=output_schema,
            input_type=input_type,
            output_type=output_type,
            requires=requires,
            effects=effects,
            ensures=ensures,
            loc=loc,
            description=spec.get("description"),
            errors=errors,
            http=(http or {}).get(name),
            inferred_effects=inferred_effects,
            input_validator=self.validator(input_schema, _loc(spec, "input", loc)),
            output_validator=self.validator(output_schema, _loc(spec, "output", loc))
            if output_schema is not None
            else None,
        )


def build(
    doc: Mapping[str, Any],
    path: Path,
    *,
    document: Any | None = None,
    kind: str = "native",
    http: Mapping[str, HttpBinding] | None = None,
    open_world: bool = False,
    inferred_state: frozenset[str] = frozenset(),
    inferred_effects: frozenset[str] = frozenset(),
    operation_locs: Mapping[str, Location] | None = None,
) -> Contract:
    """Build a Contract from a document in native form.

    Importers (OpenAPI, tool lists) translate to native form and call this; ``document`` is the
    original document that ``$ref``s point into, ``http`` the operations' HTTP bindings, and
    ``open_world`` leaves the initial value of every state variable without an explicit
    ``initial`` unknown. Clauses given as ``{check: ..., inferred: true}`` are marked inferred.
    """
    return _Builder(doc, path, document).build(
        kind=kind,
        http=http,
        open_world=open_world,
        inferred_state=inferred_state,
        inferred_effects=inferred_effects,
        operation_locs=operation_locs,
    )


def _assignable(value: T.Type, target: T.Type) -> bool:
    vk = T.kind_of(value)
    tk = T.kind_of(target)
    if "any" in vk or "any" in tk:
        return True
    return vk <= tk


def _plain(value: Any) -> Any:
    """Strip location-carrying containers down to plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Public alias of ``_plain`` for importers."""
    return _plain(value)


def locate(doc: Any, path: Sequence[str | int], default: Location) -> Location:
    return _source.locate(doc, path, default)
