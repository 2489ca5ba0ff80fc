"""Strings that match a ``pattern``, drawn with a handful of primitive draws.

Schema patterns are mostly small (``^[A-Z]{2}[0-9]{2,6}$``, ``^[a-z0-9-]+$``); Hypothesis's
``from_regex`` handles every pattern but costs a composite draw per character, which made a
pattern field the most expensive part of a fuzz step. ``compile_pattern`` handles literals,
character classes (ranges, ``\\d \\w \\s``, ``.``), repeats, groups, alternation and anchors, and
draws a repeated class in one ``draw_string``; it returns None for anything else (negated
classes, back-references, look-arounds), and the caller falls back to ``from_regex``.
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as P
from collections.abc import Callable
from typing import Any

from hypothesis.internal.intervalsets import IntervalSet

from envfactory.fuzz.draws import Source

PGen = Callable[[Source], str]
EXTRA_REPEATS = 6
"""An unbounded repeat (``+``, ``*``, ``{2,}``) draws at most this many more than its minimum."""

_CATEGORIES = {
    C.CATEGORY_DIGIT: [(48, 57)],
    C.CATEGORY_WORD: [(48, 57), (65, 90), (95, 95), (97, 122)],
    C.CATEGORY_SPACE: [(9, 10), (32, 32)],
}
_ANY = [(32, 126)]


class _Unsupported(Exception):
    pass


def compile_pattern(pattern: str) -> PGen | None:
    """A generator of strings matching ``pattern``, or None where this module cannot do it."""
    try:
        parsed = P.parse(pattern)
        return _seq(list(parsed))
    except (_Unsupported, re.error, TypeError, ValueError, RecursionError):
        return None


def _seq(items: list[tuple[Any, Any]]) -> PGen:
    parts: list[PGen] = [p for p in (_item(op, av) for op, av in items) if p is not None]

    def gen(src: Source) -> str:
        return "".join(p(src) for p in parts)

    return gen


def _intervals(op: Any, av: Any) -> list[tuple[int, int]] | None:
    if op is C.LITERAL:
        return [(av, av)]
    if op is C.ANY:
        return list(_ANY)
    if op is C.IN:
        out: list[tuple[int, int]] = []
        for sub_op, sub_av in av:
            if sub_op is C.LITERAL:
                out.append((sub_av, sub_av))
            elif sub_op is C.RANGE:
                out.append((sub_av[0], sub_av[1]))
            elif sub_op is C.CATEGORY and sub_av in _CATEGORIES:
                out.extend(_CATEGORIES[sub_av])
            else:
                raise _Unsupported
        return out
    return None


def _item(op: Any, av: Any) -> PGen | None:
    if op is C.AT:
        return None
    chars = _intervals(op, av)
    if chars is not None:
        alphabet = IntervalSet(chars)
        return lambda src: src.string(alphabet, 1, 1)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        low, high, sub = av
        top = low + EXTRA_REPEATS if high is C.MAXREPEAT else min(high, low + EXTRA_REPEATS)
        items = list(sub)
        if len(items) == 1:
            single = _intervals(*items[0])
            if single is not None:
                alphabet = IntervalSet(single)
                return lambda src: src.string(alphabet, low, top)
        inner = _seq(items)
        return lambda src: "".join(inner(src) for _ in range(src.integer(low, top)))
    if op is C.SUBPATTERN:
        return _seq(list(av[-1]))
    if op is C.BRANCH:
        options = [_seq(list(branch)) for branch in av[1]]
        return lambda src: options[src.index(len(options))](src)
    raise _Unsupported
