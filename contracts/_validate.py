"""Input/output schema validation: each schema compiled once, regular expressions that cannot hang.

Schemas are compiled with ``jsonschema-rs`` (a compiled validator, an order of magnitude faster
than a pure-Python one on the per-call hot path). ``pattern`` and ``patternProperties`` use its
``fancy-regex`` engine with a backtracking limit, so a catastrophic pattern such as ``^(a+)+$``
fails to match in bounded time instead of hanging the run. References are never fetched: schemas
reach this module already bundled (``_refs.bundle``), and the validator is built offline.

``normalize_openapi`` turns OpenAPI's schema dialect into JSON Schema 2020-12 first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import jsonschema_rs

from envfactory.contracts import _refs
from envfactory.contracts.errors import ContractError, Location

BACKTRACK_LIMIT = 100_000
REGEX_SIZE_LIMIT = 1 << 20
MAX_VIOLATIONS = 20

_DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


@attrs.frozen(slots=True)
class Violation:
    """One way a value breaks a schema: where in the value, why, and which keyword said so."""

    path: tuple[str | int, ...]
    message: str
    keyword: str
    schema_path: tuple[str | int, ...] = ()

    @property
    def where(self) -> str:
        """The value path as ``a.b[0]`` (empty for the value itself)."""
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text


def _used_defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema with only the ``$defs`` its ``$ref``s reach: a document's bundle is shared by
    every operation (Stripe: 560 definitions, 800 KB), and compiling all of them for each of 834
    validators took 20 s and 1.7 GB where the reachable ones take a fraction. Unchanged when a
    local reference points anywhere but into ``$defs``."""
    defs = schema.get("$defs")
    root = {k: v for k, v in schema.items() if k != "$defs"}
    if not isinstance(defs, Mapping):
        return dict(schema)
    reached: set[str] = set()
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                if not ref.startswith("#/$defs/"):
                    return dict(schema)
                name = ref[len("#/$defs/") :].split("/")[0].replace("~1", "/").replace("~0", "~")
                if name not in defs:  # an encoding this reading does not know: keep them all
                    return dict(schema)
                if name not in reached:
                    reached.add(name)
                    todo.append(defs[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return {**root, "$defs": {name: defs[name] for name in defs if name in reached}}


# jsonschema_rs finds its Python type objects (int, bool, ...) on its first validation, through
# the builtins of the calling frame. The generated checkers run with no builtins
# (``contracts.codegen``), so a first validation from one of them left every later one unable to
# read an int or a bool ("Unsupported type: 'int'": every trajectory of a large OpenAPI document,
# whose validators compile lazily, came out invalid). One validation here settles the lookup.
jsonschema_rs.validator_for({"type": "integer"}).is_valid(0)


def _refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"references are not fetched ({uri})")


class _Group:
    """The lazily compiled schemas of one document, compiled together on the first use of any.

    jsonschema_rs copies the whole schema it compiles, so each of Stripe's 834 validators held
    its own copy of the reachable definitions (1-3.5 MB each; a session through ``serve`` reached
    1.9 GB). Compiled as one schema whose ``properties`` are the members (``{"$defs": shared,
    "properties": {"m0": first, ...}}``), the definitions are copied once, and a member validates
    ``{key: value}``. A member that joins after its group compiled starts the next group.
    """

    __slots__ = ("defs", "lock", "pending")

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.pending: list[SchemaValidator] = []
        self.lock = threading.Lock()

    def compile(self, member: SchemaValidator) -> None:
        """Compile ``member``'s group (every member pending now); alone where the group fails."""
        with self.lock:
            if member._compiled is not None:  # another thread compiled the group meanwhile
                return
            members, self.pending = self.pending, []
            if member not in members:
                members.append(member)
            bodies = {f"m{i}": _body(m.schema) for i, m in enumerate(members)}
            try:
                compiled = _compile({"$defs": self.defs, "properties": bodies}, None)
            except ContractError:  # a member that is not JSON Schema: each reports its own error
                compiled = None
            for i, m in enumerate(members):
                if compiled is None:
                    m._group = None
                else:
                    m._compiled, m._key = compiled, f"m{i}"


def _group(schema: Mapping[str, Any]) -> _Group | None:
    """The group a lazily compiled schema joins: those whose ``$defs`` is a document's shared
    one, and whose root is no resource of its own (``$id`` would move where ``#/$defs`` points)."""
    defs = schema.get("$defs")
    if not isinstance(defs, _refs.SharedDefs) or "$id" in schema:
        return None
    group = getattr(defs, "group", None)
    if group is None:
        group = defs.group = _Group(defs)  # lives as long as the document's definitions
    return group


def _body(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ("$defs", "$schema")}


def _compile(schema: Mapping[str, Any], location: Location | None) -> Any:
    compiled = dict(schema)
    compiled.setdefault("$schema", _DRAFT_2020)
    try:
        return jsonschema_rs.validator_for(
            compiled,
            pattern_options=jsonschema_rs.FancyRegexOptions(
                backtrack_limit=BACKTRACK_LIMIT, size_limit=REGEX_SIZE_LIMIT
            ),
            retriever=_refuse_retrieval,
        )
    except (ValueError, TypeError, jsonschema_rs.ReferencingError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ContractError(f"invalid JSON Schema: {first}", location) from None


class _Member:
    """A group member's test: the group's compiled schema on ``{key: value}``."""

    __slots__ = ("_compiled", "_key")

    def __init__(self, compiled: Any, key: str) -> None:
        self._compiled = compiled
        self._key = key

    def is_valid(self, value: Any) -> bool:
        return bool(self._compiled.is_valid({self._key: value}))

    def iter_errors(self, value: Any) -> Iterator[Any]:
        return self._compiled.iter_errors({self._key: value})


class SchemaValidator:
    """A JSON Schema compiled once; ``is_valid`` / ``first`` / ``violations`` on the hot path.

    ``lazy`` compiles on first use; a lazy schema of a document's shared ``$defs`` is compiled
    with the others of its document (``_Group``)."""

    __slots__ = ("_compiled", "_group", "_key", "location", "schema")

    def __init__(
        self, schema: Mapping[str, Any], location: Location | None = None, lazy: bool = False
    ) -> None:
        self.schema = dict(schema)
        self.location = location
        self._compiled: Any = None
        self._key: str | None = None
        self._group = _group(self.schema) if lazy else None
        if self._group is not None:
            self._group.pending.append(self)
        else:
            self._compiled = _compile(_used_defs(self.schema), location)

    @property
    def _validator(self) -> Any:
        """The compiled test, built on first use where the schema was checked already."""
        if self._compiled is None:
            if self._group is not None:
                self._group.compile(self)
            if self._compiled is None:  # its group failed to compile: alone, with its location
                self._compiled = _compile(_used_defs(self.schema), self.location)
        if self._key is not None:
            return _Member(self._compiled, self._key)
        return self._compiled

    def is_valid(self, value: Any) -> bool:
        try:
            if self._key is not None:
                return bool(self._compiled.is_valid({self._key: value}))
            return bool(self._validator.is_valid(value))
        except (ValueError, TypeError, OverflowError):
            return False

    def first(self, value: Any) -> Violation | None:
        """The first violation, or ``None`` when the value is valid."""
        if self.is_valid(value):
            return None
        for violation in self.violations(value, limit=1):
            return violation
        return Violation((), "value cannot be validated (not plain JSON)", "type")

    def violations(self, value: Any, limit: int = MAX_VIOLATIONS) -> Iterator[Violation]:
        """Up to ``limit`` violations, in the validator's order."""
        try:
            errors = self._validator.iter_errors(value)
            for count, error in enumerate(errors):
                if count >= limit:
                    return
                yield _violation(error, self._key)
        except (ValueError, TypeError, OverflowError) as err:
            yield Violation((), f"value cannot be validated: {err}", "type")


def _violation(error: Any, key: str | None = None) -> Violation:
    """``key``: a group member's, whose value paths start at its key and schema paths at
    ``properties/key`` (unless a ``$ref`` led into the shared definitions)."""
    schema_path = tuple(error.schema_path)
    value_path = tuple(error.instance_path)
    if key is not None:
        value_path = value_path[1:]
        if schema_path[:2] == ("properties", key):
            schema_path = schema_path[2:]
    keyword = next((str(p) for p in reversed(schema_path) if isinstance(p, str)), "schema")
    message = str(error.message)
    if len(message) > 300:
        message = message[:297] + "..."
    return Violation(value_path, message, keyword, schema_path)


# -- OpenAPI's dialect --------------------------------------------------------------------------

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_OPENAPI_ONLY = ("nullable", "discriminator", "xml", "externalDocs", "example")
_DRAFT_2019_ONLY = ("$recursiveAnchor", "$recursiveRef")
"""2019-09's recursion keywords, which 2020-12 replaced; documents still write them (OpenAI's
``$recursiveAnchor: true``). Read past: a ``$recursiveRef`` then accepts any value."""


def normalize_openapi(schema: Any, version: str = "3.0") -> Any:
    """OpenAPI Schema Objects as JSON Schema 2020-12.

    3.0: ``nullable: true`` admits ``null``; boolean ``exclusiveMinimum``/``exclusiveMaximum``
    become numeric bounds; ``example`` and other annotations that 2020-12 does not know are
    dropped. 3.1 documents are already 2020-12 and pass through (``nullable`` still honoured,
    as many 3.1 documents keep it).
    """
    legacy = not str(version).startswith("3.1")
    return _normalize(schema, legacy, 0)


def _normalize(schema: Any, legacy: bool, depth: int) -> Any:
    if depth > 200 or not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {k: _normalize(v, legacy, depth + 1) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_normalize(v, legacy, depth + 1) for v in value]
        elif key in _SUBSCHEMA_ONE:
            if key == "items" and isinstance(value, list):  # draft-4 tuple form
                out["prefixItems"] = [_normalize(v, legacy, depth + 1) for v in value]
            else:
                out[key] = _normalize(value, legacy, depth + 1)
        elif key in _OPENAPI_ONLY or key in _DRAFT_2019_ONLY:
            continue
        elif key == "required" and isinstance(value, list):
            out[key] = list(dict.fromkeys(v for v in value if isinstance(v, str | int | float | bool)))
        else:
            out[key] = value
    # 3.0's boolean bounds, also where a 3.1 document still writes them (they mean one thing)
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(bound)
        if isinstance(flag, bool):
            del out[bound]
            if flag and limit in out:
                out[bound] = out.pop(limit)
    if schema.get("nullable") is True:
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"] if kind != "null" else kind
    elif isinstance(kind, list):
        if "null" not in kind:
            schema["type"] = [*kind, "null"]
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema
