"""Order and length of abstract strings: ``a < b`` and ``len(s)`` without Z3 strings.

In the abstract reading (``symbolic.Atom``) a string is an Int identity. One ordering of strings
anywhere in a contract (``due < input.date``, dates kept as ISO texts), or one length
(``len(input.title) > 0``), used to send the whole contract to Z3 strings, and then a plan of
three calls that never touched the clause took longer than a fuzz run's whole budget. Here each
identity has a *measure*: a literal's a fixed function of its text, a fresh identity's an
uninterpreted function of it, as a prefix class is in ``solver.affixes``.

- ``Ranks``: a rational that keeps the order of texts (``text_rank``). Strings are ordered by
  rank, then by identity: a strict total order whatever ranks a model picks, so transitivity
  and totality hold as they do for texts.
- ``Lengths``: a natural number, the text's length. The empty string is a literal of its own
  (there is one of it, and many texts of every other length), and a fresh identity's length
  is at least one.

``schema.atom_texts`` then chooses texts with the measures the model chose. Where the schemas
leave no such texts (nothing lies between ``"a"`` and ``"a\\x00"``; no text of length 3 fits
``^[0-9]{4}$``), the texts drawn miss, and the concrete replay every plan goes through refuses
the call: the reading over-approximates, as ``Transition.dropped`` does.

Imports z3 and ``solver.symbolic`` only.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import z3

from envfactory.solver.symbolic import LITERAL_TEXTS, Term, and_, eq, is_sym, ite, literal_id, or_

_instances = itertools.count()

_BASE = 0x110001
"""One more than the number of code points: each character is a digit of the rank."""
_DIGITS = 32
"""Characters a literal's rank reads; literals alike that far tie, and their identities order them."""


def text_rank(text: str) -> Fraction:
    """The rank of a known text: its characters as the digits of a fraction (code point + 1, so
    that a prefix ranks below every text that extends it). Strictly increasing in the order of
    texts within the first ``_DIGITS`` characters."""
    head = text[:_DIGITS]
    digits = 0
    for char in head:
        digits = digits * _BASE + ord(char) + 1
    return Fraction(digits * _BASE ** (_DIGITS - len(head)), _BASE**_DIGITS)


class _Measure:
    """A measure of every identity: a literal's from its text, a fresh one's from a free function."""

    kind = ""

    def __init__(self) -> None:
        # the sort is made here, in the context of the moment: a planner's worker starts a new
        # one (``solver.fresh``), and a sort made at import would belong to the old
        self._free = z3.Function(f"{self.kind}!{next(_instances)}", z3.IntSort(), self.sort())
        self._chain: tuple[tuple[int, int], list[tuple[int, Term]]] = ((-1, -1), [])
        self.used = False
        """Whether the contract measures strings: only then do texts have measures to keep."""
        self.texts: frozenset[str] | None = None
        """The contract's own literals (``Transition`` sets them), or None for every literal
        known: another contract's, registered in the same process, would only lengthen each
        measure's chain (300 of them kept a three-call plan from being found)."""

    def sort(self) -> z3.SortRef:  # pragma: no cover - each measure has its own
        raise NotImplementedError

    def of_text(self, text: str) -> Term:  # pragma: no cover - each measure has its own
        raise NotImplementedError

    def fresh(self, value: Term) -> Term:
        """A fresh identity's measure from its free function's value (the identity by default)."""
        return value

    def of(self, ident: Term) -> Term:
        """The measure of the string with identity ``ident``: its literal's where it is one."""
        if not is_sym(ident):
            return self.of_text(LITERAL_TEXTS.get(ident, ""))
        self.used = True
        known = (len(LITERAL_TEXTS), len(self.texts or ()))
        if self._chain[0] != known:  # a literal registered, or a text of the contract's added
            literals = [(lit, text) for lit, text in LITERAL_TEXTS.items() if self.mine(lit)]
            self._chain = (known, [(lit, self.of_text(text)) for lit, text in literals])
        chain: Term = self.fresh(self._free(ident))
        for lit, measure in self._chain[1]:
            chain = ite(ident == lit, measure, chain)
        return chain

    def mine(self, ident: int) -> bool:
        """Whether a literal's identity is one of the contract's own."""
        return self.texts is None or LITERAL_TEXTS.get(ident) in self.texts

    def value(self, model: z3.ModelRef, ident: int) -> Any:
        """The measure ``model`` gave a fresh identity."""
        return model.eval(self.fresh(self._free(z3.IntVal(ident))), model_completion=True)


class Ranks(_Measure):
    """The order of strings: ``less`` and ``compare`` over identities."""

    kind = "rank"

    def sort(self) -> z3.SortRef:
        return z3.RealSort()

    def of_text(self, text: str) -> Term:
        rank = text_rank(text)
        return z3.RealVal(f"{rank.numerator}/{rank.denominator}")

    def less(self, a: Term, b: Term) -> Term:
        """Whether the string with identity ``a`` comes before the one with identity ``b``."""
        if not is_sym(a) and not is_sym(b):
            return bool(LITERAL_TEXTS.get(a, "") < LITERAL_TEXTS.get(b, ""))
        ra, rb = self.of(a), self.of(b)
        return or_(ra < rb, and_(eq(ra, rb), z3.IntVal(a) < b if not is_sym(a) else a < b))

    def compare(self, op: str, a: Term, b: Term) -> Term:
        """``a op b`` for ``op`` one of ``< <= > >=`` on two identities."""
        match op:
            case "<":
                return self.less(a, b)
            case ">":
                return self.less(b, a)
            case "<=":
                return or_(eq(a, b), self.less(a, b))
            case _:
                return or_(eq(a, b), self.less(b, a))

    def rank(self, model: z3.ModelRef, ident: int) -> Fraction:
        """The rank ``model`` gave a fresh identity, as a fraction."""
        value = self.value(model, ident)
        if z3.is_rational_value(value):
            return Fraction(value.numerator_as_long(), value.denominator_as_long())
        return Fraction(0)  # pragma: no cover - ranks are rationals


class Lengths(_Measure):
    """The length of strings."""

    kind = "length"

    def sort(self) -> z3.SortRef:
        return z3.IntSort()

    def of_text(self, text: str) -> Term:
        return len(text)

    def of(self, ident: Term) -> Term:
        if is_sym(ident):
            # there is one empty string, and many of every other length: the empty one is a
            # literal of its own, and a fresh string is at least one character long (two fresh
            # strings of length 0 would be two texts no model has)
            literal_id("")
            if self.texts is not None and "" not in self.texts:
                self.texts = self.texts | {""}
        return super().of(ident)

    def fresh(self, value: Term) -> Term:
        # every integer is some length (its absolute value, plus one), so the free function
        # adds no choice that no text has
        return ite(value < 0, -value, value) + 1

    def length(self, model: z3.ModelRef, ident: int) -> int:
        """The length ``model`` gave a fresh identity."""
        value = self.value(model, ident)
        return value.as_long() if z3.is_int_value(value) else 0


__all__ = ["Lengths", "Ranks", "text_rank"]
