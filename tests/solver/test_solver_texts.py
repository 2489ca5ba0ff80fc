"""Strings go into Z3 and come back as themselves. ``z3.StringVal`` reads ``\\u{..}`` and
``\\uXXXX`` in its argument as escapes and has no character past U+2FFFF, and ``as_string`` writes
escapes back: the simulator answered a tracker issue's assignee ``"\\U000b6546"`` as the
ten-character text of its escape, which broke the contract's own ``ensures``."""

from __future__ import annotations

import z3
from hypothesis import given
from hypothesis import strategies as st

from envfactory.solver.symbolic import string_val, text_of

TRICKY = st.text(
    st.one_of(
        st.sampled_from(["\\", "u", "{", "}", "5", "c", "0", "4", "1", "x"]),
        st.characters(min_codepoint=0x2FF00, max_codepoint=0x10FFFF),
        st.characters(),
    )
)


@given(TRICKY)
def test_a_text_goes_in_and_comes_back_as_itself(text: str) -> None:
    value = string_val(text)
    assert z3.simplify(z3.Length(value)).as_long() == len(text)
    assert text_of(value) == text
    var = z3.String("t")
    solver = z3.Solver()
    solver.add(var == value)
    assert solver.check() == z3.sat
    assert text_of(solver.model().eval(var)) == text


@given(TRICKY, TRICKY)
def test_two_texts_are_equal_in_z3_exactly_when_they_are(a: str, b: str) -> None:
    assert z3.is_true(z3.simplify(string_val(a) == string_val(b))) == (a == b)
