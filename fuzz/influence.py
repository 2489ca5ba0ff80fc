"""Influence goals: a clause outcome that holds because of an earlier call's write, planned.

Many bugs are a stale read: an implementation that judges by a value a record held before a call
changed it (who may move a VM judged by the role a member was added with, not the one they were
given since; a restart checked against the quota of the project the VM was created in, not the one
it was moved to). A test shows one only where the two values give different answers: the later
call's clause holds with the value now and fails with the value before the write, or the other way
round. Coverage of clause outcomes cannot see this (both outcomes were covered, by other states),
nor can random search aim for it: the write and the read are far apart, on one record, with the
change going the way that decides.

An influence goal asks the planner for exactly that state. For an operation ``W`` that writes a
field ``f`` of a collection's records (or a state variable), and a later operation ``R`` whose
requires read it, the goal is: ``R``'s call ends the route (accepted, or refused by its ``j``-th
``requires`` while the ones before it hold), an earlier call of ``W`` changed ``f`` of some record
that still holds the changed value, and in the counterfactual state where that record's ``f`` is
back to its value before the write, the outcome differs (``R`` refused; ``requires j`` holds). The
route's last call is then where a stale read answers otherwise than the contract.

The search tests the same on each call it sends (``Coverage``, on the model's concrete state with
the one field put back), and the planner is asked only for the goals the search has not met. The
encoding (``wanted``) adds one integer to the unrolling per goal and depth (which write, which
slot) and reads the clauses once more over the counterfactual state: the last one, with one field
of one collection replaced by an ``if`` over the earlier states' values. Where a clause reads the
field at several keys, each is a goal of its own (``Write.site``); where it follows the field
as a reference more than once, so is each of those reads, with the value before the write at
that read only (``Write.read``: an implementation that keeps a copy of what it found behind the
reference, such as the quota of the project a VM was made in, beside the vCPUs of the one it is
in now).

Imports the solver layer and the contracts layer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, TypeGuard

import attrs
import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError, SolverError
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.printer import to_source
from envfactory.contracts.semantics import holds
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz.steering import record_field
from envfactory.solver.bmc import Unrolling
from envfactory.solver.encode import SymEnv, fails
from envfactory.solver.encode import holds as holds_symbolically
from envfactory.solver.maps import key_term
from envfactory.solver.states import SymState, formula
from envfactory.solver.symbolic import Map, Rec, Slot, SVal, Term, and_, eq, implies, ite, merge, not_, or_all


@attrs.frozen(slots=True)
class Write:
    """A goal's write: ``writer``'s effects change ``field`` of a record of ``var`` (None: ``var``
    itself, a state variable that is not a collection)."""

    writer: str
    var: str
    field: str | None
    site: ir.Expr | None = None
    """The key of the record the changed value is read from, where the clause reads the field at
    several keys (``hubs[input.hub].next`` and ``hubs[hubs[input.hub].next].next``: a route
    through a hub whose link changed, and one through the hub after it); None: any record."""
    read: tuple[int, int] | None = None
    """Where a clause follows the field as a reference more than once (a key of other reads:
    ``projects[vms[v].project].vcpus ... projects[vms[v].project].quota``), the one read that
    takes the value before the write (the reader's ``requires`` index, and which of its reads of
    the field, in evaluation order) while the others take the value now: an implementation that
    keeps a copy of what it found behind the reference (a VM's restart checked against the quota
    of the project it was made in, with the vCPUs of the one it is in now). None: every read."""

    def describe(self) -> str:
        place = self.var if self.field is None else f"{self.var}[...].{self.field}"
        read = "" if self.site is None else f", read at {self.var}[{to_source(self.site)}]"
        if self.read is not None:
            read = f", as before at read {self.read[1] + 1} of requires {self.read[0] + 1} only"
        return f"{place} as {self.writer} changed it{read}"


Goal = tuple[str, int | None, Write]
"""An influence goal: the reader, the index of the ``requires`` that refuses it (None: accepted),
and the write that decides it."""

Changes = dict[tuple[str, str, str | None], dict[Any, tuple[Any, Any]]]
"""Per (writer, variable, field), the records a test case's accepted calls of the writer changed
that field of, last: key (None for a variable) to (value before, value after)."""

_MISSING = object()
"""A record field that is not there."""


def goals(contract: Contract) -> list[Goal]:
    """Every influence goal of ``contract``, in its order of operations: per reader and writer of
    one field, the reader accepted, and refused by each ``requires`` that reads it; where a
    requires follows the field as a reference more than once, both again for each of those
    reads (``Write.read``)."""
    collections = contract.collections()
    changed = [
        (name, place) for name, op in contract.operations.items() for place in sorted(writes(op, collections))
    ]
    out: list[Goal] = []
    for name, op in contract.operations.items():
        reads = [_reads(clause.expr, collections, contract) for clause in op.requires]
        read: dict[tuple[str, str | None], set[ir.Expr | None]] = {}
        for clause_reads in reads:
            for place, sites in clause_reads.items():
                read.setdefault(place, set()).update(sites)
        followed = [_apart(clause.expr, collections, contract.state) for clause in op.requires]
        for writer, (var, field) in changed:
            if (var, field) not in read:
                continue
            place = (var, field)
            out.extend((name, None, write) for write in _sited(writer, var, field, read[place]))
            for j, clause_reads in enumerate(reads):
                if place in clause_reads:
                    out.extend((name, j, write) for write in _sited(writer, var, field, clause_reads[place]))
            for j, clause_followed in enumerate(followed):
                for k in clause_followed.get(place, ()):
                    one = Write(writer, var, field, read=(j, k))
                    out.extend([(name, None, one), (name, j, one)])
    return out


def kept(contract: Contract, goal: Goal) -> bool:
    """Whether ``goal`` is on a read an implementation is apt to keep as a copy of its own rather
    than read afresh: a read inside a count, sum, quantifier or length (``sum(1 for x in parcels
    if parcels[x].status == "transit")``: kept as a counter that every writer of the status must
    update, where a parcel sent again is not counted; ``len(hubs[hubs[h].next].shelf)``: the room
    on the next hub, kept per route), or one read of a reference followed twice (``Write.read``:
    the quota of the project a VM was made in), or a read at a key that reads the field itself
    (``hubs[hubs[h].next].next``: the hub two links on, kept as a table of routes that a change
    to the middle hub's link must refresh in every hub that forwards to it). The relay asks these
    first: it is asked for more goals than its effort meets, and these are where most stale reads
    are."""
    reader, j, write = goal
    if write.read is not None:
        return True
    if write.site is not None and (write.var, write.field) in places(write.site, contract):
        return True
    op = contract.operations[reader]
    clauses = op.requires if j is None else (op.requires[j],)
    return any((write.var, write.field) in _aggregated(clause.expr, contract) for clause in clauses)


def _aggregated(expr: ir.Expr, contract: Contract) -> set[Place]:
    """The places (``_place``) ``expr`` reads inside a count, sum or quantifier, or a ``len``."""
    collections = contract.collections()
    return {
        place
        for node in ir.walk(expr)
        if isinstance(node, ir.Quant) or (isinstance(node, ir.Call) and node.func == "len")
        for inner in ir.walk(node)
        if (place := _place(inner, collections, contract.state)) is not None
    }


def _apart(expr: ir.Expr, collections: Collection[str], variables: Collection[str]) -> dict[Place, list[int]]:
    """Per place, the reads of it (in evaluation order) a clause may answer one apart from the
    others: a reference followed twice (``_followed``), or a field read in two quantifiers or more
    (``_quantified``)."""
    out: dict[Place, list[int]] = {}
    for found in (_followed(expr, collections, variables), _quantified(expr, collections, variables)):
        for place, reads in found.items():
            if len(reads) > 1:
                out[place] = sorted({*out.get(place, ()), *reads})
    return out


def _quantified(
    expr: ir.Expr, collections: Collection[str], variables: Collection[str]
) -> dict[Place, list[int]]:
    """Per place (``_place``) a clause reads inside quantifiers, which of its reads of the place
    those are, in evaluation order, where two quantifiers or more read it (each read's innermost
    one). Each quantifier is a check an implementation may answer its own way: who may move a
    VM asks for a manager of the project it leaves and one of the project it enters, and an
    implementation that keeps the role a member was added with answers the second from that
    copy while the first reads the role held now."""
    reads: dict[Place, list[tuple[int, int]]] = {}
    for place, k, _, inside in _numbered(expr, collections, variables):
        if inside:
            reads.setdefault(place, []).append((inside, k))
    return {place: [k for _, k in found] for place, found in reads.items() if len({q for q, _ in found}) > 1}


def _followed(
    expr: ir.Expr, collections: Collection[str], variables: Collection[str]
) -> dict[Place, list[int]]:
    """Per place (``_place``) a clause reads as the key of another read (a reference followed:
    ``projects[vms[v].project].quota``), which of its reads of the place those are, in
    evaluation order. A reference followed twice is where an implementation may keep a copy of
    what it found behind it the first time (the quota of the project a VM was made in) and read
    the other fresh; a value read twice and compared (``status == "open" or status == "draft"``)
    is one value either way."""
    keys = {id(node.key) for node in ir.walk(expr) if isinstance(node, ir.Index)}
    out: dict[Place, list[int]] = {}
    for place, k, node, _ in _numbered(expr, collections, variables):
        if id(node) in keys:
            out.setdefault(place, []).append(k)
    return out


def _numbered(
    expr: ir.Expr, collections: Collection[str], variables: Collection[str]
) -> Iterator[tuple[Place, int, ir.Expr, int]]:
    """Each read of a place (``_place``) in ``expr``, in evaluation order (``ir.walk``'s, in which
    ``_one_read`` counts them too): the place, which of its reads it is, the node, and the id of
    its innermost quantifier (0: none)."""
    seen: dict[Place, int] = {}
    stack: list[tuple[ir.Expr, int]] = [(expr, 0)]
    while stack:
        node, inside = stack.pop()
        if (place := _place(node, collections, variables)) is not None:
            k = seen[place] = seen.get(place, -1) + 1
            yield place, k, node, inside
        within = id(node) if isinstance(node, ir.Quant) else inside
        stack.extend((child, within) for child in reversed(ir.children(node)))


Place = tuple[str, str | None]
"""A (variable, record field) pair: a field of a collection's records, or (None) a variable."""


def _place(node: ir.Expr, collections: Collection[str], variables: Collection[str]) -> Place | None:
    """(c, f) where ``node`` reads ``c[k].f`` of a collection, (v, None) where it reads a state
    variable ``v`` that is not one (of the state's ``variables``)."""
    if (place := record_field(node, None)) is not None and place[0] in collections:
        return place
    if isinstance(node, ir.Name) and node.id in variables and node.id not in collections:
        return node.id, None
    return None


BEFORE = "\x00before"
"""The name a clause with one read of a field as before a write (``Write.read``) reads the
collection through: no contract's name (a name is an identifier)."""


def one_read(op: Operation, write: Write, collections: frozenset[str]) -> Clause:
    """The requires ``write.read`` names, with that one read of the written field made through
    ``BEFORE`` and its other reads as they are."""
    assert write.read is not None
    j, k = write.read
    return _one_read(op.requires[j], (write.var, write.field), k, collections)


@functools.lru_cache(maxsize=256)
def _one_read(clause: Clause, place: Place, k: int, collections: frozenset[str]) -> Clause:
    """``clause`` with its ``k``-th read of ``place`` (in evaluation order) made through
    ``BEFORE``, its other reads as they are."""
    seen = [0]

    def change(node: ir.Expr) -> ir.Expr:
        if _place(node, collections, (place[0],)) == place:
            seen[0] += 1
            if seen[0] == k + 1:
                if place[1] is None:
                    return ir.Name(BEFORE, node.loc)
                assert isinstance(node, ir.Attr) and isinstance(node.obj, ir.Index)
                index = node.obj
                key = change(index.key)
                return ir.Attr(ir.Index(ir.Name(BEFORE, index.obj.loc), key, index.loc), node.name, node.loc)
        return ir.with_children(node, change)

    expr = change(clause.expr)
    return attrs.evolve(clause, expr=expr, fn=compile_expr(expr))


def _sited(writer: str, var: str, field: str | None, sites: set[ir.Expr | None]) -> list[Write]:
    """One write per key the clause reads the field at, where it reads it at several keys that
    name records outright; else one, at any record."""
    keys = sorted((k for k in sites if k is not None), key=to_source)
    if len(keys) < 2 or len(keys) < len(sites):
        return [Write(writer, var, field)]
    return [Write(writer, var, field, key) for key in keys]


class Coverage:
    """The influence goals the search has not met yet. A call meets one where an earlier call of
    the case wrote the field, the record still holds what it wrote, and with the value before the
    write the call's outcome would differ: the same test the planner's goal encodes, evaluated
    on the concrete state. The planner is asked only for the goals the search left open."""

    def __init__(self, contract: Contract) -> None:
        collections = contract.collections()
        self.open: dict[tuple[str, int | None], list[Write]] = {}
        self._sites: dict[ir.Expr, Compiled] = {}
        """Each goal's key to read the changed record at (``Write.site``), compiled."""
        self._stale: dict[tuple[str, Write], Clause] = {}
        """Each goal's requires with its one read as before the write (``Write.read``)."""
        for reader, failing, write in goals(contract):
            self.open.setdefault((reader, failing), []).append(write)
            if write.site is not None and write.site not in self._sites:
                self._sites[write.site] = compile_expr(write.site)
            if write.read is not None:
                self._stale[(reader, write)] = one_read(contract.operations[reader], write, collections)
        self.writes = {
            name: tuple(sorted(writes(op, collections), key=str)) for name, op in contract.operations.items()
        }
        """Per operation, the (variable, field) pairs it changes in place."""

    def pending(self) -> list[Goal]:
        """The goals not met yet, in the contract's order (read from the planning thread while
        the search closes goals: each copy is made in one step)."""
        return [
            (reader, failing, write)
            for (reader, failing), writes in list(self.open.items())
            for write in list(writes)
        ]

    def note(self, changes: Changes, op: str, pre: Mapping[str, Any], post: Mapping[str, Any]) -> None:
        """Record in ``changes`` what accepted call ``op`` changed from ``pre`` to ``post``."""
        for var, field in self.writes.get(op, ()):
            before, after = pre.get(var), post.get(var)
            if before is after:
                continue
            if field is None:
                if before != after:
                    changes[(op, var, None)] = {None: (before, after)}
                continue
            for key, a, b in field_changes(before, after, field):
                changes.setdefault((op, var, field), {})[key] = (a, b)

    def judge(
        self, changes: Changes, op: Operation, state: FrozenMap, value: Any, failing: int | None
    ) -> None:
        """Close the goals a call of ``op`` with ``value`` in ``state`` meets, refused by its
        ``failing``-th requires (None: accepted), given what the case's calls changed."""
        left = self.open.get((op.name, failing))
        if not left:
            return
        for write in list(left):
            made = changes.get((write.writer, write.var, write.field))
            if not made:
                continue
            if write.site is not None:
                try:  # the record the clause reads at that key (a key of any value: no record)
                    at = self._sites[write.site](Env(state, value))
                    made = {at: made[at]} if at in made else {}
                except (EvaluationError, TypeError):
                    continue
            stale = self._stale.get((op.name, write)) if write.read is not None else None
            if any(
                _decides(op, failing, state, value, write, key, old, new, stale)
                for key, (old, new) in made.items()
            ):
                left.remove(write)
        if not left:
            del self.open[(op.name, failing)]


def field_changes(before: Any, after: Any, field: str) -> Iterator[tuple[Any, Any, Any]]:
    """(key, value before, value after) of ``field`` in each record that collection values
    ``before`` and ``after`` both hold under one key, where it differs (``_MISSING``: not there)."""
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return
    for key, record in after.items():
        old = before.get(key)
        if old is record or not isinstance(old, Mapping) or not isinstance(record, Mapping):
            continue
        a, b = old.get(field, _MISSING), record.get(field, _MISSING)
        if a != b:
            yield key, a, b


def _decides(
    op: Operation,
    failing: int | None,
    state: FrozenMap,
    value: Any,
    write: Write,
    key: Any,
    old: Any,
    new: Any,
    stale: Clause | None = None,
) -> bool:
    """Whether the call's outcome differs in ``state`` with the written value put back (at the
    one read ``write.read`` names, where it names one: ``stale``, of ``one_read``)."""
    now = state.get(write.var)
    if write.field is None:
        if now != new:
            return False
        back = state.insert(write.var, old)
    else:
        record = now.get(key) if isinstance(now, Mapping) else None
        if not isinstance(record, Mapping) or record.get(write.field, _MISSING) != new:
            return False
        fields = {k: v for k, v in record.items() if k != write.field}
        if old is not _MISSING:
            fields[write.field] = old
        assert isinstance(now, FrozenMap)
        back = state.insert(write.var, now.insert(key, FrozenMap(fields)))
    if stale is not None:  # the one read through ``BEFORE``, the others as they are
        try:  # defined either way: a read of a record gone since is no other answer
            after = stale.fn(Env(state.insert(BEFORE, back[write.var]), value))
        except (EvaluationError, TypeError):
            return False
        return after is (failing is not None)
    env = Env(back, value)
    if failing is None:
        return not all(holds(clause, env) for clause in op.requires)
    return bool(holds(op.requires[failing], env))


def is_influence(goal: tuple[Any, ...]) -> TypeGuard[Goal]:
    """Whether ``goal`` (any planner goal) is an influence goal: its third item the ``Write`` it
    is decided by."""
    return len(goal) == 3 and isinstance(goal[2], Write)


def name(goal: Goal) -> str:
    """The goal as the run's report names it (beside the clause outcomes)."""
    reader, failing, write = goal
    what = "accepted" if failing is None else f"requires {failing + 1} fails"
    return f"{reader}: {what}, by {write.describe()}"


def writes(op: Operation, collections: Collection[str]) -> Iterator[tuple[str, str | None]]:
    """The (variable, record field) pairs ``op``'s effects change in place: a field of a record of
    one of ``collections`` (a whole record put is a making, unless it copies the other fields of
    the record it replaces), or a variable that is not one."""
    for effect in op.effects:
        target, value = effect.target, effect.value
        if value is None:
            continue
        if target.var not in collections:
            if target.key is None:
                yield target.var, None
        elif target.key is not None and target.fields:
            yield target.var, target.fields[0]
        elif target.key is not None and isinstance(value, ir.RecordLit):
            # a record put in place of the one it copies fields from is a change of the others
            # (``hubs[h] = {"cap": hubs[h].cap, "next": input.to}``), not a making
            own = ir.Index(ir.Name(target.var), target.key)
            copied = {k for k, v in zip(value.keys, value.values, strict=True) if v == ir.Attr(own, k)}
            if copied:
                yield from ((target.var, k) for k in value.keys if k not in copied)


def places(expr: ir.Expr, contract: Contract) -> frozenset[Place]:
    """The (variable, record field) pairs ``expr`` reads (``_reads``, without the keys)."""
    return frozenset(_reads(expr, contract.collections(), contract))


def _reads(
    expr: ir.Expr, collections: Collection[str], contract: Contract
) -> dict[Place, set[ir.Expr | None]]:
    """The (variable, record field) pairs a clause reads, each with the keys it reads them at:
    ``c[k].f`` of a collection (the key None where it names a variable a quantifier binds), or a
    variable that is not one (at None)."""
    out: dict[Place, set[ir.Expr | None]] = {}
    outright = {"input", *contract.state}
    for node in ir.walk(expr):
        if (place := _place(node, collections, contract.state)) is None:
            continue
        if place[1] is None:
            out.setdefault(place, set()).add(None)
            continue
        assert isinstance(node, ir.Attr) and isinstance(node.obj, ir.Index)
        key = node.obj.key
        out.setdefault(place, set()).add(key if ir.free_names(key) <= outright else None)
    return out


def wanted(unrolling: Unrolling, goal: Goal, depth: int) -> tuple[z3.BoolRef, Any] | None:
    """The goal met at the unrolling's last state (a refusal) or by its last call (an acceptance),
    with the refused call's input variables (None for an acceptance); None where it cannot be
    asked at this depth or the solver cannot express it."""
    reader, failing, write = goal
    if reader in unrolling.skipped or write.writer in unrolling.skipped:
        return None
    tr = unrolling.transition
    op = unrolling.contract.operations[reader]
    at = len(unrolling.states) - (2 if failing is None else 1)  # the reader's pre-state
    if at < 1:
        return None  # no call before it to write
    site_text = "" if write.site is None else to_source(write.site)
    tag = f"influence{depth}.{reader}.{failing}.{write.writer}.{write.var}.{write.field}.{site_text}"
    try:
        pre = unrolling.states[at]
        io = unrolling.io[-1].get(reader) if failing is None else tr.step_vars(op, tag)
        if io is None:
            return None
        site: tuple[Term, Term] | None = None  # the key the clause reads at, and where it is defined
        if write.site is not None:
            encoded = tr.encoder.encode(write.site, SymEnv(pre.values, io.input))
            records = pre.values[write.var]
            key = key_term(records, encoded.value) if isinstance(records, Map) else None
            if key is None:
                return None
            site = key, encoded.ok
        back, picked = _counterfactual(unrolling, write, at, tag, site)
        if write.read is not None:  # the one read through ``BEFORE``, the others as they are
            stale = one_read(op, write, unrolling.contract.collections())
            read = tr.encoder.encode(
                stale.expr, SymEnv({**pre.values, BEFORE: back.values[write.var]}, io.input)
            )
            # accepted: that clause fails so; refused by it: it holds so (defined either way)
            if failing is None:
                real: z3.BoolRef = unrolling.selectors[-1] == unrolling.ops.index(reader)
                return z3.And(real, picked, formula(fails(read))), None
            held = [tr.clause(c, pre, io) for c in op.requires[:failing]]
            refused = z3.And(io.constraints, *held, z3.Not(tr.clause(op.requires[failing], pre, io)))
            return z3.And(refused, picked, formula(holds_symbolically(read))), io.input
        if failing is None:
            real = unrolling.selectors[-1] == unrolling.ops.index(reader)
            other = z3.Not(tr.guard(op, back, io))
            return z3.And(real, picked, other), None
        held = [tr.clause(c, pre, io) for c in op.requires[:failing]]
        clause = op.requires[failing]
        real = z3.And(io.constraints, *held, z3.Not(tr.clause(clause, pre, io)))
        return z3.And(real, picked, tr.clause(clause, back, io)), io.input
    except (SolverError, z3.Z3Exception):
        return None


def _counterfactual(
    unrolling: Unrolling, write: Write, at: int, tag: str, site: tuple[Term, Term] | None = None
) -> tuple[SymState, z3.BoolRef]:
    """State ``at`` with the written value put back to what it was before one of the earlier
    calls of ``write.writer`` changed it (which one, and which record, is the solver's choice
    ``which``; with ``site``, the record at that key), and the condition that such a call
    changed it to the value it holds at ``at``."""
    states = unrolling.states
    equal = unrolling.transition.encoder.equal
    code = unrolling.ops.index(write.writer)
    which = z3.Int(f"{tag}.which")
    options: list[Term] = []
    now = states[at].values[write.var]
    if write.field is None:
        value = now
        for i in range(at):
            before, after = states[i].values[write.var], states[i + 1].values[write.var]
            chosen = which == i
            options.append(
                and_(chosen, unrolling.selectors[i] == code, not_(equal(before, after)), equal(after, now))
            )
            value = merge(chosen, before, value)
        back: SVal = value
    else:
        if not isinstance(now, Map):
            raise SolverError("not a collection of slots")
        maps = [m for i in range(at) if isinstance(m := states[i].values[write.var], Map)]
        if len(maps) < at or any(len(m.slots) != len(now.slots) for m in maps):
            raise SolverError("collections of other slots")
        slots = []
        for t, slot in enumerate(now.slots):
            present, value = _field(slot.value, write.field)
            for i in range(at):
                a = maps[i].slots[t]
                b = (maps[i + 1] if i + 1 < at else now).slots[t]
                fa, fb = _field(a.value, write.field), _field(b.value, write.field)
                chosen = which == i * len(now.slots) + t
                same_record = and_(a.present, b.present, slot.present, eq(a.key, b.key), eq(b.key, slot.key))
                if site is not None:
                    same_record = and_(same_record, site[1], eq(slot.key, site[0]))
                options.append(
                    and_(
                        chosen,
                        unrolling.selectors[i] == code,
                        same_record,
                        not_(_field_same(equal, fa, fb)),
                        _field_same(equal, fb, _field(slot.value, write.field)),
                    )
                )
                present, value = ite(chosen, fa[0], present), merge(chosen, fa[1], value)
            record = slot.value
            assert isinstance(record, Rec)
            slots.append(Slot(slot.key, slot.present, Rec({**record.fields, write.field: (present, value)})))
        back = attrs.evolve(now, slots=tuple(slots))
    values = dict(states[at].values)
    values[write.var] = back
    return SymState(values, z3.BoolVal(True)), formula(or_all(options))


def _field(record: SVal, field: str) -> tuple[Term, SVal]:
    if not isinstance(record, Rec):
        raise SolverError("a record of another shape")
    return record.get(field)


def _field_same(equal: Callable[[SVal, SVal], Term], a: tuple[Term, SVal], b: tuple[Term, SVal]) -> Term:
    """Whether two (present, value) fields are the same: both absent, or both there and equal."""
    return and_(eq(a[0], b[0]), implies(a[0], equal(a[1], b[1])))
