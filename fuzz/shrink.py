"""Shrinking a finding's call sequence further, by replaying it with steps left out.

Hypothesis shrinks the choices that produced a failure; when a step's choices depend on the
state (which keys are live), dropping an early step can shift the meaning of later choices and
the shrinker stops short of the shortest sequence. This pass works on the concrete calls instead:
it replays the sequence against a fresh target with one step (then each remaining step) left
out, and keeps the shorter sequence whenever the same finding (operation and kind) shows up.

A call that names an id an earlier response returned (a server-assigned order id) refers to
"the id step k returned", not to the number: when a step before k is left out and the target
hands out other ids, the replay passes the id that step k returns this time, so removing a step
never breaks the calls after it. A replay costs one call per step, so a 20-step finding costs
at most a few hundred calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import combinations, islice, product
from typing import TYPE_CHECKING, Any

import attrs

from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Operation
from envfactory.fuzz import oracle
from envfactory.fuzz.completion import Completions, counts, differs, judged
from envfactory.fuzz.findings import Finding, FindingError
from envfactory.fuzz.inputs import integer_bounds, object_properties
from envfactory.fuzz.references import ids, is_id, key_names, rebind, references
from envfactory.fuzz.steering import Threshold, key_fields, thresholds
from envfactory.trajectory import Step

if TYPE_CHECKING:
    from envfactory.fuzz.runner import Session

MAX_ROUNDS = 8

FALLBACK_REPLAYS = 20
"""Replays per step of the trace that the moves tried after the others stall may spend: they
try many candidates, and a trace already at its shortest gains nothing from them."""


def replay(session: Session, steps: Sequence[Step], want: Finding, skip: int | None = None) -> Finding | None:
    """Run ``steps`` (without step ``skip``) against a fresh target, ids that earlier responses
    returned taken from this replay's responses; the finding if one that ``shows`` ``want``
    shows up."""
    from envfactory.fuzz.machine import Case

    if _past_deadline(session):
        return None  # the budget's grace is spent: the sequence stays as short as it got
    session.replays += 1
    refs = references(steps, key_names(session.contract))
    tied = _tied(session, steps)
    outputs: dict[int, Any] = {}
    case = Case(session, replay=True)
    for i, step in enumerate(steps):
        if i == skip:
            continue
        value = rebind(refs, i, step.input, outputs)
        if i in tied:
            value = _retie(tied[i], case.state, value)
        op = session.contract.operations[step.tool]
        try:
            case.send(op, value)
        except FindingError as err:
            return err.finding if shows(err.finding, want) else None
        outputs[i] = case.steps[-1].output
    return None


def shows(found: Finding, want: Finding) -> bool:
    """Whether ``found`` shows what ``want`` does: the same finding, or, for a refusal with the
    wrong status, the target accepting that call outright where the same clause forbids it.
    The wrong status is then the unchecked clause met in a state where a later check of the
    target refuses the call (a VM moved in by an admin made viewer, refused for its snapshots,
    413 where 403 was due, after 16 calls; accepted in 8 once the snapshots go), and the shorter
    trace shows the defect itself."""
    if found.key == want.key:
        return True
    return (
        want.kind == "wrong_status"
        and found.kind == "forbidden_accepted"
        and found.operation == want.operation
        and found.clause == want.clause
    )


def minimize(session: Session, finding: Finding) -> Finding:
    """The shortest sequence that shows ``finding``: one-step deletions to a fixed point, and
    between them two moves that let more steps go: values renamed, one call at a time, to another
    value the trace uses in the same field (the uses of a third API key moved onto the first
    two, after which its creation goes), and integers moved to their schema's bounds (one restock
    of the most a call allows instead of two); when those stall, the costlier moves ``_solved``,
    ``_undone``, ``_added``, ``_fresh``, ``_merged``, ``_pairs``, ``_later``, ``_freed``,
    ``_lowered`` and ``_replaced``, each within ``FALLBACK_REPLAYS`` replays per step, on the
    trace as those moves left it (a room's capacity at the most a room may have lets two rooms
    merge)."""
    best = _shortened(session, finding)
    for _ in range(MAX_ROUNDS):
        # the plain names and the optional fields left out can let more steps go: the same moves
        # again from there took a courier's full-shelf refusal from 13 calls to 11
        tidy = _named(session, _dropped(session, best))
        if _calls(tidy) == _calls(best):
            return tidy
        again = _shortened(session, tidy)
        if len(again.steps) >= len(tidy.steps):
            return tidy
        best = again
    return _named(session, _dropped(session, best))


def _shortened(session: Session, finding: Finding) -> Finding:
    """``minimize``'s moves to a fixed point (or ``MAX_ROUNDS``)."""
    best = deletions(session, finding)
    for _ in range(MAX_ROUNDS):
        start = deletions(session, _extremes(session, _normalize(session, best)))
        moved = _fallen_back(session, start, len(best.steps))
        if len(moved.steps) >= len(best.steps) and _calls(start) != _calls(best):
            # the values moved to their bounds can close a merge the trace had: two rooms of
            # three merge, two rooms of one (a capacity at its least, which kept the trace as
            # long) do not
            moved = _merged(session, best)
        if len(moved.steps) >= len(best.steps):
            break
        best = moved
    return best


def _fallen_back(session: Session, start: Finding, length: int) -> Finding:
    """The first of the costlier moves that makes ``start`` shorter than ``length`` steps (else
    what the last one gave)."""
    moved = start
    for fallback in (_solved, _undone, _added, _fresh, _merged, _pairs, _later, _freed, _lowered, _replaced):
        if len(moved.steps) < length:
            break
        moved = fallback(session, start)
    return moved


def _calls(finding: Finding) -> list[tuple[str, Any]]:
    return [(step.tool, step.input) for step in finding.steps]


EVERY_STEP = -1
"""What a trial of ``_shorter`` names to have every step's values renamed, not one step's."""


def _shorter(session: Session, finding: Finding, trials: Iterable[tuple[list[Step], int | None]]) -> Finding:
    """The first trial sequence that still shows ``finding`` and, with steps then deleted, is
    shorter (else ``finding``), within ``FALLBACK_REPLAYS`` replays per step. A trial may name a
    step whose values are first renamed to others the trace uses; unless one is, it is passed
    (``EVERY_STEP``: each step's, as far as the finding still shows, and then it is kept)."""
    limit = session.replays + FALLBACK_REPLAYS * len(finding.steps)
    for trial, rename in trials:
        if session.replays > limit:
            break
        found = replay(session, trial, finding)
        if found is None:
            continue
        if rename == EVERY_STEP:
            found = _normalize(session, found)
        elif rename is not None:
            renamed = _normalize(session, found, only=rename)
            if renamed is found:
                continue  # the moved call sends what it sent: nothing new can go
            found = renamed
        shorter = deletions(session, found)
        if len(shorter.steps) < len(finding.steps):
            return shorter
    return finding


def _added(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by a call sending an optional field it left out: a tick of the most
    rounds stands for two; a lot opened for the least number of rounds instead of the default
    lets a tick go, which has to go with it (the tick would end the bidding that comes after).
    Each field is tried at its schema's bounds and at the values a clause compares it with (an
    integer), both booleans or its enum: first alone, then with each other step left out."""
    steps = finding.steps
    ops = session.contract.operations
    added: list[list[Step]] = []
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        if not isinstance(step.input, Mapping):
            continue
        props, _, _ = object_properties(ops[step.tool].input_schema)
        for field, schema in props.items():
            if field in step.input or not isinstance(schema, Mapping):
                continue
            values = _optional_values(schema) + _state_bounds(session, steps, i, str(field))
            added += [_with(steps, i, step, field, value) for value in dict.fromkeys(values)]

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        yield from ((trial, EVERY_STEP) for trial in added)
        for trial in added:
            for j in range(len(trial) - 2, -1, -1):
                if trial[j] is not steps[j]:  # the step that got the field stays
                    continue
                yield [*trial[:j], *trial[j + 1 :]], None

    return _shorter(session, finding, trials())


SOLVED_PER_STEP = 3
"""Completions ``_solved`` may ask the solver for, per step of the trace."""


def _solved(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by a step left out, or a name standing for another (a creation
    it repeats left out too), with the integers the trace chose taken from a completion the model
    judges call by call as it judged the trace (``completion``): two restocks of two in a bin of
    two become one of four in a bin of four, which no value moved alone gives (the capacity has to
    grow with the restock). The integers of the calls up to the first the model would judge
    otherwise are solved for first, the later ones kept as they were (the values that show the
    finding), and then all of them; the responses' words kept first (a booking that waited for a
    seat still waits), then free. Only trials the model judges otherwise are solved for: the
    others are the plain moves' business."""
    steps = finding.steps
    base = judged(session, steps)
    if base is None:
        return finding
    fixed = _enumerated(session, steps)
    names = [n for n in _strings(steps) if n not in fixed]
    contract = session.contract
    fresh = {
        name: [key for key in key_fields(op, contract) if key.fresh]
        for name, op in contract.operations.items()
    }

    def created(step: Step) -> set[tuple[str, Any]]:
        """The keys a call makes: its fields that want a key not held yet."""
        value = step.input if isinstance(step.input, Mapping) else {}
        return {(key.collection, value[key.field]) for key in fresh[step.tool] if key.field in value}

    def skeletons() -> Iterator[tuple[list[Step], list[oracle.Expectation]]]:
        for j in range(len(steps) - 2, -1, -1):
            yield [*steps[:j], *steps[j + 1 :]], [*base[:j], *base[j + 1 :]]
        for later in reversed(range(len(names))):
            for other in names[:later]:
                renamed = _renamed(steps, names[later], other)
                got = judged(session, renamed)
                if got is None:
                    continue
                made: set[tuple[str, Any]] = set()
                kept: list[int] = []
                for i, expect in enumerate(got):
                    keys = created(renamed[i])
                    if expect.accepted:
                        made.update(keys)
                    elif base[i].accepted and keys and keys <= made and i < len(steps) - 1:
                        continue  # a creation the merge repeats goes
                    kept.append(i)
                yield [renamed[i] for i in kept], [base[i] for i in kept]

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        asked = 0
        for trial, verdicts in skeletons():
            got = judged(session, trial)
            first = None if got is None else differs(got, verdicts)
            if got is None or first is None:
                continue
            # the clause that judges the first call otherwise: integers can only move a count
            clause = got[first].clause if not got[first].accepted else verdicts[first].clause
            if clause is None or not counts(clause.expr):
                continue
            for free, words in dict.fromkeys(((first + 1, True), (len(trial), True), (len(trial), False))):
                if asked >= SOLVED_PER_STEP * len(steps) or _past_deadline(session):
                    return
                asked += 1
                done = completions.completed(trial, verdicts, free, words)
                yield from ((list(completed), None) for completed in done)
                if done:
                    break

    with Completions(session) as completions:
        return _shorter(session, finding, trials())


def _past_deadline(session: Session) -> bool:
    return session.minimize_deadline is not None and time.monotonic() > session.minimize_deadline


def _undone(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by leaving out a call that repeats an earlier one (same operation,
    same input) together with the calls just before it, back to the earlier one at most: a
    member removed and added again, as before, goes with its removal. The calls after it that
    named what the repeat returned name what the earlier call returned instead (membership 3,
    not 4), which no deletion of one step at a time can do: without the removal the add is
    refused, without the add its membership is missing."""
    steps = finding.steps
    refs = references(steps, key_names(session.contract))

    def redirected(k: int, j: int, gone: range) -> list[Step]:
        earlier = dict(ids(steps[j].output))
        out: list[Step] = []
        for n, step in enumerate(steps):
            if n in gone:
                continue
            if n > k and isinstance(step.input, Mapping):
                value = dict(step.input)
                for field in value:
                    ref = refs.get((n, str(field)))
                    if ref is not None and ref[0] == k and earlier.get(ref[1]) is not None:
                        value[field] = earlier[ref[1]]
                step = attrs.evolve(step, input=value)
            out.append(step)
        return out

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        for k in range(len(steps) - 2, 0, -1):
            for j in range(k - 1, -1, -1):
                if steps[j].tool == steps[k].tool and steps[j].input == steps[k].input:
                    for i in range(k, j, -1):  # the repeat alone first, then with what came before
                        yield redirected(k, j, range(i, k + 1)), None
                    break

    return _shorter(session, finding, trials())


def _dropped(session: Session, finding: Finding) -> Finding:
    """``finding`` with each optional input field left out where it still shows in as many
    steps: a ``join`` that needs no ``funds`` sends none (what is left is what the finding needs,
    or a value the search drew and Hypothesis could not take back)."""
    best = finding
    ops = session.contract.operations
    for i, original in enumerate(finding.steps):
        _, required, _ = object_properties(ops[original.tool].input_schema)
        for field in _fields(original):
            step = _step_at(best, i, original.tool)
            if step is None:
                return best  # a replay came back otherwise: the rest stays as it is
            if field in required or field not in step.input:
                continue
            trial = list(best.steps)
            trial[i] = attrs.evolve(step, input={k: v for k, v in step.input.items() if k != field})
            found = replay(session, trial, best)
            if found is not None and len(found.steps) <= len(best.steps):
                best = found
    return best


def _fresh(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by leaving out a call that sends a name and giving the calls after
    it a new name instead: a lot removed and made again under its old name becomes a lot made
    under a new one, and the removal goes (a rename onto a name the trace uses is ``_merged``)."""
    steps = finding.steps
    names = _strings(steps)
    new = next((n for n in NAMES if n not in names), None)
    if new is None:
        return finding
    trials = (
        ([*steps[:j], *_renamed(steps[j + 1 :], name, new)], None)
        for j in range(len(steps) - 2, -1, -1)
        if isinstance(steps[j].input, Mapping)  # before its values are read: a probe's input may be a list
        for name in dict.fromkeys(v for v in steps[j].input.values() if isinstance(v, str) and v in names)
    )
    return _shorter(session, finding, trials)


def _optional_values(schema: Mapping[str, Any]) -> list[Any]:
    """What an optional field left out is tried at (``_added``): its enum, both booleans, or an
    integer's least and greatest values."""
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return [True, False]
    if kind == "integer":
        return [bound for bound in integer_bounds(schema) if bound is not None]
    return []


def _merged(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by one name standing for another everywhere the trace sends it
    (a third doctor's admission and transfer both moved onto the second doctor, after which the
    third one's creation is refused and goes): one call at a time, each rename alone breaks the
    calls after it."""
    steps = finding.steps
    names = _strings(steps)
    trials = (
        (_renamed(steps, names[later], other), None)
        for later in reversed(range(len(names)))
        for other in names[:later]
    )
    return _shorter(session, finding, trials)


def _pairs(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by moving two input fields of one call at once, each to a value
    the trace sends in that field, or, for a name, to any name the trace chose: a swap moved onto
    another enrollment together with the course it goes to lets that enrollment's creation go,
    where the enrollment alone or the course alone would be refused; a transfer from a third
    account turned into one back from the account that received the first ones lets the third
    account go (the ledger's fifth transfer, 10 calls to the minimal 8)."""
    steps = finding.steps
    names = [n for n in _strings(steps) if n not in _enumerated(session, steps)]

    def values(field: str) -> list[Any]:
        sent = _first_values(steps, field)
        if not any(isinstance(v, str) for v in sent):
            return sent  # numbers keep to the values sent in the field
        return [*sent, *(n for n in names if n not in sent)]

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        for i in range(len(steps) - 1, -1, -1):
            step = steps[i]
            fields = [f for f in _fields(step) if is_id(step.input[f])]
            for first, second in combinations(fields, 2):
                for x, y in product(values(str(first)), values(str(second))):
                    if x != step.input[first] and y != step.input[second]:  # else one field alone
                        trial = list(steps)
                        trial[i] = attrs.evolve(step, input={**step.input, first: x, second: y})
                        yield trial, None

    return _shorter(session, finding, trials())


def _later(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by moving one call later, then renaming it: a second enrollment
    made after the first one was dropped can be the same student's, which lets the other student
    go; made before it, it had to be another's."""
    steps = finding.steps
    trials = (
        ([*steps[:j], *steps[j + 1 : k + 1], steps[j], *steps[k + 1 :]], k)
        for j in range(len(steps) - 2)
        for k in range(j + 1, len(steps) - 1)
    )
    return _shorter(session, finding, trials)


def _freed(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by a merge that needs one call more: a name standing for another
    everywhere (as in ``_merged``) makes the model refuse a call it accepted (a fourth guest
    checked into the one room left, which is full), and a call put just before it, of any
    operation, with values the trace uses, lets it through (one guest checks out first). Only
    trials the model accepts that way are replayed (one call more, two or more fewer), and the
    model is asked at most ``MODEL_CHECKS`` times per step."""
    steps = finding.steps
    checks = _Checks(session, MODEL_CHECKS * len(steps))
    base = checks.verdicts(steps)
    if base is None:
        return finding
    names = _strings(steps)

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        for later in reversed(range(len(names))):
            for other in names[:later]:
                renamed = _renamed(steps, names[later], other)
                refused = checks.first_refused(renamed, base)
                if refused is None:
                    continue  # nothing refused that was accepted: ``_merged``'s trial
                i, state = refused
                for call in checks.calls(steps, state):
                    trial = [*renamed[:i], call, *renamed[i:]]
                    if checks.first_refused(trial, [*base[:i], True, *base[i:]]) is None:
                        yield trial, None
                if checks.spent():
                    return

    return _shorter(session, finding, trials())


def _lowered(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by an integer moved one toward its least value (zero where the
    schema sets none) together with another step left out: a course of three seats that three
    students filled becomes a course of two that two fill. Either move alone loses the finding
    (the third enrollment is refused, or the course is no longer full), and a bound the
    implementation alone holds (full only from two seats) is one ``_extremes`` cannot see."""
    steps = finding.steps
    refs = references(steps, key_names(session.contract))
    ops = session.contract.operations

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        for i, step in enumerate(steps):
            props, _, _ = object_properties(ops[step.tool].input_schema)
            for field in _fields(step):
                value = step.input[field]
                if not _is_number(value) or (i, str(field)) in refs:
                    continue  # an id a response gave is a reference, not a size
                schema = props.get(field)
                low, _ = integer_bounds(schema) if isinstance(schema, Mapping) else (None, None)
                toward = max(low, 0) if low is not None else 0
                if value == toward:
                    continue
                lowered = _with(steps, i, step, field, value - 1 if value > toward else value + 1)
                for j in range(len(steps) - 2, -1, -1):
                    if j != i:
                        yield [*lowered[:j], *lowered[j + 1 :]], None

    return _shorter(session, finding, trials())


REPLACED = (2, 3)
"""The runs of calls in a row that ``_replaced`` tries one call in place of."""


def _replaced(session: Session, finding: Finding) -> Finding:
    """``finding`` made shorter by one call standing for two or three in a row: a job that a
    runner picked and then failed is a job canceled, as far as retrying it goes, and the runner
    goes with the pick (a third retry, 10 calls to the minimal 8). No deletion, rename or
    inserted call takes the long way out, since each of its calls alone is needed by the next.
    The one call is any operation's, with values the trace uses, that the model accepts in the
    state before the run (``_Checks.calls``); only trials whose other calls the model judges as
    before are replayed, and the model is asked at most ``MODEL_CHECKS`` times per step."""
    steps = finding.steps
    checks = _Checks(session, MODEL_CHECKS * len(steps))
    walked = checks.walked(steps)
    if walked is None:
        return finding
    states = [state for state, _ in walked]
    base = [accepted for _, accepted in walked]

    def trials() -> Iterator[tuple[list[Step], int | None]]:
        for width in REPLACED:
            for i in range(len(steps) - width - 1, -1, -1):  # the failing call stays
                for call in checks.calls(steps, states[i]):
                    trial = [*steps[:i], call, *steps[i + width :]]
                    if checks.first_refused(trial, [*base[:i], True, *base[i + width :]]) is None:
                        yield trial, None
                    if checks.spent():
                        return

    return _shorter(session, finding, trials())


MODEL_CHECKS = 500
"""Model judgements per step of the trace that ``_freed`` may make while it looks for trials."""

CALLS_PER_OPERATION = 64
"""At most this many inputs of one operation are tried as an inserted call (``_freed``)."""


@attrs.define
class _Checks:
    """The model's verdicts on trial traces, counted against a bound: ``_freed`` asks about many
    merges and inserted calls and replays only the few the model accepts."""

    session: Session
    limit: int
    used: int = 0

    def spent(self) -> bool:
        return self.used >= self.limit

    def judge(self, state: Any, op: Operation, value: Any) -> oracle.Expectation:
        self.used += 1
        return oracle.judge(self.session.model, state, op, value)

    def walked(self, steps: Sequence[Step]) -> list[tuple[Any, bool]] | None:
        """The model state before each step and whether the model accepts the step; None where
        a state is read off a response, which the model alone cannot follow."""
        out: list[tuple[Any, bool]] = []
        for state, expect, after in _walk(self.session, steps, self.judge):
            if after is None:
                return None
            out.append((state, expect.accepted))
        return out

    def verdicts(self, steps: Sequence[Step]) -> list[bool] | None:
        """Whether the model accepts each step (``walked``)."""
        walked = self.walked(steps)
        return None if walked is None else [accepted for _, accepted in walked]

    def first_refused(self, steps: Sequence[Step], accepted: Sequence[bool]) -> tuple[int, Any] | None:
        """The first step (but the last) the model refuses where ``accepted`` says it was
        accepted, with the model state before it; None if there is none (or the model cannot
        follow). A refused call that repeats an accepted one's names (a room made again after a
        merge) is passed: deletions take it out."""
        made: set[tuple[str, tuple[Any, ...]]] = set()
        for i, (state, expect, after) in enumerate(_walk(self.session, steps[:-1], self.judge)):
            if after is None:
                return None
            if expect.accepted:
                made.add(_names_of(steps[i]))
            elif accepted[i] and _names_of(steps[i]) not in made:
                return i, state
        return None

    def calls(self, steps: Sequence[Step], state: Any) -> Iterator[Step]:
        """Calls the model accepts in ``state`` and follows: each operation with each
        combination of values the trace sends in its required fields (``_plain_values`` for a
        field it never sends)."""
        names = _strings(steps)
        for op in self.session.contract.operations.values():
            for call in _candidates(op, steps, names):
                expect = self.judge(state, op, call.input)
                if expect.accepted and expect.post is not None:
                    yield call
                if self.spent():
                    return


def _candidates(
    op: Operation, steps: Sequence[Step], names: list[str], fresh: str | None = None
) -> Iterator[Step]:
    """Calls of ``op`` with each combination of values the trace sends in its required fields
    (``_plain_values`` for a field it never sends), and ``fresh`` too in each string field where
    one is given (a new key to make); ``CALLS_PER_OPERATION`` at most."""
    props, required, _ = object_properties(op.input_schema)
    choices: list[list[Any]] = []
    for field in required:
        values = _first_values(steps, field) or _plain_values(props.get(field), names)
        schema = props.get(field)
        string = isinstance(schema, Mapping) and schema.get("type") == "string"
        choices.append([*values, fresh] if string and fresh is not None else values)
    for combo in islice(product(*choices), CALLS_PER_OPERATION):
        yield Step(op.name, dict(zip(required, combo, strict=True)))


def _plain_values(schema: Any, names: list[str]) -> list[Any]:
    """Values for a field the trace never sends: its enum, both booleans, its least integer, or
    the names the trace chose; none for anything else."""
    if not isinstance(schema, Mapping):
        return []
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return [False, True]
    if kind == "integer":
        lo, _hi = integer_bounds(schema)
        return [lo if lo is not None else 0]
    return list(names) if kind == "string" else []


def _names_of(step: Step) -> tuple[str, tuple[Any, ...]]:
    """A call's operation and the strings it sends: what a repeated creation shares."""
    return step.tool, tuple(
        sorted((str(f), step.input[f]) for f in _fields(step) if isinstance(step.input[f], str))
    )


def _strings(steps: Sequence[Step]) -> list[str]:
    """The strings the trace's calls chose themselves (not ids a response gave), in the order
    of first use."""
    refs = references(steps)
    out: list[str] = []
    for i, step in enumerate(steps):
        for field in _fields(step):
            value = step.input[field]
            if isinstance(value, str) and value and (i, str(field)) not in refs and value not in out:
                out.append(value)
    return out


def _renamed(steps: Sequence[Step], old: str, new: str) -> list[Step]:
    """``steps`` with every input field that sends ``old`` sending ``new`` instead."""
    return _renamed_all(steps, {old: new})


def _renamed_all(steps: Sequence[Step], names: Mapping[str, str]) -> list[Step]:
    """``steps`` with every input field that sends a key of ``names`` sending its value (the
    steps that send none stay the same objects)."""
    return [
        attrs.evolve(
            step, input={k: names.get(v, v) if isinstance(v, str) else v for k, v in step.input.items()}
        )
        if isinstance(step.input, Mapping)
        and any(isinstance(v, str) and v in names for v in step.input.values())
        else step
        for step in steps
    ]


NAMES = tuple("abcdefghijklmnopqrstuvwxyz")
"""What the names a trace chose are renamed to, in the order of first use, where they can be."""


def _named(session: Session, finding: Finding) -> Finding:
    """``finding`` with each name its calls chose renamed to a plain one (``a``, ``b``, ...)
    where the finding still shows in as many steps: a trace to read, not the Unicode a string
    strategy drew. A name the schema or the clauses need as it is (a pattern, a prefix) stays."""
    best = finding
    fixed = _enumerated(session, best.steps)
    names = [n for n in _strings(best.steps) if n not in fixed]
    order = dict(zip(names, NAMES, strict=False))
    if any(name != new for name, new in order.items()):
        # all at once first: ``a, b, j, c`` read as ``a, b, c, d``, which no one rename gives
        found = replay(session, _renamed_all(best.steps, order), best)
        if found is not None and len(found.steps) <= len(best.steps):
            best = found
            names = [n for n in _strings(best.steps) if n not in fixed]
    plain = iter(n for n in NAMES if n not in names)
    for name in names:
        if name in NAMES:
            continue
        new = next(plain, None)
        if new is None:
            break
        found = replay(session, _renamed(best.steps, name, new), best)
        if found is not None and len(found.steps) <= len(best.steps):
            best = found
    return best


def _enumerated(session: Session, steps: Sequence[Step]) -> set[str]:
    """The strings the trace sends in a field whose schema lists its values (a role): no name
    to rename, and one in the all-at-once renaming of ``_named`` loses the finding."""
    ops = session.contract.operations
    out: set[str] = set()
    for step in steps:
        props, _, _ = object_properties(ops[step.tool].input_schema)
        for field in _fields(step):
            schema = props.get(field)
            value = step.input[field]
            if (
                isinstance(value, str)
                and isinstance(schema, Mapping)
                and ("enum" in schema or "const" in schema)
            ):
                out.add(value)
    return out


EXPLAINED_KINDS = frozenset(("divergence", "wrong_status", "forbidden_accepted", "postcondition"))
"""Finding kinds that say the target's state is not the model's: a later one of these may be a
consequence of an earlier step whose record was already wrong (``explained``)."""


def explained(session: Session, finding: Finding) -> Finding | None:
    """A finding that shows ``finding``'s target state already wrong at an earlier step, if a
    shorter one does (or one the run reported with a shorter trace): the calls replayed up to
    each step, and the records that step changed read back (by a read operation that takes just
    the key); the first read that breaks the contract. A driver made again with the strikes of
    a banned one shows in 6 calls as a wrong read; a refusal with the wrong status 15 calls in,
    when three cars are out, is the same wrong record met later, and its trace cannot be
    shorter. Crashes and schema breaks are never explained away: they are defects of their own."""
    from envfactory.fuzz.machine import Case

    if finding.kind not in EXPLAINED_KINDS or len(finding.steps) < 3:
        return None
    readers = session.readers
    ops = session.contract.operations
    steps = finding.steps
    probes = _Probes.of(session, MODEL_CHECKS * len(steps), finding)
    refs = references(steps, key_names(session.contract))
    for i in range(len(steps) - 1):
        if _past_deadline(session):
            return None
        case = Case(session, replay=True)
        outputs: dict[int, Any] = {}
        try:
            for j in range(i + 1):
                case.send(ops[steps[j].tool], rebind(refs, j, steps[j].input, outputs))
                outputs[j] = case.steps[-1].output
        except FindingError:
            return None  # the calls alone fail earlier: the shrinker's business, not this
        for collection, key in case.changed:
            for plan in readers.get(collection, ()):
                field = _only_key_field(plan, collection)
                if field is None:
                    continue
                try:
                    case.send(plan.op, {field: key})
                except FindingError as err:
                    # the reads of the records the step changed before this one go: a parcel
                    # sent again, read after its sender and its hub, is 10 calls, not 12
                    alone = replay(session, [*steps[: i + 1], Step(plan.op.name, {field: key})], err.finding)
                    return _earlier(session, err.finding if alone is None else alone, steps)
        for call in probes.calls(steps, case.state):
            try:
                case.send(ops[call.tool], call.input)
            except FindingError as err:
                if err.finding.kind != "forbidden_accepted":
                    break  # a status of the probe's own: no sign of the state the finding had
                # the probes refused before it are left out where the finding shows without them
                alone = replay(session, [*steps[: i + 1], call], err.finding)
                probed = err.finding if alone is None else alone
                return _earlier(session, probed, steps, tie=probed.key != finding.key)
    return None


def _earlier(session: Session, found: Finding, steps: Sequence[Step], *, tie: bool = False) -> Finding | None:
    """``found``, or the run's shorter finding of its key, if shorter than ``steps`` (or, with
    ``tie``, as long: a probe's finding of another key at the last step, not shrunk yet, shows
    the state wrong before the call that ends ``steps``, and shrinks on its own: a resend let go
    on a stale route in 12 calls is a send let go on it in 8)."""
    known = session.findings.by_key.get(found.key)
    best = found if known is None or found.size < known.size else known
    return best if len(best.steps) < len(steps) or (tie and len(best.steps) == len(steps)) else None


@attrs.define
class _Probes:
    """Calls that ``explained`` sends after a prefix of a finding's trace to show the target's
    state already wrong there: calls the model refuses by a ``requires`` that reads what the
    finding's clause reads. A parcel sent again and not counted by the sender's limit is a
    third one let go at once (11 calls), where the search met it as a fourth sent again (15):
    the count was wrong from the resend on. Only a probe the target accepts counts: a wrong
    status may be the probe operation's own defect, not the state's. Judged by the model
    against a bound (``_Checks``)."""

    checks: _Checks
    readers: dict[str, tuple[Any, ...]]
    """Per operation, its ``requires`` that read what the finding's clause reads."""

    @classmethod
    def of(cls, session: Session, limit: int, finding: Finding) -> _Probes:
        from envfactory.fuzz.influence import places

        contract = session.contract
        op = contract.operations[finding.operation]
        clause = next((c for c in op.requires if c.source == finding.clause), None)
        read = frozenset() if clause is None else places(clause.expr, contract)
        readers = {
            name: reading
            for name, other in contract.operations.items()
            if (reading := tuple(c for c in other.requires if read & places(c.expr, contract)))
        }
        return cls(_Checks(session, limit), readers)

    def calls(self, steps: Sequence[Step], state: Any) -> Iterator[Step]:
        """Each reading operation with each combination of values the trace sends in its required
        fields, and a name it does not use in each string field (a new key to make)."""
        names = _strings(steps)
        fresh = next((n for n in NAMES if n not in names), None)
        for name, reading in self.readers.items():
            op = self.checks.session.contract.operations[name]
            for call in _candidates(op, steps, names, fresh):
                if self.checks.spent():
                    return
                expect = self.checks.judge(state, op, call.input)
                if expect.kind == "precondition" and expect.clause in reading:
                    yield call


def skipped(session: Session, finding: Finding) -> Finding | None:
    """The run's shorter finding of a forbidden call accepted, if ``finding`` (a refusal with the
    wrong status) is the same unchecked clause met later: the status the target answered is the
    one the operation would answer without that clause, in the state before the call (a car due
    for service let out a fourth time in 9 calls; 14 calls in, with its driver at his limit too,
    the same car is refused for the driver's limit, 429 where service due, 423, was due). A wrong
    status that no missing clause explains (423 answered as 400) stays a finding of its own."""
    if finding.kind != "wrong_status" or finding.clause is None:
        return None
    accepted = session.findings.by_key.get((finding.operation, "forbidden_accepted", ""))
    if accepted is None or accepted.clause != finding.clause or len(accepted.steps) >= len(finding.steps):
        return None
    state = _model_state(session, finding.steps[:-1])
    if state is None:
        return None
    op = session.contract.operations[finding.operation]
    rest = attrs.evolve(op, requires=tuple(c for c in op.requires if c.source != finding.clause))
    expect = oracle.judge(session.model, state, rest, finding.steps[-1].input)
    return accepted if not expect.accepted and expect.status == finding.status else None


def _only_key_field(plan: Any, collection: str) -> str | None:
    """The one input field of a read operation, if it names a key of ``collection`` and the
    operation needs no other input."""
    _, required, _ = object_properties(plan.op.input_schema)
    fields = [k.field for k in plan.steer.keys if k.collection == collection and not k.fresh]
    return fields[0] if len(fields) == 1 and set(required) <= set(fields) else None


def _extremes(session: Session, finding: Finding) -> Finding:
    """``finding`` with integer inputs moved to their schema's bounds where it still shows: a
    restock of the most a call allows can stand for two smaller ones, a purchase of the least
    needs less stock, so the deletions that follow can go further."""
    best = finding
    i = 0
    while i < len(best.steps) - 1:  # a replay may come back shorter: the bound moves with it
        step: Step | None = best.steps[i]
        props, _, _ = object_properties(session.contract.operations[best.steps[i].tool].input_schema)
        for field in _fields(best.steps[i]):
            if step is None:
                break  # the replay changed this step: its other fields wait for the next round
            value = step.input.get(field)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            schema = props.get(field)
            low, high = integer_bounds(schema) if isinstance(schema, Mapping) else (None, None)
            for candidate in (low, high, *_state_bounds(session, best.steps, i, str(field))):
                if candidate is None or candidate == value:
                    continue
                found = replay(session, _with(best.steps, i, step, field, candidate), best)
                if found is not None and len(found.steps) <= len(best.steps):
                    best = found
                    step = _step_at(best, i, step.tool)
                    break
        i += 1
    return best


def _tied(session: Session, steps: Sequence[Step]) -> dict[int, list[Threshold]]:
    """For each step, the thresholds its value sat exactly at in the model (an amount that was
    the whole balance): a replay that leaves an earlier step out moves the value with the bound,
    so "withdraw everything" stays everything, as an id stays "the id step k returned"."""
    out: dict[int, list[Threshold]] = {}
    for i, (state, _, _) in enumerate(_walk(session, steps)):
        step = steps[i]
        if isinstance(step.input, Mapping):
            for threshold in _thresholds_of(session, step.tool):
                value = step.input.get(threshold.field)
                if _is_number(value) and _bound(threshold, state, step.input) == value:
                    out.setdefault(i, []).append(threshold)
    return out


def _retie(tied: Sequence[Threshold], state: Any, value: Any) -> Any:
    value = dict(value)
    for threshold in tied:
        bound = _bound(threshold, state, value)
        if bound is not None:
            value[threshold.field] = bound
    return value


def _bound(threshold: Threshold, state: Any, value: Any) -> int | None:
    try:
        bound = threshold.bound(Env(state, value))
    except (EvaluationError, TypeError, KeyError):
        return None
    return bound if _is_number(bound) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _thresholds_of(session: Session, tool: str) -> tuple[Threshold, ...]:
    cache = session.thresholds
    if tool not in cache:
        cache[tool] = thresholds(session.contract.operations[tool])
    return cache[tool]


def _state_bounds(session: Session, steps: Sequence[Step], i: int, field: str) -> list[int]:
    """The values a clause compares step ``i``'s ``field`` with, in the model state before it
    (a withdrawal of the whole balance can stand for two smaller ones, which lets one go)."""
    found = [t for t in _thresholds_of(session, steps[i].tool) if t.field == field]
    if not found:
        return []
    state = _model_state(session, steps[:i])
    if state is None:
        return []
    out: list[int] = []
    for threshold in found:
        bound = _bound(threshold, state, steps[i].input)
        if bound is not None and bound not in out:
            out.append(bound)
    return out


def _model_state(session: Session, steps: Sequence[Step]) -> Any | None:
    """The model's state after ``steps`` (the refused ones change nothing); None where a state
    is read off a response, which the model alone cannot follow."""
    after: Any = session.initial
    for _, _, after in _walk(session, steps):
        if after is None:
            return None
    return after


def _walk(
    session: Session, steps: Sequence[Step], judge: oracle.Judge | None = None
) -> Iterator[tuple[Any, oracle.Expectation, Any]]:
    """``oracle.walk`` over ``steps`` from the initial state."""
    calls = ((step.tool, step.input) for step in steps)
    return oracle.walk(session.model, session.contract.operations, session.initial, calls, judge)


def deletions(session: Session, finding: Finding) -> Finding:
    """``finding`` with one step at a time left out, to a fixed point: the cheapest move."""
    best = finding
    for _ in range(MAX_ROUNDS):
        improved = False
        index = len(best.steps) - 2  # the last step is the failing call: keep it
        while index >= 0:
            found = replay(session, best.steps, best, skip=index)
            if found is not None and len(found.steps) < len(best.steps):
                best = found
                improved = True
                index = min(index, len(best.steps) - 1) - 1
            else:
                index -= 1
        if not improved:
            break
    return best


def _normalize(session: Session, finding: Finding, only: int | None = None) -> Finding:
    """``finding`` with each call's values (or step ``only``'s) moved, where the finding still
    shows, to another value the trace uses in the same field (the first such, in the order of
    first use): fewer distinct keys, no more steps."""
    best = finding
    i = 0 if only is None else only
    # a replay may come back shorter: the bound moves with it
    while i < len(best.steps) and (only is None or i == only):
        step: Step | None = best.steps[i]
        for field in _fields(best.steps[i]):
            if step is None:
                break  # the replay changed this step: its other fields wait for the next round
            value = step.input.get(field)
            if not is_id(value):
                continue
            for other in _first_values(best.steps, str(field)):
                if other == value:
                    continue
                found = replay(session, _with(best.steps, i, step, field, other), best)
                if found is not None and len(found.steps) <= len(best.steps):
                    best = found
                    step = _step_at(best, i, step.tool)
                    break
        i += 1
    return best


def _fields(step: Step) -> list[Any]:
    return list(step.input) if isinstance(step.input, Mapping) else []


def _with(steps: Sequence[Step], i: int, step: Step, field: Any, value: Any) -> list[Step]:
    """``steps`` with step ``i`` (which is ``step``) sending ``value`` in ``field``."""
    trial = list(steps)
    trial[i] = attrs.evolve(step, input={**step.input, field: value})
    return trial


def _step_at(finding: Finding, i: int, tool: str) -> Step | None:
    """Step ``i`` of a replayed finding, if it is still a call of ``tool``."""
    return finding.steps[i] if i < len(finding.steps) and finding.steps[i].tool == tool else None


def _first_values(steps: Sequence[Step], field: str) -> list[Any]:
    """The values sent in ``field``, in the order the trace first used them."""
    out: list[Any] = []
    for step in steps:
        if isinstance(step.input, Mapping):
            value = step.input.get(field)
            if is_id(value) and value not in out:
                out.append(value)
    return out
