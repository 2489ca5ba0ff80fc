"""The conditions inside an operation's effects, as clause outcomes to cover and to plan for.

An accepted call can still take one of several ways through its effects: ``deadline + 1 if
deadline - clock == 1 and extended < 2 else deadline`` extends a lot's deadline for a late bid,
up to twice. The third late bid (the first part holds, the second fails) is where an
implementation that counts the extensions otherwise goes wrong, and it is ten calls deep: the
requires never refuse it, so no ``requires`` outcome asks for it. Each condition of an effect
gives outcomes of its own, as a ``requires`` does: the condition holding, and each of its
``and`` parts failing while the ones before it hold. They are counted in the summary, and the
ones still uncovered are goals for the planner (``reach.py``) like any other.

A ``requires`` that compares numbers has a bound: the last value it lets through (``count <
limit`` with the count one short of the limit, ``used + size <= room`` with them equal). An
implementation that counts one short refuses exactly there, and no refusal shows it: the route
to ``requires k fails`` may jump past the bound (a move that brings three snapshots at once)
without a call ever accepted at it. So each such comparison gives one outcome more, ``requires k
at its bound``: the call accepted with the comparison at its bound and deciding the clause (the
other ways through an ``or`` not taken). It is a condition like the others (``Branch``), counted,
aimed at and planned for the same way.

A ``requires`` that reads a record by one key, where the call names another record of the same
collection, gives one outcome more per other key: the call accepted where the clause would refuse
it with that record read in its place (``requires 8 with input.doctor for input.to``): a transfer
that compares the receiving doctor's load with the sending doctor's cap, or a delivery attempt
that counts the tries of the hub the parcel came from, not the one it is at. That is the clause
with one key swapped (a weak mutant of it), and an implementation that reads the wrong record
agrees with the contract until a state tells the two records apart: two doctors of different
caps, the receiver with a patient already. (Its other side, the call refused where the swapped
clause lets it in, is no outcome: planned for too, it took the courier's 28 swaps to 56 goals and
lost more there than it found elsewhere.) The other keys are the call's input fields that
name live keys of the collection (``input.doctor in doctors``, ``doctors[input.to]``) and, for a record's field
that names keys of a collection (``parcels[p].to`` read as ``hubs[parcels[p].to]``), the same
record's other fields the contract reads as keys of it (``parcels[p].origin``).

A ``requires`` that counts records filtered by a field compared with one of the values its
schema lists (``sum(... for b in bookings if ... and shows[bookings[b].show].status != "closed")``)
gives one outcome more per other listed value: the call on which the clause and its mutant with
that value kept out of the count too (let in, for ``==``) differ, on the side where the contract
is the stricter (``statuses``): a booking refused where the mutant would let it through, since
an implementation that stops counting a cancelled show's seats as it does a closed one's agrees
with the contract until a customer holds seats of a cancelled show and books past the limit.
The outcome is counted on the calls that clause refuses (``Branch.refused``) and planned for as
that refusal with the mutant holding. (Where the mutant is the stricter, a limit of running jobs
that would count the queued ones too, the outcome would be a call accepted that the mutant
refuses: planned for as well, on the five held-out sets with such clauses, seed 3, it lost five
bugs and found two.)

A ``requires`` that reads a value the call's effects move by a sum (``points >= earned``, with
``points = points + used - earned`` among the effects) gives one outcome more per part of the move
that only loosens it (``requires 3 after ... points + orders[input.id].used``): the call refused
where the clause read with that part made already would let it in (``afters``). That is the
implementation that checks part-way through its update, after giving back the points an order
redeemed and before taking back the ones it earned; it agrees with the contract until an order
has both redeemed and earned points and the earned ones are spent, eight calls in.

A condition inside a ``requires`` (``x if c else y``) gives one outcome more per arm: the call
the clause refuses where, read with that arm in the condition's place, it would let the call in
(``arms``). A restore looks for the item's name where it comes back, its folder while that is
live and the root otherwise; the implementation that always looks in the old folder agrees with
the contract until an item comes back at the root under a name another item there has, seven
calls in, and no refusal of that clause in a live folder shows it.

A condition nested in a way through another (``([] if len(w) < 2 else [w[1]]) if promoted else
w``) gives its outcomes a second time, under the path that leads to it (``Branch.guard``): the
second waiter left behind by a promotion is a state of its own, where a cancel of a waiting
booking with two on the list (the same inner test, unguarded) is not what the implementation
that promotes the last waiter gets wrong.

Imports the contracts layer and the steering's reading of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import EvaluationError, ExpressionError
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.memo import per_contract
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.parser import target_as_expr
from envfactory.contracts.polarity import polarity
from envfactory.contracts.printer import to_source
from envfactory.contracts.typecheck import TypeChecker
from envfactory.fuzz.steering import input_field, key_fields


@attrs.frozen(slots=True)
class Branch:
    """One condition of an operation's effects, split into its ``and`` parts."""

    operation: str
    number: int
    """Its place among the operation's conditions, from 1: the conditions as the effects give
    them, then those nested in a way through another, under their path (``guard``)."""
    parts: tuple[ir.Expr, ...]
    tests: tuple[Compiled, ...] = attrs.field(eq=False, repr=False)
    aims: tuple[tuple[str, Compiled], ...] = attrs.field(eq=False, repr=False)
    """Per outcome: the one input field the condition reads (the key of the record it reads)
    and what the call must satisfy to take the outcome (``condition``, compiled); empty where
    it reads no input field or more than one (no key alone decides it)."""
    guard: tuple[ir.Expr, ...] = ()
    """The tests of the conditions it is nested in, each as the way to it takes it (the test,
    or ``not`` the test for an ``else``): its outcomes count only where all of them hold."""
    guards: tuple[Compiled, ...] = attrs.field(default=(), eq=False, repr=False)
    drawn: bool = attrs.field(default=False, eq=False)
    """Whether the input's own values decide it (``"points" in input``, ``input.qty > 2``), not
    only the records its key fields name: only then may another draw of the same call take
    another way (``machine.Case.valid``)."""
    bound: str | None = None
    """For a condition with one outcome (a ``requires`` at its bound, ``bounds``, with a key
    swapped, ``swaps``, or with a listed value counted otherwise, ``statuses``), that outcome's
    name after the operation's (``requires 2 at its bound``); its failing is no outcome of its
    own."""
    refused: bool = False
    """Taken by a call its ``requires`` (``number``) refuses, not by one accepted: the clause
    refuses where a weak mutant of it would let the call in (``statuses``)."""

    @property
    def outcomes(self) -> tuple[str, ...]:
        """Its outcome names: held, then each part failing (one part: the condition failing)."""
        if self.bound is not None:
            return (f"{self.operation}: {self.bound}",)
        where = f"{self.operation}: condition {self.number}"
        if len(self.parts) == 1:
            return f"{where} holds", f"{where} fails"
        return (f"{where} holds", *(f"{where} part {i} fails" for i in range(1, len(self.parts) + 1)))

    def taken(self, state: Mapping[str, Any], value: Any) -> str | None:
        """The outcome a call with input ``value`` takes in ``state`` (None where a part cannot
        be evaluated there)."""
        env = Env(state, value)
        try:
            if not all(test(env) is True for test in self.guards):
                return None
            for index, test in enumerate(self.tests):
                if test(env) is not True:
                    return None if self.bound is not None else self.outcomes[index + 1]
        except (EvaluationError, TypeError, KeyError, IndexError, ValueError, ZeroDivisionError):
            return None
        return self.outcomes[0]

    def condition(self, outcome: str) -> ir.Expr:
        """What the pre-state and input must satisfy for the call to take ``outcome``."""
        index = self.outcomes.index(outcome)
        if index == 0:
            return _all((*self.guard, *self.parts))
        return _all((*self.guard, *self.parts[: index - 1], ir.Unary("not", self.parts[index - 1])))


def _all(parts: tuple[ir.Expr, ...]) -> ir.Expr:
    return parts[0] if len(parts) == 1 else ir.BoolOp("and", parts)


def branches(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """The conditions of ``op``'s effects that read only the pre-state and the input (one under
    a quantifier reads its variable; one reading the output is the target's choice), each once;
    then each one nested in a way through another, under the path to it, once per path."""
    readable = frozenset(contract.state) | {"input"}
    seen: dict[str, tuple[ir.Expr, ...]] = {}
    nested: dict[tuple[str, ...], tuple[tuple[ir.Expr, ...], tuple[ir.Expr, ...]]] = {}
    for effect in op.effects:
        if effect.value is None:
            continue
        for node, guard in _conditions(effect.value, ()):
            if not ir.free_names(node.test) <= readable:
                continue
            parts = _parts(node.test)
            seen.setdefault(to_source(node.test), parts)
            if guard and all(ir.free_names(g) <= readable for g in guard):
                nested.setdefault(tuple(to_source(e) for e in (*guard, node.test)), (guard, parts))
    found = [(parts, ()) for parts in seen.values()] + [(parts, guard) for guard, parts in nested.values()]
    return tuple(
        _branch(op.name, number, parts, guard) for number, (parts, guard) in enumerate(found, start=1)
    )


def conditions(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Every condition of ``op`` whose outcomes a run counts: the ways through its effects
    (``branches``), then its requires' bounds (``bounds``), swapped keys (``swaps``), listed
    values counted otherwise (``statuses``), values read part-way through the effects
    (``afters``) and conditions read one way only (``arms``)."""
    return (
        branches(op, contract)
        + bounds(op, contract)
        + swaps(op, contract)
        + statuses(op, contract)
        + afters(op, contract)
        + arms(op, contract)
    )


_STRICT = {"<": (1, 0), ">": (0, 1)}
"""A strict comparison's bound: ``left + a == right + b`` (integers only)."""
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def bounds(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Each numeric comparison of ``op``'s requires at its bound (see the module docstring):
    one reached through ``and``, ``or``, ``not`` and ``implies`` (one under a quantifier or a
    condition is another record's or another way's), between integers, or numbers where the
    bound is the equality (``<=``, ``>=``)."""
    scope = TypeChecker({**contract.state_types(), "input": op.input_type})
    found: list[Branch] = []
    for number, clause in enumerate(op.requires, start=1):
        atoms = [
            (at, guard)
            for compare, positive, guard in _comparisons(clause.expr, True, ())
            if (at := _at_bound(compare, positive, scope)) is not None
        ]
        for index, (at, guard) in enumerate(atoms, start=1):
            where = "at its bound" if len(atoms) == 1 else f"at bound {index}"
            found.append(_branch(op.name, number, (at,), guard, f"requires {number} {where}"))
    return tuple(found)


SWAPPED = "with"
"""The word of a swapped key's outcome name: ``requires 8 with input.doctor for input.to``."""


def swaps(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Each of ``op``'s requires with one record it reads by a key read by another of the call's
    keys of that collection (see the module docstring): the outcome where the clause holds and
    the swapped one does not, the other record live. A record read under a quantifier is left
    alone (its key is the quantifier's), and so is a swap that reads as the clause did. The
    call's other keys of a collection are its live key fields (``steering.key_fields``)."""
    collections = contract.collections()
    readable = frozenset(contract.state) | {"input"}
    live: dict[str, tuple[ir.Expr, ...]] = {}
    for key_field in key_fields(op, contract):
        if not key_field.fresh:
            live[key_field.collection] = (*live.get(key_field.collection, ()), _input(key_field.field))
    fields = _key_fields(contract)
    found: list[Branch] = []
    seen: set[str] = set()
    for number, clause in enumerate(op.requires, start=1):
        reads: dict[str, int] = {}
        for place, (collection, key) in enumerate(_records(clause.expr, collections)):
            read = f"{collection}[{to_source(key)}]"
            reads[read] = reads.get(read, 0) + 1
            if not ir.free_names(key) <= readable:
                continue
            for other in _other_keys(key, collection, live, fields, collections):
                mutant = _swapped(clause.expr, place, other, collections)
                name = f"requires {number} {SWAPPED} {to_source(other)} for {to_source(key)}"
                if reads[read] > 1:  # the same record read again in the clause: which read
                    name += f" (read {reads[read]})"
                if mutant == clause.expr or name in seen:
                    continue
                seen.add(name)
                parts = (ir.Compare("in", other, ir.Name(collection)), ir.Unary("not", mutant))
                found.append(_branch(op.name, number, parts, (), name))
    return tuple(found)


ALSO = "also"
"""The word of a listed value counted otherwise: ``requires 7 also "cancelled" for
shows[bookings[b].show].status != "closed"``."""


def statuses(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Each comparison of a record's field with one of the values its schema lists, where it
    filters the records a quantifier of ``op``'s requires counts (``sum(bookings[b].seats for b
    in bookings if ... and shows[bookings[b].show].status != "closed")``), with each other listed
    value kept out of the count too (``!=``) or let into it (``==``): a weak mutant of the
    clause, the implementation that stops counting a cancelled show's seats as it does a closed
    one's. The outcome is the call refused where the mutant lets it in (counted on refusals by
    that clause), where the contract is the stricter of the two: where the clause holds more
    readily as the count shrinks (``polarity``) and the mutant counts less, or the other way
    round (see the module docstring for the other side)."""
    collections = contract.collections()
    listed = _listed(contract)
    found: list[Branch] = []
    for number, clause in enumerate(op.requires, start=1):
        for quant, compare in _filters(clause.expr):
            if isinstance(compare.right, ir.Const):
                field, constant = compare.left, compare.right.value
            elif isinstance(compare.left, ir.Const):
                field, constant = compare.right, compare.left.value
            else:
                continue
            values = listed.get(_field_of(field, collections) or ("", ""), ())
            if constant not in values or not _contract_stricter(clause.expr, quant, compare.op):
                continue
            for value in values:
                if value == constant:
                    continue
                extra = ir.Compare(compare.op, field, ir.Const(value))
                joined = ir.BoolOp("and" if compare.op == "!=" else "or", (compare, extra))
                mutant = _replaced(clause.expr, compare, joined)
                name = f"requires {number} {ALSO} {json.dumps(value)} for {to_source(compare)}"
                branch = _branch(op.name, number, (mutant,), (), name)
                found.append(attrs.evolve(branch, refused=True, aims=()))
    return tuple(found)


AFTER = "after"
"""The word of a value read part-way through the effects: ``requires 3 after
customers[orders[input.id].customer].points + orders[input.id].used``."""


def afters(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Each of ``op``'s requires that reads a value its effects move by a sum (``points =
    points + used - earned``), with the value read as if part of the move were made already:
    one term of it, or all of them (``points + used >= earned`` for ``points >= earned``). That
    is the implementation that checks after giving back the points an order redeemed and before
    taking the ones it earned, or after the whole update: it agrees with the contract until an
    order has both redeemed and earned points and the earned ones are spent. As for
    ``statuses``, the outcome is the call the clause refuses where the mutant lets it in,
    counted on that clause's refusals and planned for as that refusal with the mutant holding.
    A part is kept only where each of its terms is known to move the clause toward holding (its
    sign known from a constant, an input's or a field's ``minimum``, or an invariant that bounds
    a field of every record below by zero), so that the mutant is looser than the clause in every
    state: a counter checked after its ``+ 1`` is stricter, never looser, and a goal no state
    meets, or only a deep one does (``points + used - earned``: more redeemed than twice what was
    earned), would cost the planner every depth."""
    found: list[Branch] = []
    seen: set[str] = set()
    signs = _signed(contract)
    for number, clause in enumerate(op.requires, start=1):
        for effect in op.effects:
            if effect.value is None:
                continue
            read = target_as_expr(effect.target)
            places = [node for node in ir.walk(clause.expr) if node == read]
            terms = list(_terms(effect.value, 1))
            if not places or (1, read) not in terms:
                continue
            moves = [t for t in terms if t != (1, read)]
            holed = clause.expr
            for place in places:
                holed = _replaced(holed, place, ir.Name(_QUANTITY))
            grows = polarity(holed, _QUANTITY)  # which way the clause moves as the value grows
            if grows not in (1, -1):
                continue
            for part in ([[m] for m in moves] if len(moves) > 1 else []) + [moves]:
                moving = [_sign(term, op, signs) for _, term in part]
                if any(s is None or sign * s != grows for (sign, _), s in zip(part, moving, strict=True)):
                    continue
                moved = read
                for sign, term in part:
                    moved = ir.BinOp("+" if sign > 0 else "-", moved, term)
                mutant = clause.expr
                for place in places:
                    mutant = _replaced(mutant, place, moved)
                name = f"requires {number} {AFTER} {to_source(moved)}"
                if name in seen:
                    continue
                seen.add(name)
                branch = _branch(op.name, number, (mutant,), (), name)
                found.append(attrs.evolve(branch, refused=True, aims=()))
    return tuple(found)


ALWAYS = "always"
"""The word of a condition read one way only: ``requires 4 always items[input.item].parent``."""


def arms(op: Operation, contract: Contract) -> tuple[Branch, ...]:
    """Each condition inside one of ``op``'s requires (``x if c else y``) read one way only,
    ``x`` or ``y`` in its place: the implementation that looks for a restored item's name in
    the folder it was in, where the contract looks at the root once that folder is in the
    trash. As for ``statuses``, the outcome is the call the clause refuses where the mutant
    lets it in, counted on that clause's refusals and planned for as that refusal with the
    mutant holding. (The mutant is stricter than the clause in other states; that side, a call
    accepted where the mutant refuses, would double the goals, and most of them no state meets:
    an editor's own items in a folder that is not theirs.)"""
    found: list[Branch] = []
    seen: set[str] = set()
    for number, clause in enumerate(op.requires, start=1):
        tests = [node for node in ir.walk(clause.expr) if isinstance(node, ir.IfExp)]
        for place, node in enumerate(tests, start=1):
            for arm in (node.body, node.orelse):
                mutant = _replaced(clause.expr, node, arm)
                name = f"requires {number} {ALWAYS} {to_source(arm)}"
                if len(tests) > 1:  # the same arm may close another condition: which one
                    name += f" (condition {place})"
                if name in seen:  # `x if c else x`: one arm
                    continue
                seen.add(name)
                refused = _branch(op.name, number, (mutant,), (), name)
                found.append(attrs.evolve(refused, refused=True, aims=()))
    return tuple(found)


def _terms(node: ir.Expr, sign: int) -> Iterator[tuple[int, ir.Expr]]:
    """The terms of a sum, each with its sign: ``a + b - c`` gives ``+a``, ``+b``, ``-c``."""
    if isinstance(node, ir.BinOp) and node.op in ("+", "-"):
        yield from _terms(node.left, sign)
        yield from _terms(node.right, sign if node.op == "+" else -sign)
    else:
        yield sign, node


def _sign(node: ir.Expr, op: Operation, signed: frozenset[tuple[str, str | None]]) -> int | None:
    """+1 where ``node`` is never negative, -1 where never positive, None where not known:
    a number, an input field or a state value whose schema's ``minimum`` is at least zero (or
    ``signed``'s), and the products and conditional values of those."""
    match node:
        case ir.Const(value=int() | float() as value) if not isinstance(value, bool):
            return 1 if value >= 0 else -1
        case ir.IfExp(body=body, orelse=orelse):
            one, other = _sign(body, op, signed), _sign(orelse, op, signed)
            return one if one == other else None
        case ir.BinOp(op="*", left=left, right=right):
            one, other = _sign(left, op, signed), _sign(right, op, signed)
            return None if one is None or other is None else one * other
        case ir.Attr(obj=ir.Index(obj=ir.Name(id=collection)), name=field):
            return 1 if (collection, field) in signed else None
        case ir.Name(id=name):
            return 1 if (name, None) in signed else None
    named = input_field(node)
    if named is None:
        return None
    schema = (op.input_schema.get("properties") or {}).get(named)
    return 1 if isinstance(schema, Mapping) and _at_least_zero(schema) else None


def _at_least_zero(schema: Mapping[str, Any]) -> bool:
    minimum = schema.get("minimum")
    return isinstance(minimum, int | float) and not isinstance(minimum, bool) and minimum >= 0


@per_contract()
def _signed(contract: Contract) -> frozenset[tuple[str, str | None]]:
    """The state values never negative: a scalar (``(name, None)``) or a record field whose
    schema's ``minimum`` is at least zero, and a field every record of a collection keeps at or
    above zero by an invariant (``all(orders[o].used >= 0 and ... for o in orders)``)."""
    out: set[tuple[str, str | None]] = set()
    for name, var in contract.state.items():
        if not var.collection:
            if isinstance(var.schema, Mapping) and _at_least_zero(var.schema):
                out.add((name, None))
            continue
        for field, schema in ((var.schema or {}).get("properties") or {}).items():
            if isinstance(schema, Mapping) and _at_least_zero(schema):
                out.add((name, str(field)))
    for invariant in contract.invariants:
        for quant in ir.walk(invariant.expr):
            if not (
                isinstance(quant, ir.Quant) and quant.kind == "all" and isinstance(quant.domain, ir.Name)
            ):
                continue
            for part in _parts(quant.body):
                match part:
                    case ir.Compare(
                        op=">=" | ">",
                        left=ir.Attr(obj=ir.Index(obj=ir.Name(id=held), key=ir.Name(id=each)), name=kept),
                        right=ir.Const(value=int() as bound),
                    ) if held == quant.domain.id and each == quant.var and bound >= 0:
                        out.add((held, kept))
    return frozenset(out)


@per_contract()
def _listed(contract: Contract) -> dict[tuple[str, str], tuple[str, ...]]:
    """Per collection and record field, the strings its schema lists (``enum``)."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for name, var in contract.state.items():
        properties = var.schema.get("properties") if var.collection else None
        for field, schema in (properties or {}).items():
            values = schema.get("enum") if isinstance(schema, Mapping) else None
            if isinstance(values, list) and all(isinstance(v, str) for v in values):
                out[(name, str(field))] = tuple(values)
    return out


def _filters(node: ir.Expr) -> Iterator[tuple[ir.Quant, ir.Compare]]:
    """Each quantifier below ``node`` with each ``==`` / ``!=`` its filter holds through (the
    filter itself, or a part of its ``and``)."""
    for quant in ir.walk(node):
        if not isinstance(quant, ir.Quant) or quant.cond is None:
            continue
        for part in _parts(quant.cond):
            if isinstance(part, ir.Compare) and part.op in ("==", "!="):
                yield quant, part


def _field_of(node: ir.Expr, collections: frozenset[str]) -> tuple[str, str] | None:
    """``(c, f)`` for a record's field read as ``c[k].f``."""
    match node:
        case ir.Attr(obj=ir.Index(obj=ir.Name(id=name)), name=field) if name in collections:
            return name, field
    return None


_QUANTITY = "__quantity"
"""The name a quantifier is read as, to ask how its clause moves as it grows."""


def _contract_stricter(clause: ir.Expr, quant: ir.Quant, op: str) -> bool:
    """Whether the clause refuses calls its mutant (``statuses``) lets in: the mutant's filter
    (narrower for ``!=``, wider for ``==``) moves the clause toward holding; False where it
    moves it away, or the clause moves both ways as the quantifier grows."""
    narrower = op == "!="
    grows = (quant.kind == "all") == narrower  # a narrower filter: a smaller sum, a truer all
    moves = polarity(_replaced(clause, quant, ir.Name(_QUANTITY)), _QUANTITY)
    return moves in (1, -1) and (moves == 1) == grows


def _replaced(node: ir.Expr, old: ir.Expr, new: ir.Expr) -> ir.Expr:
    """``node`` with the sub-expression ``old`` (that very node) replaced by ``new``."""
    if node is old:
        return new
    return ir.with_children(node, lambda child: _replaced(child, old, new))


def _records(node: ir.Expr, collections: frozenset[str]) -> Iterator[tuple[str, ir.Expr]]:
    """The ``c[key]`` reads of a collection in ``node``, pre-order, none below a quantifier."""
    if isinstance(node, ir.Quant):
        return
    if isinstance(node, ir.Index) and (collection := _read_of(node, collections)) is not None:
        yield collection, node.key
    for child in ir.children(node):
        yield from _records(child, collections)


def _read_of(node: ir.Expr, collections: frozenset[str]) -> str | None:
    """The collection ``node`` reads a record of (``c[key]``), if it does."""
    match node:
        case ir.Index(obj=ir.Name(id=name)) if name in collections:
            return name
    return None


def _swapped(node: ir.Expr, place: int, key: ir.Expr, collections: frozenset[str]) -> ir.Expr:
    """``node`` with its ``place``-th collection read (in ``_records``' order) by ``key``."""
    count = -1

    def change(current: ir.Expr) -> ir.Expr:
        nonlocal count
        if isinstance(current, ir.Quant):
            return current
        if isinstance(current, ir.Index) and _read_of(current, collections) is not None:
            count += 1
            if count == place:
                return attrs.evolve(current, key=key)
        return ir.with_children(current, change)

    return change(node)


def _input(field: str) -> ir.Expr:
    return ir.Attr(ir.Name("input"), field)


@per_contract()
def _key_fields(contract: Contract) -> dict[tuple[str, str], tuple[str, ...]]:
    """Per collection read and the collection whose records hold its keys, the fields of those
    records the contract reads as its keys anywhere (``hubs[parcels[p].to]``: ``("hubs",
    "parcels")`` holds ``to``). Walked once per contract: ``conditions`` is asked per operation,
    and a walk per operation cost Stripe's document (417 operations) 2.4 CPU-s each time."""
    collections = contract.collections()
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for _, clause in contract.clauses():
        for node in ir.walk(clause.expr):
            if not isinstance(node, ir.Index) or (collection := _read_of(node, collections)) is None:
                continue
            held = _held_in(node.key, collections)
            if held is not None:
                pair = (collection, held[0])
                if held[1] not in out.get(pair, ()):
                    out[pair] = (*out.get(pair, ()), held[1])
    return out


def _held_in(key: ir.Expr, collections: frozenset[str]) -> tuple[str, str] | None:
    """``(c, f)`` for a key read as ``c[k].f`` (or ``c[k]["f"]``), a record's field; else None."""
    match key:
        case ir.Attr(obj=ir.Index(obj=ir.Name(id=holder)), name=name) if holder in collections:
            return holder, name
        case ir.Index(obj=ir.Index(obj=ir.Name(id=holder)), key=ir.Const(value=str() as name)) if (
            holder in collections
        ):
            return holder, name
    return None


def _other_keys(
    key: ir.Expr,
    collection: str,
    live: Mapping[str, tuple[ir.Expr, ...]],
    fields: Mapping[tuple[str, str], tuple[str, ...]],
    collections: frozenset[str],
) -> Iterator[ir.Expr]:
    """The keys of ``collection`` the call also names, in place of ``key``: the other live input
    fields for an input field; the record's other key fields for a record's field."""
    if input_field(key) is not None:
        yield from (other for other in live.get(collection, ()) if other != key)
        return
    held = _held_in(key, collections)
    if held is None or not isinstance(key, ir.Attr | ir.Index):
        return
    for name in fields.get((collection, held[0]), ()):
        if name != held[1]:
            yield ir.Attr(key.obj, name)


def _at_bound(compare: ir.Compare, positive: bool, scope: TypeChecker) -> ir.Expr | None:
    """``compare`` (holding as written, or negated) at its bound: the equality of its sides,
    one apart for a strict comparison of integers; None for one of other types, or of two
    constants."""
    if isinstance(compare.left, ir.Const) and isinstance(compare.right, ir.Const):
        return None
    try:
        left, right = scope.check(compare.left), scope.check(compare.right)
    except ExpressionError:
        return None
    if not (T.only(left, "number") and T.only(right, "number")) or "any" in T.kind_of(left) | T.kind_of(
        right
    ):
        return None
    op = compare.op if positive else _NEGATED[compare.op]
    if op not in _STRICT:
        return ir.Compare("==", compare.left, compare.right)
    if T.numeric_result(left, right) != T.INT:
        return None
    plus_left, plus_right = _STRICT[op]
    return ir.Compare("==", _plus(compare.left, plus_left), _plus(compare.right, plus_right))


def _plus(node: ir.Expr, amount: int) -> ir.Expr:
    return node if not amount else ir.BinOp("+", node, ir.Const(amount))


def _negated(node: ir.Expr) -> ir.Expr:
    return node.operand if isinstance(node, ir.Unary) and node.op == "not" else ir.Unary("not", node)


def _comparisons(
    node: ir.Expr, positive: bool, guard: tuple[ir.Expr, ...]
) -> Iterator[tuple[ir.Compare, bool, tuple[ir.Expr, ...]]]:
    """The order comparisons ``node`` holds through, each with whether it holds as written
    (``positive``) or negated, and what else must hold for it to decide ``node`` (the other
    ways through an ``or`` not taken)."""
    match node:
        case ir.Compare(op="<" | "<=" | ">" | ">="):
            yield node, positive, guard
        case ir.Unary(op="not", operand=operand):
            yield from _comparisons(operand, not positive, guard)
        case ir.BoolOp(op=op, operands=operands):
            # as written, ``and`` holds through every part and ``or`` through one alone; negated,
            # the other way round
            alone = (op == "or") == positive
            for index, part in enumerate(operands):
                others = operands[:index] + operands[index + 1 :]
                extra = tuple((_negated(o) if positive else o) for o in others) if alone else ()
                yield from _comparisons(part, positive, (*guard, *extra))
        case ir.Call(func="implies", args=(premise, conclusion)) if positive:
            yield from _comparisons(conclusion, True, (*guard, premise))


def _conditions(node: ir.Expr, guard: tuple[ir.Expr, ...]) -> Any:
    """Each ``IfExp`` below ``node`` with the tests of the ways that lead to it (pre-order);
    a quantifier's body is its variable's, and nothing below it is a path of the call's."""
    if isinstance(node, ir.IfExp):
        yield node, guard
        yield from _conditions(node.test, guard)
        yield from _conditions(node.body, (*guard, node.test))
        yield from _conditions(node.orelse, (*guard, ir.Unary("not", node.test)))
        return
    for child in ir.children(node):
        yield from _conditions(child, () if isinstance(node, ir.Quant) else guard)


def _parts(test: ir.Expr) -> tuple[ir.Expr, ...]:
    return test.operands if isinstance(test, ir.BoolOp) and test.op == "and" else (test,)


def _branch(
    operation: str,
    number: int,
    parts: tuple[ir.Expr, ...],
    guard: tuple[ir.Expr, ...] = (),
    bound: str | None = None,
) -> Branch:
    tests = tuple(compile_expr(p) for p in parts)
    fields = {
        f for part in (*guard, *parts) for node in ir.walk(part) if (f := input_field(node)) is not None
    }
    drawn = any(_reads_value(part) for part in (*guard, *parts))
    branch = Branch(
        operation, number, parts, tests, (), guard, tuple(compile_expr(g) for g in guard), drawn, bound
    )
    if len(fields) != 1:
        return branch
    field = fields.pop()
    aims = tuple((field, compile_expr(branch.condition(o))) for o in branch.outcomes)
    return attrs.evolve(branch, aims=aims)


def _reads_value(node: ir.Expr) -> bool:
    """Whether ``node`` reads an input field as a value, or tests one's presence; a field used
    as a key (``lots[input.lot]``) names a record, whose fields the state decides."""
    if isinstance(node, ir.Index) and input_field(node.key) is not None:
        return _reads_value(node.obj)
    if input_field(node) is not None:
        return True
    if isinstance(node, ir.Compare) and node.op in ("in", "not in") and node.right == ir.Name("input"):
        return True
    return any(_reads_value(child) for child in ir.children(node))


def find(contract: Contract, outcome: str) -> tuple[Branch, str] | None:
    """The branch an outcome name (``Branch.outcomes``) belongs to, if it names one."""
    name, _, what = outcome.rpartition(": ")
    words = what.split()
    bound = words[:1] == ["requires"] and (
        "bound" in words or words[2:3] in ([SWAPPED], [ALSO], [AFTER], [ALWAYS])
    )
    if name not in contract.operations or len(words) < 3 or not (words[0] == "condition" or bound):
        return None  # a refusal (``requires k fails``) is none: no condition is built to say so
    for branch in conditions(contract.operations[name], contract):
        if outcome in branch.outcomes:
            return branch, outcome
    return None


__all__ = ["Branch", "afters", "arms", "bounds", "branches", "conditions", "find", "statuses", "swaps"]
