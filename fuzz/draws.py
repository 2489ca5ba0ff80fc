"""Draws: the one place the fuzzer takes choices from Hypothesis.

Every choice a fuzz test case makes (which operation, which field value, which fault) goes
through a ``Source``, which asks Hypothesis's choice sequence directly (``draw_integer``,
``draw_boolean``, ``draw_string``) instead of building a strategy per call: a primitive draw
costs a few microseconds where a composite strategy costs tens, and the calls per second of a
fuzz run are bounded by it. Hypothesis still records, replays and shrinks every choice (integers
towards the lower bound, strings towards short and simple), so findings shrink as usual.

This module uses ``hypothesis.internal`` (``ConjectureData`` and ``IntervalSet``); it is kept
small so that a change there touches one file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.internal.intervalsets import IntervalSet

T = TypeVar("T")

LOWER = IntervalSet.from_string("abcdefghijklmnopqrstuvwxyz")
ASCII = IntervalSet([(32, 126)])
UNICODE = IntervalSet([(0, 0xD7FF), (0xE000, 0x10FFFF)])


class Source:
    """Choices for one test case, taken from Hypothesis's choice sequence."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = getattr(data, "conjecture_data", data)

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        return int(self.data.draw_integer(low, high))

    def index(self, n: int) -> int:
        """An index below ``n`` (``n >= 1``); shrinks towards 0."""
        return 0 if n <= 1 else int(self.data.draw_integer(0, n - 1))

    def pick(self, items: Sequence[T]) -> T:
        return items[self.index(len(items))]

    def boolean(self, p: float = 0.5) -> bool:
        return bool(self.data.draw_boolean(p))

    def number(self, low: float | None, high: float | None) -> float:
        lo = -math.inf if low is None else low
        hi = math.inf if high is None else high
        value = float(self.data.draw_float(lo, hi, allow_nan=False))
        return value if math.isfinite(value) else 0.0

    def string(self, alphabet: IntervalSet, min_size: int, max_size: int) -> str:
        return str(self.data.draw_string(alphabet, min_size=min_size, max_size=max_size))

    def strategy(self, strategy: st.SearchStrategy[T]) -> T:
        return self.data.draw(strategy)
