"""A JSON Schema ``pattern`` as a Z3 regular expression, for the regular fragment of Python's syntax.

Literals, ``.``, character classes (ranges, ``\\d \\w \\s`` and their negations), alternation,
groups, the repeats ``* + ? {m,n}`` (greedy or lazy: same language) and the anchors ``^``/``$`` at
the ends. Search semantics as in JSON Schema: an unanchored side matches anything there.
Back-references, look-arounds and other anchors raise ``RegexUnsupported``.
"""

from __future__ import annotations

from typing import Any

import z3

from envfactory.solver.symbolic import MAX_CHAR, string_val

try:  # Python 3.11+
    from re import _constants as C
    from re import _parser as P
except ImportError:  # pragma: no cover
    import sre_constants as C
    import sre_parse as P

MAX_REPEAT = 64


class RegexUnsupported(Exception):
    """The pattern is outside the fragment translated here."""


def _char(code: int) -> Any:
    if code > MAX_CHAR:
        raise RegexUnsupported(f"character U+{code:X} past Z3's last")
    return z3.Re(string_val(chr(code)))


def _range(lo: int, hi: int) -> Any:
    if lo > MAX_CHAR:
        return z3.Empty(z3.ReSort(z3.StringSort()))
    return z3.Range(chr(lo), chr(min(hi, MAX_CHAR)))


_ANY_CHAR = None


def _any() -> Any:
    return z3.AllChar(z3.ReSort(z3.StringSort()))


def _category(cat: Any) -> Any:
    digit = _range(ord("0"), ord("9"))
    word = z3.Union(_range(ord("a"), ord("z")), _range(ord("A"), ord("Z")), digit, _char(ord("_")))
    space = z3.Union(*(_char(ord(c)) for c in " \t\n\r\f\v"))
    table = {
        C.CATEGORY_DIGIT: digit,
        C.CATEGORY_WORD: word,
        C.CATEGORY_SPACE: space,
        C.CATEGORY_NOT_DIGIT: z3.Intersect(_any(), z3.Complement(digit)),
        C.CATEGORY_NOT_WORD: z3.Intersect(_any(), z3.Complement(word)),
        C.CATEGORY_NOT_SPACE: z3.Intersect(_any(), z3.Complement(space)),
    }
    if cat not in table:
        raise RegexUnsupported(f"character category {cat}")
    return table[cat]


def _union(parts: list[Any]) -> Any:
    if not parts:
        return z3.Empty(z3.ReSort(z3.StringSort()))
    return parts[0] if len(parts) == 1 else z3.Union(*parts)


def _concat(parts: list[Any]) -> Any:
    if not parts:
        return z3.Re(z3.StringVal(""))
    return parts[0] if len(parts) == 1 else z3.Concat(*parts)


def _class(items: list[tuple[Any, Any]]) -> Any:
    negate = False
    parts: list[Any] = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            parts.append(_char(av))
        elif op is C.RANGE:
            parts.append(_range(av[0], av[1]))
        elif op is C.CATEGORY:
            parts.append(_category(av))
        else:
            raise RegexUnsupported(f"{op} inside a character class")
    union = _union(parts)
    return z3.Intersect(_any(), z3.Complement(union)) if negate else union


def _seq(pattern: Any) -> Any:
    return _concat([_node(op, av) for op, av in pattern])


def _node(op: Any, av: Any) -> Any:
    if op is C.LITERAL:
        return _char(av)
    if op is C.NOT_LITERAL:
        return z3.Intersect(_any(), z3.Complement(_char(av)))
    if op is C.ANY:
        return z3.Intersect(_any(), z3.Complement(_char(ord("\n"))))
    if op is C.IN:
        return _class(list(av))
    if op is C.BRANCH:
        return _union([_seq(branch) for branch in av[1]])
    if op is C.SUBPATTERN:
        return _seq(av[-1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        lo, hi, inner = av
        body = _seq(inner)
        if hi is C.MAXREPEAT:
            if lo > MAX_REPEAT:
                raise RegexUnsupported("a repeat count too large")
            return _concat([*([body] * lo), z3.Star(body)]) if lo else z3.Star(body)
        if hi > MAX_REPEAT:
            raise RegexUnsupported("a repeat count too large")
        return z3.Loop(body, lo, hi)
    raise RegexUnsupported(f"regular-expression construct {op}")


def to_z3_regex(pattern: str) -> Any:
    """The set of strings ``re.search(pattern, s)`` accepts, as a Z3 regular expression."""
    try:
        parsed = list(P.parse(pattern))
    except Exception as err:
        raise RegexUnsupported(f"pattern does not parse: {err}") from None
    begin = bool(parsed) and parsed[0] == (C.AT, C.AT_BEGINNING)
    end = bool(parsed) and parsed[-1] in ((C.AT, C.AT_END), (C.AT, C.AT_END_STRING))
    body = parsed[1 if begin else 0 : len(parsed) - 1 if end else len(parsed)]
    core = _concat([_node(op, av) for op, av in body])
    anything = z3.Star(_any())
    parts = [*([] if begin else [anything]), core, *([] if end else [anything])]
    return _concat(parts)
