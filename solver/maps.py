"""Finite-map operations on symbolic collections: lookup, membership, write, delete, size.

A ``Map`` is a tuple of slots ``(key, present, value)`` with at most one present slot per key
value (see ``symbolic``). Every operation keeps that invariant, so lookups are an ite-chain over
the slots whose key may equal the probe, with no quantifiers. Concrete keys compare in Python,
so a collection whose keys are all known costs no Z3 terms at all.
"""

from __future__ import annotations

from typing import Any

from envfactory.solver.symbolic import (
    NULL,
    Atom,
    Bool,
    Int,
    Map,
    NeedStrings,
    Py,
    Real,
    Slot,
    Str,
    SVal,
    Term,
    Union,
    Unsupported,
    and_,
    arith,
    atom_term,
    cases,
    eq,
    expand,
    ite,
    join,
    merge,
    not_,
    or_,
    or_all,
)


def key_term(m: Map, key: SVal) -> Term | None:
    """The probe as a term of the map's key sort, or None when it can never be a key there."""
    if m.key_kind == "integer":
        if isinstance(key, Int | Real):
            return key.t
        if isinstance(key, Bool):  # Python: True == 1, so True finds key 1
            return ite(key.t, 1, 0)
        return None
    if m.key_kind == "atom":
        return atom_term(key) if isinstance(key, Str | Atom) else None
    if isinstance(key, Atom):
        raise NeedStrings(f"an abstract string looked up in {m.name or 'a collection'} of strings")
    if isinstance(key, Str):
        return key.t
    return None


def _hashable(value: Any) -> bool:
    return isinstance(value, int | float | str) or value is None


def lookup(m: Map | Py, key: SVal) -> tuple[SVal, Term]:
    """``m[key]``: the value, and the condition under which the key is present."""
    if isinstance(m, Py):
        if isinstance(key, Py) and _hashable(key.value):
            if key.value in m.value:
                return Py(m.value[key.value]), True
            return NULL, False
        m = as_map(m)
    hits: list[tuple[Term, SVal]] = []
    for guard, probe in cases(key):
        k = key_term(m, probe)
        if k is None or guard is False:
            continue
        for slot in m.slots:
            same = eq(slot.key, k)
            if same is False:
                continue
            hit = and_(guard, slot.present, same)
            if hit is not False:
                hits.append((hit, slot.value))
    if not hits:
        return NULL, False
    found = or_all(h for h, _ in hits)
    return join(hits, lazy=True), found


def as_map(v: SVal) -> Map:
    """A collection value as slots (a known collection expands to known slots)."""
    m = expand(v)
    if not isinstance(m, Map):
        raise Unsupported(f"expected a collection, got {m.kind}")
    return m


def contains(m: Map | Py, key: SVal) -> Term:
    return lookup(m, key)[1]


def size(m: Map | Py) -> Term:
    """The number of present slots (an Int term)."""
    if isinstance(m, Py):
        return len(m.value)
    total: Term = 0
    for slot in m.slots:
        total = arith("+", total, ite(slot.present, 1, 0))
    return total


def _write_key(m: Map, key: SVal) -> Term:
    key = expand(key)
    if isinstance(key, Union):
        # a key chosen by a condition (``input.into if "into" in input else input.sprint``): one
        # term, each option's under its guard (they are exclusive and one holds); an option of
        # another kind (a null) is outside the fragment, as a key of that kind alone is
        options = [(guard, _write_key(m, option)) for guard, option in key.options if guard is not False]
        if not options:
            raise Unsupported(f"writing a key of no kind into {m.name or 'a collection'}")
        term = options[-1][1]
        for guard, option_term in reversed(options[:-1]):
            term = ite(guard, option_term, term)
        return term
    if isinstance(key, Int) and m.key_kind == "integer":
        return key.t
    if isinstance(key, Str) and m.key_kind == "string":
        return key.t
    if isinstance(key, Str | Atom) and m.key_kind == "atom":
        return atom_term(key)
    if isinstance(key, Atom):
        raise NeedStrings(f"an abstract string written as a key of {m.name or 'a collection'}")
    raise Unsupported(f"writing a {key.kind} key into {m.name or 'a collection'} keyed by {m.key_kind}")


def present_key(m: Map | Py, key: SVal) -> SVal:
    """``key`` without the options that name no record of ``m`` (a null of a nullable field; those
    ``key_term`` has no term for, so ``lookup`` never finds them): for an effect defined only
    where the key is present (a delete, a field updated), those options never hold where it is
    defined."""
    key = expand(key)
    if not isinstance(key, Union) or isinstance(m, Py):
        return key
    options = tuple((guard, option) for guard, option in key.options if key_term(m, option) is not None)
    if not options or len(options) == len(key.options):
        return key
    return options[0][1] if len(options) == 1 else Union(options)


def write(m: Map | Py, key: SVal, value: SVal) -> Map | Py:
    """``m[key] = value``: the present slot with that key changes in place (iteration order kept);
    otherwise a new slot is appended, as a Python dict appends a new key."""
    if isinstance(m, Py):
        if isinstance(key, Py) and isinstance(value, Py) and _hashable(key.value):
            return Py(m.value.insert(key.value, value.value), m.key_kind)
        m = as_map(m)
    k = _write_key(m, key)
    if m.fixed:
        return _write_fixed(m, k, value)
    slots: list[Slot] = []
    matched: list[Term] = []
    for slot in m.slots:
        same = eq(slot.key, k)
        if same is False:
            slots.append(slot)
            continue
        hit = and_(slot.present, same)
        matched.append(hit)
        slots.append(Slot(slot.key, slot.present, merge(hit, value, slot.value)))
    anywhere = or_all(matched)
    if anywhere is not True:
        slots.append(Slot(k, not_(anywhere), value))
    return Map(tuple(slots), m.key_kind, m.open, m.name)


def _write_fixed(m: Map, k: Term, value: SVal) -> Map:
    """``write`` into a bounded collection: where the key is, else into the first free slot."""
    hits = [and_(s.present, eq(s.key, k)) for s in m.slots]
    exists = or_all(hits)
    earlier_full: Term = True
    slots: list[Slot] = []
    for slot, hit in zip(m.slots, hits, strict=True):
        take = and_(not_(exists), not_(slot.present), earlier_full)
        slots.append(
            Slot(ite(take, k, slot.key), or_(slot.present, take), merge(or_(hit, take), value, slot.value))
        )
        earlier_full = and_(earlier_full, slot.present)
    full = or_(m.full, and_(not_(exists), earlier_full))
    return Map(tuple(slots), m.key_kind, m.open, m.name, True, full)


def delete(m: Map | Py, key: SVal) -> Map | Py:
    """``del m[key]``: the matching slot becomes absent (the caller checks that it was present)."""
    if isinstance(m, Py):
        if isinstance(key, Py) and _hashable(key.value):
            return Py(m.value.remove(key.value), m.key_kind) if key.value in m.value else m
        m = as_map(m)
    k = _write_key(m, key)
    slots: list[Slot] = []
    for slot in m.slots:
        same = eq(slot.key, k)
        if same is False:
            slots.append(slot)
        else:
            slots.append(Slot(slot.key, and_(slot.present, not_(same)), slot.value))
    return Map(tuple(slots), m.key_kind, m.open, m.name, m.fixed, m.full)
