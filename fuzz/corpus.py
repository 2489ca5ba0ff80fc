"""A corpus of call sequences that reached new states, for test cases to start from.

A bug behind a counter at its limit (a fourth guest in a room of three, a fifth night, a stay
counter past four) needs a chain of calls that a random walk of twenty steps rarely completes.
Coverage-guided fuzzers (AFL, libFuzzer) keep every input that showed something new and mutate it
further; here "new" is read off the model state: a *feature* is one fact about it that the clauses
can see — a scalar's value, a collection's size, the largest and smallest value of a record
field across a collection, how many records have a flag set or hold a string the contract names,
each record's shape (what the clauses read of it together), what a logged-in name is in the
records, how many records satisfy each comparison a clause makes of one record with the rest of
the state (``Atom``), and which of those each record's shape satisfies — with large numbers
bucketed by their magnitude. A case whose accepted call shows a feature never seen before gives
its accepted calls so far to the corpus; later cases may replay one entry and go on from there, so
chains grow across cases: one more guest, one more night, one more stay each time. Half of those
cases pick their entry by the rarity of what it showed first (``Corpus.rarity``), so a state the
search seldom comes back to gets the cases that go on from it.

Everything is a function of the calls made, so the same seed gives the same corpus.
Imports the contracts layer and the steering's reading of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.evaluator import Compiled, compile_expr
from envfactory.contracts.model import Contract
from envfactory.fuzz.steering import holds_at, input_field, literals, record_field

LIMIT = 512
"""Entries a corpus keeps at most (the first ones: a later entry is rarely shallower)."""
LONGEST = 64
"""Calls an entry keeps at most: replaying it must leave a case room for its own steps."""
EXACT = 16
"""Integers up to this magnitude are features as they are; larger ones by their bit length."""

CACHE = 4096
"""Records whose features a corpus keeps (``features``), past which it starts again."""
SHAPE = 4
"""A record's shape (``features``) tells its numbers and list lengths apart up to this one: a
shape per combination of exact values would be too many to keep an entry for each."""
WORD = 32
"""Strings longer than this are no ``words``."""

ATOM_RECORDS = 16
"""Records of a collection an ``Atom`` is tested on at most in one state."""

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


def features(
    name: str,
    value: Any,
    words: Collection[str] = (),
    read: Collection[str] = (),
    affixes: Sequence[str] = (),
    cache: dict[tuple[str, int], tuple[Any, Summary]] | None = None,
) -> Iterator[Feature]:
    """The features of one state variable's value. Of a record's text and list fields, only
    those some clause ``read`` count (a note's free text is noise): a list's length, as a
    number; the records that hold each of the ``words``, the strings the contract's clauses
    name (``status == "closed"``), as a flag's count, and each of the ``affixes``, the prefixes and
    suffixes they test (``branch.startswith("release/")``); the records that share a text. And each
    record's *shape*, what the clauses read of it together (a pull request open with two
    reviewers and one approval; a draft reopened once): a lifecycle's bugs are in
    combinations that no one field's range shows. A ``cache`` keeps what each record showed, by
    the record (an unchanged record is the same object in the next state)."""
    if _number(value):
        yield (name, bucket(value))
    elif isinstance(value, str) and value not in words:
        yield (name, "text")  # which text it is tells nothing (``relations`` tells what it names)
    elif isinstance(value, bool | str) or value is None:
        yield (name, value)
    elif isinstance(value, Mapping):
        yield (name, "size", bucket(len(value)))
        highs: dict[tuple[str, str], int] = {}
        lows: dict[tuple[str, str], int] = {}
        counts: dict[tuple[str, Any], int] = {}
        texts: dict[str, list[str]] = {}
        shapes: set[tuple[Any, ...]] = set()
        fields = sorted(read)
        for record in value.values():
            if not isinstance(record, Mapping):
                if _number(record):
                    _extend(highs, lows, ("*", ""), record)
                continue
            hit = cache.get((name, id(record))) if cache is not None else None
            if hit is not None and hit[0] is record:
                summary = hit[1]
            else:
                summary = _summary(record, words, read, fields, affixes)
                if cache is not None:
                    if len(cache) >= CACHE:
                        cache.clear()
                    cache[name, id(record)] = (record, summary)  # the record kept: its id is not reused
            numbers, marks, found, shape = summary
            for at, number in numbers:
                _extend(highs, lows, at, number)
            for mark in marks:
                counts[mark] = counts.get(mark, 0) + 1
            for field, text in found:
                texts.setdefault(field, []).append(text)
            if shape is not None:
                shapes.add(shape)
        for (field, of), high in highs.items():
            yield (name, field, *(("len",) if of else ()), "max", bucket(high))
            yield (name, field, *(("len",) if of else ()), "min", bucket(lows[field, of]))
        for (field, what), count in counts.items():
            shown = ("set",) if what is True else what if isinstance(what, tuple) else ("is", what)
            yield (name, field, *shown, bucket(count))
        for field, items in texts.items():
            # records that share a text with another (two pull requests from one branch): where a
            # server keys something by that text instead of by the record, it goes wrong
            if (shared := len(items) - len(set(items))) > 0:
                yield (name, field, "shared", bucket(shared))
        yield from ((name, "record", shape) for shape in shapes)


Summary = tuple[
    tuple[tuple[tuple[str, str], int], ...], tuple[tuple[str, Any], ...], tuple[tuple[str, str], ...], Any
]
"""What one record shows (``_summary``): its numbers (and list lengths), its marks (flags set,
words and affixes held), its texts, and its shape (None where no field is read)."""


def _summary(
    record: Mapping[str, Any],
    words: Collection[str],
    read: Collection[str],
    fields: Sequence[str],
    affixes: Sequence[str],
) -> Summary:
    numbers: list[tuple[tuple[str, str], int]] = []
    marks: list[tuple[str, Any]] = []
    texts: list[tuple[str, str]] = []
    for field, item in record.items():
        if _number(item):
            numbers.append(((field, ""), item))
        elif item is True:
            marks.append((field, True))
        elif field not in read:
            continue
        elif isinstance(item, str):
            if item in words:
                marks.append((field, item))
            else:
                texts.append((field, item))
                marks.extend((field, ("has", affix)) for affix in _affixes(item, affixes))
        elif isinstance(item, list | tuple):
            numbers.append(((field, "len"), len(item)))
    shape = tuple(_coarse(record.get(f), words, affixes) for f in fields) if fields else None
    return tuple(numbers), tuple(marks), tuple(texts), shape


def _affixes(text: str, affixes: Sequence[str]) -> list[str]:
    return [a for a in affixes if text.startswith(a) or text.endswith(a)]


def _coarse(item: Any, words: Collection[str], affixes: Sequence[str] = ()) -> Any:
    """A record field's value in a record's shape: small numbers and lengths as they are (up to
    ``SHAPE``), a word, or only that it is some text (and which of the ``affixes`` it has)."""
    if _number(item):
        return max(min(item, SHAPE), -1)
    if isinstance(item, list | tuple):
        return ("len", min(len(item), SHAPE))
    if isinstance(item, str) and item not in words:
        return ("text", *_affixes(item, affixes))
    return item if isinstance(item, bool | str) or item is None else type(item).__name__


def relations(
    name: str, value: Any, state: Mapping[str, Any], read: Mapping[str, Collection[str]]
) -> Iterator[Feature]:
    """What a text scalar names in ``state`` (who is logged in): a key of which collection, with
    which flags of its record set (``users[session].admin``), and how many records hold it in
    each field a clause reads (the author of two pull requests, a reviewer of one)."""
    for collection, records in state.items():
        if not isinstance(records, Mapping):
            continue
        fields = read.get(collection, ())
        record = records.get(value)
        if record is not None:
            yield (name, "key of", collection)
            if isinstance(record, Mapping):
                yield from ((name, collection, f, "set") for f, item in record.items() if item is True)
        held: dict[str, int] = {}
        for record in records.values():
            if not isinstance(record, Mapping):
                continue
            for field in fields:
                item = record.get(field)
                if item == value or (isinstance(item, list | tuple) and value in item):
                    held[field] = held.get(field, 0) + 1
        yield from ((name, "in", collection, f, bucket(n)) for f, n in held.items())


def _extend(highs: dict[Any, int], lows: dict[Any, int], at: Any, value: int) -> None:
    highs[at] = max(highs.get(at, value), value)
    lows[at] = min(lows.get(at, value), value)


def _clauses(contract: Contract) -> Iterator[ir.Expr]:
    """Every clause of the contract, and every value its effects write."""
    yield from (clause.expr for _, clause in contract.clauses())
    for op in contract.operations.values():
        yield from (e.value for e in op.effects if e.value is not None)


def words(contract: Contract) -> frozenset[str]:
    """The short strings the contract's clauses and effects name (``status == "closed"``,
    ``status = "draft"``): the values of a record's text field worth counting (``features``)."""
    return frozenset(
        node.value
        for expr in _clauses(contract)
        for node in ir.walk(expr)
        if isinstance(node, ir.Const) and isinstance(node.value, str) and len(node.value) <= WORD
    )


def read_fields(contract: Contract) -> dict[str, frozenset[str]]:
    """Per collection, the fields of its records that a clause reads (``pulls[n].branch``)."""
    found: dict[str, set[str]] = {}
    for expr in _clauses(contract):
        for node in ir.walk(expr):
            if (place := record_field(node, None)) is not None:
                found.setdefault(place[0], set()).add(place[1])
    return {name: frozenset(fields) for name, fields in found.items()}


@attrs.frozen(eq=False)
class Atom:
    """A comparison a clause makes of the record an input field names, with the state around it
    (``clock < lots[input.lot].deadline``, a bid's last round ``lots[input.lot].deadline - clock
    == 1``, a seller's live lots ``sum(...) < 3``): tested on every record of the collection, how
    many satisfy it is a feature. A relation between a record and the rest of the state is what
    no one field's range shows (predicate abstraction over the contract's own atoms)."""

    expr: ir.Expr
    collection: str
    field: str
    """The input field that names the record (``lot``)."""
    reads: frozenset[str]
    """The state variables the comparison reads: it is tested again when a call writes one."""
    test: Compiled


def atoms(contract: Contract) -> tuple[Atom, ...]:
    """The comparisons of the contract's clauses and effects that read one record named by one
    input field, and other state, and that the record's own features do not show already (a
    field against a constant: its numbers and words)."""
    names = set(contract.state)
    collections = contract.collections()
    found: dict[ir.Expr, Atom] = {}
    for expr in _clauses(contract):
        for node in ir.walk(expr):
            if not isinstance(node, ir.Compare) or node in found or _plain(node):
                continue
            free = ir.free_names(node)
            if not free - {"input"} or not free <= names | {"input"}:
                continue
            nodes = list(ir.walk(node))
            fields = {f for n in nodes if (f := input_field(n)) is not None}
            keyed = [
                n.obj.id
                for n in nodes
                if isinstance(n, ir.Index) and isinstance(n.obj, ir.Name) and input_field(n.key) is not None
            ]
            if len(fields) != 1 or len(set(keyed)) != 1:
                continue
            uses = sum(1 for n in nodes if input_field(n) is not None)
            collection = keyed[0]
            if uses != len(keyed) or collection not in collections:
                continue  # the field is read as a value too: not only a record's name
            found[node] = Atom(
                node, collection, fields.pop(), frozenset(free - {"input"}), compile_expr(node)
            )
    return tuple(found.values())


def _plain(node: ir.Compare) -> bool:
    """A record field, a scalar or an input compared with a constant."""
    for side, other in ((node.left, node.right), (node.right, node.left)):
        if isinstance(other, ir.Const) and (
            isinstance(side, ir.Name) or record_field(side, None) is not None or input_field(side) is not None
        ):
            return True
    return False


class Corpus:
    """Accepted-call sequences that each showed a state feature no earlier call had shown."""

    __slots__ = (
        "affixes",
        "atoms",
        "born",
        "by_collection",
        "cache",
        "entries",
        "fresh",
        "news",
        "read",
        "seen",
        "states",
        "words",
        "young",
    )

    def __init__(self, contract: Contract | None = None) -> None:
        self.seen: dict[Feature, int] = {}
        """Every feature shown so far, with how many accepted calls showed it (negated for one
        first shown in the current round: ``young``)."""
        self.born: list[Feature] = []
        """The features first shown in the current round (``settle``)."""
        self.young = False
        """Whether the last call (``novel``) showed a feature first shown in the current round:
        the rare state change a read should follow (``Case.send``). Unlike ``fresh`` it reads
        the same when Hypothesis replays a case of the round, as the steering must."""
        self.fresh: list[Feature] = []
        """The features the last call showed first (``novel``, ``remade``)."""
        self.entries: list[tuple[Call, ...]] = []
        self.states: list[Mapping[str, Any]] = []
        """Per entry, the model's state its calls reached (where a relayed route may start:
        ``reach.relay``)."""
        self.news: list[tuple[Feature, ...]] = []
        """Per entry, the features it showed first (``rarity``)."""
        self.words = words(contract) if contract is not None else frozenset()
        """The strings the contract's clauses name (``features``)."""
        self.read = read_fields(contract) if contract is not None else {}
        """Per collection, the record fields its clauses read (``features``)."""
        self.affixes = literals(contract) if contract is not None else ()
        """The prefixes and suffixes the contract's clauses test texts for (``features``)."""
        self.atoms = atoms(contract) if contract is not None else ()
        """The comparisons whose records held count as features (``Atom``)."""
        by_collection: dict[str, list[tuple[int, Atom]]] = {}
        for i, atom in enumerate(self.atoms):
            by_collection.setdefault(atom.collection, []).append((i, atom))
        self.by_collection = {name: tuple(found) for name, found in by_collection.items()}
        """Per collection, its atoms and their places in ``atoms``."""
        self.cache: dict[tuple[str, int], tuple[Any, Summary]] = {}

    def novel(self, state: Mapping[str, Any], names: Iterable[str]) -> bool:
        """Count the features of the variables ``names`` in ``state``; whether any is new."""
        self.fresh = []
        self.young = False
        count = self._count
        for name in names:
            value = state.get(name)
            count(features(name, value, self.words, self.read.get(name, ()), self.affixes, self.cache))
            if isinstance(value, str) and value not in self.words:
                count(relations(name, value, state, self.read))
        written = set(names)
        for collection, found in self.by_collection.items():
            if all(atom.reads.isdisjoint(written) for _, atom in found):
                continue
            self._atoms(collection, found, state)
        return bool(self.fresh)

    def _count(self, shown: Iterable[Feature]) -> None:
        seen = self.seen
        for feature in shown:
            hits = seen.get(feature)
            if hits is None:
                self.fresh.append(feature)
                self.born.append(feature)
                self.young = True
                seen[feature] = -1  # first shown this round
            elif hits < 0:
                self.young = True
                seen[feature] = hits - 1
            else:
                seen[feature] = hits + 1

    def _atoms(self, collection: str, found: Sequence[tuple[int, Atom]], state: Mapping[str, Any]) -> None:
        """The features of a collection's atoms: how many records (the first ``ATOM_RECORDS``)
        satisfy each, and each record's shape together with which of them it satisfies (the lot
        extended twice *and* in its last round, where a bid must not extend it again: no count
        and no shape shows which lot is which)."""
        records = state.get(collection)
        held = [0] * len(found)
        if isinstance(records, Mapping):
            read = self.read.get(collection, ())
            for n, (key, record) in enumerate(records.items()):
                if n >= ATOM_RECORDS:
                    break
                truths = tuple(holds_at(atom.test, state, atom.field, key) for _, atom in found)
                for j, truth in enumerate(truths):
                    held[j] += truth
                if isinstance(record, Mapping) and read:
                    self._count([(collection, "record", self._shape(collection, record, read), truths)])
        self._count(("atom", i, min(count, SHAPE)) for (i, _), count in zip(found, held, strict=True))

    def _shape(self, collection: str, record: Mapping[str, Any], read: Collection[str]) -> Any:
        """A record's shape (``features``), from the cache where its features were read."""
        hit = self.cache.get((collection, id(record)))
        if hit is not None and hit[0] is record:
            return hit[1][3]
        return _summary(record, self.words, read, sorted(read), self.affixes)[3]

    def remade(self, collection: str, key: Any, history: int, state: Mapping[str, Any]) -> bool:
        """Record that ``key`` of ``collection`` was made again after a deletion, its old record
        changed ``history`` times before; whether that (bucketed), or where other records of
        ``state`` still name the key (a reviewer asked before the account was removed: the new
        account is the one they name now), was new."""
        named = sorted({f[2:4] for f in relations(collection, key, state, self.read) if f[1] == "in"})
        feature = ("remade", collection, min(history, REMADE_HISTORY), *named)
        self.fresh = []
        self._count((feature,))
        return bool(self.fresh)

    def settle(self) -> None:
        """A round begins: the features first shown in the one before are no longer young."""
        seen = self.seen
        for feature in self.born:
            seen[feature] = -seen[feature]
        self.born = []

    def add(self, calls: list[Call], state: Mapping[str, Any]) -> None:
        """Keep ``calls``, which showed the features ``fresh`` holds first in ``state``, as an
        entry."""
        if len(self.entries) < LIMIT and 0 < len(calls) <= LONGEST:
            self.entries.append(tuple(calls))
            self.states.append(state)
            self.news.append(tuple(self.fresh))

    def rarest(self) -> list[tuple[tuple[Call, ...], Mapping[str, Any]]]:
        """The entries with their states, by the weight ``rarity`` gives each: the heaviest
        (what it showed first is seldom shown since) first, the newest first among equals."""
        weights = self._weights()
        order = sorted(range(len(self.entries)), key=lambda i: (-weights[i], -i))
        return [(self.entries[i], self.states[i]) for i in order]

    def rarity(self) -> tuple[float, ...]:
        """The entries' cumulative weights, newest first: each entry weighs the sum, over the
        features it showed first, of one over how many calls have shown each since. An entry
        that reached a state the search seldom comes back to (a lot extended twice in its last
        round) weighs more than one whose news every case now shows (a second user)."""
        return tuple(itertools.accumulate(reversed(self._weights())))

    def _weights(self) -> list[float]:
        """Per entry, the sum over the features it showed first of one over how many calls have
        shown each since (``rarity``)."""
        seen = self.seen
        return [sum(1.0 / abs(seen[feature]) for feature in news) for news in self.news]


__all__ = [
    "Atom",
    "Call",
    "Corpus",
    "Summary",
    "atoms",
    "bucket",
    "features",
    "read_fields",
    "relations",
    "words",
]
