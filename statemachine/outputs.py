"""Values drawn from JSON Schemas, and responses made to satisfy an operation's ``ensures``.

The simulator answers every accepted call with an output. Fields that ``ensures`` pins down
(``output.id == input.id``, ``output == pets[input.petId]``) are computed from the post-state;
the rest are drawn from the output schema, with Faker for strings that look like names, emails
or dates, all from one ``random.Random`` so that one seed gives the same bytes. Where an ensures
clause is not a plain equation, a small Z3 problem over the output's scalar fields is solved
(sub-expressions that do not mention ``output`` are evaluated concretely first, so the problem
stays tiny). The same schema sampler draws inputs for trajectory generation.

Imports from ``envfactory.contracts`` only (and Z3, lazily); never from ``envfactory.solver``.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import importlib
import random
import re
import string
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.model import Clause, Operation
from envfactory.contracts.values import FrozenMap, json_type

MAX_DEPTH = 12
"""Deepest schema nesting the sampler follows (recursive schemas stop here with the minimum)."""
MAX_NODES = 2000
"""Most values one draw builds; past it nested values are null (a recursive schema cannot explode)."""
_INT_SPAN = 1000
_ATTEMPTS = 8

Path = tuple[str, ...]


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts; stable across processes and Python hash seeds."""
    text = ":".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1


_FAKERS = threading.local()


def faker_instance() -> Any:
    """One Faker per thread (building one costs ~0.2 s); reseeded before every use, and never
    shared between threads, so a server thread and a test thread cannot disturb each other."""
    fake = getattr(_FAKERS, "faker", None)
    if fake is None:
        from faker import Faker

        fake = _FAKERS.faker = Faker("en_US")
    return fake


# ------------------------------------------------------------------------------------ regexes


def sample_regex(pattern: str, rng: random.Random, max_repeat: int = 6) -> str | None:
    """A string that ``re.search(pattern)`` finds, or None for constructs not handled here."""
    sre_parse: Any = importlib.import_module("re._parser")
    sre_c: Any = importlib.import_module("re._constants")
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    groups: dict[int, str] = {}
    out: list[str] = []
    categories = {
        sre_c.CATEGORY_DIGIT: string.digits,
        sre_c.CATEGORY_NOT_DIGIT: string.ascii_letters,
        sre_c.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
        sre_c.CATEGORY_NOT_WORD: " -.",
        sre_c.CATEGORY_SPACE: " ",
        sre_c.CATEGORY_NOT_SPACE: string.ascii_letters,
    }
    printable = string.ascii_letters + string.digits

    class _Unsupported(Exception):
        pass

    def pick_in(items: Sequence[Any]) -> str:
        negate = False
        chars: list[str] = []
        for op, arg in items:
            if op is sre_c.NEGATE:
                negate = True
            elif op is sre_c.LITERAL:
                chars.append(chr(arg))
            elif op is sre_c.RANGE:
                lo, hi = arg
                chars.extend(chr(c) for c in range(lo, min(hi, lo + 200) + 1))
            elif op is sre_c.CATEGORY:
                chars.extend(categories.get(arg, printable))
            else:
                raise _Unsupported
        if negate:
            banned = set(chars)
            allowed = [c for c in printable if c not in banned]
            if not allowed:
                raise _Unsupported
            return rng.choice(allowed)
        if not chars:
            raise _Unsupported
        return rng.choice(chars)

    def emit(seq: Any, depth: int) -> None:
        if depth > 50:
            raise _Unsupported
        for op, arg in seq:
            if op is sre_c.LITERAL:
                out.append(chr(arg))
            elif op is sre_c.NOT_LITERAL:
                out.append(rng.choice([c for c in printable if c != chr(arg)]))
            elif op is sre_c.ANY:
                out.append(rng.choice(printable))
            elif op is sre_c.IN:
                out.append(pick_in(arg))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
                lo, hi, sub = arg
                top = lo + max_repeat if hi is sre_c.MAXREPEAT or hi > lo + max_repeat else hi
                for _ in range(rng.randint(lo, top)):
                    emit(sub, depth + 1)
            elif op is sre_c.SUBPATTERN:
                group, _add, _del, sub = arg
                start = len(out)
                emit(sub, depth + 1)
                if group is not None:
                    groups[group] = "".join(out[start:])
            elif op is sre_c.BRANCH:
                emit(rng.choice(arg[1]), depth + 1)
            elif op is sre_c.AT:
                continue
            elif op is sre_c.GROUPREF:
                out.append(groups.get(arg, ""))
            elif op is sre_c.CATEGORY:
                out.append(rng.choice(categories.get(arg, printable)))
            else:
                raise _Unsupported

    try:
        emit(parsed, 0)
    except (_Unsupported, IndexError, ValueError):
        return None
    return "".join(out)


# ------------------------------------------------------------------------------- schema sampler


_NAME_HINTS: tuple[tuple[str, str], ...] = (
    ("email", "email"),
    ("first_name", "first_name"),
    ("firstname", "first_name"),
    ("last_name", "last_name"),
    ("lastname", "last_name"),
    ("owner", "name"),
    ("assignee", "user_name"),
    ("user", "user_name"),
    ("name", "first_name"),
    ("city", "city"),
    ("country", "country"),
    ("address", "street_address"),
    ("phone", "phone_number"),
    ("company", "company"),
    ("title", "sentence"),
    ("description", "sentence"),
    ("message", "sentence"),
    ("comment", "sentence"),
    ("url", "url"),
    ("tag", "word"),
)
_FORMATS = {
    "email": "email",
    "uri": "url",
    "url": "url",
    "uuid": "uuid4",
    "hostname": "hostname",
    "ipv4": "ipv4",
    "ipv6": "ipv6",
}


_CLOCK_FORMATS = frozenset({"date-time", "date", "time"})
LATEST_TIMESTAMP = 1_893_456_000
"""Sampled dates fall between 1970 and 2030-01-01 (UTC)."""


class Sampler:
    """Draws JSON values from a schema with one ``random.Random`` (and Faker reseeded from it)."""

    def __init__(self, rng: random.Random, numbers: Sequence[int] = ()) -> None:
        self.rng = rng
        self.numbers = list(numbers)
        self._faker: Any = None
        self._nodes = 0

    def reseed(self, seed: int) -> None:
        self.rng.seed(seed)
        self._faker = None

    def faker(self) -> Any:
        if self._faker is None:
            fake = faker_instance()
            fake.seed_instance(self.rng.getrandbits(48))
            self._faker = fake
        return self._faker

    def value(self, schema: Any, root: Any = None, name: str | None = None, depth: int = 0) -> Any:
        """A value for ``schema`` (``root`` is where ``#/...`` references resolve)."""
        root = schema if root is None else root
        if depth == 0:
            self._nodes = 0
        self._nodes += 1
        if self._nodes > MAX_NODES:
            return None
        if schema is True or schema is None or schema == {}:
            return self._any(depth)
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_pointer(root, ref)
            if target is None:
                return None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            resolved = {**target, **rest} if rest and isinstance(target, Mapping) else target
            return self.value(resolved, root, name, depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            return self.rng.choice(schema["enum"])
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                branch = self.rng.choice(schema[key])
                rest = {k: v for k, v in schema.items() if k != key}
                return self.value(_merge(rest, branch), root, name, depth + 1)
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, Mapping) and isinstance(part.get("$ref"), str):
                    part = resolve_pointer(root, part["$ref"]) or {}
                merged = _merge(merged, part)
            return self.value(merged, root, name, depth + 1)
        kind = self._kind(schema)
        if kind == "null":
            return None
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "integer":
            return self.integer(schema)
        if kind == "number":
            return self.number(schema)
        if kind == "string":
            return self.string(schema, name)
        if kind == "array":
            return self.array(schema, root, depth)
        if kind == "object":
            return self.object(schema, root, depth)
        return self._any(depth)

    def _kind(self, schema: Mapping[str, Any]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            kinds = [k for k in declared if isinstance(k, str)]
            if not kinds:
                return "any"
            non_null = [k for k in kinds if k != "null"]
            if "null" in kinds and (not non_null or self.rng.random() < 0.2):
                return "null"
            return self.rng.choice(non_null)
        if isinstance(declared, str):
            return declared
        if "properties" in schema or "required" in schema:
            return "object"
        if "items" in schema:
            return "array"
        if "pattern" in schema or "minLength" in schema or "format" in schema:
            return "string"
        if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
            return "integer"
        return "any"

    def _any(self, depth: int) -> Any:
        return self.rng.choice([self.rng.randint(0, 100), self.faker().word(), self.rng.random() < 0.5])

    def integer(self, schema: Mapping[str, Any]) -> int:
        lo, hi = _int_bounds(schema)
        if lo is None and hi is None:
            lo, hi = 0, _INT_SPAN
        elif lo is None:
            assert hi is not None
            lo = hi - _INT_SPAN
        elif hi is None:
            hi = lo + _INT_SPAN
        if hi < lo:
            return lo
        multiple = schema.get("multipleOf")
        roll = self.rng.random()
        if self.numbers and roll < 0.3:
            fits = [n for n in self.numbers if lo <= n <= hi]
            if fits:
                return self.rng.choice(fits)
        value = self.rng.randint(lo, min(hi, lo + 20)) if roll < 0.65 else self.rng.randint(lo, hi)
        if isinstance(multiple, int) and not isinstance(multiple, bool) and multiple > 0:
            value = lo + (-lo % multiple) + ((value - lo) // multiple) * multiple
            if value > hi:
                value = hi - (hi % multiple)
        return value

    def number(self, schema: Mapping[str, Any]) -> float:
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        hi = schema.get("maximum", schema.get("exclusiveMaximum", float(lo) + _INT_SPAN))
        if not isinstance(lo, int | float) or isinstance(lo, bool):
            lo = 0
        if not isinstance(hi, int | float) or isinstance(hi, bool) or hi < lo:
            hi = float(lo) + _INT_SPAN
        return round(self.rng.uniform(float(lo), float(hi)), 2)

    def string(self, schema: Mapping[str, Any], name: str | None) -> str:
        lo = schema.get("minLength", 0)
        hi = schema.get("maxLength")
        lo = lo if isinstance(lo, int) and not isinstance(lo, bool) and lo >= 0 else 0
        hi = hi if isinstance(hi, int) and not isinstance(hi, bool) and hi >= lo else None
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            for _ in range(_ATTEMPTS):
                text = sample_regex(pattern, self.rng)
                if text is not None and lo <= len(text) and (hi is None or len(text) <= hi):
                    return text
        text = self._faked(schema.get("format"), name)
        if len(text) < lo:
            text = text + "".join(self.rng.choice(string.ascii_lowercase) for _ in range(lo - len(text)))
        if hi is not None and len(text) > hi:
            text = text[:hi]
        return text

    def _faked(self, fmt: Any, name: str | None) -> str:
        if fmt in _CLOCK_FORMATS:
            return self._moment(fmt)
        fake = self.faker()
        provider = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        if provider is None and name:
            lowered = name.lower()
            provider = next((p for hint, p in _NAME_HINTS if hint in lowered), None)
        if provider == "sentence":
            return str(fake.sentence(nb_words=4)).rstrip(".")
        if provider is not None:
            return str(getattr(fake, provider)())
        return str(fake.word())

    def _moment(self, fmt: str) -> str:
        """An RFC 3339 ``date-time``, ``date`` or ``time`` in UTC, drawn from the seed alone.

        Not Faker's: it draws up to the wall clock and formats in the machine's time zone, so
        the same seed would give other bytes on another day or machine (and no UTC offset)."""
        moment = datetime.datetime.fromtimestamp(self.rng.randrange(LATEST_TIMESTAMP), tz=datetime.UTC)
        if fmt == "date":
            return moment.date().isoformat()
        if fmt == "time":
            return moment.timetz().isoformat()
        return moment.isoformat()

    def array(self, schema: Mapping[str, Any], root: Any, depth: int) -> list[Any]:
        lo = schema.get("minItems", 0)
        hi = schema.get("maxItems")
        lo = lo if isinstance(lo, int) and lo >= 0 else 0
        hi = hi if isinstance(hi, int) and hi >= lo else lo + 3
        items = schema.get("items", {})
        count = self.rng.randint(lo, min(hi, lo + 3))
        result = [self.value(items, root, None, depth + 1) for _ in range(count)]
        if schema.get("uniqueItems"):
            unique: list[Any] = []
            for item in result:
                if item not in unique:
                    unique.append(item)
            result = unique
        return result

    def object(self, schema: Mapping[str, Any], root: Any, depth: int) -> dict[str, Any]:
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        result: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required or self.rng.random() < 0.5:
                result[key] = self.value(sub, root, key, depth + 1)
        for key in sorted(k for k in required if k not in result and isinstance(k, str)):
            result[key] = self._any(depth)
        return result


def _int_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    def num(key: str) -> float | None:
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        return None

    lo: int | None = None
    hi: int | None = None
    minimum, maximum = num("minimum"), num("maximum")
    ex_min, ex_max = num("exclusiveMinimum"), num("exclusiveMaximum")
    if schema.get("exclusiveMinimum") is True and minimum is not None:  # OpenAPI 3.0 style
        ex_min, minimum = minimum, None
    if schema.get("exclusiveMaximum") is True and maximum is not None:
        ex_max, maximum = maximum, None
    import math

    if minimum is not None:
        lo = math.ceil(minimum)
    if ex_min is not None:
        candidate = math.floor(ex_min) + 1
        lo = candidate if lo is None else max(lo, candidate)
    if maximum is not None:
        hi = math.floor(maximum)
    if ex_max is not None:
        candidate = math.ceil(ex_max) - 1
        hi = candidate if hi is None else min(hi, candidate)
    return lo, hi


def _merge(a: Mapping[str, Any], b: Any) -> dict[str, Any]:
    if not isinstance(b, Mapping):
        return dict(a)
    merged = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = {**merged[key], **value}
        elif key == "required" and isinstance(merged.get(key), list) and isinstance(value, list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        else:
            merged[key] = value
    return merged


def resolve_pointer(root: Any, ref: str, missing: Any = None) -> Any:
    """The schema a local ``#/a/b`` reference points to inside ``root``, or ``missing``."""
    if not ref.startswith("#"):
        return missing
    node = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return missing
    return node


def schema_at(schema: Any, path: Path, root: Any = None) -> Any:
    """The sub-schema that describes ``path`` inside values of ``schema`` (``{}`` if unknown)."""
    root = schema if root is None else root
    node = schema
    for part in path:
        node = _deref(node, root)
        props = node.get("properties") if isinstance(node, Mapping) else None
        if not isinstance(props, Mapping) or part not in props:
            return {}
        node = props[part]
    return _deref(node, root)


def _deref(node: Any, root: Any) -> Any:
    for _ in range(MAX_DEPTH):
        if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            node = resolve_pointer(root, node["$ref"]) or {}
        else:
            break
    return node


# ------------------------------------------------------------------------------ key analysis


@attrs.frozen(slots=True)
class KeyUse:
    """An input field the clauses use as a key of a collection, and whether it must be new."""

    path: Path
    collection: str
    fresh: bool | None  # True: must be absent; False: must exist; None: either


def key_uses(op: Operation, collections: frozenset[str]) -> list[KeyUse]:
    """Where ``op``'s requires and effects read an input field as a key of a collection."""
    found: dict[tuple[Path, str], bool | None] = {}

    def note(path: Path | None, coll: ir.Expr, fresh: bool | None) -> None:
        if not path or not (isinstance(coll, ir.Name) and coll.id in collections):
            return
        key = (path, coll.id)
        if key not in found or found[key] is None:
            found[key] = fresh

    def visit(node: ir.Expr, negated: bool) -> None:
        if isinstance(node, ir.Unary) and node.op == "not":
            visit(node.operand, not negated)
            return
        if isinstance(node, ir.Compare) and node.op in ("in", "not in"):
            absent = (node.op == "not in") != negated
            note(ir.field_path(node.left, "input"), node.right, absent)
        if isinstance(node, ir.Index):
            note(ir.field_path(node.key, "input"), node.obj, False)
        for child in ir.children(node):
            visit(child, negated if isinstance(node, ir.BoolOp) else False)

    for clause in op.requires:
        visit(clause.expr, False)
    for effect in op.effects:
        if effect.target.key is not None:
            note(
                ir.field_path(effect.target.key, "input"),
                ir.Name(effect.target.var),
                None if effect.value is not None else False,
            )
        if effect.value is not None:
            visit(effect.value, False)
    return [KeyUse(path, coll, fresh) for (path, coll), fresh in found.items()]


# --------------------------------------------------------------------------- ensures -> outputs


def set_path(value: Any, path: Path, new: Any) -> Any:
    """``value`` with ``path`` set to ``new`` (a changed copy; missing records are created)."""
    if not path:
        return new
    base = dict(value) if isinstance(value, Mapping) else {}
    head, rest = path[0], path[1:]
    base[head] = set_path(base.get(head), rest, new)
    return base


def plain_copy(value: Any) -> Any:
    """A deep copy of a JSON value (collections become plain dicts with their keys)."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


class _Plan:
    """What ``ensures`` fixes for one operation: (path, compiled right side) pairs, outermost first."""

    __slots__ = ("assign", "rest", "root")

    def __init__(self, op: Operation) -> None:
        self.root = op.output_schema
        assign: list[tuple[Path, Callable[[Env], Any]]] = []
        rest: list[ir.Expr] = []
        for clause in op.ensures:
            for part in ir.conjuncts(clause.expr):
                pair = ir.pinned_output(part)
                if pair is None:
                    rest.append(part)
                else:
                    assign.append((pair[0], compile_expr(pair[1])))
        assign.sort(key=lambda item: len(item[0]))
        self.assign = assign
        self.rest = rest


class OutputSynthesizer:
    """Builds an operation's output: schema sample, then the fields ``ensures`` pins, then Z3."""

    def __init__(self, operations: Mapping[str, Operation], collections: Sequence[str] = ()) -> None:
        self._plans = {name: _Plan(op) for name, op in operations.items()}
        self._collections = tuple(collections)
        names = frozenset(collections)
        self._reads = {
            name: [u for u in key_uses(op, names) if u.fresh is not True] for name, op in operations.items()
        }
        self._writes = {
            name: [
                (e.target.var, compile_expr(e.target.key))
                for e in sorted(op.effects, key=lambda e: len(e.target.fields))
                if e.target.key is not None
                and e.value is not None
                and "output" not in ir.free_names(e.target.key)
            ]
            for name, op in operations.items()
        }

    def output(
        self,
        op: Operation,
        state: FrozenMap,
        input: Any,
        sampler: Sampler,
        base: Any = None,
        pre: FrozenMap | None = None,
    ) -> Any:
        """An output for ``op`` after it ran into ``state`` (the post-state) on ``input``.

        ``base`` replaces the schema sample (used by producers whose output was drawn before the
        effects); ``pre``, the pre-state, lets the record an effect wrote be echoed. The result
        satisfies the ensures clauses whenever this module can solve them; the caller re-checks.
        """
        plan = self._plans[op.name]
        value = base
        if value is None and op.output_schema is not None:
            value = _echo_input(op, _valid_sample(op, sampler), input)
            value = self._echo_state(op, value, state, input, pre)
        env = Env(state, input)
        for path, fn in plan.assign:
            try:
                value = set_path(value, path, plain_copy(fn(env)))
            except EvaluationError:
                continue
        if op.ensures and not clauses_hold(op.ensures, state, input, value):
            solved = solve_output(op, plan.rest or [c.expr for c in op.ensures], state, input, value)
            if solved is not None:
                value = solved
        return value

    def _records(self, op: Operation, state: FrozenMap, input: Any, pre: FrozenMap | None) -> Iterator[Any]:
        """The records the call wrote (keys evaluated on the pre-state), then those it read."""
        if pre is not None:
            env = Env(pre, input)
            for var, key_fn in self._writes[op.name]:
                collection = state.get(var)
                try:
                    key = key_fn(env)
                    if isinstance(collection, FrozenMap):
                        yield collection.get(key)
                except (EvaluationError, TypeError):
                    continue
        for use in self._reads[op.name]:
            collection = state.get(use.collection)
            if isinstance(collection, FrozenMap):
                try:
                    yield collection.get(get_path(input, use.path))
                except TypeError:
                    continue

    def _echo_state(
        self, op: Operation, value: Any, state: FrozenMap, input: Any, pre: FrozenMap | None
    ) -> Any:
        """What the API holds, where the schema admits it: the record the call wrote or the
        input's key names (``GET /pets/{id}`` answers with that pet), or a collection's records
        for a list."""
        validator = op.output_validator
        if isinstance(value, dict):
            for record in self._records(op, state, input, pre):
                if isinstance(record, dict):
                    props = _properties(op.output_schema)
                    shown = {k: plain_copy(v) for k, v in record.items() if props is None or k in props}
                    if not shown:
                        continue
                    for candidate in (shown, {**value, **shown}):
                        if validator is None or validator.is_valid(candidate):
                            return candidate
        elif isinstance(value, list):
            for name in self._collections:
                collection = state.get(name)
                if isinstance(collection, FrozenMap):
                    items = [plain_copy(v) for v in collection.values()]
                    if validator is None or validator.is_valid(items):
                        return items
        return value


def _properties(schema: Any) -> frozenset[str] | None:
    """The property names an object schema declares (None when it declares none)."""
    node = _deref(schema, schema)
    props = node.get("properties") if isinstance(node, Mapping) else None
    return frozenset(props) if isinstance(props, Mapping) and props else None


def _valid_sample(op: Operation, sampler: Sampler) -> Any:
    schema = op.output_schema
    validator = op.output_validator
    value = sampler.value(schema, schema)
    for _ in range(_ATTEMPTS):
        if validator is None or validator.is_valid(value):
            return value
        value = sampler.value(schema, schema)
    return value


def _echo_input(op: Operation, value: Any, input: Any) -> Any:
    """Free output fields named like input fields take the input's value (an API echoes what it
    was given: the title of the ticket just created), where the schema admits it."""
    if not (isinstance(value, dict) and isinstance(input, Mapping)):
        return value
    shared = [k for k in value if k in input]
    if not shared:
        return value
    echoed = {**value, **{k: plain_copy(input[k]) for k in shared}}
    validator = op.output_validator
    return echoed if validator is None or validator.is_valid(echoed) else value


def clauses_hold(clauses: Sequence[Clause], state: FrozenMap, input: Any, output: Any = None) -> bool:
    """Whether every clause is true here; one the evaluator cannot evaluate (a missing key, a
    wrong type) does not hold."""
    env = Env(state, input, output)
    for clause in clauses:
        try:
            if clause.fn(env) is not True:
                return False
        except EvaluationError:
            return False
    return True


# ----------------------------------------------------------------------------- the Z3 fallback


class _Unsupported(Exception):
    """A construct outside the small fragment solved here."""


def solve_output(
    op: Operation, exprs: Sequence[ir.Expr], state: FrozenMap, input: Any, current: Any, timeout_ms: int = 500
) -> Any:
    """Output scalars chosen by Z3 so that ``exprs`` hold; None when out of reach.

    Sub-expressions without ``output`` are evaluated concretely; output paths become Z3 variables
    (sorts from the output schema) with the schema's bounds; the current values are soft goals,
    so fields move only where a clause forces them.
    """
    try:
        import z3

        from envfactory.statemachine._z3_literal import evaluated, z3_literal
    except ImportError:  # pragma: no cover
        return None
    env = Env(state, input, current)
    variables: dict[Path, Any] = {}
    schema = op.output_schema or {}

    def var(path: Path) -> Any:
        if path in variables:
            return variables[path]
        sub = schema_at(schema, path)
        kind = sub.get("type") if isinstance(sub, Mapping) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind is None:
            kind = _scalar_kind(get_path(current, path))
        name = "output." + ".".join(path)
        if kind == "integer":
            v = z3.Int(name)
        elif kind == "number":
            v = z3.Real(name)
        elif kind == "boolean":
            v = z3.Bool(name)
        elif kind == "string":
            v = z3.String(name)
        else:
            raise _Unsupported(f"output.{'.'.join(path)} is not a scalar")
        variables[path] = v
        return v

    def lit(value: Any) -> Any:
        scalar = z3_literal(value)
        if scalar is None:
            raise _Unsupported("not a scalar")
        return scalar

    def enc(node: ir.Expr) -> Any:
        if "output" not in ir.free_names(node):
            try:
                return lit(compile_expr(node)(env))
            except EvaluationError as err:
                raise _Unsupported(str(err)) from None
        path = ir.field_path(node, "output")
        if path is not None:
            if not path:
                raise _Unsupported("whole output")
            return var(path)
        if isinstance(node, ir.Compare):
            left, right = enc(node.left), enc(node.right)
            ops: dict[str, Callable[[Any, Any], Any]] = {
                "==": lambda a, b: a == b,
                "!=": lambda a, b: a != b,
                "<": lambda a, b: a < b,
                "<=": lambda a, b: a <= b,
                ">": lambda a, b: a > b,
                ">=": lambda a, b: a >= b,
                "in": lambda a, b: z3.Contains(b, a),
                "not in": lambda a, b: z3.Not(z3.Contains(b, a)),
            }
            return ops[node.op](left, right)
        if isinstance(node, ir.BinOp) and node.op in ("+", "-", "*"):
            left, right = enc(node.left), enc(node.right)
            if node.op == "+":
                return z3.Concat(left, right) if z3.is_string(left) else left + right
            return left - right if node.op == "-" else left * right
        if isinstance(node, ir.BoolOp):
            parts = [enc(o) for o in node.operands]
            return z3.And(*parts) if node.op == "and" else z3.Or(*parts)
        if isinstance(node, ir.Unary):
            inner = enc(node.operand)
            if node.op == "not":
                return z3.Not(inner)
            return -inner if node.op == "-" else inner
        if isinstance(node, ir.IfExp):
            return z3.If(enc(node.test), enc(node.body), enc(node.orelse))
        if isinstance(node, ir.Call):
            args = [enc(a) for a in node.args]
            if node.func == "implies":
                return z3.Implies(args[0], args[1])
            if node.func == "len" and z3.is_string(args[0]):
                return z3.Length(args[0])
            if node.func == "startswith":
                return z3.PrefixOf(args[1], args[0])
            if node.func == "endswith":
                return z3.SuffixOf(args[1], args[0])
            if node.func == "abs":
                return z3.If(args[0] >= 0, args[0], -args[0])
            if node.func in ("min", "max"):
                a, b = args
                return z3.If(a <= b, a, b) if node.func == "min" else z3.If(a >= b, a, b)
        raise _Unsupported(type(node).__name__)

    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    try:
        for expr in exprs:
            opt.add(enc(expr))
    except (_Unsupported, z3.Z3Exception, KeyError, TypeError):
        return None
    for path, v in variables.items():
        _bound(z3, opt, v, schema_at(schema, path))
        now = get_path(current, path)
        if now is not None and not isinstance(now, dict | list):
            with contextlib.suppress(_Unsupported, z3.Z3Exception):
                opt.add_soft(v == lit(now))
    if opt.check() != z3.sat:
        return None
    model = opt.model()
    value = current
    for path, v in variables.items():
        got = evaluated(model, v)
        value = set_path(value, path, _from_z3(z3, got))
    return value


def _bound(z3: Any, opt: Any, v: Any, sub: Any) -> None:
    if not isinstance(sub, Mapping):
        return
    if z3.is_int(v) or z3.is_real(v):
        lo, hi = _int_bounds(sub)
        if lo is not None:
            opt.add(v >= lo)
        if hi is not None:
            opt.add(v <= hi)
    if z3.is_string(v):
        if isinstance(sub.get("minLength"), int):
            opt.add(z3.Length(v) >= sub["minLength"])
        if isinstance(sub.get("maxLength"), int):
            opt.add(z3.Length(v) <= sub["maxLength"])
    enum = sub.get("enum")
    if isinstance(enum, list) and enum:
        options = []
        for item in enum:
            if isinstance(item, str) and z3.is_string(v):
                options.append(v == z3.StringVal(item))
            elif isinstance(item, int) and not isinstance(item, bool) and z3.is_int(v):
                options.append(v == item)
        if options:
            opt.add(z3.Or(*options))


def _from_z3(z3: Any, got: Any) -> Any:
    if z3.is_true(got):
        return True
    if z3.is_false(got):
        return False
    if z3.is_int_value(got):
        return got.as_long()
    if z3.is_rational_value(got):
        return float(got.numerator_as_long()) / float(got.denominator_as_long())
    if z3.is_string_value(got):
        return str(got.as_string())
    return None


def get_path(value: Any, path: Path) -> Any:
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


__all__ = [
    "KeyUse",
    "OutputSynthesizer",
    "Sampler",
    "derive_seed",
    "key_uses",
    "plain_copy",
    "resolve_pointer",
    "sample_regex",
    "schema_at",
    "set_path",
    "solve_output",
]


def _scalar_kind(value: Any) -> str | None:
    kind = json_type(value)
    return kind if kind in ("boolean", "integer", "number", "string") else None
