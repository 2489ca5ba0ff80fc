"""Values drawn from JSON Schemas: the seeded sampler behind generated inputs and outputs.

Strings that look like names, emails or dates come from Faker, everything from one
``random.Random``, so that one seed gives the same bytes. Imports from ``envfactory.contracts``
only.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib
import random
import re
import string
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from envfactory.statemachine.paths import MAX_DEPTH, deref, merge_schemas, resolve_pointer

MAX_NODES = 2000
"""Most values one draw builds; past it nested values are null (a recursive schema cannot explode)."""
_INT_SPAN = 1000
_INT64 = (-(2**63), 2**63 - 1)
MAX_HOPS = 3 * MAX_DEPTH
"""References and compositions followed at one nesting depth at most (a cycle of references)."""
LEAN_DEPTH = 6
"""Below this nesting depth the sampler draws lean values (see ``Sampler._lean``)."""
ATTEMPTS = 8
"""Draws tried until one validates."""


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


@functools.cache
def _words() -> tuple[str, ...]:
    """Faker's English word list: a plain word is drawn from it with the sampler's own
    ``random``, without making or seeding a Faker (its ``word()`` drew the same uniform choice
    through its weighted-sampling machinery, at ten times the cost: a fifth of ``generate``'s
    time on Stripe)."""
    from faker.providers.lorem.en_US import Provider

    return tuple(Provider.word_list)


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


Exclusive = Callable[[list[Any], Any, Any], bool]
"""``exclusive(branches, root, value)``: whether ``value`` matches exactly one of a ``oneOf``'s
``branches`` (``root`` is where their references resolve)."""


class Sampler:
    """Draws JSON values from a schema with one ``random.Random`` (and Faker reseeded from it).

    ``exclusive``, where given, is asked about every value drawn for a ``oneOf``: a value drawn
    from one branch may match another too (open objects overlap: OpenAI's transcription answers),
    and then the other branches are tried in turn."""

    def __init__(
        self, rng: random.Random, numbers: Sequence[int] = (), exclusive: Exclusive | None = None
    ) -> None:
        self.rng = rng
        self.numbers = list(numbers)
        self.texts: list[str] = []
        """Strings a string field takes now and then (the generator's: those the state holds, so
        that ``input.actor`` can name a project's owner); none, and no draw is spent on them."""
        self.exclusive = exclusive
        self.lean = False
        """Draw every value lean (see ``_lean``): where only the answers' shape matters."""
        self._faker: Any = None
        self._nodes = 0
        self._stuck = False
        """Set when a ``oneOf`` had no branch to give a value of its own (a document's branches
        may all overlap: PagerDuty's ``agent``): the nearest optional field above is left out."""

    def reseed(self, seed: int) -> None:
        self.rng.seed(seed)
        self._faker = None

    def faker(self) -> Any:
        if self._faker is None:
            fake = faker_instance()
            fake.seed_instance(self.rng.getrandbits(48))
            self._faker = fake
        return self._faker

    def value(
        self, schema: Any, root: Any = None, name: str | None = None, depth: int = 0, hops: int = 0
    ) -> Any:
        """A value for ``schema`` (``root`` is where ``#/...`` references resolve).

        ``depth`` is how deep the value nests; ``hops`` how many references and compositions led
        to this schema at that depth: Plaid's records nest six deep through a ``$ref`` and an
        ``allOf`` at each level, and counting those as depth cut the value off (null) at 12."""
        root = schema if root is None else root
        if depth == 0 and hops == 0:
            self._nodes = 0
            self._stuck = False
        self._nodes += 1
        if self._nodes > MAX_NODES:
            return None
        if schema is True or schema is None or schema == {}:
            return self._any(depth)
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH or hops > MAX_HOPS:
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_pointer(root, ref)
            if target is None:
                return None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            resolved = {**target, **rest} if rest and isinstance(target, Mapping) else target
            return self.value(resolved, root, name, depth, hops + 1)
        if "const" in schema:
            return schema["const"]
        if self._lean(depth) and (schema.get("nullable") is True or _admits_null(schema)):
            return None
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            # an enum merged with a part that narrows the type (a nullable enum in an allOf)
            return self.rng.choice([v for v in schema["enum"] if _fits(v, schema)] or schema["enum"])
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                branches = schema[key]
                rest = {k: v for k, v in schema.items() if k != key}
                # a branch whose type the rest excludes (the null of a nullable record that an
                # allOf part says is an object: Box's shared_link) gives no value
                fit = [b for b in branches if _types_meet(rest, deref(b, root))] or branches
                branch = _simplest(fit) if self._lean(depth) else self.rng.choice(fit)
                drawn = self.value(merge_schemas(rest, branch), root, name, depth, hops + 1)
                if key == "anyOf" or self.exclusive is None or self.exclusive(branches, root, drawn):
                    return drawn
                for other in branches:
                    if other is not branch:
                        again = self.value(merge_schemas(rest, other), root, name, depth, hops + 1)
                        if self.exclusive(branches, root, again):
                            return again
                self._stuck = True
                return drawn
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, Mapping) and isinstance(part.get("$ref"), str):
                    part = resolve_pointer(root, part["$ref"]) or {}
                merged = merge_schemas(merged, part)
            return self.value(merged, root, name, depth, hops + 1)
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

    def present(self, schema: Any, root: Any = None, name: str | None = None) -> Any:
        """A value for ``schema`` that is not null (None only when the schema admits nothing
        else): what an effect reads from a response (a created record and its key) must be
        there, even where the document writes every field nullable (Twilio's)."""
        root = schema if root is None else root
        solid = non_null(schema, root)
        value = None
        for _ in range(ATTEMPTS):
            value = self.value(solid, root, name)
            if value is not None:
                break
        return value

    def _kind(self, schema: Mapping[str, Any]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            kinds = [k for k in declared if isinstance(k, str)]
            if not kinds:
                return "any"
            solid = [k for k in kinds if k != "null"]
            if "null" in kinds and (not solid or self.rng.random() < 0.2):
                return "null"
            return self.rng.choice(solid)
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

    def _lean(self, depth: int) -> bool:
        """Past a quarter of the node budget, or deep down, draw the smallest valid value (no
        optional fields, shortest lists, null where allowed, the simplest branch): a large
        document's schemas (Stripe's) otherwise hit the budget and come out invalid."""
        return self.lean or self._nodes > MAX_NODES // 4 or depth > LEAN_DEPTH

    def _any(self, depth: int) -> Any:
        return self.rng.choice([self.rng.randint(0, 100), self.faker().word(), self.rng.random() < 0.5])

    def integer(self, schema: Mapping[str, Any]) -> int:
        lo, hi = int_bounds(schema)
        if lo is None and hi is None:
            lo, hi = 0, _INT_SPAN
        elif lo is None:
            assert hi is not None
            lo = hi - _INT_SPAN
        elif hi is None:
            hi = lo + _INT_SPAN
        # a document's bound past 64 bits (OpenAI's seed: 2**63 as JavaScript prints it) is no
        # value every JSON reader takes: drawn within 64 bits where the bounds allow
        if lo < _INT64[0] <= hi:
            lo = _INT64[0]
        if lo <= _INT64[1] < hi:
            hi = _INT64[1]
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
        if self.texts and self.rng.random() < 0.5:
            # a field with a ``format`` keeps to its own draws
            fits = (
                [t for t in self.texts if text_fits(t, lo, hi, pattern, unreadable=False)]
                if schema.get("format") is None
                else []
            )
            if fits:
                return self.rng.choice(fits)
        if isinstance(pattern, str):
            for _ in range(ATTEMPTS):
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
        provider = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        if provider is None and name:
            lowered = name.lower()
            provider = next((p for hint, p in _NAME_HINTS if hint in lowered), None)
        if provider is None:
            return self.rng.choice(_words())
        fake = self.faker()
        if provider == "sentence":
            return str(fake.sentence(nb_words=4)).rstrip(".")
        return str(getattr(fake, provider)())

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
        count = lo if self._lean(depth) else self.rng.randint(lo, min(hi, lo + 3))
        result: list[Any] = []
        for _ in range(count):
            item, stuck = self._part(items, root, None, depth + 1)
            if not stuck or len(result) < lo:
                self._stuck = self._stuck or stuck
                result.append(item)
        if schema.get("uniqueItems"):
            unique: list[Any] = []
            for item in result:
                if item not in unique:
                    unique.append(item)
            result = unique
        return result

    def _part(self, schema: Any, root: Any, name: str | None, depth: int) -> tuple[Any, bool]:
        """A value for a field or an item, and whether it is stuck (see ``_stuck``)."""
        outer, self._stuck = self._stuck, False
        drawn = self.value(schema, root, name, depth)
        stuck, self._stuck = self._stuck, outer
        return drawn, stuck

    def object(self, schema: Mapping[str, Any], root: Any, depth: int) -> dict[str, Any]:
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        result: dict[str, Any] = {}
        lean = self._lean(depth)
        for key, sub in props.items():
            if key in required or (not lean and self.rng.random() < 0.5):
                drawn, stuck = self._part(sub, root, key, depth + 1)
                if stuck and key not in required:
                    continue  # no value of its own: an optional field can be left out
                self._stuck = self._stuck or stuck
                result[key] = drawn
        for key in sorted(k for k in required if k not in result and isinstance(k, str)):
            result[key] = self._any(depth)
        return result


def non_null(schema: Any, root: Any) -> Any:
    """``schema`` (its ``$ref`` followed) without the null it admits at the top: a type list
    without ``"null"``, no ``nullable``, no null in ``enum``, no branch of ``anyOf``/``oneOf``
    that admits only null. Unchanged where null is all it admits."""
    node = deref(schema, root)
    if not isinstance(node, Mapping) or node.get("type") == "null" or node.get("const", 0) is None:
        return node
    out = {k: v for k, v in node.items() if k != "nullable"}
    declared = out.get("type")
    if isinstance(declared, list) and any(k != "null" for k in declared):
        out["type"] = [k for k in declared if k != "null"]
    if isinstance(out.get("enum"), list) and any(v is not None for v in out["enum"]):
        out["enum"] = [v for v in out["enum"] if v is not None]
    for key in ("anyOf", "oneOf"):
        branches = out.get(key)
        if isinstance(branches, list):
            kept = [b for b in branches if not _only_null(deref(b, root))]
            if kept and len(kept) < len(branches):
                out[key] = [non_null(b, root) for b in kept] if key == "anyOf" else kept
    return out


def _only_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and (
        schema.get("type") == "null"
        or schema.get("type") == ["null"]
        or ("const" in schema and schema["const"] is None)
    )


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _fits(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` has a JSON type the schema's ``type`` admits (any when it has none)."""
    declared = schema.get("type")
    kinds = declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else None
    if kinds is None:
        return True
    is_bool = isinstance(value, bool)
    return any(isinstance(value, _JSON_TYPES.get(k, ())) and (k == "boolean" or not is_bool) for k in kinds)


def _types_meet(a: Mapping[str, Any], b: Any) -> bool:
    """Whether two schemas' declared types leave some type (either may declare none)."""
    if not isinstance(b, Mapping) or "type" not in a or "type" not in b:
        return True
    left, right = set(_type_list(a["type"])), set(_type_list(b["type"]))
    numeric = {"number", "integer"}
    return bool(left & right) or bool(left & numeric and right & numeric and "number" in left | right)


def _type_list(declared: Any) -> list[Any]:
    return list(declared) if isinstance(declared, list) else [declared]


def _admits_null(schema: Mapping[str, Any]) -> bool:
    declared = schema.get("type")
    return declared == "null" or (isinstance(declared, list) and "null" in declared)


def _simplest(branches: Sequence[Any]) -> Any:
    """The branch that costs least to draw: null, then a scalar, then one without a ``$ref``."""

    def cost(branch: Any) -> int:
        if not isinstance(branch, Mapping):
            return 3
        if _admits_null(branch) or branch.get("nullable") is True:
            return 0
        if branch.get("type") in ("string", "integer", "number", "boolean") or "enum" in branch:
            return 1
        return 2 if "$ref" not in branch else 3

    return min(branches, key=cost)


def text_fits(text: str, lo: int, hi: int | None, pattern: Any, *, unreadable: bool) -> bool:
    """Whether ``text`` is ``lo`` to ``hi`` characters long and matches ``pattern`` (Python's
    ``re.search``, as JSON Schema reads it); ``unreadable`` where ``re`` cannot read the pattern.
    A string the state holds offered to a field here, a contract's literal in the solver."""
    if len(text) < lo or (hi is not None and len(text) > hi):
        return False
    if isinstance(pattern, str):
        try:
            return re.search(pattern, text) is not None
        except re.error:
            return unreadable
    return True


def int_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
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


__all__ = [
    "ATTEMPTS",
    "LATEST_TIMESTAMP",
    "MAX_NODES",
    "Exclusive",
    "Sampler",
    "derive_seed",
    "faker_instance",
    "int_bounds",
    "non_null",
    "sample_regex",
]
