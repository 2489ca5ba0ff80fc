"""Ordering of abstract strings: ``a < b`` without Z3 strings.

In the abstract reading (``symbolic.Atom``) a string is an Int identity. One ordering of strings
anywhere in a contract (``due < input.date``, dates kept as ISO texts) used to send the whole
contract to Z3 strings, and then a plan of three calls that never touched the comparison took
longer than a fuzz run's whole budget. Here each identity has a *rank*, a rational: a literal's
is a fixed function of its text that keeps the order of texts (``text_rank``), a fresh
identity's an uninterpreted function of it. Strings are ordered by rank, then by identity, which
is a strict total order whatever ranks a model picks, so transitivity and totality hold as they
do for texts. ``schema.atom_texts`` then chooses texts in the order the model chose. Where the schemas leave no texts in that order (nothing lies between ``"a"``
and ``"a\\x00"``), the texts drawn break it, and the concrete replay every plan goes through
refuses the call: the reading over-approximates, as ``Transition.dropped`` does.

Imports z3 and ``solver.symbolic`` only.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import z3

from envfactory.solver.symbolic import LITERAL_TEXTS, Term, and_, eq, is_sym, ite, or_

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


class Ranks:
    """The ranks of a contract's abstract strings, and the comparisons over them."""

    def __init__(self) -> None:
        self._free = z3.Function(f"rank!{next(_instances)}", z3.IntSort(), z3.RealSort())
        self._chain: tuple[int, list[tuple[int, Fraction]]] = (-1, [])
        self.used = False
        """Whether any comparison was encoded: only then do texts have an order to keep."""

    def rank(self, ident: Term) -> Term:
        """The rank of the string with identity ``ident``: its literal's where it is one."""
        if not is_sym(ident):
            return _real(text_rank(LITERAL_TEXTS.get(ident, "")))
        known = len(LITERAL_TEXTS)
        if self._chain[0] != known:
            self._chain = (
                known,
                [(lit, text_rank(text)) for lit, text in list(LITERAL_TEXTS.items())[:known]],
            )
        chain: Term = self._free(ident)
        for lit, rank in self._chain[1]:
            chain = ite(ident == lit, _real(rank), chain)
        return chain

    def less(self, a: Term, b: Term) -> Term:
        """Whether the string with identity ``a`` comes before the one with identity ``b``."""
        if not is_sym(a) and not is_sym(b):
            return bool(LITERAL_TEXTS.get(a, "") < LITERAL_TEXTS.get(b, ""))
        self.used = True
        ra, rb = self.rank(a), self.rank(b)
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

    def value(self, model: z3.ModelRef, ident: int) -> Fraction:
        """The rank ``model`` gave a fresh identity."""
        value = model.eval(self._free(z3.IntVal(ident)), model_completion=True)
        if z3.is_rational_value(value):
            return Fraction(value.numerator_as_long(), value.denominator_as_long())
        return Fraction(0)  # pragma: no cover - ranks are rationals


def _real(rank: Fraction) -> z3.ArithRef:
    return z3.RealVal(f"{rank.numerator}/{rank.denominator}")


__all__ = ["Ranks", "text_rank"]
