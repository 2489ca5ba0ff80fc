"""REST conventions and OpenAPI ``links``, read as contracts.

An OpenAPI document says what each call accepts and returns, not what it needs or changes. REST
conventions fill that in, and every clause they produce is marked *inferred*:

- a **resource** is a path up to its last parameter (``/pets/{petId}``); its instances live in an
  inferred state collection named after the path (``pets``), keyed by the parameter(s);
- a **producer** (``POST /pets``) creates an instance whose key comes back in the response (the
  field matching the parameter: ``petId`` or ``id``), or in the request body where the client
  chooses it;
- a **consumer** (any call on ``/pets/{petId}`` or below it) requires that the instance exists
  (``error: 404``); ``DELETE`` on the item removes it;
- a **link** from a response to another operation whose key fields the response fills in means
  the response witnesses that instance: the linked resource holds it afterwards;
- a **lister** (``GET /pets`` answering an array, bare or in a ``data``-like envelope, of records
  shaped like the ``pets`` collection's) answers stored records: every record listed is the one
  stored under its key (a page or a filter may leave some out, so no more is claimed).

This module works on plain descriptions (``OpInfo``) and returns native-form clause dicts and
effect strings; ``openapi`` turns the document into those and builds the contract.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts.errors import Location

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PARAM_SEGMENT = re.compile(r"^\{([^{}]+)\}(?:\.(?:json|xml))?$")
# a format suffix on a path (Twilio's ``/Calls.json``, ``/Calls/{Sid}.json``) names no resource
_SUFFIX = re.compile(r"\.(?:json|xml)$")
# a wrapper field of enveloped responses (``{"data": {...}}``), preferred where there are several
_ENVELOPES = ("data", "item", "result", "resource")
# names the expression language reserves: built-ins and the call's own names
RESERVED = frozenset({"input", "output", "len", "all", "any", "sum", "implies", "true", "false", "null"})


@attrs.frozen(slots=True)
class ParamInfo:
    """One parameter of an operation as it appears in the operation's input."""

    name: str  # the input field name
    where: str  # path, query, header
    schema: Mapping[str, Any]  # bundled, normalized
    required: bool
    loc: Location
    wire_name: str = ""  # the name on the wire, when it differs from ``name``
    style: str = ""  # OpenAPI's serialization (``simple``, ``form``, ... or ``content``) and explode
    explode: bool = False


@attrs.frozen(slots=True)
class LinkInfo:
    """One OpenAPI link of a 2xx response: target operation and parameter expressions."""

    name: str
    target: str  # operation name
    parameters: Mapping[str, str]
    loc: Location


@attrs.frozen(slots=True)
class OpInfo:
    """What REST inference needs to know about one operation."""

    name: str
    method: str  # upper case
    path: str
    params: tuple[ParamInfo, ...]
    body: str | None  # None, "*" (flattened properties) or the field holding the whole body
    body_fields: tuple[str, ...]
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    errors: Mapping[int, str]
    loc: Location
    links: tuple[LinkInfo, ...] = ()
    created: bool = False  # the success response is 201 Created


@attrs.frozen(slots=True)
class Resource:
    """A REST resource: its state collection, its path template and its key."""

    name: str
    template: tuple[str, ...]  # literal segments, parameters as "{}"
    key_type: str  # "integer" or "string"
    composite: bool
    value_schema: Mapping[str, Any]
    loc: Location

    @property
    def depth(self) -> int:
        return sum(1 for s in self.template if s == "{}")


@attrs.frozen(slots=True)
class Inferred:
    """The inferred part of a contract: state declarations and per-operation clauses."""

    resources: Mapping[str, Resource]
    state: Mapping[str, dict[str, Any]]
    requires: Mapping[str, list[dict[str, Any]]]
    effects: Mapping[str, list[str]]
    ensures: Mapping[str, list[dict[str, Any]]]
    locs: Mapping[tuple[str, str, int], Location]  # (op, "requires"|"effects"|"ensures", index) -> where


def segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def param_of(segment: str) -> str | None:
    match = _PARAM_SEGMENT.match(segment)
    return match.group(1) if match else None


def field_ref(base: str, name: str) -> str:
    """``base.name`` where ``name`` is an identifier, else ``base["name"]``."""
    if _IDENT.match(name) and not keyword.iskeyword(name):
        return f"{base}.{name}"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{base}["{escaped}"]'


def identifier(text: str, taken: set[str]) -> str:
    """A state-variable name from a path segment, unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or "items"
    if base[0].isdigit():
        base = f"r_{base}"
    if keyword.iskeyword(base) or base in RESERVED:
        base = f"{base}_"
    name = base
    counter = 2
    while name in taken:
        name = f"{base}_{counter}"
        counter += 1
    return name


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 3:
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss") and len(name) > 1:
        return name[:-1]
    return name


def object_props(schema: Any, root: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], frozenset[str]]:
    """The properties and required names of an object schema (``allOf`` parts merged, refs followed
    inside ``root``, the bundled schema holding ``$defs``; ``schema`` itself by default).

    Of a ``oneOf``/``anyOf`` (PagerDuty's script-or-job automation action), the properties every
    branch declares, required where every branch requires them: what any of its values has.
    """
    if not isinstance(schema, Mapping):
        return {}, frozenset()
    props, required = _props(schema, schema if root is None else root, 0)
    return props, frozenset(required)


def _props(
    node: Any, root: Mapping[str, Any], depth: int, choices: bool = True
) -> tuple[dict[str, Any], set[str]]:
    props: dict[str, Any] = {}
    required: set[str] = set()
    if depth > 20 or not isinstance(node, Mapping):
        return props, required
    parts: list[Any] = []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        parts.append(_follow(root, ref))
    if isinstance(node.get("allOf"), list):
        parts.extend(node["allOf"])
    for part in parts:
        sub, names = _props(part, root, depth + 1, choices)
        for key, value in sub.items():
            props.setdefault(key, value)
        required |= names
    for word in ("oneOf", "anyOf"):
        branches = node.get(word)
        if not choices or not isinstance(branches, list) or not branches:
            continue
        each = [_props(b, root, depth + 1) for b in branches]
        common = set.intersection(*(set(p) for p, _ in each))
        for key in (k for k in each[0][0] if k in common):
            subs = [p[key] for p, _ in each]
            props.setdefault(key, subs[0] if all(s == subs[0] for s in subs) else {"anyOf": subs})
        required |= set.intersection(*(r for _, r in each)) & common
    properties = node.get("properties")
    for key, sub in properties.items() if isinstance(properties, Mapping) else ():
        props.setdefault(str(key), sub)
    listed = node.get("required")
    if isinstance(listed, list):
        required.update(r for r in listed if isinstance(r, str))
    return props, required


def _follow(root: Mapping[str, Any], ref: str) -> Any:
    current: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        else:
            return {}
    return current


def flat_object(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object schema with its ``$ref`` and ``allOf`` parts merged into one record schema.

    State records only describe what a collection holds; a flat record is what the type checker
    and the Z3 encoder read best. Schemas that are not plain compositions of objects stay as they are.
    """
    target = resolve(schema, schema)
    if not isinstance(target, Mapping) or any(k in target for k in ("oneOf", "anyOf", "not", "if")):
        return schema
    if "allOf" not in target and "$ref" not in schema:
        return schema
    props, required = object_props(schema)
    if not props or set(props) != set(_props(schema, schema, 0, choices=False)[0]):
        return schema  # a part is a choice (``oneOf``): kept whole, its branches' fields with it
    result: dict[str, Any] = {"type": "object", "properties": dict(props)}
    if required:
        result["required"] = [k for k in props if k in required]
    if isinstance(schema.get("$defs"), Mapping):
        result["$defs"] = schema["$defs"]
    return result


def envelope(schema: Mapping[str, Any], named: Sequence[str] = ()) -> tuple[str, dict[str, Any]] | None:
    """The wrapper field and the wrapped record schema of an enveloped response (PagerDuty's
    ``{"service": {...}}``: one object property; or a ``data``-like one among others, or one
    ``named`` after the resource: DigitalOcean's ``{"dedicated_inference": ..., "token": ...}``)."""
    props, _ = object_props(schema)
    objects = [k for k, v in props.items() if is_object(schema, v) and object_props(v, schema)[0]]
    # a field named after the resource is its envelope only where the answer holds nothing else
    # of its own (no scalar fields: a record may well have a nested record named like itself)
    wrappers = (
        (*_ENVELOPES, *named) if all(scalar_kind(schema, v) is None for v in props.values()) else _ENVELOPES
    )
    name = next((k for k in wrappers if k in objects), None)
    if name is None and len(props) == 1 and objects:
        name = objects[0]
    if name is None:
        return None
    inner: dict[str, Any] = {"allOf": [props[name]]}
    if isinstance(schema.get("$defs"), Mapping):
        inner["$defs"] = schema["$defs"]
    return name, inner


def _listed(root: Mapping[str, Any]) -> tuple[str, Any, bool] | None:
    """Where a response lists records, the items' schema, and whether the list may be missing
    (null): the response itself (an array) or its one array property (or one named like
    ``data`` among several)."""

    def items_of(schema: Any) -> Any:
        target = resolve(root, schema)
        if (
            isinstance(target, Mapping)
            and target.get("type") == "array"
            and isinstance(target.get("items"), Mapping)
        ):
            return target["items"]
        return None

    found = items_of(root)
    if found is not None:
        return "output", found, False
    props, required = object_props(root)
    arrays = {k: items_of(v) for k, v in props.items() if items_of(v) is not None}
    name = next((k for k in (*_ENVELOPES, "items") if k in arrays), None)
    if name is None and len(arrays) == 1:
        name = next(iter(arrays))
    if name is None:
        return None
    target = resolve(root, props[name])
    kinds = target.get("type") if isinstance(target, Mapping) else None
    nullable = isinstance(target, Mapping) and (
        target.get("nullable") is True or (isinstance(kinds, list) and "null" in kinds)
    )
    return field_ref("output", name), arrays[name], nullable or name not in required


def resolve(root: Mapping[str, Any], schema: Any, depth: int = 0) -> Any:
    while depth < 20 and isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        schema = _follow(root, ref)
        depth += 1
    return schema


def scalar_kind(root: Mapping[str, Any], schema: Any) -> str | None:
    """``integer``, ``string``, ``number``, ``boolean`` or None for a (resolved) schema."""
    schema = resolve(root, schema)
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind in ("integer", "string", "number", "boolean"):
        return str(kind)
    if (
        isinstance(schema.get("enum"), list)
        and schema["enum"]
        and all(isinstance(v, str) for v in schema["enum"])
    ):
        return "string"
    return None


def is_object(root: Mapping[str, Any], schema: Any, depth: int = 0) -> bool:
    schema = resolve(root, schema)
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return True
    if kind is None and ("properties" in schema or "allOf" in schema):
        return True
    # a choice among records (``oneOf: [ScriptAction, JobAction]``) is a record too
    branches = schema.get("oneOf", schema.get("anyOf"))
    return (
        kind is None
        and depth < 20
        and isinstance(branches, list)
        and bool(branches)
        and all(is_object(root, b, depth + 1) for b in branches)
    )


def shapes(schema: Any) -> set[frozenset[str]]:
    """The field sets a record of ``schema`` may be declared with: its own, and where it is a
    choice (Stripe's ``anyOf: [customer, deleted_customer]``), each branch's."""
    if not isinstance(schema, Mapping):
        return set()
    found = {frozenset(object_props(schema)[0])}
    node: Any = schema
    for _ in range(20):
        node = resolve(schema, node)
        parts = node.get("allOf") if isinstance(node, Mapping) else None
        if not (isinstance(parts, list) and len(parts) == 1):
            break
        node = parts[0]
    branches = node.get("oneOf", node.get("anyOf")) if isinstance(node, Mapping) else None
    for branch in branches if isinstance(branches, list) else ():
        found.add(frozenset(object_props(branch, schema)[0]))
    return {s for s in found if s}


class _Inference:
    def __init__(self, ops: Sequence[OpInfo], taken: set[str]) -> None:
        self.ops = list(ops)
        self.by_name = {op.name: op for op in ops}
        self.taken = set(taken)
        self.resources: dict[tuple[str, ...], Resource] = {}
        self.requires: dict[str, list[dict[str, Any]]] = {op.name: [] for op in ops}
        self.effects: dict[str, list[str]] = {op.name: [] for op in ops}
        self.ensures: dict[str, list[dict[str, Any]]] = {op.name: [] for op in ops}
        self.locs: dict[tuple[str, str, int], Location] = {}

    # -- resources ---------------------------------------------------------------------------

    @staticmethod
    def template(path: str) -> tuple[str, ...]:
        return tuple("{}" if param_of(s) is not None else _SUFFIX.sub("", s) for s in segments(path))

    @staticmethod
    def resource_template(path: str) -> tuple[str, ...] | None:
        """The path up to and including its last parameter segment; None without parameters."""
        parts = _Inference.template(path)
        last = max((i for i, s in enumerate(parts) if s == "{}"), default=None)
        return None if last is None else parts[: last + 1]

    def op_params(self, op: OpInfo, template: tuple[str, ...]) -> list[ParamInfo]:
        """The operation's path parameters that fill ``template``'s parameter segments, in order."""
        names = [param_of(s) for s in segments(op.path)[: len(template)]]
        by_wire = {p.wire_name or p.name: p for p in op.params if p.where == "path"}
        return [by_wire[n] for n in names if n is not None and n in by_wire]

    def collect(self) -> None:
        templates: dict[tuple[str, ...], list[OpInfo]] = {}
        for op in self.ops:
            tmpl = self.resource_template(op.path)
            if tmpl is not None:
                templates.setdefault(tmpl, []).append(op)
        # shallow templates first, so that the plainest path gets the plainest name
        for tmpl in sorted(templates, key=lambda t: (sum(1 for s in t if s == "{}"), len(t), t)):
            users = templates[tmpl]
            first = users[0]
            params = self.op_params(first, tmpl)
            if len(params) != sum(1 for s in tmpl if s == "{}"):
                continue  # a parameter segment not declared as a path parameter: leave it alone
            kinds = [scalar_kind(first.input_schema, p.schema) for p in params]
            composite = len(params) > 1 and all(k == "string" for k in kinds)
            key_kind = "string" if composite else (kinds[-1] if kinds[-1] in ("integer", "string") else None)
            if key_kind is None:
                continue
            literals = [s for s in tmpl if s != "{}"]
            base = literals[-1] if literals else "items"
            if any(self._name_base(r) == base for r in self.resources.values()) and len(params) > 1:
                base = base + "_" + "_".join(p.name for p in params[:-1]) if composite else base
            name = identifier(base, self.taken)
            self.taken.add(name)
            self.resources[tmpl] = Resource(
                name=name,
                template=tmpl,
                key_type=key_kind,
                composite=composite,
                value_schema=self.value_schema(tmpl, users),
                loc=first.loc,
            )

    @staticmethod
    def _name_base(resource: Resource) -> str:
        literals = [s for s in resource.template if s != "{}"]
        return literals[-1] if literals else "items"

    def value_schema(self, tmpl: tuple[str, ...], users: list[OpInfo]) -> Mapping[str, Any]:
        """What one instance looks like: the item GET's response, else a producer's, else anything."""
        candidates = [op for op in users if op.method == "GET" and self.template(op.path) == tmpl]
        candidates += [op for op in self.ops if op.method == "POST" and self.template(op.path) == tmpl[:-1]]
        records = []
        for op in candidates:
            if op.output_schema is not None and is_object(op.output_schema, op.output_schema):
                wrapped = envelope(op.output_schema, self.names_of(tmpl))
                records.append(flat_object(wrapped[1] if wrapped is not None else op.output_schema))
        # one kind of record before a choice of several (Stripe's customer, not the GET's
        # ``anyOf: [customer, deleted_customer]``)
        plain = [r for r in records if len(shapes(r)) <= 1]
        return (plain or records or [{}])[0]

    # -- keys ----------------------------------------------------------------------------------

    def key_expr(self, op: OpInfo, resource: Resource) -> str | None:
        params = self.op_params(op, resource.template)
        if not params:
            return None
        refs = [field_ref("input", p.name) for p in params]
        if resource.composite:
            return ' + "/" + '.join(refs)
        return refs[-1]

    def key_field(
        self, resource: Resource, param: str, schema: Mapping[str, Any] | None, named_alone: bool = False
    ) -> str | None:
        """The field of a record that holds the resource's key (``petId`` or ``id``)."""
        props, _ = object_props(schema)
        if param in props:
            return param
        lowered = param.lower()
        by_lower = {str(k).lower(): str(k) for k in props}
        if lowered in by_lower:
            return by_lower[lowered]  # ``{Sid}`` for a record's ``sid``
        for tail in ("sid", "uuid", "gid", "id", "name"):
            if lowered.endswith(tail) and tail in props:
                # ``{AccountSid}`` -> ``sid``, ``{serviceUuid}`` -> ``uuid``, ``{project_gid}`` ->
                # ``gid`` (Asana), ``{petId}`` -> ``id``
                return tail
        singular = _singular(self._name_base(resource))
        for candidate in (f"{singular}Id", f"{singular}_id", "id"):
            if candidate in props:
                return candidate
        if not named_alone:
            return None
        # ``{namespace_id}`` naming a record's ``namespace`` (DigitalOcean's functions): only in
        # an answer, where the record comes whole (a request's ``file`` is no file id)
        for tail in ("_id", "Id"):
            named = param[: -len(tail)]
            if (
                param.endswith(tail)
                and named in props
                and scalar_kind(schema or {}, props[named]) is not None
            ):
                return named
        return None

    def record_names(self, resource: Resource) -> tuple[str, ...]:
        """What an envelope field holding one of ``resource``'s records may be called."""
        return self.names_of(resource.template)

    @staticmethod
    def names_of(template: tuple[str, ...]) -> tuple[str, ...]:
        literals = [s for s in template if s != "{}"]
        singular = _singular(literals[-1] if literals else "items")
        return (singular, singular.replace("-", "_"))

    def kind_fits(self, resource: Resource, root: Mapping[str, Any], schema: Any) -> bool:
        return scalar_kind(root, schema) == resource.key_type

    # -- clauses ---------------------------------------------------------------------------------

    def add(self, op: OpInfo, part: str, item: Any, loc: Location) -> None:
        tables: dict[str, Mapping[str, list[Any]]] = {
            "requires": self.requires,
            "effects": self.effects,
            "ensures": self.ensures,
        }
        target = tables[part][op.name]
        if item in target:
            return
        self.locs[(op.name, part, len(target))] = loc
        target.append(item)

    def run(self) -> Inferred:
        self.collect()
        for op in self.ops:
            self.consumer(op)
            self.producer(op)
            self.flat_producer(op)
            self.collection_update(op)
            self.lister(op)
        for op in self.ops:
            for link in op.links:
                self.link(op, link)
        state = {
            r.name: {
                "collection": {"key": {"type": r.key_type}, "value": dict(r.value_schema)},
                "description": f"inferred from {'/' + '/'.join(r.template)}",
            }
            for r in self.resources.values()
        }
        return Inferred(
            resources={r.name: r for r in self.resources.values()},
            state=state,
            requires=self.requires,
            effects=self.effects,
            ensures=self.ensures,
            locs=self.locs,
        )

    def lister(self, op: OpInfo) -> None:
        if op.method != "GET" or op.output_schema is None:
            return
        tmpl = self.template(op.path)
        resource = self.resources.get((*tmpl, "{}"))
        if "{}" in tmpl or resource is None or resource.composite:
            return
        root = op.output_schema
        listed = _listed(root)
        if listed is None:
            return
        where, items, optional = listed
        item_schema: dict[str, Any] = {"allOf": [items]}
        if isinstance(root.get("$defs"), Mapping):
            item_schema["$defs"] = root["$defs"]
        props, required = object_props(item_schema)
        stored, _ = object_props(resource.value_schema)
        users = [o for o in self.ops if self.resource_template(o.path) == resource.template]
        params = self.op_params(users[0], resource.template) if users else []
        if not props or set(props) != set(stored) or not params:
            return
        field = self.key_field(resource, params[-1].name, item_schema)
        if field is None or not self.kind_fits(resource, item_schema, props[field]):
            return
        key = field_ref("x", field)
        # a list may show a summary: the required fields are the stored ones, the rest may be left out
        same = [
            f"{field_ref(f'{resource.name}[{key}]', name)} == {field_ref('x', name)}"
            for name in sorted(required)
            if name in props and name != field
        ]
        check = " and ".join([f"{key} in {resource.name}", *same])
        clause = f"all({check} for x in {where})"
        if optional:  # the document lets the answer leave the list out
            clause = f"{where} == null or {clause}"
        self.add(op, "ensures", {"check": clause, "inferred": True}, op.loc)

    def owner(self, op: OpInfo) -> Resource | None:
        tmpl = self.resource_template(op.path)
        return self.resources.get(tmpl) if tmpl is not None else None

    def consumer(self, op: OpInfo) -> None:
        resource = self.owner(op)
        if resource is None:
            return
        key = self.key_expr(op, resource)
        if key is None:
            return
        params = self.op_params(op, resource.template)
        loc = params[-1].loc if params else op.loc
        noun = _singular(resource.name).replace("_", " ")
        self.add(
            op,
            "requires",
            {
                "check": f"{key} in {resource.name}",
                "error": {"status": 404, "message": f"no such {noun}"},
                "inferred": True,
            },
            loc,
        )
        exact = self.template(op.path) == resource.template
        if exact and op.method == "DELETE":
            self.add(op, "effects", f"del {resource.name}[{key}]", loc)
        # a POST on an instance (Stripe's, Twilio's and OpenAI's update) stores what it answers
        # where that is the record itself: the same fields as the collection's
        if exact and op.method in ("PUT", "PATCH", "POST"):
            value = self.stored_value(op, resource, params[-1].name, same_record=op.method == "POST")
            if value is not None:  # the stored record is what the modify answers
                self.add(op, "effects", f"{resource.name}[{key}] = {value}", loc)
        # so does an action on it (``/invoices/{invoice}/finalize``); one answering 201 made a
        # new instance (Box's ``/files/{file_id}/copy``), stored under the key it answers
        if op.method == "POST" and len(self.template(op.path)) == len(resource.template) + 1:
            value = self.stored_value(op, resource, params[-1].name, same_record=True)
            answered = self.answered_key(op, resource, params) if op.created else None
            if answered is not None:
                self.add(op, "effects", f"{resource.name}[{answered[0]}] = {answered[1]}", loc)
            elif value is not None and not op.created:
                self.add(op, "effects", f"{resource.name}[{key}] = {value}", loc)
        if exact and op.method == "GET" and not resource.composite and op.output_schema is not None:
            field = self.key_field(resource, params[-1].name, op.output_schema)
            props, required = object_props(op.output_schema)
            if (
                field is not None
                and field in required
                and self.kind_fits(resource, op.output_schema, props[field])
            ):
                self.add(
                    op,
                    "ensures",
                    {"check": f"{field_ref('output', field)} == {key}", "inferred": True},
                    op.loc,
                )

    def producer(self, op: OpInfo) -> None:
        if op.method != "POST":
            return
        tmpl = self.template(op.path)
        resource = self.resources.get((*tmpl, "{}"))
        if resource is None:
            return
        parent = self.op_params(op, tmpl)
        sample = next((o for o in self.ops if self.resource_template(o.path) == resource.template), None)
        if sample is None:
            return
        own = self.op_params(sample, resource.template)
        if not own:
            return
        param = own[-1].name
        key, value, client = self.produced_key(op, resource, param)
        if key is None or value is None:
            return
        if resource.composite:
            if len(parent) != len(own) - 1:
                return
            key = ' + "/" + '.join([*(field_ref("input", p.name) for p in parent), key])
        elif parent and len(parent) != len(own) - 1:
            return
        if client and 409 in op.errors:
            self.add(
                op,
                "requires",
                {
                    "check": f"not ({key} in {resource.name})",
                    "error": {"status": 409, "message": op.errors.get(409) or "already exists"},
                    "inferred": True,
                },
                op.loc,
            )
        self.add(op, "effects", f"{resource.name}[{key}] = {value}", op.loc)

    def flat_producer(self, op: OpInfo) -> None:
        """``POST /projects/{project_gid}/sections`` creating a section that is fetched at
        ``/sections/{section_gid}`` (Asana's style): the one top-level collection named like the
        path's last segment stores what the call answers, where that is shaped like its records."""
        tmpl = self.template(op.path)
        if op.method != "POST" or "{}" not in tmpl or tmpl[-1] == "{}" or (*tmpl, "{}") in self.resources:
            return
        found = [
            r
            for r in self.resources.values()
            if r.depth == 1 and not r.composite and r.template[-2:] == (tmpl[-1], "{}")
        ]
        if len(found) != 1 or op.output_schema is None:
            return
        resource = found[0]
        sample = next((o for o in self.ops if self.resource_template(o.path) == resource.template), None)
        own = self.op_params(sample, resource.template) if sample is not None else []
        if not own:
            return
        key, value, client = self.produced_key(op, resource, own[-1].name)
        if key is None or value is None or client:
            return
        wrapped = envelope(op.output_schema, self.record_names(resource)) if value != "output" else None
        record = wrapped[1] if wrapped is not None else op.output_schema
        if self.same_record(record, resource):
            self.add(op, "effects", f"{resource.name}[{key}] = {value}", op.loc)

    def produced_key(self, op: OpInfo, resource: Resource, param: str) -> tuple[str | None, str | None, bool]:
        """Where a producer's new key is: (key expression, stored value, whether the client chose it)."""
        out_props, _ = object_props(op.output_schema) if op.output_schema is not None else ({}, frozenset())
        out_field = self.key_field(resource, param, op.output_schema) if out_props else None
        if out_field is not None and not self.kind_fits(
            resource, op.output_schema or {}, out_props[out_field]
        ):
            out_field = None
        in_field, in_base = self.body_key(op, resource, param)
        client = in_field is not None and in_base is not None and in_field in self.body_required(op)
        if out_field is not None and not client:
            value = "output" if op.output_schema and is_object(op.output_schema, op.output_schema) else "{}"
            return field_ref("output", out_field), value, False
        if in_field is not None and in_base is not None:
            return field_ref(in_base, in_field), in_base, True
        inner = self.enveloped_key(op, resource, param)
        if inner is not None and self.creates_in(op, resource, inner[1]):
            return inner[0], inner[1], False
        return None, None, False

    def creates_in(self, op: OpInfo, resource: Resource, wrapper: str) -> bool:
        """Whether an enveloped answer is a record of ``resource``'s: the envelope is named so
        (``data``, ``service`` for ``services``), or the record is shaped like the one fetching
        an instance answers; not ``{"agent": ...}`` answering an attach to the agent's functions
        (the collection's records may be read from that very answer: their shape tells nothing)."""
        if wrapper in [field_ref("output", n) for n in (*_ENVELOPES, *self.record_names(resource))]:
            return True
        wrapped = envelope(op.output_schema or {}, self.record_names(resource))
        return wrapped is not None and bool(shapes(wrapped[1]) & self.fetched_shapes(resource))

    def fetched_shapes(self, resource: Resource) -> set[frozenset[str]]:
        """The field sets of the records fetching an instance (``GET`` on its path) answers."""
        found: set[frozenset[str]] = set()
        for o in self.ops:
            if (
                o.method == "GET"
                and self.template(o.path) == resource.template
                and o.output_schema is not None
            ):
                record = envelope(o.output_schema, self.record_names(resource))
                found |= shapes(record[1] if record is not None else o.output_schema)
        return found

    def enveloped_key(self, op: OpInfo, resource: Resource, param: str) -> tuple[str, str] | None:
        """A response that wraps the record (``{"service": {...}}``, ``{"data": {...}}``): the
        key inside it and the wrapped record, as expressions over ``output``."""
        if op.output_schema is None:
            return None
        wrapped = envelope(op.output_schema, self.record_names(resource))
        if wrapped is None:
            return None
        name, inner = wrapped
        field = self.key_field(resource, param, inner, named_alone=True)
        props, _ = object_props(inner)
        # like a bare record's, the wrapped key may be written optional (a read-only ``id``): a
        # create that answers without it fails its step (``loader.effect``)
        if field is None or not self.kind_fits(resource, inner, props[field]):
            return None
        base = field_ref("output", name)
        return field_ref(base, field), base

    def answered_key(self, op: OpInfo, resource: Resource, params: list[ParamInfo]) -> tuple[str, str] | None:
        """The key of the record a call answers (the parent's from the path) and the record,
        where the answer is one of ``resource``'s records."""
        value = self.stored_value(op, resource, params[-1].name, same_record=True)
        if value is None or op.output_schema is None:
            return None
        wrapped = envelope(op.output_schema, self.record_names(resource)) if value != "output" else None
        record = wrapped[1] if wrapped is not None else op.output_schema
        field = self.key_field(resource, params[-1].name, record)
        props, _ = object_props(record)
        if field is None or not self.kind_fits(resource, record, props[field]):
            return None
        own = field_ref(value, field)
        if not resource.composite:
            return own, value
        return ' + "/" + '.join([*(field_ref("input", p.name) for p in params[:-1]), own]), value

    def stored_value(
        self, op: OpInfo, resource: Resource, param: str, same_record: bool = False
    ) -> str | None:
        """What a modify (``PUT``/``PATCH`` on an instance) leaves stored: the record it answers;
        with ``same_record``, only a record declaring the fields the collection's records do."""
        if op.output_schema is None or not is_object(op.output_schema, op.output_schema):
            return None
        field = self.key_field(resource, param, op.output_schema)
        if field is not None:
            value, record = "output", op.output_schema
        else:
            inner = self.enveloped_key(op, resource, param)
            if inner is None:
                return None
            wrapped = envelope(op.output_schema, self.record_names(resource))
            value, record = inner[1], wrapped[1] if wrapped is not None else {}
        if same_record and not self.same_record(record, resource):
            return None
        return value

    def same_record(self, record: Mapping[str, Any], resource: Resource) -> bool:
        """Whether ``record`` declares the fields a record of the collection does."""
        return bool(shapes(record) & (shapes(resource.value_schema) | self.fetched_shapes(resource)))

    @staticmethod
    def body_required(op: OpInfo) -> frozenset[str]:
        """The request body's required fields."""
        props, required = object_props(op.input_schema)
        if op.body == "*":
            return frozenset(r for r in required if r in op.body_fields)
        if op.body is not None and op.body in props:
            return object_props(props[op.body], op.input_schema)[1]
        return frozenset()

    def body_key(self, op: OpInfo, resource: Resource, param: str) -> tuple[str | None, str | None]:
        """The key field inside the request body, and the expression of the body itself."""
        if op.body is None:
            return None, None
        if op.body == "*":
            props, _ = object_props(op.input_schema)
            body_props = {k: v for k, v in props.items() if k in op.body_fields}
            field = self.key_field(resource, param, {"properties": body_props})
            if field is not None and self.kind_fits(resource, op.input_schema, body_props[field]):
                return field, "input"
            return None, None
        props, _ = object_props(op.input_schema)
        body_props, _ = object_props(props.get(op.body), op.input_schema)
        field = self.key_field(resource, param, {"properties": body_props})
        if field is not None and self.kind_fits(resource, op.input_schema, body_props[field]):
            return field, field_ref("input", op.body)
        return None, None

    def collection_update(self, op: OpInfo) -> None:
        """``PUT /pet`` with the pet (and its id) in the body, listing 404: it needs the pet to exist."""
        if op.method not in ("PUT", "PATCH") or 404 not in op.errors:
            return
        tmpl = self.template(op.path)
        resource = self.resources.get((*tmpl, "{}"))
        if resource is None or resource.composite or self.op_params(op, tmpl):
            return
        sample = next((o for o in self.ops if self.resource_template(o.path) == resource.template), None)
        own = self.op_params(sample, resource.template) if sample is not None else []
        if not own:
            return
        field, base = self.body_key(op, resource, own[-1].name)
        if field is None or base is None:
            return
        self.add(
            op,
            "requires",
            {
                "check": f"{field_ref(base, field)} in {resource.name}",
                "error": {"status": 404, "message": op.errors.get(404) or "not found"},
                "inferred": True,
            },
            op.loc,
        )

    def link(self, source: OpInfo, link: LinkInfo) -> None:
        """A response that fills in another operation's key witnesses that instance."""
        target = self.by_name.get(link.target)
        if target is None or source.output_schema is None:
            return
        resource = self.owner(target)
        if resource is None:
            return
        params = self.op_params(target, resource.template)
        if not params:
            return
        parts: list[str] = []
        for param in params if resource.composite else params[-1:]:
            expr = link.parameters.get(param.wire_name or param.name)
            ref = self.link_value(source, expr, resource) if isinstance(expr, str) else None
            if ref is None:
                return
            parts.append(ref)
        key = ' + "/" + '.join(parts)
        value = "output" if is_object(source.output_schema, source.output_schema) else "{}"
        if not is_object(resource.value_schema, resource.value_schema) and resource.value_schema:
            return
        self.add(source, "effects", f"{resource.name}[{key}] = {value}", link.loc)

    def link_value(self, source: OpInfo, expr: str, resource: Resource) -> str | None:
        """An expression for a runtime expression (``$response.body#/id``, ``$request.path.id``)."""
        if expr.startswith("$response.body#"):
            pointer = expr[len("$response.body#") :]
            fields = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/") if p]
            if not fields:
                return None
            schema: Any = source.output_schema
            root = source.output_schema or {}
            text = "output"
            for field in fields:
                if not is_object(root, schema):
                    return None
                props, required = object_props(schema, root)
                if field not in props or field not in required:
                    return None  # an optional field may be absent: the link cannot be relied on
                schema = props[field]
                text = field_ref(text, field)
            if not self.kind_fits(resource, root, schema) and not resource.composite:
                return None
            if resource.composite and scalar_kind(root, schema) != "string":
                return None
            return text
        for prefix in ("$request.path.", "$request.query.", "$request.header."):
            if expr.startswith(prefix):
                name = expr[len(prefix) :]
                match = next((p for p in source.params if (p.wire_name or p.name) == name), None)
                if match is None or not match.required:
                    return None
                if scalar_kind(source.input_schema, match.schema) not in (resource.key_type,):
                    return None
                return field_ref("input", match.name)
        return None


def infer(ops: Sequence[OpInfo], taken: set[str] | frozenset[str] = frozenset()) -> Inferred:
    """Inferred state and clauses for ``ops``; ``taken`` are state names already declared."""
    return _Inference(ops, set(taken)).run()
