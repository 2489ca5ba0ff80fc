"""Prefix and suffix tests on abstract strings: ``s.startswith("release/")`` without Z3 strings.

In the abstract reading (``symbolic.Atom``) a string is an Int identity, compared for equality
only; the string theory it avoids is what makes an unrolling of a contract with strings slow
(a plan three calls deep took 30 s in strings, 0.03 s in identities). A contract that also tests
strings against *literal* prefixes or suffixes stays in that reading: each identity has a class
per test kind, the longest of the contract's listed prefixes (suffixes) its text has, or 0 for
none. ``s.startswith(p)`` is "the class of ``s`` is a listed prefix that extends ``p``". Every
assignment of classes is some set of texts (a text with prefix ``P`` and none longer: ``P``
followed by a character no longer listed prefix continues with), so the solver cannot choose
classes no strings have; ``schema.atom_texts`` then picks texts of the classes the model chose.

A literal's class is its text's, fixed; a fresh identity's is an uninterpreted function of it.
The lists are complete before anything is encoded for real: ``Transition`` encodes the whole
contract once in a dry run, which collects them (``collecting``), and gives the encoders after it
the frozen lists; a test of another literal then is outside the fragment (``Unsupported``).

Imports z3 and ``solver.symbolic`` only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import z3

from envfactory.solver.symbolic import (
    LITERAL_TEXTS,
    Term,
    Unsupported,
    and_,
    is_sym,
    ite,
    or_,
    or_all,
    string_val,
)

KINDS = ("startswith", "endswith")

_instances = itertools.count()


def has(kind: str, text: str, affix: str) -> bool:
    """``text.startswith(affix)`` or ``text.endswith(affix)``."""
    return text.startswith(affix) if kind == "startswith" else text.endswith(affix)


class Affixes:
    """The contract's literal prefixes and suffixes, and each identity's class for both."""

    def __init__(self, listed: dict[str, tuple[str, ...]] | None = None) -> None:
        self.collecting = listed is None
        """A dry run: tests add their literal to the lists, and their formulas are not used."""
        self.listed: dict[str, list[str]] = {k: list((listed or {}).get(k, ())) for k in KINDS}
        tag = next(_instances)
        self._chains: dict[str, tuple[int, list[tuple[int, int]]]] = {}
        self._classes = {k: z3.Function(f"{k}-class!{tag}", z3.IntSort(), z3.IntSort()) for k in KINDS}

    def frozen(self) -> Affixes:
        """The lists collected so far, for the encoders that encode for real."""
        return Affixes({k: tuple(v) for k, v in self.listed.items()})

    def __bool__(self) -> bool:
        return any(self.listed.values())

    def test(self, kind: str, ident: Term, affix: str) -> Term:
        """Whether the string with identity ``ident`` has ``affix`` (a literal) as its prefix
        (``kind`` ``startswith``) or suffix (``endswith``)."""
        listed = self.listed[kind]
        if affix not in listed:
            if not self.collecting:
                raise Unsupported(f"{kind}({affix!r}) was not in the contract when its strings were read")
            listed.append(affix)
        if not is_sym(ident):
            return has(kind, LITERAL_TEXTS.get(ident, ""), affix)
        number = self.class_of(kind, ident)
        return or_all([number == i for i, p in enumerate(listed, 1) if has(kind, p, affix)])

    def class_of(self, kind: str, ident: Term) -> Term:
        """The class of an identity: its literal's where it is one, the free function's otherwise."""
        if not is_sym(ident):
            return self.literal_class(kind, LITERAL_TEXTS.get(ident, ""))
        known = len(LITERAL_TEXTS)
        chain: Term = 0
        for lit, number in self._literals(kind, known):
            chain = ite(ident == lit, number, chain)
        fresh = or_(ident >= 0, ident < -known)
        return ite(fresh, self._classes[kind](ident), chain)

    def within(self, ident: Term, most: int) -> Term:
        """A string of at most ``most`` characters has no listed affix longer than that."""
        if self.collecting or not is_sym(ident):
            return True
        parts: list[Term] = []
        for kind, listed in self.listed.items():
            too_long = [i for i, p in enumerate(listed, 1) if len(p) > most]
            if too_long:
                number = self.class_of(kind, ident)
                parts.extend(number != i for i in too_long)
        return and_(*parts)

    def _literals(self, kind: str, known: int) -> list[tuple[int, int]]:
        """The literals (of the first ``known``) with a listed affix, and their classes."""
        cached = self._chains.get(kind)
        if cached is None or cached[0] != known:
            pairs = [
                (lit, self.literal_class(kind, text)) for lit, text in list(LITERAL_TEXTS.items())[:known]
            ]
            cached = self._chains[kind] = (known, [(lit, n) for lit, n in pairs if n])
        return cached[1]

    def literal_class(self, kind: str, text: str) -> int:
        """The class of a known text: 1 + the index of its longest listed affix, or 0."""
        best, number = -1, 0
        for i, affix in enumerate(self.listed[kind], 1):
            if has(kind, text, affix) and len(affix) > best:
                best, number = len(affix), i
        return number

    def wanted(self, kind: str, number: int) -> tuple[str | None, list[str]]:
        """What a text of class ``number`` must have (its affix, or None) and must not have
        (the listed affixes longer than its own that extend it, or every one for class 0)."""
        listed = self.listed[kind]
        if not 1 <= number <= len(listed):
            return None, list(listed)
        own = listed[number - 1]
        return own, [p for p in listed if len(p) > len(own) and has(kind, p, own)]

    def fits(self, text: str, classes: Iterable[tuple[str, int]]) -> bool:
        """Whether ``text`` is of the given classes."""
        return all(self.literal_class(kind, text) == self._normal(kind, n) for kind, n in classes)

    def _normal(self, kind: str, number: int) -> int:
        return number if 1 <= number <= len(self.listed[kind]) else 0

    def classes(self, model: z3.ModelRef, ident: int) -> list[tuple[str, int]]:
        """The classes ``model`` gives a fresh identity, for the kinds the contract tests."""
        out = []
        for kind in KINDS:
            if self.listed[kind]:
                value = model.eval(self._classes[kind](z3.IntVal(ident)), model_completion=True)
                out.append((kind, self._normal(kind, value.as_long() if z3.is_int_value(value) else 0)))
        return out

    def constraint(self, var: z3.SeqRef, classes: Iterable[tuple[str, int]]) -> z3.BoolRef:
        """A Z3 string ``var`` of the given classes."""
        parts: list[Term] = []
        for kind, number in classes:
            own, others = self.wanted(kind, number)
            test = z3.PrefixOf if kind == "startswith" else z3.SuffixOf
            if own is not None:
                parts.append(test(string_val(own), var))
            parts.extend(z3.Not(test(string_val(p), var)) for p in others)
        return z3.BoolVal(True) if not parts else and_(*parts)

    def shaped(self, word: str, classes: Iterable[tuple[str, int]]) -> str:
        """``word`` with the affixes its classes ask for put around it (a drawn text)."""
        text = word
        for kind, number in classes:
            own, _ = self.wanted(kind, number)
            if own is not None:
                text = own + text if kind == "startswith" else text + own
        return text
