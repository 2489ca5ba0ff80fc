"""The helpers that several modules now share (folded from repeated code) keep each caller's meaning."""

from __future__ import annotations

import pytest
import z3

from envfactory.solver.symbolic import (
    NULL,
    Atom,
    Int,
    NeedStrings,
    Py,
    Str,
    Union,
    Unsupported,
    and_,
    and_all,
    atom_term,
    case_pairs,
    flat_bool,
    literal_id,
    or_,
    or_all,
    read,
    to_z3,
)
from envfactory.statemachine.paths import resolve_pointer


def test_flat_bool_drops_units_and_absorbs_zeros_for_both_literal_kinds() -> None:
    x, y = z3.Bools("x y")
    assert and_() is True and or_() is False
    assert and_(True, x, True) is x and or_(False, x) is x
    assert and_(x, False, y) is False and or_(x, True, y) is True
    assert z3.eq(and_(x, y), z3.And(x, y)) and z3.eq(or_(x, y), z3.Or(x, y))
    assert and_all(iter([True, x])) is x and or_all(iter([False, y])) is y and or_all([]) is False
    made: list[list[object]] = []
    assert flat_bool(["a", "b"], 1, 0, lambda terms: made.append(terms) or "both") == "both"
    assert made == [["a", "b"]]


def test_case_pairs_skips_combinations_that_cannot_hold_together() -> None:
    g = z3.Bool("g")
    a = Union(((g, Int(1)), (z3.Not(g), Str("s"))))
    pairs = list(case_pairs(a, Int(2)))
    assert [(type(x).__name__, type(y).__name__) for _, x, y in pairs] == [("Int", "Int"), ("Str", "Int")]
    assert pairs[0][0] is g
    assert list(case_pairs(Union(((False, Int(1)),)), NULL)) == []


def test_z3_terms_are_made_of_scalars_only() -> None:
    assert z3.eq(to_z3(True), z3.BoolVal(True))
    assert z3.eq(to_z3(7), z3.IntVal(7))
    assert z3.eq(to_z3(0.5), z3.RealVal(0.5))
    assert z3.eq(to_z3("hi"), z3.StringVal("hi"))
    for value in (None, [1], {"a": 1}):
        with pytest.raises(Unsupported):
            to_z3(value)


def test_abstract_strings_are_literal_identities_and_refuse_computed_strings() -> None:
    hi = literal_id("hi")
    assert hi < 0 and literal_id("hi") == hi and literal_id("hi!") != hi
    assert atom_term(Str("hi")) == hi and atom_term(Py("hi")) == hi
    assert z3.eq(atom_term(Atom(z3.Int("a"))), z3.Int("a"))
    with pytest.raises(NeedStrings):
        atom_term(Str(z3.String("s")))  # a Z3 string has no identity
    model = z3.Model()
    assert read(Atom(hi), model) == "hi" and read(Atom(7), model, {7: "word"}) == "word"


def test_resolve_pointer_tells_a_missing_target_from_a_null_one() -> None:
    root = {"a": {"b~c": [None, {"d": 1}]}}
    missing = object()
    assert resolve_pointer(root, "#/a/b~0c/1/d") == 1
    assert resolve_pointer(root, "#/a/b~0c/0", missing) is None
    assert resolve_pointer(root, "#/a/nope", missing) is missing
    assert resolve_pointer(root, "other.json#/a", missing) is missing
    assert resolve_pointer(root, "#/a/nope") is None
