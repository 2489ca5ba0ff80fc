"""The lock-step state machine built from a contract, steered by the contract.

``build_machine(session)`` returns a Hypothesis ``RuleBasedStateMachine`` subclass whose one rule
takes a step; ``fast_test(session)`` runs the same steps from a plain ``@given`` loop (a
rule-based machine spends ~250 microseconds per step choosing a rule). Both drive a ``Case``: the
model state and the calls of one test case, and ``Case.step``, where an operation is chosen, a
call drawn, judged by the model, sent to the target and its response checked.

Reaching deep states is the fuzzer's job, not luck, so a step reads the contract
(``steering.Steer``): it picks an operation the model state may enable most of the time, draws
an input meant to pass its preconditions (a live key where a clause wants one, across all live
keys; distinct keys where two fields name the same collection; a fresh key for ``not in``; a
value at or next to the threshold a clause compares a field with; names and ids seen earlier in
the case), and redraws a few times when the model still rejects it. In ``adversarial`` mode a
few steps per case, after a valid prefix, are probes that break a precondition or the input
schema on purpose, so deep states get their adversarial calls too; a valid-intent step whose
every draw the model rejects is sent as well (the call just past a limit is such a probe).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from hypothesis.stateful import RuleBasedStateMachine, rule

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Operation
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz import influence, inputs, oracle
from envfactory.fuzz.corpus import Call
from envfactory.fuzz.draws import Source
from envfactory.fuzz.findings import Finding, crash_cause, error_for
from envfactory.fuzz.references import rebind, references
from envfactory.fuzz.steering import (
    FITS,
    MADE_AGAIN,
    Elsewhere,
    Fill,
    Steer,
    crowds,
    fills,
    held_items,
    holds_at,
    nameable,
    record_field,
)
from envfactory.trajectory import Step

if TYPE_CHECKING:
    from collections.abc import Callable

    from envfactory.fuzz.branches import Branch
    from envfactory.fuzz.reach import Route
    from envfactory.fuzz.runner import Session

TRIES = 4
"""How many inputs a valid-intent step draws looking for one the model accepts."""
PREFIX = 2
"""Valid-intent steps a case takes before its first adversarial probe."""
PROBES = 3
"""Adversarial probes at most per test case."""
PROBE_ODDS = 6
"""One step in this many (after the prefix) is a probe."""
ENABLED_ODDS = 7
"""An operation the state may enable is chosen this many times as often as any operation."""
FLOW_ODDS = 3
"""A call takes one field's value from an earlier call one time in this many."""
POOL = 64
"""Scalars from earlier inputs and outputs a case keeps for values that flow."""
CORPUS_ODDS = 3
"""Two test cases in this many start from a corpus entry, once the corpus has one."""
PREFIX_ODDS = 2
"""One test case in this many starts with a prefix the solver planned, once there are some."""
INSERT_ODDS = 4
"""One corpus entry or planned route in this many is replayed with one valid call of the case's
own inserted between two of its calls (``Case.insertion``)."""
SWARM_ODDS = 2
"""One test case in this many prefers a random subset of the operations (swarm testing: a case
that never calls ``removeBin`` keeps its bins long enough to fill them, one that never calls
``deposit`` drains accounts to zero). Every operation stays callable when none of the subset is
enabled, and shrinking turns the subset back into all operations."""
FOCUS_ODDS = 2
"""One test case in this many is focused: a field naming a live key takes the key its
collection was last called with, most of the time, so that one resource gets the repeated
operations (a third unlock, a fifth move, a fourth order) that a uniform choice spreads thin."""
FOCUS_KEEP = 4
"""In a focused case, the last key is taken ``FOCUS_KEEP - 1`` times in ``FOCUS_KEEP``."""
HISTORY_ODDS = 2
"""A delete takes the live key with the longest history one time in this many."""
RELIVE_ODDS = 2
"""After a call deleted a record this case made and changed, the next step makes it again and
changes it as before one time in this many (``Case.live_again``)."""
TWIN_ODDS = 12
"""One step in this many lives the life of a record of the state again under a fresh key
(``Case.twin``)."""
LIFE = 8
"""The calls of a record's life ``Case.live_again`` sends again, at most."""
REDRAW_ODDS = 2
"""A deleted record made again under its key gets the rest of its values drawn anew one time in
this many (``Case.live_again``)."""
RARITY_SCALE = 1 << 16
"""The resolution of a draw by rarity (``Case._entry``)."""
FIT_ODDS = 4
"""A valid call's live key is one its record clauses accept (``Steer.fitting``) but one time in this."""
TURNED_ODDS = 3
"""One probe in this many sends again a recent accepted call that the model refuses now
(``Case._turned``)."""
ELSEWHERE_ODDS = 3
"""One probe in this many (of those ``TURNED_ODDS`` leaves) sends a call with a field taken from
a record other than the one it names (``Case.elsewhere``)."""
GRANT_ODDS = 3
"""In adversarial mode, after a call put a value in a place an ``Elsewhere`` field is compared
with (made a member a moderator), the next step tries that value on another record one time in
this many (``Case.elsewhere``)."""
TURNED_LOOKBACK = 8
"""How many of a case's latest accepted calls ``Case._turned`` looks at."""
WAY_TRIES = 2
"""Draws a valid-intent step makes after an accepted one, looking for an input that takes a way
through the operation's effects no call took yet (``Case.valid``)."""
AIM_ODDS = 4
"""One step in this many, where a live key makes a way through an operation's effects that no
call took yet (``Session.aims``), calls that operation on that key (``Case._aimed``)."""
TURN_TRIES = 8
"""Draws of an inserted change that looks for one that turns the replay's last call
(``Case._change``)."""
TURN_LOOKAHEAD = 24
"""Calls of a replay after an inserted change the model judges (``Case._after``)."""
TURNS_LAST, KEPT, CUT = range(3)
"""How an inserted change leaves the replay's later calls (``Case._after``), the best first."""
REFILL_ODDS = 3
"""After a call took a record out of a count a requires bounds, or moved the count (deleted the
record, or changed a field the count reads), the next step starts filling the count up again
one time in this many (``Case.refill``); where that step reads back what the call changed
(``READ_ODDS``), the step after it."""
REDO_ODDS = 3
"""After an accepted call took something away (``Case.undone``), the next step sends again a call
it turned back on one time in this many (``Case.redo``)."""
REDO_CALLS = 8
"""The calls a redo sends at most, in turn the call turned back on and the call that turned it."""
REFILL_CALLS = 5
"""The calls a refill sends at most, each while the model accepts the one before."""
LEFT = 8
"""The refills one call offers at most (per record it took out of a count, per count)."""
USE_ODDS = 3
"""After a call changed a field of a record, the next step calls an operation whose requires or
effects read that field one time in this many (``Case.unused``)."""
READ_ODDS = 2
"""After a call that showed a state feature new in the round (and after a corpus entry or a
planned prefix replayed), the next step reads back a record it changed one time in this many
(``Case.unread``)."""
ABSENT_ODDS = 2
"""A key field the input schema does not require is left out one time in this many, as the
schema's generator leaves out any other optional field: its absence is a case of its own
(``link`` without ``to`` unlinks; ``resend`` without ``to`` keeps the destination)."""
STALE_ODDS = 3
"""In adversarial mode, after a call deleted a key, the next step names it in an operation that
takes a key of that collection, the other fields drawn as for a valid call, one time in this
many (``Case.use_after_delete``)."""
FLAGGED_ODDS = 3
"""A field a quantifier compares with records whose flags it does not read takes what a flagged
record holds one time in this many, where one does (``Case._flagged``)."""
AGAIN_ODDS = 3
"""In adversarial mode, after a call made a deleted key again, the next step sends again, as it
was, a call that named the key before its deletion, one time in this many (``Case.as_before``)."""
STEP_LABEL = 0x5EED_F022
SLOW_CALL = 0.2
"""Seconds (CPU seconds for a target in this process: ``Session.call_clock``) past which a call that failed (an error, a crash, a hang: none changes the target's
state) is remembered with the calls before it: the shrinker and later cases replay that same
sequence, and a target that takes seconds to fail (a hang waits out the whole call limit) would
spend the budget failing the same way again."""


class OpPlan:
    """What a step needs about its operation, computed once per run."""

    __slots__ = ("gen", "key_gens", "name", "op", "optional", "scalars", "steer")

    def __init__(self, op: Operation, session: Session, crowd: Mapping[str, int] | None = None) -> None:
        self.op = op
        self.name = op.name
        self.steer = Steer.of(op, session.contract, crowd)
        keyed = {k.field for k in self.steer.keys}
        props, required, additional = inputs.object_properties(op.input_schema)
        self.optional = frozenset(keyed - set(required))
        """Key fields the input may leave out (``Case._keys``)."""
        self.scalars = tuple(
            (name, kind)
            for name, schema in sorted(props.items())
            if name not in keyed and (kind := _scalar_kind(schema)) is not None
        )
        # key fields are drawn by ``Case._keys`` (most of the time a live key, which costs no
        # draw from the schema); the rest of the input comes from the schema without them
        defs = {k: v for k, v in op.input_schema.items() if k in ("$defs", "definitions")}
        if keyed and isinstance(op.input_schema, dict) and props:
            rest = {
                "type": "object",
                "properties": {k: v for k, v in props.items() if k not in keyed},
                "required": [r for r in required if r not in keyed],
                **({"additionalProperties": additional} if additional is not True else {}),
                **defs,
            }
            self.gen = inputs.compile_schema(rest)
            self.key_gens = {k: inputs.compile_schema({**dict(props.get(k) or {}), **defs}) for k in keyed}
        else:
            self.gen = inputs.compile_schema(op.input_schema)
            self.key_gens = {}


Read = tuple[OpPlan, str | None, Any]
"""An operation, and the key field it names with the key; or None and the record (collection,
key) its ``any`` of the requires is to name (``Case.unused``), or None and None: a call that
takes no key and names nothing (``Case.unread``, ``Case.unused``)."""
Grant = tuple[OpPlan, Elsewhere, Any]
"""An operation, its ``Elsewhere`` field, and the value the field is to take from another
record (None: any such value; ``Case.elsewhere``)."""


def _took(before: Any, after: Any) -> bool:
    """Whether a write took something away from a state variable: a record of a collection, or
    an item of a list a record holds."""
    if not isinstance(before, Mapping) or not before:
        return False
    if not isinstance(after, Mapping) or len(after) < len(before):
        return True
    for key, record in after.items():
        old = before.get(key)
        if old is None or old is record or not isinstance(record, Mapping) or not isinstance(old, Mapping):
            continue
        for field, items in record.items():
            was = old.get(field)
            if isinstance(items, list) and isinstance(was, list) and len(items) < len(was):
                return True
    return False


def _changed(
    writes: Iterable[str], table: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]
) -> Iterator[tuple[Any, Any, Any, Any]]:
    """For each collection a call wrote that ``table`` has an entry for, each record the call
    made, changed or deleted: the entry, the key, and the record before (None: made) and after
    (None: deleted)."""
    for name in writes:
        entry = table.get(name)
        old, new = before.get(name), after.get(name)
        if not entry or old is new:
            continue
        old = old if isinstance(old, Mapping) else {}
        new = new if isinstance(new, Mapping) else {}
        for key in {**old, **new}:
            was, now = old.get(key), new.get(key)
            if was is not now:
                yield entry, key, was, now


def _depth(op: Operation, expect: oracle.Expectation) -> int:
    """How far a refused call got: the index of the requires that refused it (-1: its schema)."""
    if expect.kind == "precondition" and expect.clause is not None:
        return op.requires.index(expect.clause)
    return -1


def _scalar_kind(schema: Any) -> type | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if "enum" in schema or "const" in schema:
        return None
    return {"string": str, "integer": int}.get(kind) if isinstance(kind, str) else None


class Case:
    """One test case: the model's state, the calls made so far and every key and value seen."""

    __slots__ = (
        "accepted",
        "again",
        "answers",
        "changed",
        "changes",
        "cycling",
        "dropped",
        "filling",
        "focus",
        "granted",
        "history",
        "known",
        "last",
        "left",
        "lives",
        "off",
        "pool",
        "previous",
        "probes",
        "reading",
        "refused",
        "relive",
        "replaying",
        "seen",
        "session",
        "stale",
        "started",
        "state",
        "steps",
        "undone",
        "unread",
        "unused",
    )

    def __init__(self, session: Session, *, replay: bool = False) -> None:
        if not replay:
            session.begin_case()
        self.session = session
        self.state: FrozenMap = session.initial
        self.steps: list[Step] = []
        self.known: dict[str, list[Any]] = {
            c: list(session.initial.get(c) or ()) for c in session.collections
        }
        self.seen: dict[str, set[Any]] = {c: set(keys) for c, keys in self.known.items()}
        self.pool: list[Any] = list(session.literals)
        self.dropped: dict[str, list[Any]] = {}
        """Keys each collection lost in this case, most recently deleted last."""
        self.history: dict[tuple[str, Any], int] = {}
        """Per (collection, key) of a collection keys are deleted from (``Session.deleted``):
        accepted calls that changed its record since it was made (kept after its deletion). A record with a history is what a "made again" bug remembers: an
        account closed after a deposit and a withdrawal, a course removed after two drops."""
        self.lives: dict[tuple[str, Any], list[int]] = {}
        """Per (collection, key) of a record this case made: the indices in ``accepted`` of the
        call that made it and of those that changed it (``live_again``)."""
        self.relive: tuple[str, Any] | None = None
        """The record (collection, key) the last accepted call deleted, where this case made and
        changed it: the next step may live its life again (``live_again``)."""
        self.again: tuple[str, Any] | None = None
        """The key (collection, key) the last accepted call made again after its deletion
        (``as_before``)."""
        self.stale: tuple[str, Any] | None = None
        """The key (collection, key) the last accepted call deleted (``use_after_delete``)."""
        self.probes = 0
        self.accepted: list[Call] = []
        self.answers: list[Any] = []
        """The outputs of the ``accepted`` calls, in order (the ids a lived-again call names)."""
        self.off: frozenset[str] = frozenset()
        """Operations this case does not prefer (swarm testing)."""
        self.focus = False
        self.last: dict[str, Any] = {}
        """The key each collection was last called with (for a focused case)."""
        self.refused: set[str] = set()
        """Operations whose every valid-intent draw the model refused in the current state: not
        preferred again until a call changes the state (``lock`` on a locked bin, ``move`` with
        one bin, asked again and again, wasted the steps a deep state needs)."""
        self.changed: tuple[tuple[str, Any], ...] = ()
        """In a replay, the records (collection, key) the last accepted call changed, of
        collections some read operation takes a key of: what a read would show wrong first
        (``shrink.explained``)."""
        self.unread: tuple[Read, ...] = ()
        """Reads of what the last accepted call changed (a read operation and the key it
        names), where that call showed a state feature new in the round or ended a replayed
        corpus entry or planned prefix: a target whose bug corrupts its own state at a rare
        change (the seats given back to the last waiter, not the first) answers that call
        right, and only a read shows it. A step drawn at random reads the changed record
        with the right operation once in dozens; the next step here does half the time."""
        self.left: tuple[tuple[OpPlan, dict[str, Any]], ...] = ()
        """Calls that count one more beside a record the last accepted call took out of a count
        a requires bounds (``refill``)."""
        self.filling: tuple[OpPlan, dict[str, Any], int] | None = None
        """A refill under way: the operation, its fields held, and the calls it may still send."""
        self.undone: tuple[FrozenMap, Call] | None = None
        """An accepted call that took something away (a record deleted, an item out of a list),
        with the state before it: a call it turned back on may be sent again (``redo``)."""
        self.cycling: tuple[tuple[Call, Call], int, int] | None = None
        """A redo under way: the call turned back on and the call that turned it, the next of
        them to send, and the calls it may still send."""
        self.granted: tuple[Grant, ...] = ()
        """What the last accepted call put in a place a requires compares an input field with
        (a member made moderator of a channel, the owner of a new one): tried on another record
        than its own next (``elsewhere``)."""
        self.unused: tuple[Read, ...] = ()
        """Calls of the operations whose requires or effects read a field the last accepted call
        changed, each naming the changed record where it takes a key of its collection: a role
        changed between a member's add and a move into their project is judged at the move, and
        an implementation that judges by the role as added shows only there."""
        self.reading = False
        """Whether the call being sent ends a replayed entry or prefix (``unread``)."""
        self.replaying = replay
        self.started = False
        self.previous: OpPlan | None = None
        """The operation of the step before (``step``)."""
        self.changes: influence.Changes = {}
        """The fields this case's accepted calls changed, last, for ``Session.influence``."""
        session.target.reset()

    # -- one step ------------------------------------------------------------------------------

    def step(self, plans: list[OpPlan], src: Source) -> None:
        """Choose an operation, draw a call, send it (the first step of a case may first replay
        a prefix the solver planned: see ``reach.py``)."""
        session = self.session
        session.check_time()
        if not self.started:
            self.started = True
            if session.stateful:
                if src.index(SWARM_ODDS) == SWARM_ODDS - 1:
                    self.off = frozenset(p.name for p in plans if src.boolean())
                self.focus = src.index(FOCUS_ODDS) == FOCUS_ODDS - 1
            entries = session.published
            if session.prefixes and src.index(PREFIX_ODDS) == PREFIX_ODDS - 1:  # shrinks to: none
                # the route ends in the state it was planned for, and its last call is read back
                # next (``unread``): a corpus entry replayed on top, recorded from the initial
                # state, would go elsewhere and take the read's place
                self.follow(plans, self._prefix(src), src)
            elif entries and src.index(CORPUS_ODDS) != CORPUS_ODDS - 1:
                entry = entries[-1 - self._entry(src, len(entries))]
                self.resume(plans, entry, self.insertion(len(entry), src), src)
        if self.relive is not None:
            life, self.relive = self.relive, None
            if src.index(RELIVE_ODDS) == RELIVE_ODDS - 1:
                self.unread = ()
                self.live_again(plans, *life, src=src)
                return
        # a key the step before made again, or deleted: a call that names it as before
        again, gone, self.again, self.stale = self.again, self.stale, None, None
        if session.mode == "adversarial":
            for pending, odds, follow in (
                (again, AGAIN_ODDS, self.as_before),
                (gone, STALE_ODDS, self.use_after_delete),
            ):
                if pending is not None and src.index(odds) == odds - 1 and follow(plans, *pending, src=src):
                    return
        if (
            session.stateful
            and self.lives
            and src.index(TWIN_ODDS) == TWIN_ODDS - 1
            and self.twin(plans, src)
        ):
            return
        undone, self.undone = self.undone, None
        left, self.left = self.left, ()
        if self.cycling is not None:
            self.cycle()
            return
        if self.filling is not None:
            self.refill(left, src)
            return
        if self.unread:
            unread, self.unread = self.unread, ()
            if src.index(READ_ODDS) == READ_ODDS - 1:
                self._named_call(unread, src)
                # a read moves no count and turns no call back on: the refill or the redo the
                # call before offered may come next
                self.left = self.left or left
                self.undone = self.undone or undone
                return
        if undone is not None and src.index(REDO_ODDS) == REDO_ODDS - 1 and self.redo(undone, src):
            return
        if left and src.index(REFILL_ODDS) == REFILL_ODDS - 1:
            self.refill(left, src)
            return
        if self.unused:
            unused, self.unused = self.unused, ()
            if src.index(USE_ODDS) == USE_ODDS - 1:
                self._named_call(unused, src)
                return
        if self.granted:
            granted, self.granted = self.granted, ()
            if (
                session.mode == "adversarial"
                and src.index(GRANT_ODDS) == GRANT_ODDS - 1
                and self.elsewhere(granted, src)
            ):
                return
        order = ordered(session, plans)
        enabled = [p for p in order if p.steer.possible(self.state)]
        if self.off:
            enabled = [p for p in enabled if p.name not in self.off] or enabled
        if self.refused:
            enabled = [p for p in enabled if p.name not in self.refused] or enabled
        if self.dropped:
            # a producer of a collection that lost a key in this case is offered twice (it makes
            # that key again three times in eight: see ``_keys``)
            enabled += [p for p in enabled if any(self._gone(c) for c in p.steer.makes & self.dropped.keys())]
        if session.stateful and 0 < sum(1 for p in enabled if p.op.effects) < len(enabled):
            # an operation that changes the state weighs twice a read: a case's steps build its
            # depth, and what a change did is read back where it showed something new (``unread``)
            enabled = [q for p in enabled for q in ((p, p) if p.op.effects else (p,))]
        if (
            session.round_aims
            and src.index(AIM_ODDS) == AIM_ODDS - 1
            and (aimed := self._aimed(enabled, src))
        ):
            self.previous = aimed[0]
            self.valid(aimed[0], src, aimed[1])
            return
        # seven times in eight an operation the state may enable, else any: one draw, which
        # shrinks to the first enabled operation
        choice = src.index(ENABLED_ODDS * len(enabled) + len(plans))
        if choice == 0 and self.previous is not None:
            plan = self._simplest(order, enabled)
        else:
            plan = (
                enabled[choice // ENABLED_ODDS]
                if choice < ENABLED_ODDS * len(enabled)
                else (order[choice - ENABLED_ODDS * len(enabled)])
            )
        self.previous = plan
        if session.mode == "adversarial" and plan not in enabled:
            self.probe(plan, src)  # a call the state cannot enable: probe it (use after delete)
            return
        if session.mode == "adversarial" and (
            # a contract with no preconditions has no deep states to build up to: half the
            # steps probe, as for a bare tool list whose bugs are in input handling
            (not session.stateful and src.boolean())
            or (
                session.stateful
                and len(self.steps) >= PREFIX
                and self.probes < PROBES
                and src.index(PROBE_ODDS) == PROBE_ODDS - 1
            )
        ):
            self.probes += 1
            # a call some requires refuses now (a contract without any has none to turn)
            if session.stateful and src.index(TURNED_ODDS) == TURNED_ODDS - 1 and self._turned(plans, src):
                return
            if (
                session.places
                and src.index(ELSEWHERE_ODDS) == ELSEWHERE_ODDS - 1
                and self.elsewhere([(p, spec, None) for p in order for spec in p.steer.elsewhere], src)
            ):
                return
            # any operation, enabled or not; half the time, where a key is gone, one that reads
            # a key of that collection (use after delete is the classic bug of stateful APIs)
            stale = [p for p in order if any(not k.fresh and self._gone(k.collection) for k in p.steer.keys)]
            pool = stale if stale and src.boolean() else order
            self.probe(pool[src.index(len(pool))], src)
        else:
            self.valid(plan, src)

    def redo(self, undone: tuple[FrozenMap, Call], src: Source) -> bool:
        """Start a redo: one of the case's latest accepted calls that the model refused before the
        last accepted call took something away and accepts after it (an invite's join again
        after a leave, a borrow after a return), sent again, then the call that turned it back
        on, and so on in turn while the model accepts them, the call it refuses sent too
        (``cycle``); whether there was one. A target that counts the way back as it counts the
        way there lets the cycle past a limit (an invite that counts the people who took it,
        not the joins); a step drawn at random seldom sends the pair again and again."""
        session = self.session
        ops = session.contract.operations
        before_it, undoing = undone
        again: list[Call] = []
        for call in self.accepted[-TURNED_LOOKBACK:]:
            name, value = call
            if call == undoing or call in again:
                continue
            before = oracle.judge(session.model, before_it, ops[name], value)
            if before.accepted or before.kind != "precondition":
                continue
            if oracle.judge(session.model, self.state, ops[name], value).accepted:
                again.append(call)
        if not again:
            return False
        self.cycling = ((again[-1 - src.index(len(again))], undoing), 0, REDO_CALLS)
        self.cycle()
        return True

    def cycle(self) -> None:
        """The next call of a redo under way (``redo``)."""
        assert self.cycling is not None
        pair, turn, calls = self.cycling
        self.cycling = None
        name, value = pair[turn]
        op = self.session.contract.operations[name]
        expect = oracle.judge(self.session.model, self.state, op, value)
        if expect.accepted or self.session.mode != "valid":  # valid mode sends no refused call
            self.send(op, value, expect)
        if expect.accepted and calls > 1:
            self.cycling = (pair, 1 - turn, calls - 1)

    def refill(self, left: Sequence[tuple[OpPlan, dict[str, Any]]], src: Source) -> None:
        """Fill a count a requires bounds up again after a call took a record out of it: the
        operation that counts, its filter's fields held to the record's, sent again while the
        model accepts it, and the call it refuses sent too. A target that keeps the count as a
        counter of its own must give the slot back on every way a record leaves (a message
        deleted by a moderator, not only by its author; a job cancelled, not only finished), and
        one that does not refuses a call short of the limit, a call or two after the record left,
        where a step drawn at random seldom names the same channel and author again."""
        if self.filling is None:
            plan, fixed = left[src.index(len(left))]
            self.filling = (plan, fixed, REFILL_CALLS)
        plan, fixed, calls = self.filling
        accepted = len(self.accepted)
        self.filling = None
        self.previous = plan
        self.valid(plan, src, fixed=fixed)
        if len(self.accepted) > accepted and calls > 1:
            self.filling = (plan, fixed, calls - 1)

    def _simplest(self, order: list[OpPlan], enabled: list[OpPlan]) -> OpPlan:
        """The operation of the simplest choice after a step: Hypothesis begins each run with
        cases that extend a random prefix with the simplest choices, half of a round's hundred
        cases. A change is made again (after a corpus entry, its last call, which showed
        something new: one more click of the dial, one more deposit); a read, or a change the
        state no longer prefers (a crowded producer), hands over to the next operation the state
        prefers in ``order`` (``ordered``), so that those cases walk the operations: reading the
        same state twenty times shows nothing, and a document of four hundred operations had
        half its calls go to its first one."""
        previous = self.previous
        assert previous is not None
        if previous.op.effects and previous in enabled:
            return previous
        preferred = {id(p) for p in enabled}
        start = order.index(previous) + 1
        for plan in itertools.chain(order[start:], order[:start]):
            if id(plan) in preferred:
                return plan
        return enabled[0]

    def use_after_delete(self, plans: list[OpPlan], collection: str, key: Any, *, src: Source) -> bool:
        """A call of an operation that takes a live key of ``collection`` naming ``key``, which
        the step before deleted, its other fields drawn as a valid call draws them: a fill
        checked by the pharmacist just dismissed, while it awaits its check. A target that
        keeps a second record of the key (a licence register beside the staff list) and forgets
        it there accepts the call; the probes' breaking draws pair the deleted key with a valid
        rest only by chance. Whether there was such an operation."""
        readers = [
            (plan, k.field)
            for plan in plans
            for k in plan.steer.keys
            if k.collection == collection and not k.fresh
        ]
        if not readers:
            return False
        plan, field = readers[src.index(len(readers))]
        value = self.draw(plan, src, breaking=False)
        if not isinstance(value, dict):
            return False
        value[field] = key
        self.send(plan.op, value)
        return True

    def as_before(self, plans: list[OpPlan], collection: str, key: Any, *, src: Source) -> bool:
        """Send again, as it was, one of the accepted calls that named ``key`` of ``collection``
        before the key was deleted and made again by the step before (the latest ones first): a
        package deleted and made again by another user is not the old owner's to delete, and an
        implementation that keeps a cache of the tokens each name has authorized lets the old
        owner's call through. A valid draw of that call that names the old owner's token is
        refused by the model and drawn again. Whether there was such a call."""
        by_name = {plan.name: plan for plan in plans}
        made = len(self.accepted) - 1
        calls = [
            (plan, value)
            for name, value in self.accepted[:made]
            if (plan := by_name.get(name)) is not None
            and isinstance(value, dict)
            and any(
                k.collection == collection and not k.fresh and value.get(k.field) == key
                for k in plan.steer.keys
            )
        ]
        if not calls:
            return False
        plan, value = calls[-1 - src.index(len(calls))]
        self.send(plan.op, dict(value))
        return True

    def _prefix(self, src: Source) -> Route:
        """The planned prefix a case starts with: one time in two one of those the latest
        adoption brought (``Session.fresh``), where earlier ones were adopted before them."""
        prefixes, fresh = self.session.prefixes, self.session.fresh
        if 0 < fresh < len(prefixes) and src.boolean():
            return prefixes[len(prefixes) - fresh + src.index(fresh)]
        return prefixes[src.index(len(prefixes))]

    def valid(
        self,
        plan: OpPlan,
        src: Source,
        aim: tuple[str, Any] | None = None,
        held: tuple[str, Any] | None = None,
        fixed: Mapping[str, Any] | None = None,
    ) -> None:
        """A call meant to be accepted: up to ``TRIES`` draws until the model accepts one
        (``aim``: a key field and the key it names in every draw; ``held``: a record
        (collection, key) that every draw's ``Witness`` fields name, ``_hold``). Where the
        operation's effects have a way through no call took yet, an accepted draw that does
        not take one gets up to ``WAY_TRIES`` more draws to find one that does (an order that
        redeems the points its customer holds, where most draws leave the optional field out),
        where the input's own values decide the way (``Branch.drawn``): a way the named
        record's fields decide is the aimed steps' business, and draws again for it would only
        cost calls."""
        session = self.session
        value: Any = None
        expect: oracle.Expectation | None = None
        best: tuple[int, Any, oracle.Expectation] | None = None
        ways = session.round_ways.get(plan.name) if aim is None else None
        accepted: tuple[Any, oracle.Expectation] | None = None
        tries = TRIES
        while tries:
            tries -= 1
            value = self.draw(plan, src, breaking=False)
            if aim is not None and isinstance(value, dict):
                value[aim[0]] = aim[1]
            if held is not None and isinstance(value, dict):
                self._hold(plan, value, *held)
            if fixed and isinstance(value, dict):
                value.update(fixed)
            expect = oracle.judge(session.model, self.state, plan.op, value)
            if expect.accepted:
                if not ways or self._new_way(ways, value):
                    accepted = None
                    break
                if accepted is None:
                    accepted, tries = (value, expect), WAY_TRIES
                continue
            # every draw refused: send the one that got furthest through the requires (the
            # call just past a limit, with its keys live and its amounts covered)
            depth = _depth(plan.op, expect)
            if best is None or depth > best[0]:
                best = (depth, value, expect)
        assert expect is not None
        if accepted is not None:
            value, expect = accepted  # no draw took a new way: the first accepted one
        if not expect.accepted:
            self.refused.add(plan.name)
            if session.mode == "valid":
                return
            assert best is not None
            _, value, expect = best
        self.send(plan.op, value, expect)

    def _new_way(self, ways: Sequence[Branch], value: Any) -> bool:
        """Whether a call with input ``value`` takes a way through the effects no call took yet."""
        outcomes = self.session.round_outcomes
        for branch in ways:
            taken = branch.taken(self.state, value)
            if taken is not None and taken not in outcomes:
                return True
        return False

    def _aimed(self, enabled: list[OpPlan], src: Source) -> tuple[OpPlan, tuple[str, Any]] | None:
        """An enabled operation, with a live key that takes a way through its effects no call
        took yet (a late bid on a lot whose extensions are used up): the state a case passes
        through may be the one such a call needs, and a call drawn at random rarely names the
        one record in it. None where there is none."""
        state = self.state
        aims = self.session.round_aims
        found: list[tuple[OpPlan, str, Any]] = []
        for plan in enabled:
            if plan.name not in aims:
                continue
            live = {k.field: k.collection for k in plan.steer.keys if not k.fresh}
            for field, test in aims[plan.name]:
                if field in live:
                    keys = list(state.get(live[field]) or ())[-FITS:]
                    found.extend((plan, field, key) for key in keys if holds_at(test, state, field, key))
        if not found:
            return None
        plan, field, key = found[src.index(len(found))]
        return plan, (field, key)

    def probe(self, plan: OpPlan, src: Source) -> None:
        """A call meant to be rejected: a broken precondition (keys and thresholds turned the
        wrong way) or a broken input schema."""
        how = src.index(3)
        if how == 2 and plan.steer.thresholds:
            value = self._past_threshold(plan, src)
            if value is not None:
                self.send(plan.op, value)
                return
        if how:
            value = inputs.mutate(
                self.draw(plan, src, breaking=False),
                plan.op.input_schema,
                src.pick(inputs.MUTATIONS if self.session.stateful else inputs.TOOL_MUTATIONS),
                src.integer(0, 255),
                allow_non_object=self.session.allow_non_object,
            )
        else:
            value = self.draw(plan, src, breaking=True, broken=self._broken(plan, src))
        self.send(plan.op, value)

    def _broken(self, plan: OpPlan, src: Source) -> str | None:
        """The one key field a breaking draw breaks, the others drawn as a valid call draws them
        (None: all of them). Breaking every key at once fails the first requires, which reads
        the first key: a check of a fill that is gone by someone who is gone never asks whether
        a dismissed pharmacist still checks a fill that awaits its check. A field whose
        collection lost a key in this case comes first (use after delete, one key at a time)."""
        fields = [k.field for k in plan.steer.keys]
        if len(fields) < 2:
            return None
        stale = [k.field for k in plan.steer.keys if not k.fresh and self._gone(k.collection)]
        pool = stale or fields
        which = src.index(len(pool) + 1)
        return pool[which] if which < len(pool) else None

    def _turned(self, plans: list[OpPlan], src: Source) -> bool:
        """Send again one of the case's latest accepted calls that a ``requires`` refuses now
        (its fresh keys made fresh again); whether there was one. A later call turned the
        clause: where a target keeps what the clause reads in a store of its own (the hubs a
        link reaches in two hops), the path that should have updated it is where it goes stale,
        and the call it disabled is the one that shows it (a send along a route an unlink
        broke); a steered draw meets that call only by chance."""
        session = self.session
        by_name = {plan.name: plan for plan in plans}
        turned: list[tuple[OpPlan, dict[str, Any], oracle.Expectation]] = []
        for name, value in self.accepted[-TURNED_LOOKBACK:]:
            plan = by_name.get(name)
            if plan is None or not isinstance(value, dict):
                continue
            call = dict(value)
            for key in plan.steer.keys:
                if key.fresh and key.field in call:
                    call[key.field] = self._fresh(key.collection, call[key.field])
            expect = oracle.judge(session.model, self.state, plan.op, call)
            if not expect.accepted and expect.kind == "precondition":
                turned.append((plan, call, expect))
        if not turned:
            return False
        plan, call, expect = turned[-1 - src.index(len(turned))]
        self.send(plan.op, call, expect)
        return True

    def elsewhere(self, moves: Sequence[Grant], src: Source) -> bool:
        """Send a call the state may enable with one field taken from a record other than the
        one the call names (``steering.Elsewhere``: a moderator of another channel, the owner
        of another project), where the model refuses it; whether there was one. Each of
        ``moves`` is an operation, its field, and the value to take (None: any that another
        record holds), tried in turn from a drawn one. A target that checks a role against any
        record lets the call in, and a value drawn at random is another record's only by chance."""
        start = src.index(len(moves)) if moves else 0
        for plan, spec, wanted in [*moves[start:], *moves[:start]]:
            if not plan.steer.possible(self.state):
                continue
            value = self.draw(plan, src, breaking=False)
            if not isinstance(value, dict) or spec.field not in value:
                continue
            held = spec.values(self.state, value)
            if wanted is not None:
                held = [wanted] if wanted in held else []
            if not held:
                continue
            call = {**value, spec.field: held[src.index(len(held))]}
            expect = oracle.judge(self.session.model, self.state, plan.op, call)
            if not expect.accepted and expect.kind == "precondition":
                self.previous = plan
                self.send(plan.op, call, expect)
                return True
        return False

    def _past_threshold(self, plan: OpPlan, src: Source) -> Any:
        """A valid-intent input with one field compared with the state moved just past its bound
        (an amount one more than the balance, one more than a limit allows), so that the clause
        fails while the ones before it hold; None if no such move makes the model refuse it."""
        value = self.draw(plan, src, breaking=False)
        if not isinstance(value, dict):
            return None
        env = Env(self.state, value)
        thresholds = plan.steer.thresholds
        start = src.index(len(thresholds))
        for threshold in thresholds[start:] + thresholds[:start]:
            try:
                bound = threshold.bound(env)
            except (EvaluationError, TypeError, KeyError):
                continue
            if not isinstance(bound, int) or isinstance(bound, bool):
                continue
            for moved in (bound + 1, bound - 1, bound):
                candidate = {**value, threshold.field: moved}
                expect = oracle.judge(self.session.model, self.state, plan.op, candidate)
                if not expect.accepted and expect.kind == "precondition":
                    return candidate
        return None

    # -- drawing an input ----------------------------------------------------------------------

    def draw(self, plan: OpPlan, src: Source, *, breaking: bool, broken: str | None = None) -> Any:
        """An input for ``plan``: valid-intent, or with its keys broken (``breaking``: all of
        them, or only the field ``broken``)."""
        value = plan.gen(src)
        if not isinstance(value, dict):
            return value
        value = dict(value)
        if plan.steer.keys:
            self._keys(plan, value, src, breaking, broken)
        if plan.scalars and self.pool:
            self._flow(plan, value, src)
        if plan.steer.witnesses and (not breaking or broken is not None):
            self._witnesses(plan, value, src, broken)
        if plan.steer.members and (not breaking or broken is not None):
            self._members(plan, value, src, broken)
        if plan.steer.item_keys and not breaking:
            self._item_keys(plan, value, src)
        if plan.steer.flagged and not breaking:
            self._flagged(plan, value, src)
        if plan.steer.thresholds:
            self._thresholds(plan, value, src)
        return value

    def _witnesses(self, plan: OpPlan, value: dict[str, Any], src: Source, broken: str | None = None) -> None:
        """Three times in four, a field an ``any`` of the requires compares with its records
        (``steering.Witness``) takes what one of the records it may name holds: the actor who
        holds a membership of the VM's project. Where two of them test one field (a member of
        both projects), a value both allow comes first."""
        fields: dict[str, list[Any]] = {}
        for witness in plan.steer.witnesses:
            if witness.field not in value or witness.field == broken:
                continue
            found = witness.candidates(self.state, value)
            held = fields.get(witness.field)
            if held is None:
                fields[witness.field] = found
            elif both := [v for v in held if v in found]:
                fields[witness.field] = both
        for field, found in fields.items():
            if src.index(4) < 3 and found:
                value[field] = found[src.index(len(found))]

    def _flagged(self, plan: OpPlan, value: dict[str, Any], src: Source) -> None:
        """One time in ``FLAGGED_ODDS``, a field a quantifier compares with records whose flags it
        does not read (``steering.Flagged``) takes what a record with a flag set holds: the
        folder whose subfolder is in the trash, moved where the trashed one would be too deep."""
        keyed = {k.field: k.collection for k in plan.steer.keys if not k.fresh}
        fields: dict[str, list[Any]] = {}
        for spec in plan.steer.flagged:
            if spec.field in value:
                held = fields.setdefault(spec.field, [])
                live = (self.state.get(keyed[spec.field]) or ()) if spec.field in keyed else None
                # a key field takes a live key only (a subfolder's folder's folder may be the root)
                held += [
                    v
                    for v in spec.candidates(self.state, value)
                    if v not in held and (live is None or v in live)
                ]
        for field, found in fields.items():
            if found and src.index(FLAGGED_ODDS) == FLAGGED_ODDS - 1:
                value[field] = found[src.index(len(found))]

    def _members(self, plan: OpPlan, value: dict[str, Any], src: Source, broken: str | None = None) -> None:
        """Three times in four, a field a requires wants among a list's items (``steering.Member``)
        takes one of them, where the list has any: the job that names a secret its pipeline
        holds, the unyank of a version that is yanked."""
        for member in plan.steer.members:
            if member.field not in value or member.field == broken or src.index(4) == 3:
                continue
            found = member.choices(self.state, value)
            if found:
                value[member.field] = found[src.index(len(found))]

    def _item_keys(self, plan: OpPlan, value: dict[str, Any], src: Source) -> None:
        """Three times in four, the items of a list input name live keys where a clause wants
        them to (``steering.ItemKey``): item ``n`` the key ``n`` places past one drawn, counted
        from the newest, so that two lines name two products while there are two (the simplest
        choice: the newest, then the one before)."""
        for item_key in plan.steer.item_keys:
            items = value.get(item_key.field)
            live = list(self.state.get(item_key.collection) or ())
            if not isinstance(items, list) or not live or src.index(4) == 3:
                continue
            start = src.index(len(live))
            value[item_key.field] = [
                {**item, item_key.item: live[-1 - (start + n) % len(live)]}
                if isinstance(item, dict)
                else item
                for n, item in enumerate(items)
            ]

    def _hold(self, plan: OpPlan, value: dict[str, Any], collection: str, key: Any) -> None:
        """Every ``Witness`` field whose ``any`` ranges over ``collection`` takes what the record
        ``key`` holds (``Witness.held_by``): the move into the project of the membership whose
        role the step before changed, by its user, whatever that role is now."""
        for witness in plan.steer.witnesses:
            held = witness.held_by(self.state, value, collection, key)
            if held is not None:
                value[witness.field] = held

    def _keys(
        self, plan: OpPlan, value: dict[str, Any], src: Source, breaking: bool, broken: str | None = None
    ) -> None:
        """Key-naming fields take a live key (any of them; distinct from the other fields' keys
        of the same collection), a key that is gone (use after delete), or a fresh one; with
        ``breaking``, the wrong one of these for every field, or for the field ``broken`` only.

        A live key is counted from the newest, so that the simplest choice (what shrinking
        reaches) is "the key made last", which survives the removal of earlier steps."""
        state = self.state
        taken: dict[str, list[Any]] = {}
        for key in plan.steer.keys:
            field, collection = key.field, key.collection
            breaks = breaking and (broken is None or field == broken)  # this field
            if field in plan.optional and src.index(ABSENT_ODDS) == ABSENT_ODDS - 1:
                value.pop(field, None)
                continue
            chosen = taken.setdefault(collection, [])
            live = list(state.get(collection) or ())
            drawn = plan.key_gens.get(field)
            if key.fresh != breaks:  # a key the collection does not hold
                gone = self._gone(collection) if breaks else []
                how = src.index(8)
                if gone and how < 6:  # a key that is gone: use after delete
                    value[field] = gone[-1 - how % len(gone)]
                elif not breaks and how >= (2 if self.focus else 5) and (gone := self._gone(collection)):
                    # made again under a key that was deleted, the one deleted last (three draws
                    # in eight, six in a focused case, where it is the key last called with):
                    # a resource made again keeps the history it had in a stale-state bug
                    last = self.last.get(collection)
                    value[field] = last if self.focus and last in gone else self._recent(collection, gone)
                else:
                    if drawn is not None:
                        value[field] = drawn(src)
                    if how < 6:
                        value[field] = self._fresh(collection, value.get(field))
                chosen.append(value.get(field))
                continue
            free = [k for k in live if k not in chosen] or live
            if (
                self.focus
                and collection in self.last
                and self.last[collection] in free
                and src.index(FOCUS_KEEP) != FOCUS_KEEP - 1
            ):
                value[field] = self.last[collection]  # the key last called with
                chosen.append(value[field])
                continue
            if free and collection in plan.steer.deletes and not breaks and src.index(HISTORY_ODDS) == 1:
                # a delete takes the key with the longest history (one made, used and then
                # deleted is where a resource made again under its name can remember too much)
                history = self.history
                if plan.steer.fits:  # among the keys its requires accept (a course left empty)
                    free = plan.steer.fitting(field, state, free) or free
                value[field] = max(reversed(free), key=lambda k: history.get((collection, k), 0))
                chosen.append(value[field])
                continue
            if not breaks and plan.steer.fits and src.index(FIT_ODDS) != FIT_ODDS - 1:
                # mostly a key whose record passes the requires that read it alone (a live lot
                # still taking bids), where there is one. The draw is made for every key field
                # of an operation with such requires, those it has none for too (``fitting``
                # is None: any live key), so that a case's choices mean what they meant before
                free = plan.steer.fitting(field, state, free) or free
            # one draw: six chances in eight a live key (counted from the newest), else a key
            # that is gone, else the drawn value
            how = src.index(6 * len(free) + 2)
            if how < 6 * len(free):
                value[field] = free[-1 - how // 6]
            elif how == 6 * len(free) and (gone := self._gone(collection)):
                value[field] = gone[-1]
            elif drawn is not None:
                value[field] = drawn(src)
            chosen.append(value.get(field))
        if plan.steer.roles and not (breaking and broken is None):
            self._roles(plan, value, src, broken)
        if self.focus and not breaking:
            for key in plan.steer.keys:
                self.last[key.collection] = value.get(key.field)

    def _roles(self, plan: OpPlan, value: dict[str, Any], src: Source, broken: str | None = None) -> None:
        """One draw in two, a ``Role`` field (the name a login stores in the session) takes a
        value the records hold where the clauses compare the session with them (a reviewer
        of a pull request, its author) or whose own record has a flag they read set (an admin):
        who is logged in decides which later calls pass, and a random user rarely is the one."""
        state = self.state
        for role in plan.steer.roles:
            if role.field not in value or role.field == broken or src.index(2) != 0:
                continue
            wanted: list[Any] = []
            for collection, field in role.holders:
                for record in (state.get(collection) or {}).values():
                    held = record.get(field) if isinstance(record, Mapping) else None
                    for item in held if isinstance(held, list | tuple) else (held,):
                        if nameable(item) and item not in wanted:
                            wanted.append(item)
            for collection, field in role.flags:
                for key, record in (state.get(collection) or {}).items():
                    if isinstance(record, Mapping) and record.get(field) is True and key not in wanted:
                        wanted.append(key)
            if wanted:
                value[role.field] = wanted[src.index(len(wanted))]

    def _gone(self, collection: str) -> list[Any]:
        """Keys the collection held earlier in the case and holds no longer."""
        live = self.state.get(collection) or ()
        return [k for k in self.known.get(collection, ()) if k not in live]

    def _recent(self, collection: str, gone: list[Any]) -> Any:
        """The key of ``gone`` the collection lost last (a key the case never saw deleted, such
        as one of the initial state's, counts as lost first)."""
        for key in reversed(self.dropped.get(collection, ())):
            if key in gone:
                return key
        return gone[-1]

    def _fresh(self, collection: str, drawn: Any) -> Any:
        """``drawn`` if the collection never held it in this case, else a key made unlike any."""
        seen = self.seen.get(collection, set())
        if drawn not in seen and nameable(drawn):
            return drawn
        if isinstance(drawn, int) and not isinstance(drawn, bool):
            ints = [k for k in seen if isinstance(k, int) and not isinstance(k, bool)]
            return max(ints, default=drawn) + 1
        if isinstance(drawn, str):
            n = len(seen)
            while f"{drawn}{n}" in seen:
                n += 1
            return f"{drawn}{n}"
        return drawn

    def _flow(self, plan: OpPlan, value: dict[str, Any], src: Source) -> None:
        """Now and then a field takes a name or id seen earlier in the case (an input or an
        output), so that tools whose contract says nothing about keys still connect."""
        scalars = plan.scalars
        which = src.index(FLOW_ODDS * len(scalars))  # one draw: which field, if any
        if which < len(scalars):
            field, kind = scalars[which]
            same = [v for v in self.pool if type(v) is kind]
            if field in value and same:
                value[field] = same[-1 - src.index(len(same))]

    def _thresholds(self, plan: OpPlan, value: dict[str, Any], src: Source) -> None:
        """Now and then a field compared with a state value takes that value or its neighbour
        (most times the value itself, where the clause wants the field equal to it)."""
        env = Env(self.state, value)
        for threshold in plan.steer.thresholds:
            # one draw: the bound, one below or above it, or half of it (an amount that leaves
            # enough for the next call on the same resource), four times in nine
            how = src.index(9)
            if threshold.field not in value or threshold.apart or how >= (7 if threshold.equal else 4):
                continue
            try:
                bound = threshold.bound(env)
            except (EvaluationError, TypeError, KeyError):
                continue
            if threshold.equal:
                value[threshold.field] = bound
            elif isinstance(bound, int) and not isinstance(bound, bool):
                value[threshold.field] = bound // 2 if how == 3 else bound + (0, -1, 1)[how]
            elif isinstance(bound, str | float):
                value[threshold.field] = bound

    def _remember_values(self, *values: Any) -> None:
        pool = self.pool
        for value in values:
            items = value.values() if isinstance(value, dict) else (value,)
            for item in items:
                if nameable(item) and item not in pool:
                    pool.append(item)
        if len(pool) > POOL:
            del pool[: len(pool) - POOL]

    def _entry(self, src: Source, n: int) -> int:
        """Which of the ``n`` published corpus entries a case starts from, counted from the
        newest: half the time any, half the time by the rarity of what each showed first
        (``Corpus.rarity``): the seldom-reached states get the cases that go on from them."""
        cumulative = self.session.rarity
        if len(cumulative) != n or not cumulative[-1] > 0 or not src.boolean():
            return src.index(n)
        target = src.index(RARITY_SCALE) / RARITY_SCALE * cumulative[-1]
        return min(bisect.bisect_right(cumulative, target), n - 1)

    def resume(
        self, plans: list[OpPlan], entry: Sequence[Call], at: int | None = None, src: Source | None = None
    ) -> None:
        """Replay a corpus entry's calls as they were made, up to the first the model no longer
        accepts (a target that hands out other ids this time), and go on from the state reached;
        with ``at``, one valid call drawn from ``src`` goes before the entry's call there, and
        the first call after it that the model refuses now is sent all the same in adversarial
        mode (``insertion``)."""
        session = self.session
        ops = session.contract.operations
        by_name = {plan.name: plan for plan in plans}
        last = len(entry) - 1
        for index, (name, value) in enumerate(entry):
            if index == at and src is not None:
                self.reading = False
                self.insert(plans, src, entry[index:])
            op = ops[name]
            expect = oracle.judge(session.model, self.state, op, value)
            if not expect.accepted:
                if at is not None and index >= at and session.mode == "adversarial":
                    self.probes += 1
                    self.send(op, value, expect)
                break
            self.reading = index == last  # the call that showed something new: read it back
            self.send(op, value, expect)
            self.previous = by_name.get(name)
        self.reading = False

    def insertion(self, length: int, src: Source) -> int | None:
        """Where a replayed sequence of ``length`` calls gets a call of the case's own, one
        time in ``INSERT_ODDS``: before one of its calls but the first; None for no insertion
        (what it shrinks to).

        A replay extends a state at its end, but some states differ from a reached one by a call
        in the middle: a member added as an admin and made a viewer before the move that asks
        who may move (an implementation that judges the role the member was added with lets the
        move in), a quota changed between a create and a restart. The calls after the insertion
        are the replay's, sent as recorded; the first the model refuses now is a call the
        insertion turned, a probe (``_turned`` sends one from the case's own calls). Greybox
        fuzzers of system calls mutate their corpus the same way (syzkaller's inserted call)."""
        if length < 2 or src.index(INSERT_ODDS) != INSERT_ODDS - 1:
            return None
        return 1 + src.index(length - 1)

    def live_again(
        self, plans: list[OpPlan], collection: str, key: Any, *, twin: bool = False, src: Source | None = None
    ) -> None:
        """Make a record again with the call that made it, and change it with the calls that
        changed it (the first ``LIFE`` of them), each naming the new key where it named the old
        one, up to the first the model refuses: a deleted record (``relive``) or, with ``twin``,
        a live one under a fresh key.

        An implementation that keeps something of a resource outside its record (rotations
        counted per project and user, snapshots per VM name) forgets it when the record goes
        only if it was written to: a member who rotated their key three times, left and was
        added again (under a new membership number) is refused a first rotation. The calls that
        built the old record's state are the ones that show what the new one remembers. A twin
        is a second record in the state the first one reached: a limit that counts over a
        project's VMs and one that counts per VM differ only once two VMs share the count.

        A deleted record made again under its own key (given ``src``) gets its other values
        drawn anew one time in ``REDRAW_ODDS``, and is then read back at once, not changed: an
        implementation that keeps the old record's settings (a course made again with more
        seats that still has the old number) shows only where the new ones differ."""
        session = self.session
        by_name = {plan.name: plan for plan in plans}
        life = self.lives.get((collection, key), ())[:LIFE]
        calls = [self.accepted[i] for i in life]
        # a key an earlier call of the life returned (the enrollment a course's drop names) is
        # the one that call returns this time; a field that names no key (a rotation's count of
        # 1 where the membership was number 1) is sent as it was
        refs = {
            (i, field): ref
            for (i, field), ref in references(
                [Step(name, value, self.answers[j]) for (name, value), j in zip(calls, life, strict=True)]
            ).items()
            if any(k.field == field and not k.fresh for k in by_name[calls[i][0]].steer.keys)
        }
        outputs: dict[int, Any] = {}
        new = key
        for index, (name, value) in enumerate(calls):
            plan = by_name[name]
            value = rebind(refs, index, value, outputs)
            if isinstance(value, Mapping) and (index or twin):
                renamed = {
                    k.field: new if index else self._fresh(collection, key)
                    for k in plan.steer.keys
                    if k.collection == collection and k.fresh != bool(index) and value.get(k.field) == key
                }
                value = {**value, **renamed}
            if index == 0 and src is not None and src.index(REDRAW_ODDS) == REDRAW_ODDS - 1:
                redrawn = self._redrawn(plan, collection, key, value, src)
                other = oracle.judge(session.model, self.state, plan.op, redrawn)
                if redrawn != value and other.accepted:
                    # made with other values, it is read back at once (``unread``), not changed:
                    # what it kept of the old record shows there
                    self.reading = True
                    self.send(plan.op, redrawn, other)
                    self.reading = False
                    self.previous = plan
                    if self.unread:
                        unread, self.unread = self.unread, ()
                        self._named_call(unread, src)
                    return
            expect = oracle.judge(session.model, self.state, plan.op, value)
            if not expect.accepted:
                return
            before = self.state.get(collection) or {}
            self.send(plan.op, value, expect)
            self.previous = plan
            outputs[index] = self.steps[-1].output
            if index == 0:
                made = [k for k in self.state.get(collection) or () if k not in before]
                if len(made) != 1:
                    return
                new = made[0]

    def _named_call(self, calls: Sequence[Read], src: Source) -> None:
        """One of ``calls`` (``unread``, ``unused``), drawn, as a valid call naming its key."""
        plan, field, key = calls[src.index(len(calls))]
        self.previous = plan
        if field is None:
            self.valid(plan, src, held=key)
        else:
            self.valid(plan, src, (field, key))

    def _redrawn(self, plan: OpPlan, collection: str, key: Any, value: Any, src: Source) -> Any:
        """A draw of ``plan`` that names ``key`` where ``value`` does and differs from ``value``
        elsewhere, within ``TRIES`` draws (``live_again``): a small field's draws (a course's one
        to three seats) come back the same half the time."""
        if not isinstance(value, Mapping):
            return value
        kept = {k.field for k in plan.steer.keys if k.collection == collection and value.get(k.field) == key}
        props, _, _ = inputs.object_properties(plan.op.input_schema)
        if not kept or set(props) <= kept:
            # a key the target assigns (a membership made again is another user's if drawn
            # anew), or nothing but the key to draw (a student's name)
            return value
        for _ in range(TRIES):
            drawn = self.draw(plan, src, breaking=False)
            if not isinstance(drawn, dict):
                return value
            other = {**drawn, **{field: value[field] for field in kept}}
            if other != value:
                return other
        return value

    def twin(self, plans: list[OpPlan], src: Source) -> bool:
        """Live the life of one of the state's records again under a fresh key (``live_again``),
        the newest first; whether there was one with a change to live."""
        lived = [
            (collection, key)
            for (collection, key), life in self.lives.items()
            if len(life) > 1 and key in (self.state.get(collection) or ())
        ]
        if not lived:
            return False
        self.live_again(plans, *lived[-1 - src.index(len(lived))], twin=True)
        return True

    def insert(self, plans: list[OpPlan], src: Source, later: Sequence[tuple[str, Any]] = ()) -> None:
        """One valid call of an operation the state may enable (``insertion``); one time in
        two, where there is one, of an operation that changes a record field that one of the
        ``later`` calls (the replay's, with their inputs; None where drawn) reads (a member's
        role, set between the add and the move that asks who may move): the change a replay's
        calls were not made around."""
        enabled = [p for p in plans if p.steer.possible(self.state)] or plans
        changers = self._changers(enabled, [name for name, _ in later])
        if changers and src.boolean() and self._change(changers[src.index(len(changers))], src, later):
            return
        plan = enabled[src.index(len(enabled))]
        self.previous = plan
        self.valid(plan, src)

    def _change(self, plan: OpPlan, src: Source, later: Sequence[tuple[str, Any]] = ()) -> bool:
        """Send a call of ``plan`` that the model accepts and that changes a field it writes of
        a record that exists (a role set to the one the member holds changes nothing), within
        ``TRIES`` draws (``TURN_TRIES`` where ``later`` calls with their inputs follow); whether
        one was sent.

        Of those draws, the model judges the ``later`` calls after each (``_after``), and the
        first that turns the last of them (refused by a requires, the others accepted) goes
        first: the role set on the one membership the move asks about, to the role that refuses
        it, where a draw names any membership and any role; the move is sent next, refused
        (``resume``, ``follow``). Else the first that keeps them all accepted: a draw that
        refuses one in the middle cuts the replay short of the depth it was for."""
        model = self.session.model
        writes = _record_writes(plan.op)
        ahead = list(itertools.takewhile(lambda call: call[1] is not None, later[:TURN_LOOKAHEAD]))
        whole = len(ahead) == len(later)
        best: tuple[int, Any, oracle.Expectation] | None = None
        for _ in range(TURN_TRIES if ahead else TRIES):
            value = self.draw(plan, src, breaking=False)
            expect = oracle.judge(model, self.state, plan.op, value)
            if not expect.accepted or expect.post is None:
                continue
            post = expect.post
            if not any(_field_changed(self.state.get(c), post.get(c), field) for c, field in writes):
                continue
            rank = self._after(post, ahead, whole) if ahead else KEPT
            if best is None or rank < best[0]:
                best = (rank, value, expect)
            if rank == TURNS_LAST or not ahead:
                break
        if best is None:
            return False
        self.previous = plan
        self.send(plan.op, best[1], best[2])
        return True

    def _after(self, state: FrozenMap, later: Sequence[tuple[str, Any]], whole: bool) -> int:
        """How the ``later`` calls go from ``state`` on (``whole``: they are the last of the
        replay): ``TURNS_LAST`` where the last is refused by a requires and the others are
        accepted, ``KEPT`` where all are, ``CUT`` where one before the last is refused."""
        session = self.session
        for index, (_, expect, _) in enumerate(
            oracle.walk(session.model, session.contract.operations, state, later)
        ):
            if not expect.accepted:
                last = whole and index == len(later) - 1
                return TURNS_LAST if last and expect.kind == "precondition" else CUT
        return KEPT

    def _changers(self, enabled: list[OpPlan], later: Sequence[str]) -> list[OpPlan]:
        """Those of ``enabled`` that write a record field one of the ``later`` operations reads
        (``Session.writers``, ``Session.users``), in ``enabled``'s order."""
        session = self.session
        names = set(later)
        wanted = {
            plan.name
            for collection, fields in session.users.items()
            for field, using in fields.items()
            if any(user.name in names for user, _ in using)
            for plan in session.writers.get(collection, {}).get(field, ())
        }
        return [plan for plan in enabled if plan.name in wanted]

    def follow(self, plans: list[OpPlan], route: Route, src: Source) -> None:
        """Call the operations of a planned prefix in order: half the time each with the input
        the solver planned where the model accepts it (the refused last call of a route to a
        limit as planned: it is the probe), else with one drawn as a valid-intent step draws it
        (so keys, ids and thresholds follow the target's own state); one time in
        ``INSERT_ODDS``, with a call of the case's own between two of them (``insertion``). A
        route relayed from a corpus entry (``reach.relay``) replays the entry's calls as
        recorded first (an insertion goes among the calls planned from there)."""
        by_name = {plan.name: plan for plan in plans}
        # among the planned calls: the recorded ones are the state the rest was planned from
        at = self.insertion(len(route.operations) - route.recorded, src)
        at = None if at is None else at + route.recorded
        if route.recorded:  # a corpus entry first, as ``resume`` replays one
            before = len(self.accepted)
            self.resume(plans, tuple(zip(route.operations, route.inputs, strict=False))[: route.recorded])
            if len(self.accepted) - before < route.recorded:
                return  # the target went another way: the rest was planned for another state
        inputs = route.inputs if route.inputs and not src.boolean() else (None,) * len(route.operations)
        last = len(route.operations) - 1
        for index, (name, value) in enumerate(zip(route.operations, inputs, strict=True)):
            if index < route.recorded:
                continue
            if index == at:
                self.insert(plans, src, list(zip(route.operations, inputs, strict=True))[index:])
            plan = by_name[name]
            self.reading = index == last  # the call that reached the goal: read it back
            if value is not None:
                expect = oracle.judge(self.session.model, self.state, plan.op, value)
                wanted = (index == last and route.refused) or (at is not None and index >= at)
                if expect.accepted or (
                    wanted and self.session.mode == "adversarial" and expect.kind == "precondition"
                ):
                    self.send(plan.op, value, expect)
                    continue
            self.valid(plan, src)
        self.reading = False

    # -- sending it ----------------------------------------------------------------------------

    def send(self, op: Operation, value: Any, expect: oracle.Expectation | None = None) -> None:
        """Send one call to the target, check the response, and move the model on.

        Raises ``FindingError`` (after recording the finding) when the response breaks the contract.
        """
        session = self.session
        state = self.state
        expressible = getattr(session.target, "expressible", None)
        if expressible is not None and not expressible(op.name, value):
            return  # no request carries this call (an HTTP target's wire): never sent, never judged
        if expect is None:
            expect = oracle.judge(session.model, state, op, value)
        session.outcome(op, expect, state, value)
        if self.changes and (influence := session.influence) is not None and influence.open:
            influence.judge(self.changes, op, state, value, None if expect.accepted else _depth(op, expect))
        slow = session.slow.get(op.name)
        memo = self._memo_key(op.name, value) if slow is not None else ""
        response = slow.get(memo) if slow is not None else None
        if response is None:
            clock = session.call_clock
            started = clock()
            response = session.target.call(op.name, value)
            if clock() - started > SLOW_CALL and not 0 < response.status < 400:
                # the same sequence again (a shrinking replay, a later case) answers at once
                session.slow.setdefault(op.name, {})[memo or self._memo_key(op.name, value)] = response
        session.calls += 1
        session.op_calls[op.name] += 1
        self.steps.append(Step(op.name, value, response.output, response.status, True))
        if expect.accepted:
            post, verdict = oracle.check_accepted(session.model, state, op, value, expect, response)
            if verdict is None:
                session.covered(state, op.name, post)
                if (influence := session.influence) is not None and influence.open:
                    influence.note(self.changes, op.name, state, post)
                if post is not state:
                    self.refused.clear()
                self.state = post
                self.accepted.append((op.name, value))
                self.answers.append(response.output)
                corpus = session.corpus
                # a shrinking replay's states are not the search's: counted, they would make
                # the states the search reaches later look seen, and never kept
                if not self.replaying and corpus.novel(post, session.state_writes[op.name]):
                    corpus.add(self.accepted, post)
                watch = not self.replaying and (corpus.young or self.reading)
                readers = session.readers if self.replaying or watch else {}
                changed: list[tuple[str, Any]] = []
                touched: list[str] = []
                uses: list[Read] = []
                took = False
                for name in session.writes[op.name]:
                    self._remember(name, post.get(name))
                    before = state.get(name)
                    after = post.get(name)
                    if after is before:
                        continue
                    uses += self._life(name, before or {}, after or {})
                    if name in session.deleted:
                        self._records(op.name, name, before or {}, after or {}, post)
                    took = took or _took(before, after)
                    if before and len(after or ()) < len(before):
                        lost = [k for k in before if k not in (after or ())]
                        self.dropped.setdefault(name, []).extend(lost)
                        self.stale = (name, lost[-1])
                    if name in readers and after:
                        old = before or {}
                        changed += [(name, k) for k, record in after.items() if old.get(k) is not record]
                    if watch:
                        touched.append(name)
                self.changed = tuple(changed)
                self.unread = self._reads(changed, touched) if watch else ()
                self.unused = tuple(dict.fromkeys(uses)) if uses else ()
                if session.fills and not self.filling:
                    self.left = self._left(op.name, state, post)
                if session.places:
                    self.granted = self._granted(op.name, state, post)
                if took and not self.cycling:
                    self.undone = (state, (op.name, value))
                self._remember_values(value, response.output)
                return
        else:
            judged = expect
            verdict = oracle.check_rejected(
                op, judged, response, lambda: oracle.explain(session.model, state, op, value, judged)
            )
            if verdict is None:
                session.rejected += 1
                return
        if session.kinds is not None and verdict.kind not in session.kinds:
            return  # a kind this run does not look for: carry on as if the call were fine
        failure = verdict.failure
        finding = Finding(
            kind=verdict.kind,
            operation=op.name,
            message=verdict.message,
            steps=tuple(self.steps),
            expected=expect.describe(),
            status=response.status,
            clause=failure.clause_text if failure is not None else None,
            location=str(failure.location) if failure is not None and failure.location is not None else None,
            cause=crash_cause(response.error, response.status) if verdict.kind == "crash" else "",
        )
        if not self.replaying:  # a replay reports to the shrinker alone
            session.found(finding)
        raise error_for(finding)

    def _left(
        self, op: str, before: FrozenMap, after: FrozenMap
    ) -> tuple[tuple[OpPlan, dict[str, Any]], ...]:
        """The calls that count one more beside each record an accepted call of ``op`` took out
        of a count a requires bounds, or moved the count of: deleted it, or changed a field the
        count reads (another operation than the one that counts: a post after a post is the
        step before again, and a join after a join)."""
        found: list[tuple[OpPlan, dict[str, Any]]] = []
        for counted, key, record, now in _changed(self.session.writes[op], self.session.fills, before, after):
            if record is None:
                continue
            for plan, fill in counted:
                if plan.name == op or (
                    now is not None
                    and all(isinstance(now, Mapping) and now.get(f) == record.get(f) for f in fill.reads)
                ):
                    continue
                if (fixed := fill.values(key, record)) is not None:
                    found.append((plan, fixed))
        return tuple(found[:LEFT])

    def _granted(self, op: str, before: FrozenMap, after: FrozenMap) -> tuple[Grant, ...]:
        """What an accepted call of ``op`` put in a place an ``Elsewhere`` field is compared with
        (an item added to a record's list, a field set on a new or changed record), with each
        operation and field that may take it elsewhere."""
        found: list[Grant] = []
        for places, _, was, record in _changed(self.session.writes[op], self.session.places, before, after):
            for place, specs in places.items():
                had = held_items(was, place)
                for item in held_items(record, place):
                    if item not in had:
                        found.extend((plan, spec, item) for plan, spec in specs)
        return tuple(dict.fromkeys(found))

    def _reads(self, changed: Sequence[tuple[str, Any]], touched: Sequence[str]) -> tuple[Read, ...]:
        """The reads of what a call changed: each read operation of a ``changed`` record's
        collection, with its key field naming it; each read whose ensures read a ``touched``
        state variable other than through a key it takes (a count of the open tickets; a
        member's count of bookings after a class changed), drawn with any key."""
        session = self.session
        reads: list[Read] = []
        for collection, key in changed:
            for plan in session.readers.get(collection, ()):
                reads.extend(
                    (plan, k.field, key)
                    for k in plan.steer.keys
                    if k.collection == collection and not k.fresh
                )
        whole = session.whole_readers
        for plan in dict.fromkeys(plan for name in touched for plan in whole.get(name, ())):
            reads.append((plan, None, None))
        return tuple(reads)

    def _records(self, op: str, name: str, before: Any, after: Any, state: FrozenMap) -> None:
        """Count the records of collection ``name`` a call changed (``history``); a key made
        again under the name of a deleted one with a history is a state feature of its own
        (``Corpus.remade``), so the case that built it is kept for later cases to go on from, and
        a clause outcome (``steering.MADE_AGAIN``) the summary counts."""
        history = self.history
        for key, record in after.items():
            old = before.get(key)
            if old is record:
                continue
            if old is None:
                corpus = self.session.corpus
                made_again = key in self.dropped.get(name, ())
                if made_again:
                    self.session.outcomes.add(f"{op}: {MADE_AGAIN}")
                    self.again = (name, key)
                if (
                    made_again
                    and corpus.remade(name, key, history.get((name, key), 0), state)
                    and not self.replaying
                ):
                    corpus.add(self.accepted, state)
                history[(name, key)] = 0
            else:
                history[(name, key)] = history.get((name, key), 0) + 1

    def _life(self, name: str, before: Any, after: Any) -> list[Read]:
        """Note the accepted call (the last of ``accepted``) in the life of each record of
        collection ``name`` it made or changed (``lives``); one it deleted after a change is the
        one the next step may live again (``relive``). The calls that use a field it changed in
        a record (``Session.users``, ``unused``)."""
        lives = self.lives
        users = self.session.users.get(name)
        uses: list[Read] = []
        index = len(self.accepted) - 1
        for key in before:
            if key not in after and len(lives.get((name, key), ())) > 1:
                self.relive = (name, key)
        for key, record in after.items():
            old = before.get(key)
            if old is None:
                lives[(name, key)] = [index]
            elif old is not record:
                if (life := lives.get((name, key))) is not None:
                    life.append(index)
                if users and isinstance(record, Mapping) and isinstance(old, Mapping):
                    for field, using in users.items():
                        if record.get(field) != old.get(field):
                            uses += _uses(using, name, key)
        return uses

    def _memo_key(self, name: str, value: Any) -> str:
        """The calls of the case so far and this one, as text (exact: integers of any size)."""
        return repr(([(s.tool, s.input) for s in self.steps], name, value))

    def _remember(self, name: str, keys: Any) -> None:
        if not keys:
            return
        seen = self.seen[name]
        for key in keys:
            if key not in seen:
                seen.add(key)
                self.known[name].append(key)


class ContractMachine(RuleBasedStateMachine):
    """Base class of the generated machines: a ``Case`` per test case."""

    session: Session

    def __init__(self) -> None:
        super().__init__()
        self.case = Case(self.session)


def ordered(session: Session, plans: list[OpPlan]) -> list[OpPlan]:
    """The operations in the order a step chooses among them. Hypothesis leans to the first
    values of every draw (40% of the draws of an index below 3,753 fell in its first tenth), and
    a case has room for ``runner.WIDE`` calls: in a larger contract the first operations got most
    of the calls (of Stripe's 417, a quarter were never called in 20 s). There the operations never
    accepted come first, then the fewest called so far, as the round began (fixed for the round:
    Hypothesis replays a case's choices and needs the same calls each time; such a contract's
    rounds are short: ``Session.wide``); a contract as small as a case keeps its own order."""
    if not session.wide:
        return plans
    if session.round_order is None:
        calls, covered = session.round_calls, session.round_covered
        rank = {id(plan): number for number, plan in enumerate(plans)}
        session.round_order = sorted(
            plans, key=lambda p: (p.name in covered, calls.get(p.name, 0), rank[id(p)])
        )
    order: list[OpPlan] = session.round_order
    return order


def plans(session: Session) -> list[OpPlan]:
    """The operations' plans; and, in the session, the read operations that take a key of each
    collection (``Session.readers``) and, by the state they read other than the collections of
    the keys they take, the read operations to draw with any key (``Session.whole_readers``)."""
    crowd = crowds(session.contract)
    ops = [OpPlan(op, session, crowd) for op in session.contract.operations.values()]
    readers: dict[str, list[OpPlan]] = {}
    whole: dict[str, list[OpPlan]] = {}
    for plan in ops:
        if plan.op.effects or not plan.op.ensures:
            continue  # not a read, or nothing to check its answer against
        # A read whose ensures read state past its own keys' collections (a member's count of
        # bookings through ``classes``) is read back, with any key, after that state changes.
        read = frozenset().union(*(ir.free_names(c.expr) for c in plan.op.ensures))
        own = {key.collection for key in plan.steer.keys}
        for name in sorted((read & session.contract.state.keys()) - own):
            whole.setdefault(name, []).append(plan)
        for key in plan.steer.keys:
            if not key.fresh:
                readers.setdefault(key.collection, []).append(plan)
    session.readers, session.whole_readers = readers, whole
    session.users = _users(session.contract, ops)
    session.writers = _writers(ops)
    counted: dict[str, list[tuple[OpPlan, Fill]]] = {}
    for plan in ops:
        for fill in fills(plan.op, session.contract):
            counted.setdefault(fill.collection, []).append((plan, fill))
    session.fills = counted
    places: dict[str, dict[str, list[tuple[OpPlan, Elsewhere]]]] = {}
    for plan in ops:
        for spec in plan.steer.elsewhere:
            places.setdefault(spec.collection, {}).setdefault(spec.place, []).append((plan, spec))
    session.places = places
    return ops


def _users(contract: Any, ops: list[OpPlan]) -> dict[str, dict[str, list[tuple[OpPlan, str | None]]]]:
    """Per collection and record field, the operations whose requires or effects read that
    field of some record of it (``members[m].role``), each with its input field that names a
    key of the collection (None: it takes none, and a valid draw picks the record)."""
    collections = contract.collections()
    out: dict[str, dict[str, list[tuple[OpPlan, str | None]]]] = {}
    for plan in ops:
        exprs = [c.expr for c in plan.op.requires] + [e.value for e in plan.op.effects if e.value is not None]
        read = {
            place
            for expr in exprs
            for node in ir.walk(expr)
            if (place := record_field(node, None)) is not None and place[0] in collections
        }
        for collection, field in sorted(read):
            key_field = next(
                (k.field for k in plan.steer.keys if k.collection == collection and not k.fresh), None
            )
            out.setdefault(collection, {}).setdefault(field, []).append((plan, key_field))
    return out


def _writers(ops: list[OpPlan]) -> dict[str, dict[str, list[OpPlan]]]:
    """Per collection and record field, the operations whose effects change that field of a
    record (``members[input.member].role = ...``; a whole record put is a making, unless it copies
    the record's other fields: ``_record_writes``)."""
    out: dict[str, dict[str, list[OpPlan]]] = {}
    for plan in ops:
        for collection, field in sorted(_record_writes(plan.op)):
            out.setdefault(collection, {}).setdefault(field, []).append(plan)
    return out


def _record_writes(op: Operation) -> set[tuple[str, str]]:
    """The (collection, record field) pairs ``op``'s effects change on a record that exists
    (``_writers``; ``influence.writes``, whose other writes are of state variables)."""
    keyed = {e.target.var for e in op.effects if e.target.key is not None}
    return {(var, field) for var, field in influence.writes(op, keyed) if field is not None}


def _uses(using: list[tuple[OpPlan, str | None]], collection: str, key: Any) -> list[Read]:
    """The calls of ``using`` (``Session.users``) after a change of record ``key`` of
    ``collection``: each naming the record by its key field; one that takes no key of the
    collection, through its witnesses where it has any (``Case._hold``), else naming nothing."""
    uses: list[Read] = []
    for plan, key_field in using:
        if key_field is not None:
            uses.append((plan, key_field, key))
        elif plan.steer.witnesses:
            uses.append((plan, None, (collection, key)))
        else:
            uses.append((plan, None, None))
    return uses


def _field_changed(before: Any, after: Any, field: str) -> bool:
    """Whether ``field`` differs in some record that collection value ``before`` holds and
    ``after`` holds under the same key (``Case._change``; ``influence.field_changes``)."""
    return any(influence.field_changes(before, after, field))


def guarded_step(case: Case, ops: list[OpPlan], src: Source) -> None:
    """``case.step``, with an error of the fuzzer's own code kept in the session so that the run
    ends with it. A target's errors are findings inside the step; what passes through is our
    findings, Hypothesis's own control flow, or a bug of ours."""
    try:
        case.step(ops, src)
    except (AssertionError, HypothesisException):
        raise  # findings are assertions (FindingError); assume() and data draws are Hypothesis's
    except Exception as err:
        if case.session.internal_error is None:
            case.session.internal_error = err
        raise


def build_machine(session: Session) -> type[ContractMachine]:
    """A state machine class for ``session``: one rule that takes a steered step (the operation
    is the step's own choice, so that it can look at the model state)."""
    ops = plans(session)

    def call(self: ContractMachine, data: st.DataObject) -> None:
        guarded_step(self.case, ops, Source(data))

    call.__name__ = "step"
    namespace: dict[str, Any] = {"session": session, "step": rule(data=st.data())(call)}
    return type("FuzzMachine", (ContractMachine,), namespace)


def fast_test(session: Session, steps: int) -> Callable[..., None]:
    """The same steps as the machine, driven by one ``@given`` loop (for throughput)."""
    ops = plans(session)

    @given(st.data())
    def run(data: st.DataObject) -> None:
        cd = data.conjecture_data
        src = Source(cd)
        case = Case(session)
        for count in range(steps + 1):
            # as the rule-based runner does: each step is one span that starts with a rarely-true
            # stop flag, so the shrinker can drop whole steps and end the case early
            cd.start_span(STEP_LABEL)
            if cd.draw_boolean(p=2**-16, forced=True if count >= steps else None):
                cd.stop_span()
                break
            guarded_step(case, ops, src)
            cd.stop_span()

    return run
