"""A ``draws.Source`` stand-in for test cases built by hand, shared by the fuzz tests."""

from __future__ import annotations

import random
from typing import Any


class Seeded:
    """A ``draws.Source`` stand-in taking its choices from a seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def index(self, n: int) -> int:
        return self.rng.randrange(n) if n > 1 else 0

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        return self.rng.randint(-9 if low is None else low, 9 if high is None else high)

    def boolean(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def pick(self, items: Any) -> Any:
        return items[self.index(len(items))]

    def string(self, alphabet: Any, min_size: int, max_size: int) -> str:
        return "x" * self.rng.randint(min_size, max_size)


class Fixed(Seeded):
    """``Seeded``, with draws of ``n`` choices answered by ``answers[n]`` (only the first such
    draw for each ``n`` where ``once``)."""

    def __init__(self, seed: int, answers: dict[int, int], *, once: bool = False) -> None:
        super().__init__(seed)
        self.answers = dict(answers)
        self.once = once

    def index(self, n: int) -> int:
        if n not in self.answers:
            return super().index(n)
        return self.answers.pop(n) if self.once else self.answers[n]
