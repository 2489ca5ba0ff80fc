"""JSON Schema, read symbolically: fresh values of a schema's shape, and the constraint that a
symbolic value validates.

The keywords that matter for feasibility are encoded exactly: ``type``, ``enum``, ``const``,
``minimum``/``maximum`` and their exclusive forms (both the 2020-12 numbers and OpenAPI 3.0's
booleans), ``multipleOf`` on integers, ``minLength``/``maxLength``, ``required``, ``properties``,
``additionalProperties``, ``items``, ``minItems``/``maxItems``, ``allOf``/``anyOf``/``oneOf``/``not``,
``nullable``, and ``pattern`` when the regular expression is in the small fragment ``regex``
translates. Anything else is skipped and noted on the tracker, so that an ``unsat`` leaning on it
is not trusted, and the concrete re-check of every witness catches a completion it lets through.
"""

from __future__ import annotations

import bisect
import functools
import random
import string
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import z3

from envfactory.contracts.values import is_number, json_type
from envfactory.solver.affixes import Affixes
from envfactory.solver.encode import Encoder, Tracker
from envfactory.solver.measures import Lengths, Ranks, text_rank
from envfactory.solver.regex import RegexUnsupported, to_z3_regex
from envfactory.solver.symbolic import (
    LITERAL_TEXTS,
    LITERALS,
    NULL,
    Atom,
    Bool,
    Int,
    Lst,
    Map,
    Null,
    Opaque,
    Py,
    Real,
    Rec,
    Str,
    SVal,
    Term,
    Union,
    Unsupported,
    and_,
    arith,
    cases,
    eq,
    evaluated,
    is_sym,
    ite,
    lift,
    literal_id,
    not_,
    or_,
    or_all,
    string_val,
    text_of,
    to_z3,
)
from envfactory.statemachine.paths import resolve_pointer
from envfactory.statemachine.sampling import sample_regex, text_fits
from envfactory.trajectory import Hole, iter_holes

MAX_DEPTH = 12
LIST_ITEMS = 3
"""Capacity of a fresh list of unknown length: its length is an unknown between ``minItems`` and
this many items (more where ``minItems`` asks for more). A ``maxItems`` up to 16 is the capacity
itself, so such a list is represented exactly; past it the bound is noted on the tracker (an
``unsat`` leaning on it is not trusted) and in ``Schemas.bounded`` (``prove`` reports it)."""


def printable() -> Any:
    """Any string of printable ASCII characters, as a Z3 regular expression."""
    return z3.Star(z3.Range(" ", "~"))


PRINTABLE = printable()
"""Printable ASCII: what a free string is wished to be (``Schemas.wishes``)."""
_MISSING = object()
_JSON_KINDS = ("null", "boolean", "integer", "number", "string", "array", "object")
_IGNORED = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "example",
        "format",
        "readOnly",
        "writeOnly",
        "deprecated",
        "$comment",
        "discriminator",
        "xml",
        "externalDocs",
        "x-envfactory",
        "contentMediaType",
        "contentEncoding",
    }
)


class Schemas:
    """Reads schemas that share one root document (local ``$ref``s resolve against it).

    Two readings, for the two kinds of unknowns the solver makes. By default (a trajectory's
    holes, a simulated output) a list of unknown length is taken at its shortest and a schema
    that leaves the type open admits the scalars, both noted on the tracker. With ``opaque``
    (the fully symbolic states and calls of ``transition``) both are ``Opaque`` handles instead,
    an abstraction that keeps proofs sound. ``bounds=False`` reads only a schema's shape (kinds,
    enums, required fields), for state, which the semantics never validates against its schema.
    With ``opaque``, a list in a record field named in ``unread`` (no clause reads a field of
    that name) is an ``Opaque`` handle too: it is only ever copied or compared whole, and its
    items would cost a frame equation each in every step. ``atoms`` reads strings abstractly
    (``symbolic.Atom``), for a contract that only compares them: a length or a pattern admits the literals that fit it (as ranges of identities) and
    is asked of the text chosen for a fresh identity after solving (``atom_texts``).
    """

    def __init__(
        self,
        encoder: Encoder,
        root: Any = None,
        *,
        opaque: bool = False,
        bounds: bool = True,
        list_items: int = LIST_ITEMS,
        atoms: bool = False,
        unread: frozenset[str] = frozenset(),
    ) -> None:
        self.encoder = encoder
        self.atoms = atoms
        self.unread = unread
        self.tracker: Tracker = encoder.tracker
        self.root = root if isinstance(root, Mapping) else {}
        self.opaque = opaque
        self.bounds = bounds
        self.list_items = list_items
        self.bounded: set[int] = set()
        """The capacities of the lists of unknown length made here (each is at most that long)."""
        self.strings: list[tuple[Term, Any]] = []
        """Every fresh string term made, with its schema (``wishes`` asks for printable ones);
        in the ``atoms`` reading, the identities made (``atom_texts`` reads their schemas)."""

    def wishes(self) -> list[Term]:
        """Wishes, not rules: the fresh strings printable (where no pattern says otherwise) and
        different from each other (an owner is not an account); asked for once a model is found,
        as the string solver pays for them."""
        if self.atoms:  # rather strings of their own than the contract's words
            out = [t >= 0 for t, schema in self.strings if not _schema_enum(schema)]
        else:
            out = [
                z3.InRe(t, PRINTABLE)
                for t, schema in self.strings
                if not (isinstance(schema, Mapping) and "pattern" in schema)
            ]
        if len(self.strings) > 1:
            out.append(z3.Distinct(*(t for t, _ in self.strings)))
        return out

    # -- references -----------------------------------------------------------------------------

    def resolve(self, schema: Any, depth: int = 0) -> Any:
        seen = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            seen += 1
            if seen > 32:
                raise Unsupported("a $ref chain that does not end")
            target = self._pointer(schema["$ref"])
            rest = {k: v for k, v in schema.items() if k != "$ref" and k not in _IGNORED}
            schema = {"allOf": [target, rest]} if rest else target
        return schema

    def _pointer(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise Unsupported(f"the $ref {ref!r} is not local to the bundled schema")
        node = resolve_pointer(self.root, ref, _MISSING)
        if node is _MISSING:
            raise Unsupported(f"the $ref {ref!r} does not resolve")
        return node

    # -- fresh values ---------------------------------------------------------------------------

    def kinds(self, schema: Any, depth: int = 0) -> list[str]:
        """The JSON kinds a schema admits, in a stable order."""
        schema = self.resolve(schema)
        if depth > MAX_DEPTH:
            raise Unsupported("a schema nested too deeply for the solver")
        if schema is False:
            return []
        if not isinstance(schema, Mapping):
            return ["null", "boolean", "integer", "string"]
        if "const" in schema:
            return [_kind_of(schema["const"])]
        if isinstance(schema.get("enum"), list):
            return list(dict.fromkeys(_kind_of(v) for v in schema["enum"]))
        found: list[str] | None = None
        declared = schema.get("type")
        if isinstance(declared, str):
            found = [declared]
        elif isinstance(declared, list):
            found = [t for t in declared if isinstance(t, str)]
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                inner = [k for sub in schema[key] for k in self.kinds(sub, depth + 1)]
                found = [k for k in dict.fromkeys(inner) if found is None or k in found or _fits(k, found)]
        if isinstance(schema.get("allOf"), list):
            for sub in schema["allOf"]:
                sub_kinds = self.kinds(sub, depth + 1)
                if set(sub_kinds) != {"null", "boolean", "integer", "string"}:
                    found = sub_kinds if found is None else [k for k in found if k in sub_kinds]
        if found is None:
            if "properties" in schema or "required" in schema:
                found = ["object"]
            elif "items" in schema:
                found = ["array"]
            else:
                self.tracker.note("a value whose schema leaves its type open")
                found = ["null", "boolean", "integer", "string"]
        if schema.get("nullable") is True and "null" not in found:
            found = [*found, "null"]
        return [k for k in found if k in _JSON_KINDS]

    def fresh(self, schema: Any, base: str, depth: int = 0) -> SVal:
        """A value of the schema's shape over Z3 constants named from ``base`` (names are
        deterministic, so that two encodings of one trajectory share their unknowns); the
        constraints come from ``holds``."""
        schema = self.resolve(schema)
        if depth > MAX_DEPTH:
            raise Unsupported("a schema nested too deeply for the solver")
        if isinstance(schema, Mapping) and "const" in schema:
            return lift(schema["const"])
        if self.opaque and _untyped(schema):
            return Opaque(z3.Int(base), "value")
        kinds = self.kinds(schema, depth)
        if not kinds:
            return NULL
        if len(kinds) == 1:
            return self._fresh_kind(kinds[0], schema, base, depth)
        options = [self._fresh_kind(kind, schema, f"{base}#{kind}", depth) for kind in kinds]
        tag = z3.Int(base + "#kind")
        pairs: list[tuple[Term, SVal]] = []
        rest: Term = True
        for i, option in enumerate(options):
            guard = rest if i == len(options) - 1 else and_(rest, tag == i)
            pairs.append((guard, option))
            rest = and_(rest, tag != i)
        return Union(tuple(pairs))

    def _fresh_kind(self, kind: str, schema: Any, base: str, depth: int) -> SVal:
        if kind == "null":
            return NULL
        if kind == "boolean":
            return Bool(z3.Bool(base))
        if kind == "integer":
            return Int(z3.Int(base))
        if kind == "number":
            return Real(z3.Real(base))
        if kind == "string":
            if self.atoms:
                ident = z3.Int(base)
                self.strings.append((ident, schema))
                return Atom(ident)
            term = z3.String(base)
            self.strings.append((term, schema))
            return Str(term)
        schema = schema if isinstance(schema, Mapping) else {}
        if kind == "array":
            least, most = schema.get("minItems", 0), schema.get("maxItems")
            if not isinstance(least, int) or least > 64:
                raise Unsupported("a list hole needs more than 64 items")
            cap = max(least, self.list_items)
            if isinstance(most, int) and most <= max(cap, 16):
                cap = max(least, most)  # every length the schema allows: no bound of ours
            else:
                self.tracker.note(f"a list of unknown length (at most {cap} items)")
                self.bounded.add(cap)
            items = tuple(
                self.fresh(self.sub_schema(schema, i), f"{base}[{i}]", depth + 1) for i in range(cap)
            )
            return Lst(items, z3.Int(base + "#len"))
        props = self._properties(schema)
        required = self._required(schema)
        fields: dict[str, tuple[Term, SVal]] = {}
        for prop, sub in props.items():
            present: Term = True if prop in required else z3.Bool(f"{base}.{prop}?")
            if self.opaque and prop in self.unread and self.kinds(sub, depth + 1) == ["array"]:
                fields[prop] = (present, Opaque(z3.Int(f"{base}.{prop}"), "list"))
                continue
            fields[prop] = (present, self.fresh(sub, f"{base}.{prop}", depth + 1))
        return Rec(fields)

    def _properties(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for sub in [schema, *self._members(schema)]:
            sub = self.resolve(sub)
            if isinstance(sub, Mapping) and isinstance(sub.get("properties"), Mapping):
                for k, v in sub["properties"].items():
                    props.setdefault(str(k), v)
        return props

    def _required(self, schema: Mapping[str, Any]) -> set[str]:
        required: set[str] = set()
        for sub in [schema, *(self.resolve(s) for s in schema.get("allOf", []) or [])]:
            if isinstance(sub, Mapping) and isinstance(sub.get("required"), list):
                required.update(r for r in sub["required"] if isinstance(r, str))
        return required

    def _members(self, schema: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = []
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                out.extend(schema[key])
        return out

    def sub_schema(self, schema: Any, key: str | int) -> Any:
        """The schema of one property or item, for building a value that holds holes."""
        schema = self.resolve(schema)
        if not isinstance(schema, Mapping):
            return {}
        if isinstance(key, int):
            items = schema.get("items")
            return items if isinstance(items, Mapping | bool) else {}
        props = self._properties(schema)
        if key in props:
            return props[key]
        extra = schema.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else {}

    # -- constraints ----------------------------------------------------------------------------

    def holds(self, v: SVal, schema: Any, depth: int = 0) -> Term:
        """The condition under which ``v`` validates against ``schema``."""
        schema = self.resolve(schema)
        if depth > MAX_DEPTH:
            raise Unsupported("a schema nested too deeply for the solver")
        if schema is True or schema is None:
            return True
        if schema is False:
            return False
        if not isinstance(schema, Mapping):
            return True
        parts: list[Term] = []
        nullable = schema.get("nullable") is True
        if "type" in schema:
            declared = schema["type"]
            names = [declared] if isinstance(declared, str) else list(declared or [])
            if nullable:
                names.append("null")
            parts.append(or_all(and_(g, _is_kind(o, names)) for g, o in cases(v)))
        if "const" in schema:
            parts.append(self.encoder.equal(v, lift(schema["const"])))
        atom = _atom_of(v)
        if atom is not None and _schema_enum(schema) and isinstance(schema.get("enum"), list):
            admitted = [literal_id(e) for e in schema["enum"] if isinstance(e, str)]
            parts.append(or_(id_ranges(atom, admitted), and_(nullable, self.encoder.equal(v, NULL))))
        elif isinstance(schema.get("enum"), list):
            allowed = [lift(e) for e in schema["enum"]]
            same = or_all(self.encoder.equal(v, e) for e in allowed)
            parts.append(or_(same, and_(nullable, self.encoder.equal(v, NULL))))
        for g, o in cases(v):
            local = self._kind_keywords(o, schema, depth)
            if local is not True:
                parts.append(or_(not_(g), local))
        for sub in schema.get("allOf", []) or []:
            parts.append(self.holds(v, sub, depth + 1))
        if isinstance(schema.get("anyOf"), list):
            parts.append(or_all(self.holds(v, sub, depth + 1) for sub in schema["anyOf"]))
        if isinstance(schema.get("oneOf"), list):
            each = [self.holds(v, sub, depth + 1) for sub in schema["oneOf"]]
            parts.append(
                or_all(and_(h, *(not_(o) for j, o in enumerate(each) if j != i)) for i, h in enumerate(each))
            )
        if "not" in schema:
            parts.append(not_(self.holds(v, schema["not"], depth + 1)))
        if "if" in schema:
            cond = self.holds(v, schema["if"], depth + 1)
            then = self.holds(v, schema.get("then", True), depth + 1)
            other = self.holds(v, schema.get("else", True), depth + 1)
            parts.append(ite(cond, then, other))
        for key in schema:
            if key not in _KNOWN and key not in _IGNORED and not str(key).startswith("x-"):
                self.tracker.note(f"schema keyword {key!r} is not encoded")
        return and_(*parts)

    def _kind_keywords(self, o: SVal, schema: Mapping[str, Any], depth: int) -> Term:
        parts: list[Term] = []
        if isinstance(o, Rec):
            parts.extend(self._object(o, schema, depth))
        elif isinstance(o, Lst):
            parts.extend(self._array(o, schema, depth))
        elif not self.bounds:
            return True
        if isinstance(o, Int | Real):
            t = o.t
            for key, op in (("minimum", ">="), ("maximum", "<=")):
                bound = schema.get(key)
                if is_number(bound):
                    exclusive = schema.get("exclusive" + key.capitalize()) is True
                    parts.append(arith(op[0] if exclusive else op, t, bound))
            for key, op in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
                bound = schema.get(key)
                if is_number(bound):
                    parts.append(arith(op, t, bound))
            step = schema.get("multipleOf")
            if is_number(step) and step:
                if isinstance(o, Int) and isinstance(step, int):
                    parts.append(eq(t % step if not is_sym(t) else to_z3(t) % step, 0))
                else:
                    self.tracker.note("multipleOf on numbers")
        elif isinstance(o, Str):
            parts += _length_keywords(len(o.t) if not is_sym(o.t) else z3.Length(o.t), schema)
            pattern = schema.get("pattern")
            if isinstance(pattern, str):
                parts.append(self._pattern(o.t, pattern))
        elif isinstance(o, Atom):
            if any(k in schema for k in ("minLength", "maxLength", "pattern")):
                fits = fresh_or_literal(o.t, schema)
                if fits is None:
                    self.tracker.note("a string's length or pattern, against many literals")
                parts.append(True if fits is None else fits)
            if isinstance(schema.get("maxLength"), int):
                parts.append(self.encoder.affixes.within(o.t, schema["maxLength"]))
            if self.encoder.lengths.used and is_sym(o.t):
                parts += _length_keywords(self.encoder.lengths.of(o.t), schema)
        elif isinstance(o, Map):
            raise Unsupported("a state collection checked against a schema")
        return and_(*parts)

    def _array(self, o: Lst, schema: Mapping[str, Any], depth: int) -> list[Term]:
        """A list's keywords; of a list of unknown length, only the places within its length."""
        n = o.length
        parts: list[Term] = []
        if o.n is not None:
            parts += [arith("<=", 0, n), arith("<=", n, len(o.items))]
        if self.bounds:
            if isinstance(schema.get("minItems"), int):
                parts.append(arith(">=", n, schema["minItems"]))
            if isinstance(schema.get("maxItems"), int):
                parts.append(arith("<=", n, schema["maxItems"]))
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        for i, item in enumerate(o.items):
            if i < len(prefix):
                parts.append(or_(not_(o.within(i)), self.holds(item, prefix[i], depth + 1)))
            elif "items" in schema:
                parts.append(or_(not_(o.within(i)), self.holds(item, schema["items"], depth + 1)))
        if schema.get("uniqueItems") is True and self.bounds:
            for i in range(len(o.items)):
                for j in range(i + 1, len(o.items)):
                    both = and_(o.within(i), o.within(j))
                    parts.append(or_(not_(both), not_(self.encoder.equal(o.items[i], o.items[j]))))
        return parts

    def _pattern(self, t: Term, pattern: str) -> Term:
        if not is_sym(t):
            import re

            try:
                return re.search(pattern, t) is not None
            except re.error:
                self.tracker.note(f"pattern {pattern!r}")
                return True
        try:
            return z3.InRe(t, to_z3_regex(pattern))
        except RegexUnsupported:
            self.tracker.note(f"pattern {pattern!r} is outside the regular fragment the solver reads")
            return True

    def _object(self, o: Rec, schema: Mapping[str, Any], depth: int) -> list[Term]:
        parts: list[Term] = []
        for name in schema.get("required", []) or []:
            if isinstance(name, str):
                parts.append(o.get(name)[0])
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        assert isinstance(props, Mapping)
        extra = schema.get("additionalProperties", True)
        for name, (present, value) in o.fields.items():
            if present is False:
                continue
            if name in props:
                parts.append(or_(not_(present), self.holds(value, props[name], depth + 1)))
            elif extra is False:
                parts.append(not_(present))
            elif isinstance(extra, Mapping):
                parts.append(or_(not_(present), self.holds(value, extra, depth + 1)))
        for key in ("minProperties", "maxProperties"):
            bound = schema.get(key)
            if isinstance(bound, int) and self.bounds:
                count: Term = 0
                for present, _ in o.fields.values():
                    count = arith("+", count, ite(present, 1, 0))
                parts.append(arith(">=" if key == "minProperties" else "<=", count, bound))
        return parts

    # -- values with holes ----------------------------------------------------------------------

    def build(self, value: Any, schema: Any, holes: dict[str, SVal]) -> SVal:
        """A JSON value whose ``Hole`` leaves are unknowns (one fresh value per hole name)."""
        if not _holed(value):
            return Py(value)
        if isinstance(value, Hole):
            name = value.name
            if name not in holes:
                holes[name] = self.fresh(schema, f"h!{name}")
            return holes[name]
        if isinstance(value, dict):
            fields = {
                str(k): (True, self.build(v, self.sub_schema(schema, str(k)), holes))
                for k, v in value.items()
            }
            return Rec(fields)
        if isinstance(value, list | tuple):
            return Lst(tuple(self.build(v, self.sub_schema(schema, i), holes) for i, v in enumerate(value)))
        return lift(value)


def _atom_of(v: SVal) -> Term | None:
    """The identity of an abstract string that is the only kind ``v`` may be (else None)."""
    options = cases(v)
    if len(options) == 1 and isinstance(options[0][1], Atom):
        return options[0][1].t
    return None


def id_ranges(ident: Term, ids: Iterable[int], fresh_from: int | None = None) -> Term:
    """``ident`` is one of ``ids`` (or at least ``fresh_from``), as ranges of consecutive
    identities: literals registered together (an enum, a contract's words) get consecutive ones,
    so a field admitting hundreds of literals costs a few bounds, not a disjunct per literal."""
    runs: list[tuple[int, int]] = []  # inclusive, from the highest identity downwards
    for i in sorted(set(ids), reverse=True):
        if runs and i == runs[-1][0] - 1:
            runs[-1] = (i, runs[-1][1])
        else:
            runs.append((i, i))
    parts: list[Term] = []
    if fresh_from is not None:
        if runs and runs[0][1] == fresh_from - 1:  # the run that joins the fresh identities
            fresh_from = runs.pop(0)[0]
        parts.append(arith(">=", ident, fresh_from))
    for lo, hi in runs:
        parts.append(eq(ident, lo) if lo == hi else and_(arith(">=", ident, lo), arith("<=", ident, hi)))
    return or_all(parts)


MAX_RUNS = 8
"""Most ranges of literal identities one abstract string's length or pattern is written as;
past it the literals are all admitted (an over-approximation, noted on the tracker)."""


def fresh_or_literal(ident: Term, schema: Any, most: int = MAX_RUNS) -> Term | None:
    """An abstract string's identity under a schema's length and pattern: a string of its own
    (identity >= 0, its text chosen to fit by ``atom_texts``), one of the literals known now
    that fits, or a literal given an identity later (below every known one: not excluded, so
    the reading stays an over-approximation). None where the fitting literals take more than
    ``most`` ranges (then every literal is admitted: the caller notes it)."""
    if not isinstance(schema, Mapping):
        return True
    known = len(LITERALS)
    least, most_len, pattern = (schema.get(k) for k in ("minLength", "maxLength", "pattern"))
    fits = _fitting(
        least if isinstance(least, int) else None,
        most_len if isinstance(most_len, int) else None,
        pattern if isinstance(pattern, str) else None,
        known,
    )
    if len(fits) == known:
        return True
    ranges = sum(1 for i in fits if i + 1 not in fits and i != -1)  # those not joining id 0
    if ranges > most:
        return None
    return or_(id_ranges(ident, fits, fresh_from=0), arith("<", ident, -known))


@functools.lru_cache(maxsize=1024)
def _fitting(least: Any, most: Any, pattern: Any, known: int) -> frozenset[int]:
    """The identities of the first ``known`` literals that fit a length and a pattern."""
    schema = {"minLength": least, "maxLength": most, "pattern": pattern}
    return frozenset(i for text, i in list(LITERALS.items())[:known] if literal_fits(text, schema))


def literal_fits(text: str, schema: Any) -> bool:
    """Whether a literal satisfies a string schema's length and pattern (Python's ``re``)."""
    if not isinstance(schema, Mapping):
        return True
    lo, hi = schema.get("minLength"), schema.get("maxLength")
    return text_fits(
        text,
        lo if isinstance(lo, int) else 0,
        hi if isinstance(hi, int) else None,
        schema.get("pattern"),
        unreadable=True,
    )


ATOM_UNITS = 50_000_000
"""Z3's effort for naming the abstract strings of one model (a bank plan's take 58,000 units)."""


def atom_texts(
    model: z3.ModelRef,
    atoms: Iterable[tuple[Term, Any]],
    affixes: Affixes | None = None,
    timeout: float = 30.0,
    ranks: Ranks | None = None,
    lengths: Lengths | None = None,
) -> dict[int, str]:
    """Texts for the identities a model gave abstract strings that are no literal's: one per
    identity, satisfying the schema of every value holding it (read by ``Schemas`` like any
    string's), plain words where no pattern says otherwise, different from each other and from
    every literal, in the order and of the lengths the model gave them where the contract
    orders or measures strings (``measures``: drawn first, ``_measured_texts``). Z3 looks for
    them within ``ATOM_UNITS`` (``timeout`` seconds only guard it); where it finds none, texts
    are drawn from the patterns (``_drawn_texts``). Identities neither fills are left out
    (``read`` writes ``s<id>``, which the concrete re-check judges)."""
    measures = [m for m in (ranks, lengths) if m is not None and m.used]
    groups: dict[int, list[Any]] = {}
    for ident, schema in atoms:
        value = evaluated(model, ident)
        if not z3.is_int_value(value):
            continue
        if value.as_long() in LITERAL_TEXTS and all(m.mine(value.as_long()) for m in measures):
            continue  # a literal of the contract's; another contract's is any string to this one
        groups.setdefault(value.as_long(), []).append(schema)
    if not groups:
        return {}
    reader = Schemas(Encoder())
    texts = {ident: z3.String(f"text{ident}") for ident in groups}
    words = [string_val(t) for t in LITERALS]
    # the prefix and suffix classes the model chose (``affixes``): part of each text's schema
    classes = {ident: affixes.classes(model, ident) if affixes else [] for ident in groups}
    ordered = ranks is not None and ranks in measures
    sizes = (
        {i: lengths.length(model, i) for i in groups} if lengths is not None and lengths in measures else {}
    )
    unplaced: list[Placing] = [(i, None, None, None) for i in sorted(groups)]
    placings = _ordering(model, groups, ranks) if ranks is not None and ordered else unplaced
    if ordered or sizes:
        measured = _measured_texts(placings, groups, affixes, classes, sizes)
        if measured is not None:
            return measured
    for alphabet in (z3.Plus(z3.Range("a", "z")), PRINTABLE):  # plain words first
        solver = z3.Solver()
        solver.set("rlimit", max(1, ATOM_UNITS // 2))
        solver.set("timeout", max(1, int(timeout * 500)))
        for ident, schemas in groups.items():
            var = texts[ident]
            if classes[ident]:
                assert affixes is not None
                solver.add(affixes.constraint(var, classes[ident]))
            patterned = False
            for schema in schemas:
                if isinstance(schema, Mapping):
                    solver.add(to_z3(reader._kind_keywords(Str(var), schema, 0)))
                    patterned = patterned or "pattern" in schema
            if not patterned:
                solver.add(z3.InRe(var, alphabet), z3.Length(var) <= max(12, sizes.get(ident, 0)))
            if ident in sizes:
                solver.add(z3.Length(var) == sizes[ident])
            solver.add(*(var != word for word in words))
        if len(texts) > 1:
            solver.add(z3.Distinct(*texts.values()))
        if ordered:
            solver.add(*_ranked(placings, texts))
        if solver.check() == z3.sat:
            found = solver.model()
            return {ident: text_of(evaluated(found, var)) for ident, var in texts.items()}
    return _drawn_texts(groups, affixes, classes)


Placing = tuple[int, str | None, str | None, int | None]
"""A fresh identity, the literals its text comes after and before, and the identity before it."""


def _ordering(model: z3.ModelRef, groups: Mapping[int, list[Any]], ranks: Ranks) -> list[Placing]:
    """The fresh identities of ``groups`` in the order ``model`` ranked their strings, each
    placed between the nearest literals that fit its schemas and after the nearest identity
    under the same patterns (or none).

    Only strings that can be compared are ordered. A model ranks every identity, compared or
    not, and an id ranked between two dates cannot be a word between them; where a contract
    compares two strings, they are of one field's schema, or a literal that fits it."""
    literals = sorted((text_rank(text), lit, text) for lit, text in LITERAL_TEXTS.items() if ranks.mine(lit))
    last: dict[tuple[str, ...], int] = {}
    out: list[Placing] = []
    for rank, ident in sorted((ranks.rank(model, i), i) for i in groups):
        schemas = groups[ident]
        fits = [(r, lit, t) for r, lit, t in literals if all(literal_fits(t, s) for s in schemas)]
        at = bisect.bisect_left(fits, (rank, ident, ""))
        before = fits[at - 1][2] if at > 0 else None
        after = fits[at][2] if at < len(fits) else None
        patterns = tuple(sorted({s["pattern"] for s in schemas if isinstance(s, Mapping) and "pattern" in s}))
        out.append((ident, before, after, last.get(patterns)))
        last[patterns] = ident
    return out


def _ranked(placings: list[Placing], texts: Mapping[int, z3.SeqRef]) -> list[z3.BoolRef]:
    """Z3 strings placed as ``_ordering`` placed their identities."""
    parts = []
    for ident, before, after, previous in placings:
        if previous is not None:
            parts.append(texts[previous] < texts[ident])
        if before is not None:
            parts.append(string_val(before) < texts[ident])
        if after is not None:
            parts.append(texts[ident] < string_val(after))
    return parts


def _drawn_texts(
    groups: Mapping[int, list[Any]],
    affixes: Affixes | None = None,
    classes: Mapping[int, list[tuple[str, int]]] | None = None,
    tries: int = 64,
) -> dict[int, str]:
    """Texts drawn concretely where Z3 named none (its string theory may answer ``unknown``):
    from an identity's first pattern (``statemachine.sampling.sample_regex``, seeded by the
    identity, so the same texts every time), else a plain word with the prefix and suffix its
    classes ask for; each checked against every schema holding the identity with Python's ``re``
    and against its classes, and distinct."""
    taken = set(LITERALS)
    texts: dict[int, str] = {}
    for ident, schemas in sorted(groups.items()):
        for text in _candidates(ident, schemas, affixes, classes, tries):
            if text not in taken:
                texts[ident] = text
                taken.add(text)
                break
    return texts


def _measured_texts(
    placings: list[Placing],
    groups: Mapping[int, list[Any]],
    affixes: Affixes | None,
    classes: Mapping[int, list[tuple[str, int]]],
    sizes: Mapping[int, int],
    tries: int = 64,
) -> dict[int, str] | None:
    """Texts drawn as ``_drawn_texts`` draws them (plain words of the length the model gave),
    placed as ``_ordering`` placed their identities: each the least of its candidates after the
    text before it and the literal before it, before the literal after it (the least leaves the
    most room for the ones after), and of its length. Cheaper than Z3's strings by far where
    patterns meet an order (dates as ISO texts: seconds there, a millisecond here). A model
    measures every identity, compared or not (an id may come out below every date, a date three
    characters long); one no candidate fits was most likely not measured, and takes the
    candidate that keeps the order, or else the first; the replay judges the rest. None where
    an identity has no candidate at all (Z3 is asked then)."""
    taken = set(LITERALS)
    texts: dict[int, str] = {}
    placed: dict[int, str] = {}
    for ident, before, after, previous in placings:
        floor = max((t for t in (before, placed.get(previous)) if t is not None), default=None)  # type: ignore[arg-type]
        size = sizes.get(ident)
        drawn = [
            t for t in _candidates(ident, groups[ident], affixes, classes, tries, size) if t not in taken
        ]
        if not drawn:
            return None
        in_order = [t for t in drawn if (floor is None or floor < t) and (after is None or t < after)]
        sized = [t for t in in_order if size is None or len(t) == size]
        if in_order:
            placed[ident] = min(sized or in_order)
        texts[ident] = placed.get(ident, drawn[0])
        taken.add(texts[ident])
    return texts


def _candidates(
    ident: int,
    schemas: list[Any],
    affixes: Affixes | None,
    classes: Mapping[int, list[tuple[str, int]]] | None,
    tries: int,
    size: int | None = None,
) -> Iterator[str]:
    """Up to ``tries`` texts for an identity, drawn from its first pattern (seeded by the
    identity) or as plain words (of ``size`` characters where given) with the affixes its
    classes ask for, each fitting every schema holding the identity and its classes."""
    rng = random.Random(ident)
    patterns = [s["pattern"] for s in schemas if isinstance(s, Mapping) and isinstance(s.get("pattern"), str)]
    wanted = classes.get(ident, []) if classes else []
    for attempt in range(tries):
        if patterns:
            text = sample_regex(patterns[0], rng)
        else:
            n = size if size is not None else 1 + attempt % 12
            text = "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
            if affixes is not None and wanted:
                text = affixes.shaped(text, wanted)
        if affixes is not None and text is not None and not affixes.fits(text, wanted):
            continue
        if text is not None and all(literal_fits(text, s) for s in schemas):
            yield text


def _length_keywords(n: Term, schema: Mapping[str, Any]) -> list[Term]:
    """A string's ``minLength`` and ``maxLength``, over its length ``n``."""
    parts: list[Term] = []
    if isinstance(schema.get("minLength"), int):
        parts.append(arith(">=", n, schema["minLength"]))
    if isinstance(schema.get("maxLength"), int):
        parts.append(arith("<=", n, schema["maxLength"]))
    return parts


def _schema_enum(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping) or not isinstance(schema.get("enum"), list):
        return []
    return [e for e in schema["enum"] if isinstance(e, str)]


_KNOWN = frozenset(
    {
        "type",
        "const",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "nullable",
        "minProperties",
        "maxProperties",
        "$ref",
    }
)


def _holed(value: Any) -> bool:
    return next(iter_holes(value), None) is not None


def _kind_of(value: Any) -> str:
    return json_type(value) or "object"


def _fits(kind: str, declared: list[str]) -> bool:
    return kind == "integer" and "number" in declared


def _untyped(schema: Any) -> bool:
    """Whether a (resolved) schema leaves the kind of its value open."""
    if not isinstance(schema, Mapping):
        return schema is not False
    return not any(
        k in schema
        for k in ("type", "enum", "const", "anyOf", "oneOf", "allOf", "properties", "required", "items")
    )


def _is_kind(o: SVal, names: list[str]) -> Term:
    if isinstance(o, Null):
        return "null" in names
    if isinstance(o, Bool):
        return "boolean" in names
    if isinstance(o, Int):
        return "integer" in names or "number" in names
    if isinstance(o, Real):
        if "number" in names:
            return True
        if "integer" in names:
            return float(o.t).is_integer() if not is_sym(o.t) else z3.IsInt(o.t)
        return False
    if isinstance(o, Str | Atom):
        return "string" in names
    if isinstance(o, Lst):
        return "array" in names
    if isinstance(o, Rec):
        return "object" in names
    if isinstance(o, Opaque):
        return ("array" in names) if o.what == "list" else True
    return False
