"""Steering: what the contract says about drawing inputs that connect calls into deep states.

A random input rarely names a live key, and a chain of k calls that each needs one happens with
probability that falls off exponentially in k. The contract says exactly which fields name keys
and how: ``input.name in members`` wants a live key, ``not (input.isbn in books)`` a fresh one,
``accounts[input.source]`` a live one; ``members[input.name].loans < 2`` or
``products[input.sku].stock >= input.qty`` compare a field with a value the state holds, so the
values at and around that threshold are where off-by-one bugs live. This module reads those
relations off an operation once per run (``Steer.of``); ``machine.Case`` applies them per call.

Imports the contracts layer only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.model import Contract, Operation

ORDERINGS = frozenset(("<", "<=", ">", ">=", "==", "!="))
MADE_AGAIN = "accepted on a key made again"
"""The clause outcome of a producer's call that makes a deleted key again (``runner.clause_outcomes``)."""
CROWD = 4
"""Live keys in every collection a producer adds to, past which it is no longer preferred."""
FITS = 16
"""Live keys (the newest) that ``Steer.fitting`` tests at most."""
UNDEFINED = (EvaluationError, TypeError, KeyError, ValueError, ArithmeticError)
"""What evaluating a clause's part on a drawn input may raise: it is undefined there."""
WITNESSES = 64
"""Records a ``Witness`` looks through at most."""
MOST_CROWD = 8
"""The most live keys a limit the contract counts (``crowds``) raises ``CROWD`` to."""


@attrs.frozen(slots=True)
class KeyField:
    """An input field that names a key of a state collection; ``fresh`` when the operation
    needs a key the collection does not hold yet (a producer's ``not (input.x in c)``)."""

    field: str
    collection: str
    fresh: bool


@attrs.frozen(slots=True)
class Threshold:
    """An input field compared with a value computed from the state (and the rest of the input):
    ``bound`` reads that value, so the fuzzer can draw the field at and around it."""

    field: str
    bound: Compiled = attrs.field(eq=False, repr=False)
    apart: bool = False
    """The clause wants the field *unlike* the bound (``input.src != input.dst``): the value at
    the bound is the refused one, so a call meant to be accepted never takes it."""
    equal: bool = False
    """The clause wants the field *at* the bound (``members[input.member].apikey == input.key``):
    its neighbours are refused, so the bound itself is drawn most of the time."""


@attrs.frozen(slots=True)
class Role:
    """An input field an operation stores in a scalar state variable (``session = input.name``)
    that the clauses compare with records (``session in pulls[n].reviewers``, ``pulls[n].author
    == session``, ``users[session].admin``): drawn now and then as a value those records hold,
    so that the call which needs the right user logged in finds them logged in."""

    field: str
    holders: tuple[tuple[str, str], ...]
    """(collection, record field) whose values a clause compares the variable with."""
    flags: tuple[tuple[str, str], ...] = ()
    """(collection, record field) read at the variable's key (``users[session].admin``)."""


@attrs.frozen(slots=True)
class Witness:
    """An input field that an ``any`` of the requires compares with a field of the records it
    ranges over (``any(members[m].project == input.project and members[m].user == input.actor
    for m in members)``): the call is accepted only where the field names what one of those
    records holds, so it is drawn as that field of a record the rest of the body holds of
    (``candidates``). A join through the state (the actor must hold a membership of the VM's
    project) that no key or threshold of the field says."""

    field: str
    var: str
    domain: Compiled = attrs.field(eq=False, repr=False)
    value: Compiled = attrs.field(eq=False, repr=False)
    rest: tuple[Compiled, ...] = attrs.field(eq=False, repr=False)
    """The body's other conjuncts and the quantifier's condition, over the bound ``var``."""

    def candidates(
        self, state: Mapping[str, Any], value: Mapping[str, Any], only: Callable[[Any], bool] | None = None
    ) -> list[Any]:
        """The values the field may take with the rest of ``value`` as drawn, first records first
        (of the records ``only`` keeps, where given)."""
        env = Env(state, value)
        try:
            domain = self.domain(env)
        except UNDEFINED:
            return []
        items = list(domain.keys()) if isinstance(domain, Mapping) else list(domain or ())
        if only is not None:
            items = [item for item in items if only(item)]
        found: list[Any] = []
        for item in items[:WITNESSES]:
            env.locals[self.var] = item
            try:
                if all(test(env) is True for test in self.rest):
                    held = self.value(env)
                    if isinstance(held, str | int) and held not in found:
                        found.append(held)
            except UNDEFINED:
                continue
        return found

    def held_by(self, state: Mapping[str, Any], value: Mapping[str, Any], collection: str, key: Any) -> Any:
        """What the field takes for the record ``key`` of ``collection`` to be the one the
        ``any`` names, whether or not the rest of its body holds of it (a membership whose
        role was just changed: an implementation that judges by the role as added shows only
        on a call that names it); None where the quantifier does not range over that
        collection or the record has no such value."""
        records = state.get(collection)
        if not isinstance(records, Mapping) or key not in records:
            return None
        env = Env(state, value)
        try:
            if self.domain(env) is not records:
                return None
            env.locals[self.var] = key
            held = self.value(env)
        except UNDEFINED:
            return None
        return held if nameable(held) else None


@attrs.frozen(slots=True)
class Member:
    """An input field a requires wants among the items of a list the state holds (``input.secret
    in pipelines[input.pipeline].secrets``, ``input.version in packages[input.package].yanked``):
    no key, threshold or witness says which values those are, and a drawn string is almost never
    one, so a valid call that may leave the field out (a job that names no secret) nearly always
    does, and the path that reads the list is never taken."""

    field: str
    items: Compiled = attrs.field(eq=False, repr=False)
    """The list, read with the rest of the input as drawn."""

    def choices(self, state: Mapping[str, Any], value: Mapping[str, Any]) -> list[Any]:
        """The list's items the field may take (none where it is undefined or not a list)."""
        try:
            items = self.items(Env(state, value))
        except UNDEFINED:
            return []
        if not isinstance(items, list | tuple):
            return []
        return [item for item in items[:WITNESSES] if nameable(item)]


@attrs.frozen(slots=True)
class Elsewhere:
    """An input field a requires compares with a place of the one record the call names
    (``input.by in channels[c].moderators``, ``input.by == channels[c].owner``): what that place
    holds in the collection's other records is the value a target that checks the role against
    any record, not the named one, lets in (a moderator of one channel deleting a message of
    another). No key, threshold or member draw gives it: those take this record's values, and a
    value drawn at random is another record's only by chance."""

    field: str
    collection: str
    place: str
    key: Compiled = attrs.field(eq=False, repr=False)
    """The key of the record the clause reads, with the rest of the input as drawn."""

    def values(self, state: Mapping[str, Any], value: Mapping[str, Any]) -> list[Any]:
        """What ``place`` holds in the other records (the items of a list), less what it holds
        in the named one; none where the named record is not there."""
        records = state.get(self.collection)
        try:
            named = self.key(Env(state, value))
        except UNDEFINED:
            return []
        if not isinstance(records, Mapping) or not nameable(named) or named not in records:
            return []
        own = held_items(records[named], self.place)
        found: list[Any] = []
        for key, record in itertools.islice(records.items(), WITNESSES):
            if key != named:
                found.extend(
                    item for item in held_items(record, self.place) if item not in own and item not in found
                )
        return found


def held_items(record: Any, place: str) -> list[Any]:
    """The nameable values a record's field holds: its items, where it is a list."""
    held = record.get(place) if isinstance(record, Mapping) else None
    return [item for item in (held if isinstance(held, list | tuple) else (held,)) if nameable(item)]


@attrs.frozen(slots=True)
class Steer:
    """Everything the fuzzer reads off one operation to draw inputs that it accepts."""

    keys: tuple[KeyField, ...]
    thresholds: tuple[Threshold, ...]
    needs: frozenset[str]
    """Collections that must hold a key for the operation to be enabled at all."""
    makes: frozenset[str] = frozenset()
    """Collections the operation adds a fresh key to (and reads no live key of)."""
    distinct: tuple[str, ...] = ()
    """Collections two of whose live keys a clause requires to differ (``input.src !=
    input.dst``): the operation needs two keys there, not one."""
    deletes: frozenset[str] = frozenset()
    """Collections the operation deletes the key an input field names from (``del c[input.k]``)."""
    roles: tuple[Role, ...] = ()
    """Input fields stored in a scalar the clauses compare with records (``roles``)."""
    fits: tuple[tuple[str, Compiled], ...] = attrs.field(default=(), eq=False, repr=False)
    """The requires that read one live key's field and the state (``lots[input.lot].status ==
    "live"``, ``clock < lots[input.lot].deadline``): which of the live keys the call may name
    (``record_tests``)."""
    guards: tuple[Compiled, ...] = attrs.field(default=(), eq=False, repr=False)
    """The requires that read the state alone and test a mode, not a limit (``session !=
    null``, ``open``): no input passes them where they fail, so the operation is not preferred
    there. A limit (``moves < 4``) is not one: the call at the limit is the boundary probe
    where off-by-one bugs live."""
    witnesses: tuple[Witness, ...] = ()
    """Input fields an ``any`` of the requires compares with its records' fields (``witnesses``)."""
    crowd: tuple[tuple[str, int], ...] = ()
    """For each collection in ``makes`` or put at a key the target returns, the live keys past
    which the operation is no longer preferred (``CROWD``, or more where a limit the contract
    counts needs more: ``crowds``)."""
    members: tuple[Member, ...] = ()
    """Input fields a requires wants among a list's items (``members``)."""
    elsewhere: tuple[Elsewhere, ...] = ()
    """Input fields a requires compares with a place of the record the call names (``elsewhere``)."""
    item_keys: tuple[ItemKey, ...] = ()
    """Fields of a list input's items that name live keys (``item_keys``)."""
    flagged: tuple[Flagged, ...] = ()
    """Input fields a quantifier compares with records whose flags it does not read (``flagged``)."""

    @classmethod
    def of(cls, op: Operation, contract: Contract, crowds: Mapping[str, int] | None = None) -> Steer:
        """What ``op`` needs; ``crowds`` (``crowds(contract)``, computed once per run by whoever
        needs ``possible``) raises the crowd of a collection whose keys a limit counts."""
        keys = key_fields(op, contract)
        needs = frozenset(k.collection for k in keys if not k.fresh)
        makes = frozenset(k.collection for k in keys if k.fresh) - needs
        deletes = frozenset(
            e.target.var
            for e in op.effects
            if e.is_delete and e.target.key is not None and input_field(e.target.key) is not None
        )
        guards = tuple(c.fn for c in op.requires if _mode(c.expr))
        # a record put at a key the target returns (``c[output.id] = output``) is a making too,
        # though no input names its key: left uncrowded, one such producer took half the calls
        # of a document of four hundred operations
        assigned = frozenset(
            e.target.var
            for e in op.effects
            if not e.is_delete and e.target.key is not None and "output" in ir.free_names(e.target.key)
        )
        return cls(
            keys,
            thresholds(op),
            needs,
            makes,
            distinct_keys(op, keys),
            deletes,
            roles(op, contract),
            record_tests(op, keys),
            guards,
            witnesses(op),
            tuple(
                (name, max(CROWD, (crowds or {}).get(name, CROWD)))
                for name in sorted(makes | (assigned - needs))
            ),
            members(op, contract),
            elsewhere(op, contract),
            item_keys(op, contract),
            flagged(op, contract),
        )

    def fitting(self, field: str, state: Mapping[str, Any], keys: list[Any]) -> list[Any] | None:
        """The ``keys`` (the newest ``FITS`` of them) that pass every requires reading only
        ``field`` and the state (``fits``): a bid on a live lot, not on one that has closed.
        None where no such requires reads ``field`` (every key fits: none is left out)."""
        tests = [test for name, test in self.fits if name == field]
        if not tests:
            return None
        return [key for key in keys[-FITS:] if all(holds_at(test, state, field, key) for test in tests)]

    def possible(self, state: Mapping[str, Any]) -> bool:
        """Whether the operation may be enabled in ``state`` and is worth preferring: every
        collection it reads a live key of holds one (two where a clause wants two different
        ones: a move between bins is never accepted while there is one bin), a cheap necessary
        condition the model judges the rest of; and a producer's collection is not crowded yet:
        bugs need a few distinct keys, and a case that spends its steps making a tenth one
        builds no depth. An operation whose mode ``guards`` fail is not preferred either (a
        login while someone is logged in: every input is refused)."""
        if not all(state.get(name) for name in self.needs):
            return False
        if any(len(state.get(name) or ()) < 2 for name in self.distinct):
            return False
        if self.guards and not self._guarded(state):
            return False
        return not self.crowd or any(len(state.get(name) or ()) < most for name, most in self.crowd)

    def _guarded(self, state: Mapping[str, Any]) -> bool:
        """Whether the mode ``guards`` hold (a login while someone is logged in, a logout while
        no one is: refused whatever the input); one the state cannot evaluate leaves it to the
        model."""
        env = Env(state, None)
        for guard in self.guards:
            try:
                if guard(env) is not True:
                    return False
            except (EvaluationError, TypeError, KeyError):
                return True  # the model judges it: not ours to rule out
        return True


def crowds(contract: Contract) -> dict[str, int]:
    """The live keys each collection needs where a requires compares a count of its keys with a
    constant (``sum(1 for l in lots if lots[l].seller == s and ...) < 3``, ``len(books) <= 5``):
    the count at the limit, the key refused there, and one more in another state (a lot
    cancelled as a draft next to the three live ones: a limit whose bug is in what it counts).
    Limits that need more than ``MOST_CROWD`` keys are left to ``CROWD``."""
    out: dict[str, int] = {}
    for op in contract.operations.values():
        for node in (node for clause in op.requires for node in ir.walk(clause.expr)):
            if not isinstance(node, ir.Compare) or node.op not in ("<", "<=", ">", ">="):
                continue
            for count, bound, sign in (
                (node.left, node.right, node.op),
                (node.right, node.left, _FLIP[node.op]),
            ):
                collection = _counted(count)
                if collection is None or not isinstance(bound, ir.Const):
                    continue
                limit = bound.value
                if isinstance(limit, bool) or not isinstance(limit, int) or sign not in ("<", "<="):
                    continue
                need = limit + (2 if sign == "<" else 3)
                if need <= MOST_CROWD:
                    out[collection] = max(out.get(collection, CROWD), need)
    return out


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _counted(node: ir.Expr) -> str | None:
    """The collection ``node`` counts the keys of (``len(c)``, ``sum(... for k in c ...)``)."""
    if isinstance(node, ir.Call) and node.func == "len" and len(node.args) == 1:
        node = node.args[0]
        return node.id if isinstance(node, ir.Name) else None
    if isinstance(node, ir.Quant) and node.kind == "sum" and isinstance(node.domain, ir.Name):
        return node.domain.id
    return None


def roles(op: Operation, contract: Contract) -> tuple[Role, ...]:
    """The operation's ``Role`` fields: ``var = input.f`` where clauses compare ``var`` with
    records' fields."""
    out: list[Role] = []
    for effect in op.effects:
        target = effect.target
        if target.key is not None or target.fields or effect.value is None:
            continue
        field = input_field(effect.value)
        if field is None:
            continue
        holders, flags = _compared_with(contract, target.var)
        if holders or flags:
            out.append(Role(field, holders, flags))
    return tuple(out)


def _compared_with(
    contract: Contract, var: str
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """Where the requires compare ``var`` with a record's field (``var in c[k].g``, ``c[k].g ==
    var``), and which records' fields they read at ``var`` (``c[var].g``)."""
    holders: list[tuple[str, str]] = []
    flags: list[tuple[str, str]] = []
    for op in contract.operations.values():
        for clause in op.requires:
            for node in ir.walk(clause.expr):
                if isinstance(node, ir.Compare) and node.op in ("in", "=="):
                    for side, other in ((node.left, node.right), (node.right, node.left)):
                        place = record_field(other, None)
                        if isinstance(side, ir.Name) and side.id == var and place and place not in holders:
                            holders.append(place)
                place = record_field(node, var)
                if place and place not in flags:
                    flags.append(place)
    return tuple(holders), tuple(flags)


def record_field(node: ir.Expr, key: str | None) -> tuple[str, str] | None:
    """``(c, g)`` for ``c[...].g`` (for ``c[key].g`` only, where ``key`` names a variable)."""
    if not (
        isinstance(node, ir.Attr) and isinstance(node.obj, ir.Index) and isinstance(node.obj.obj, ir.Name)
    ):
        return None
    if key is not None and not (isinstance(node.obj.key, ir.Name) and node.obj.key.id == key):
        return None
    return node.obj.obj.id, node.name


def _mode(node: ir.Expr) -> bool:
    """Whether a requires reads the state alone and is no ordering (``<``, ``>=``...) of it."""
    if {"input", "output"} & ir.free_names(node):
        return False
    return not (isinstance(node, ir.Compare) and node.op in ORDERINGS - {"==", "!="})


def input_field(node: ir.Expr) -> str | None:
    """``f`` for the expression ``input.f`` (or ``input["f"]``), else None."""
    if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name) and node.obj.id == "input":
        return node.name
    if (
        isinstance(node, ir.Index)
        and isinstance(node.obj, ir.Name)
        and node.obj.id == "input"
        and isinstance(node.key, ir.Const)
        and isinstance(node.key.value, str)
    ):
        return node.key.value
    return None


def reads_field(node: ir.Expr, field: str) -> bool:
    """Whether ``node`` reads ``input.field`` anywhere."""
    return any(input_field(n) == field for n in ir.walk(node))


def key_fields(op: Operation, contract: Contract) -> tuple[KeyField, ...]:
    """Input fields that name keys of state collections, read from requires and effects: a field
    tested with ``not in`` (under an even number of negations) wants a fresh key; one tested with
    ``in``, or used to index a collection in a clause, a live one; a field that only keys an
    effect's target (an upsert) counts as fresh."""
    collections = contract.collections()
    relation: dict[str, tuple[str, bool]] = {}

    def note(field: str | None, collection: str, fresh: bool) -> None:
        if field is None:
            return
        if field not in relation or (fresh and not relation[field][1]):
            relation[field] = (collection, fresh)

    def visit(expr: ir.Expr) -> None:
        for node, negated in signed(expr):
            if (
                isinstance(node, ir.Compare)
                and node.op in ("in", "not in")
                and isinstance(node.right, ir.Name)
                and node.right.id in collections
            ):
                note(input_field(node.left), node.right.id, negated != (node.op == "not in"))
            if isinstance(node, ir.Index) and isinstance(node.obj, ir.Name) and node.obj.id in collections:
                note(input_field(node.key), node.obj.id, False)

    for clause in op.requires:
        visit(clause.expr)
    for effect in op.effects:
        if effect.value is not None:
            visit(effect.value)
        key = effect.target.key
        if key is not None and effect.target.var in collections:
            field = input_field(key)
            if field is not None and field not in relation:
                relation[field] = (effect.target.var, not effect.target.fields and not effect.is_delete)
    return tuple(KeyField(f, c, fresh) for f, (c, fresh) in sorted(relation.items()))


def signed(node: ir.Expr, negated: bool = False) -> Iterator[tuple[ir.Expr, bool]]:
    """Every node of ``node`` but the ``not``s, with whether an odd number of them sits above it:
    ``not (input.x in c)`` wants ``x`` fresh, ``not (input.x not in c)`` wants it live."""
    if isinstance(node, ir.Unary) and node.op == "not":
        yield from signed(node.operand, not negated)
        return
    yield node, negated
    for child in ir.children(node):
        yield from signed(child, negated)


def nameable(value: Any) -> bool:
    """Whether ``value`` can stand for a name a field takes: a string or an integer (a boolean
    is an ``int`` to Python, and never a key, a member or a held value)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def holds_at(test: Compiled, state: Mapping[str, Any], field: str, key: Any) -> bool:
    """Whether ``test`` holds with ``field`` naming the record ``key`` (an error: it does not)."""
    try:
        return test(Env(state, {field: key})) is True
    except UNDEFINED:
        return False


def record_tests(op: Operation, keys: tuple[KeyField, ...]) -> tuple[tuple[str, Compiled], ...]:
    """The requires whose only input field names a live key and that read its record: each
    with the field (a membership test ``input.lot in lots`` holds of every live key: left out)."""
    live = {k.field: k.collection for k in keys if not k.fresh}
    out: list[tuple[str, Compiled]] = []
    for clause in op.requires:
        nodes = list(ir.walk(clause.expr))
        fields = {f for n in nodes if (f := input_field(n)) is not None}
        if len(fields) != 1 or (field := fields.pop()) not in live:
            continue
        if any(
            isinstance(n, ir.Index) and isinstance(n.obj, ir.Name) and input_field(n.key) == field
            for n in nodes
        ):
            out.append((field, clause.fn))
    return tuple(out)


def distinct_keys(op: Operation, keys: tuple[KeyField, ...]) -> tuple[str, ...]:
    """Collections for which a ``requires`` says ``input.a != input.b`` (or ``not (input.a ==
    input.b)``) of two fields that both name a live key of it."""
    live = {k.field: k.collection for k in keys if not k.fresh}
    found: set[str] = set()

    def visit(node: ir.Expr, negated: bool) -> None:
        if isinstance(node, ir.Unary) and node.op == "not":
            visit(node.operand, not negated)
            return
        if isinstance(node, ir.Compare) and node.op in ("!=", "=="):
            left, right = input_field(node.left), input_field(node.right)
            if (
                (node.op == "!=") != negated
                and left in live
                and right in live
                and left != right
                and live[left] == live[right]
            ):
                found.add(live[left])
        if isinstance(node, ir.BoolOp) and node.op == "and" and not negated:
            for child in ir.children(node):
                visit(child, negated)

    for clause in op.requires:
        visit(clause.expr, False)
    return tuple(sorted(found))


def thresholds(op: Operation) -> tuple[Threshold, ...]:
    """Input fields compared (``< <= > >= == !=``) with an expression that does not read them."""
    found: dict[str, list[tuple[Compiled, str]]] = {}
    for clause in op.requires:
        for node in ir.walk(clause.expr):
            if not isinstance(node, ir.Compare) or node.op not in ORDERINGS:
                continue
            for side, other in ((node.left, node.right), (node.right, node.left)):
                field, other = _solve_for_field(side, other)
                if field is None or isinstance(other, ir.Const):
                    continue  # a constant bound is the schema's business (boundary values)
                if reads_field(other, field):
                    continue
                found.setdefault(field, []).append((compile_expr(other), node.op))
    return tuple(
        Threshold(field, bound, op == "!=", op == "==")
        for field, bounds in sorted(found.items())
        for bound, op in bounds
    )


def witnesses(op: Operation) -> tuple[Witness, ...]:
    """The ``Witness`` fields of ``op``: an ``any`` reached from a requires through ``and`` and
    ``or`` only (so that it holding lets the clause hold), whose body has a conjunct ``input.f ==
    e`` (or ``e == input.f``) with ``e`` reading the bound variable and not ``input.f``; the
    other conjuncts that do not read ``input.f`` are the ``rest``."""
    found: list[Witness] = []

    def visit(node: ir.Expr) -> None:
        if isinstance(node, ir.BoolOp):
            for operand in node.operands:
                visit(operand)
            return
        if not (isinstance(node, ir.Quant) and node.kind == "any"):
            return
        found.extend(_compared(node, ir.conjuncts(node.body), [] if node.cond is None else [node.cond]))

    for clause in op.requires:
        visit(clause.expr)
    return tuple(found)


def _compared(node: ir.Quant, parts: list[ir.Expr], also: list[ir.Expr]) -> Iterator[Witness]:
    """A ``Witness`` for each of ``parts`` (conjuncts of a quantifier's body) of the shape
    ``input.f == e`` (either way round), ``e`` reading the bound variable and not ``input.f``;
    the other parts and ``also`` that do not read ``input.f`` are its ``rest``."""
    for part in parts:
        if not (isinstance(part, ir.Compare) and part.op == "=="):
            continue
        for side, other in ((part.left, part.right), (part.right, part.left)):
            field = input_field(side)
            if field is None or reads_field(other, field) or node.var not in ir.free_names(other):
                continue
            rest = [p for p in [*parts, *also] if p is not part and not reads_field(p, field)]
            yield Witness(
                field,
                node.var,
                compile_expr(node.domain),
                compile_expr(other, (node.var,)),
                tuple(compile_expr(p, (node.var,)) for p in rest),
            )


@attrs.frozen(slots=True)
class Flagged:
    """An input field a quantifier of the requires compares with a field of the records it ranges
    over (``any(items[k].kind == "folder" and items[k].parent == input.item for k in items)``,
    anywhere in a clause), where those records have boolean fields the quantifier does not read
    (``trashed``): a record with such a flag set is counted by the contract, and an
    implementation that leaves the trashed (archived, cancelled) ones out, or counts them where
    the contract does not, shows only on a call whose quantifier meets one. A random key seldom
    does: the drive's move of a folder whose subfolder is in the trash."""

    collection: str
    flags: tuple[str, ...]
    witness: Witness

    @property
    def field(self) -> str:
        return self.witness.field

    def candidates(self, state: Mapping[str, Any], value: Mapping[str, Any]) -> list[Any]:
        """The values the field takes for the quantifier to meet a record with a flag set."""
        records = state.get(self.collection)
        if not isinstance(records, Mapping):
            return []

        def has_flag(key: Any) -> bool:
            record = records.get(key)
            return isinstance(record, Mapping) and any(record.get(f) is True for f in self.flags)

        return self.witness.candidates(state, value, has_flag)


def flagged(op: Operation, contract: Contract) -> tuple[Flagged, ...]:
    """The ``Flagged`` fields of ``op``: every quantifier of its requires over a collection whose
    records have boolean fields it does not read, with a conjunct of its body or condition
    ``input.f == e`` (``e`` reading the bound variable and not ``input.f``)."""
    found: list[Flagged] = []
    for clause in op.requires:
        for node in ir.walk(clause.expr):
            if not (isinstance(node, ir.Quant) and isinstance(node.domain, ir.Name)):
                continue
            var = contract.state.get(node.domain.id)
            record = var.type.value if var is not None and isinstance(var.type, T.MapType) else None
            if not isinstance(record, T.RecordType):
                continue
            read = {n.name for n in ir.walk(node) if isinstance(n, ir.Attr)}
            flags = tuple(
                name
                for name, kind in record.fields
                if isinstance(kind, T.Prim) and kind.kind == "boolean" and name not in read
            )
            if not flags:
                continue
            parts = ir.conjuncts(node.body) + (ir.conjuncts(node.cond) if node.cond is not None else [])
            found += [Flagged(node.domain.id, flags, witness) for witness in _compared(node, parts, [])]
    return tuple(found)


@attrs.frozen(slots=True)
class Fill:
    """A count that a requires of an operation bounds, of records filtered by fields equal to
    input fields (``sum(1 for m in messages if messages[m].channel == input.channel and
    messages[m].author == input.user) < channels[input.channel].limit``), or of the items of a
    list a record the call names holds (``len(channels[input.channel].members) < 4``): which input
    field takes which record field (or the record's key), so that a call can be drawn to count
    one more beside a given record (``Case.refill``)."""

    collection: str
    fields: tuple[tuple[str, str], ...]
    """(input field, record field) pairs of the filter's equalities."""
    reads: frozenset[str]
    """The record fields the count reads: a change to one moves the count."""
    key: str | None = None
    """The input field that names the record whose list is counted (None: records are)."""

    def values(self, key: Any, record: Any) -> dict[str, Any] | None:
        """The input fields that count one more beside ``record`` (under ``key``); None where it
        lacks a field."""
        if not isinstance(record, Mapping) or any(field not in record for _, field in self.fields):
            return None
        out = {name: record[field] for name, field in self.fields}
        if self.key is not None:
            out[self.key] = key
        return out


def fills(op: Operation, contract: Contract) -> tuple[Fill, ...]:
    """The ``Fill`` counts of ``op``'s requires: a ``sum`` over a collection whose filter has an
    ``and`` part ``c[v].f == input.x`` (either way round), and a ``len(c[input.k].f)``."""
    collections = contract.collections()
    found: dict[tuple[str, tuple[tuple[str, str], ...], str | None], Fill] = {}
    for clause in op.requires:
        for node in ir.walk(clause.expr):
            fill = _listed(node, collections) or _filtered(node, collections)
            if fill is None:
                continue
            same = (fill.collection, fill.fields, fill.key)  # one count read twice: one fill
            if (seen := found.get(same)) is not None:
                fill = attrs.evolve(seen, reads=seen.reads | fill.reads)
            found[same] = fill
    return tuple(found.values())


def _listed(node: ir.Expr, collections: frozenset[str]) -> Fill | None:
    """The ``Fill`` of ``len(c[input.k].f)``."""
    match node:
        case ir.Call(func="len", args=(ir.Attr(obj=ir.Index(obj=ir.Name(id=name), key=key), name=field),)):
            named = input_field(key)
            if name in collections and named is not None:
                return Fill(name, (), frozenset({field}), named)
    return None


def _filtered(node: ir.Expr, collections: frozenset[str]) -> Fill | None:
    """The ``Fill`` of a ``sum`` over a collection filtered by equalities with input fields."""
    if not (
        isinstance(node, ir.Quant)
        and node.kind == "sum"
        and node.cond is not None
        and isinstance(node.domain, ir.Name)
        and node.domain.id in collections
    ):
        return None
    collection = node.domain.id
    pairs: list[tuple[str, str]] = []
    for part in ir.conjuncts(node.cond):
        if not (isinstance(part, ir.Compare) and part.op == "=="):
            continue
        for side, other in ((part.left, part.right), (part.right, part.left)):
            named, held = input_field(side), record_field(other, node.var)
            if named is not None and held is not None and held[0] == collection:
                pairs.append((named, held[1]))
    if not pairs:
        return None
    reads = frozenset(
        held[1]
        for inner in ir.walk(node.cond)
        if (held := record_field(inner, node.var)) is not None and held[0] == collection
    )
    return Fill(collection, tuple(pairs), reads)


def members(op: Operation, contract: Contract) -> tuple[Member, ...]:
    """The ``Member`` fields of ``op``: ``input.f in e`` under an even number of negations in a
    requires, with ``e`` not a state collection (a key the collection holds is ``key_fields``'s)
    and not reading ``input.f``."""
    collections = contract.collections()
    found: list[Member] = []
    for clause in op.requires:
        for node, negated in signed(clause.expr):
            if not (isinstance(node, ir.Compare) and node.op in ("in", "not in")):
                continue
            field, right = input_field(node.left), node.right
            if (
                field is not None
                and negated == (node.op == "not in")
                and not (isinstance(right, ir.Name) and right.id in collections)
                and not reads_field(right, field)
            ):
                found.append(Member(field, compile_expr(right)))
    return tuple(found)


@attrs.frozen(slots=True)
class ItemKey:
    """A field of the items of a list input that names a live key of a collection
    (``all(x.product in products for x in input.lines)``, ``products[input.lines[1].product]``):
    an order of two lines wants two products that exist, and distinct ones where a clause says
    so. ``key_fields`` reads top-level fields only: 923 two-line orders of the warehouse were
    sent in a run and none was accepted."""

    field: str
    item: str
    collection: str


def item_keys(op: Operation, contract: Contract) -> tuple[ItemKey, ...]:
    """The ``ItemKey`` fields of ``op``, read off its requires and effects: ``X.f in c`` under an
    even number of negations, or ``c[X.f]``, where ``X`` is an item of ``input.l`` (the variable
    of a quantifier over it, or ``input.l[i]``)."""
    collections = contract.collections()
    found: dict[tuple[str, str], str] = {}

    def listed(node: ir.Expr, bound: Mapping[str, str]) -> str | None:
        if isinstance(node, ir.Name):
            return bound.get(node.id)
        if isinstance(node, ir.Index) and isinstance(node.key, ir.Const) and isinstance(node.key.value, int):
            return input_field(node.obj)
        return None

    def note(attr: ir.Expr, collection: str, bound: Mapping[str, str]) -> None:
        if isinstance(attr, ir.Attr) and (field := listed(attr.obj, bound)) is not None:
            found.setdefault((field, attr.name), collection)

    def visit(node: ir.Expr, negated: bool, bound: Mapping[str, str]) -> None:
        if isinstance(node, ir.Unary) and node.op == "not":
            visit(node.operand, not negated, bound)
            return
        if isinstance(node, ir.Quant):
            field = input_field(node.domain)
            inner = {**bound, node.var: field} if field is not None else bound
            visit(node.domain, False, bound)
            for part in (node.body, node.cond):
                if part is not None:
                    visit(part, negated and node.kind != "sum", inner)
            return
        if (
            isinstance(node, ir.Compare)
            and node.op in ("in", "not in")
            and negated != (node.op == "in")  # held, not wanted to fail
            and isinstance(node.right, ir.Name)
            and node.right.id in collections
        ):
            note(node.left, node.right.id, bound)
        if isinstance(node, ir.Index) and isinstance(node.obj, ir.Name) and node.obj.id in collections:
            note(node.key, node.obj.id, bound)
        for child in ir.children(node):
            visit(child, negated if isinstance(node, ir.BoolOp) else False, bound)

    for clause in op.requires:
        visit(clause.expr, False, {})
    for effect in op.effects:
        if effect.value is not None:
            visit(effect.value, False, {})
    return tuple(ItemKey(f, i, c) for (f, i), c in sorted(found.items()))


_HOLDS = frozenset(("in", "not in", "==", "!="))
"""The comparisons an ``Elsewhere`` field is read off, each way round its negation."""


def elsewhere(op: Operation, contract: Contract) -> tuple[Elsewhere, ...]:
    """The ``Elsewhere`` fields of ``op``: ``input.f in c[e].g`` or ``input.f == c[e].g`` (either
    way round) that a requires wants to hold (under an even number of negations), ``c`` a state
    collection and ``e`` reading the input and the state only, not ``input.f``."""
    collections = contract.collections()
    names = contract.state.keys() | {"input"}
    found: dict[tuple[str, str, str], Elsewhere] = {}
    for clause in op.requires:
        for node, negated in signed(clause.expr):
            # a place the field must not be in takes any other record's values: not one of these
            if not (
                isinstance(node, ir.Compare) and node.op in _HOLDS and (node.op in ("in", "==")) != negated
            ):
                continue
            pairs = (
                [(node.left, node.right)]
                if node.op in ("in", "not in")
                else [(node.left, node.right), (node.right, node.left)]
            )
            for side, other in pairs:
                field = input_field(side)
                match other:
                    case ir.Attr(obj=ir.Index(obj=ir.Name(id=collection), key=named), name=place) if (
                        field is not None
                        and collection in collections
                        # the record the call names: no quantifier's variable reads its key
                        and ir.free_names(named) <= names
                        and not reads_field(named, field)
                    ):
                        found.setdefault(
                            (field, collection, place),
                            Elsewhere(field, collection, place, compile_expr(named)),
                        )
    return tuple(found.values())


AFFIXES = frozenset(("startswith", "endswith"))


def literals(contract: Contract) -> tuple[str, ...]:
    """The strings the contract's clauses test a prefix or suffix against (``branch.startswith(
    "release/")``), in the order they appear: values a string strategy never draws, which a
    fuzzer's dictionary offers to string fields (the field tested may be a record's, filled
    from an input several calls before)."""
    found: list[str] = []
    for _, clause in contract.clauses():
        for node in ir.walk(clause.expr):
            if isinstance(node, ir.Call) and node.func in AFFIXES and len(node.args) == 2:
                arg = node.args[1]
                if isinstance(arg, ir.Const) and isinstance(arg.value, str) and arg.value not in found:
                    found.append(arg.value)
    return tuple(found)


def _solve_for_field(side: ir.Expr, other: ir.Expr) -> tuple[str | None, ir.Expr]:
    """``(f, other)`` for a side ``input.f``; for ``x + input.f``, ``input.f + x`` and
    ``input.f - x`` the field with the other side moved over (``other - x``, ``other + x``):
    ``loans[i].repaid + input.amount <= loans[i].amount`` bounds ``amount`` by what is left. An
    optional field read with its default (``input.f if "f" in input else 0``) is the field: the
    points a customer redeems are bounded by the points they have, sent or not."""
    field = _field_or_default(side)
    if field is not None or not isinstance(side, ir.BinOp) or side.op not in ("+", "-"):
        return field, other
    left, right = _field_or_default(side.left), _field_or_default(side.right)
    if left is not None and right is None:
        return left, ir.BinOp("-" if side.op == "+" else "+", other, side.right)
    if right is not None and left is None and side.op == "+":
        return right, ir.BinOp("-", other, side.left)
    return None, other


def _field_or_default(node: ir.Expr) -> str | None:
    """``f`` for ``input.f``, and for ``input.f if "f" in input else d`` (an optional field with
    its default, where ``d`` reads no input), else None."""
    if not isinstance(node, ir.IfExp):
        return input_field(node)
    test, field = node.test, input_field(node.body)
    if (
        field is not None
        and isinstance(test, ir.Compare)
        and test.op == "in"
        and test.left == ir.Const(field)
        and test.right == ir.Name("input")
        and "input" not in ir.free_names(node.orelse)
    ):
        return field
    return None


__all__ = [
    "MADE_AGAIN",
    "Fill",
    "ItemKey",
    "KeyField",
    "Role",
    "Steer",
    "Threshold",
    "crowds",
    "distinct_keys",
    "fills",
    "input_field",
    "item_keys",
    "key_fields",
    "literals",
    "record_field",
    "roles",
    "thresholds",
]
