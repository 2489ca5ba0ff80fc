"""A corpus of call sequences that reached new states, for test cases to start from.

A bug behind a counter at its limit (a fourth guest in a room of three, a fifth night, a stay
counter past four) needs a chain of calls that a random walk of twenty steps rarely completes.
Coverage-guided fuzzers (AFL, libFuzzer) keep every input that showed something new and mutate it
further; here "new" is read off the model state: a *feature* is one fact about it that the clauses
can see — a scalar's value, a collection's size, the largest and smallest value of a record
field across a collection, how many records have a flag set — with large numbers bucketed by
their magnitude. A case whose accepted call shows a feature never seen before gives its accepted
calls so far to the corpus; later cases may replay one entry and go on from there, so chains grow
across cases: one more guest, one more night, one more stay each time.

Everything is a function of the calls made, so the same seed gives the same corpus.
Imports the contracts layer only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

LIMIT = 512
"""Entries a corpus keeps at most (the first ones: a later entry is rarely shallower)."""
LONGEST = 64
"""Calls an entry keeps at most: replaying it must leave a case room for its own steps."""
EXACT = 16
"""Integers up to this magnitude are features as they are; larger ones by their bit length."""

REMADE_HISTORY = 4
"""Changes of a deleted record past which a key made again under its name is no new feature."""

Call = tuple[str, Any]
"""An accepted call: the operation and its input."""
Feature = tuple[Any, ...]


def bucket(value: int) -> int:
    """``value`` itself near zero; else its sign and magnitude (17..31 -> 5, 32..63 -> 6, ...)."""
    if -EXACT <= value <= EXACT:
        return value
    return (1 if value > 0 else -1) * (EXACT + abs(value).bit_length())


def _number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def features(name: str, value: Any) -> Iterator[Feature]:
    """The features of one state variable's value."""
    if _number(value):
        yield (name, bucket(value))
    elif isinstance(value, bool | str) or value is None:
        yield (name, value if not isinstance(value, str) or len(value) <= 32 else len(value))
    elif isinstance(value, Mapping):
        yield (name, "size", bucket(len(value)))
        highs: dict[str, int] = {}
        lows: dict[str, int] = {}
        flags: dict[str, int] = {}
        for record in value.values():
            if not isinstance(record, Mapping):
                if _number(record):
                    highs["*"] = max(highs.get("*", record), record)
                    lows["*"] = min(lows.get("*", record), record)
                continue
            for field, item in record.items():
                if _number(item):
                    highs[field] = max(highs.get(field, item), item)
                    lows[field] = min(lows.get(field, item), item)
                elif item is True:
                    flags[field] = flags.get(field, 0) + 1
        for field, high in highs.items():
            yield (name, field, "max", bucket(high))
            yield (name, field, "min", bucket(lows[field]))
        for field, count in flags.items():
            yield (name, field, "set", bucket(count))


class Corpus:
    """Accepted-call sequences that each showed a state feature no earlier call had shown."""

    __slots__ = ("entries", "seen")

    def __init__(self) -> None:
        self.seen: set[Feature] = set()
        self.entries: list[tuple[Call, ...]] = []

    def novel(self, state: Mapping[str, Any], names: Iterable[str]) -> bool:
        """Record the features of the variables ``names`` in ``state``; whether any is new."""
        seen = self.seen
        before = len(seen)
        for name in names:
            seen.update(features(name, state.get(name)))
        return len(seen) > before

    def remade(self, collection: str, history: int) -> bool:
        """Record that a key of ``collection`` was made again after a deletion, its old record
        changed ``history`` times before; whether that (bucketed) was new."""
        feature = ("remade", collection, min(history, REMADE_HISTORY))
        if feature in self.seen:
            return False
        self.seen.add(feature)
        return True

    def add(self, calls: list[Call]) -> None:
        if len(self.entries) < LIMIT and 0 < len(calls) <= LONGEST:
            self.entries.append(tuple(calls))


__all__ = ["Call", "Corpus", "bucket", "features"]
