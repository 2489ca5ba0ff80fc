"""Replaying a completed trajectory, and telling which checks read anything its unknowns decide.

``replay`` runs a trajectory whose holes and outputs all have values through the contract's
checks (``contracts.semantics.Machine``) with the rules of ``envfactory verify``, a call refused
under ``--allow-rejected`` included. The solver re-runs each completion it finds through it, so
that no witness is reported that the concrete checks reject.

Given the trajectory as recorded (``unknowns``: its steps with their holes), the same run also
tracks *taint* (issue 17): a hole's value is tainted; a state location an effect writes is
tainted when the effect's value, or its key, read anything tainted (a tainted key taints the
field it writes in every record of the collection, or for a whole record or a ``del`` the key
set); a check that read anything tainted is tainted. When the completion fails at step ``k`` on
a check that read nothing tainted, and no check of step ``k`` before it did either, then every
completion of the unknowns that passes the steps before ``k`` reaches that check with the same
values and fails it with the same message: the trajectory is invalid at ``k`` whatever the
unknowns are, the answer the solver would give, without asking it. An output the step needs
but the trajectory does not record is an unknown as a whole (the run needs a value for it to
go past the step's requires). Anything the run cannot vouch for that way (a call whose
refusal depends on an unknown, an input that is a hole as a whole) gives no answer.

Reads are seen through views of the state, the collections, the records and the inputs (dict
subclasses whose accessors note what a check read), so that the contract's own evaluator and
explanations run unchanged. Imports the contracts and trajectory layers only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.explain import clause_facts
from envfactory.contracts.interpreter import evaluate
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.semantics import Failure, Machine
from envfactory.contracts.values import FrozenMap
from envfactory.trajectory import BROKEN_ARGUMENTS, Hole, Step, Trajectory, iter_holes


@attrs.frozen(slots=True)
class Replayed:
    """Where a replay stopped: the step and its failure (None, None when every step passed).
    ``sure``, with taint tracked: the failure read nothing the unknowns decide, so every
    completion that passes the steps before ``step`` fails there the same way."""

    step: int | None = None
    failure: Failure | None = None
    sure: bool = False


def rejected(step: Step, allow_rejected: bool) -> bool:
    """A call recorded as refused with a 4xx that ``--allow-rejected`` lets count as a rejection."""
    return allow_rejected and step.status is not None and 400 <= step.status < 500


def matches(clause: Clause, status: int | None) -> bool:
    """Whether a false clause explains a rejection with ``status`` (its error status, else any 4xx)."""
    if status is None:
        return False
    if clause.error is not None:
        return status == clause.error.status
    return 400 <= status < 500


def needs_output(op: Operation) -> bool:
    """Whether an unrecorded output matters: the ensures or the effects read it (as in verify)."""
    from envfactory.contracts.ir import free_names

    for clause in op.ensures:
        if "output" in free_names(clause.expr):
            return True
    return op.reads_output


def holds(clause: Clause, env: Env) -> bool:
    try:
        return clause.fn(env) is True
    except EvaluationError:
        return False


def replay(
    machine: Machine,
    traj: Trajectory,
    allow_rejected: bool,
    stop_at: int | None = None,
    *,
    start: int = 0,
    state: FrozenMap | None = None,
    unknowns: Sequence[Step] | None = None,
) -> Replayed:
    """Run a completed trajectory (from step ``start`` in ``state``, by default from step 0 in
    its initial state) through the checks of ``envfactory verify``; stop at the first failure,
    or after step ``stop_at``. With ``unknowns`` (the steps as recorded, holes and all), taint
    is tracked and ``Replayed.sure`` says whether the failure holds whatever the holes are."""
    m = machine
    operations = m.contract.operations
    invariants = m.contract.invariants
    if state is None:
        state = m.initial_state(traj.initial)
    t = _Taint(m.contract) if unknowns is not None else _Untracked()
    for i in range(start, len(traj.steps)):
        step = traj.steps[i]
        op = operations.get(step.tool)
        refused = rejected(step, allow_rejected)
        if not t.enter(step if unknowns is None else unknowns[i], step, op):
            return Replayed(i)
        if op is None:
            if refused:
                continue
            return Replayed(i, m.check_tool(step.tool), sure=True)
        failure: Failure | None
        if BROKEN_ARGUMENTS in (step.meta or {}):
            failure = Failure("input_schema", f"{op.name}: input is invalid")
        else:
            t.whole_input()
            failure = m.check_input(op, step.input)
        if failure is not None:
            if refused:
                if t.hit:
                    return Replayed(i)  # whether the call was refused depends on the unknowns
                continue
            return Replayed(i, failure, sure=not t.hit)
        failure = t.check(op.requires, state, True, False, m.check_requires, state, op, step.input)
        if failure is not None:
            env = Env(t.view(state), t.input)
            false = [c for c in op.requires if not holds(c, env)]
            if refused and any(matches(c, step.status) for c in false):
                if t.hit:
                    return Replayed(i)
                continue
            return Replayed(i, failure, sure=not (t.hit or refused))
        if t.stuck:
            return Replayed(i)
        planned = t.plan(m, op, state)
        try:
            post = m.apply(state, op, step.input, step.output)
        except EvaluationError:
            if refused:
                if t.hit:
                    return Replayed(i)
                continue
            return Replayed(i, m.effect_failure(state, op, step.input, step.output), sure=not t.hit)
        if step.status is not None and step.status >= 400:
            if step.status >= 500 and allow_rejected:
                continue  # the server failed: under --allow-rejected, a call that changed nothing
            message = f"{op.name} is permitted here, so it must succeed, but it was answered with status {step.status}"
            return Replayed(i, Failure("postcondition", message), sure=not (t.hit or refused))
        t.write(planned)
        if step.has_output:
            t.whole_output()
            failure = m.check_output(op, step.output)
        failure = failure or t.check(
            op.ensures, post, True, True, m.check_ensures, post, op, step.input, step.output
        )
        failure = failure or t.check(invariants, post, False, False, m.check_invariants, post)
        if failure is not None or stop_at == i:
            return Replayed(i, failure, sure=not t.hit)
        state = post
    return Replayed()


def prove_failure(
    machine: Machine,
    completed: Trajectory,
    recorded: Sequence[Step],
    allow_rejected: bool,
    *,
    start: int = 0,
    state: FrozenMap | None = None,
) -> Replayed | None:
    """Where every completion of ``recorded``'s unknowns fails, as ``completed`` (one of them)
    shows, when its run vouches for it (module docstring); None when it cannot."""
    result = replay(machine, completed, allow_rejected, start=start, state=state, unknowns=recorded)
    return result if result.failure is not None and result.sure else None


# ------------------------------------------------------------------------------------ the taint


WHOLE: Any = frozenset({object()})
"""Every field of a record: the record as a whole is tainted."""

_Fields = frozenset[Any]


def _tainted_fields(value: Any) -> _Fields | None:
    """The top-level fields of a recorded input or output that hold a hole; None when the value
    is itself a hole or a list holding one (no view stands for it)."""
    if value.__class__ is dict:
        return frozenset(k for k, v in value.items() if next(iter_holes(v), None) is not None)
    if isinstance(value, Hole) or next(iter_holes(value), None) is not None:
        return None
    return frozenset()


class _Untracked:
    """The taint tracker of a plain replay: every value as it is, nothing noted."""

    hit = False
    stuck = False  # the step's output is an unknown the run has no value for
    input: Any = None
    output: Any = None

    def enter(self, recorded: Step, step: Step, op: Operation | None) -> bool:
        self.input, self.output = step.input, step.output
        return True

    def whole_input(self) -> None:
        return None

    def whole_output(self) -> None:
        return None

    def view(self, state: FrozenMap) -> FrozenMap:
        return state

    def check(
        self,
        clauses: Sequence[Clause],
        state: FrozenMap,
        reads_input: bool,
        reads_output: bool,
        failing: Callable[..., Failure | None],
        *args: Any,
    ) -> Failure | None:
        """The first failure of ``clauses`` as the machine reports it (``failing(*args)``);
        tracked, the reads of the clauses run, and of the false one's explanation, are noted."""
        return failing(*args)

    def plan(self, machine: Machine, op: Operation, state: FrozenMap) -> Any:
        return None

    def write(self, planned: Any) -> None:
        return None


class _Taint(_Untracked):
    """What the unknowns may have decided so far: scalar state variables, the key sets of
    collections, and record fields (in every record of a collection, or per key)."""

    def __init__(self, contract: Contract) -> None:
        self.collections = contract.collections()
        self.scalars: set[str] = set()
        self.keys: set[str] = set()  # collections whose key set is tainted
        self.every: dict[str, _Fields] = {}  # per collection: fields tainted in every record
        self.fields: dict[str, dict[Any, _Fields]] = {}  # per collection and key: tainted fields
        self.hit = False  # a check of the current step read something tainted
        self.input_fields: _Fields = frozenset()
        self.output_fields: _Fields = frozenset()

    # -- a step -----------------------------------------------------------------------------------

    def enter(self, recorded: Step, step: Step, op: Operation | None) -> bool:
        """Begin a step; False when its unknowns cannot be tracked (see the module docstring)."""
        self.hit = False
        inputs = _tainted_fields(recorded.input)
        outputs = _tainted_fields(recorded.output) if recorded.has_output else frozenset()
        if inputs is None or outputs is None:
            return False
        self.stuck = False
        if op is not None and not recorded.has_output and needs_output(op):
            # a free output: an unknown as a whole; without a value for it (one the search
            # completed), the run goes no further than the checks before the effects
            outputs = WHOLE
            self.stuck = not (step.has_output and step.output.__class__ is dict)
        self.input_fields, self.output_fields = inputs, outputs
        self.input = _Record(step.input, self, inputs) if inputs else step.input
        self.output = _Record(step.output, self, outputs) if outputs and not self.stuck else step.output
        return True

    def whole_input(self) -> None:
        if self.input_fields:
            self.hit = True

    def whole_output(self) -> None:
        if self.output_fields:
            self.hit = True

    def view(self, state: FrozenMap) -> FrozenMap:
        return _State(state, self)

    def check(
        self,
        clauses: Sequence[Clause],
        state: FrozenMap,
        reads_input: bool,
        reads_output: bool,
        failing: Callable[..., Failure | None],
        *args: Any,
    ) -> Failure | None:
        env = Env(
            _State(state, self), self.input if reads_input else None, self.output if reads_output else None
        )
        for clause in clauses:
            try:
                if clause.fn(env) is True:
                    continue
            except EvaluationError:
                pass
            # what the sentence shows: the reason it is undefined, and the facts of its false
            # parts (``contracts.explain.describe``; the values it lists beside are not shown)
            with contextlib.suppress(EvaluationError):
                evaluate(clause.expr, env)
            clause_facts(clause.expr, env)
            return failing(*args)
        return None

    # -- reads ------------------------------------------------------------------------------------

    def member(self, var: str) -> None:
        if var in self.keys:
            self.hit = True

    def record_fields(self, var: str, key: Any) -> _Fields:
        own = self.fields.get(var)
        fields = own.get(key, frozenset()) if own else frozenset()
        every = self.every.get(var)
        if every:
            return WHOLE if fields is WHOLE or every is WHOLE else fields | every
        return fields

    def tainted(self, var: str) -> bool:
        return var in self.keys or bool(self.every.get(var)) or bool(self.fields.get(var))

    # -- effects ----------------------------------------------------------------------------------

    def plan(self, machine: Machine, op: Operation, state: FrozenMap) -> list[tuple[Any, Any, bool, bool]]:
        """Each effect's key and value evaluated on ``state``'s view, with whether each read
        anything tainted (the step's taint takes both in); the plain run writes the state."""
        env = Env(_State(state, self), self.input, self.output)
        planned: list[tuple[Any, Any, bool, bool]] = []
        for ce in machine._effects[op.name]:
            step_hit, self.hit = self.hit, False
            key = value = None
            key_hit = value_hit = False
            try:
                if ce.key is not None:
                    key = ce.key(env)
                    key_hit = self.hit or _escapes(key)
                    self.hit = False
                    if ce.delete or ce.fields:
                        self.member(ce.var)  # the key must be present: a read of the key set
                if ce.value is not None:
                    value = ce.value(env)
                    value_hit = self.hit or _escapes(value)
            except EvaluationError:  # undefined: ``apply`` raises too; what it read decides the step
                self.hit = step_hit or self.hit or key_hit
                return planned
            self.hit = step_hit or self.hit or key_hit or value_hit
            planned.append((ce, key, key_hit, value_hit))
        return planned

    def write(self, planned: list[tuple[Any, Any, bool, bool]]) -> None:
        """The taint of the state after the writes ``plan`` evaluated, in their order."""
        for ce, key, key_hit, value_hit in planned:
            var = ce.var
            if ce.key is None and var in self.collections:  # a collection written whole
                self.fields.pop(var, None)
                if value_hit:
                    self.keys.add(var)
                    self.every[var] = WHOLE
                else:
                    self.keys.discard(var)
                    self.every.pop(var, None)
                continue
            if ce.key is None:
                if value_hit:
                    self.scalars.add(var)
                else:
                    self.scalars.discard(var)
                continue
            own = self.fields.setdefault(var, {})
            head = ce.fields[0] if ce.fields else None
            if key_hit:  # any key may be the one written
                if ce.delete or head is None:
                    self.keys.add(var)
                if not ce.delete:
                    self.every[var] = WHOLE if head is None else _add(self.every.get(var, frozenset()), head)
            elif ce.delete:
                own.pop(key, None)
            elif head is None:
                if value_hit:
                    own[key] = WHOLE
                else:
                    own.pop(key, None)
            elif value_hit:
                own[key] = _add(own.get(key, frozenset()), head)
            elif len(ce.fields) == 1 and own.get(key, WHOLE) is not WHOLE:
                own[key] = own[key] - {head}
                if not own[key]:
                    del own[key]


def _add(fields: _Fields, name: Any) -> _Fields:
    return fields if fields is WHOLE else fields | {name}


def _escapes(value: Any) -> bool:
    """Whether a value holds a view with anything tainted inside (a record or a collection
    written or compared as a whole)."""
    if isinstance(value, _Record):
        return bool(value._fields)
    if isinstance(value, _Collection):
        return value._taint.tainted(value._var)
    if isinstance(value, dict):
        return any(_escapes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_escapes(v) for v in value)
    return False


class _Whole:
    """What reads a view as a whole (its values, equality, its text, a copy) notes it first:
    ``_everything`` says what that read touches. Mixed in before the view's own base."""

    __slots__ = ()

    def _everything(self) -> None:
        raise NotImplementedError

    def values(self) -> Any:
        self._everything()
        return super().values()  # type: ignore[misc]

    def items(self) -> Any:
        self._everything()
        return super().items()  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        self._everything()
        return bool(super().__eq__(other))

    def __ne__(self, other: object) -> bool:
        self._everything()
        return bool(super().__ne__(other))

    def __repr__(self) -> str:
        self._everything()
        return super().__repr__()

    def copy(self) -> Any:
        self._everything()
        return super().copy()  # type: ignore[misc]

    def __reduce__(self) -> Any:
        self._everything()
        return super().__reduce__()


class _State(_Whole, FrozenMap):
    """A state as a check reads it: scalar reads and collection reads noted."""

    __slots__ = ("_taint", "_views")

    def __init__(self, state: Mapping[str, Any], taint: _Taint) -> None:
        dict.__init__(self, state)
        self._taint = taint
        self._views: dict[str, Any] = {}

    def __getitem__(self, name: Any) -> Any:
        value: Any = dict.__getitem__(self, name)
        taint = self._taint
        if name in taint.collections:
            if not taint.tainted(name) or not isinstance(value, FrozenMap):
                return value
            view = self._views.get(name)
            if view is None:
                view = self._views[name] = _Collection(value, taint, name)
            return view
        if name in taint.scalars:
            taint.hit = True
        return value

    def get(self, name: Any, default: Any = None) -> Any:
        return self[name] if dict.__contains__(self, name) else default

    def _everything(self) -> None:
        taint = self._taint
        if taint.scalars or any(taint.tainted(c) for c in taint.collections):
            taint.hit = True

    def __iter__(self) -> Any:  # also keeps ``dict(view)`` off its C fast path, which reads nothing
        self._everything()
        return dict.__iter__(self)

    def keys(self) -> Any:
        self._everything()
        return dict.keys(self)

    __hash__ = FrozenMap.__hash__


class _Collection(_Whole, FrozenMap):
    """A state collection as a check reads it: its key set, and each record's fields."""

    __slots__ = ("_taint", "_var")

    def __init__(self, collection: Mapping[Any, Any], taint: _Taint, var: str) -> None:
        dict.__init__(self, collection)
        self._taint = taint
        self._var = var

    def __getitem__(self, key: Any) -> Any:
        taint = self._taint
        taint.member(self._var)
        value: Any = dict.__getitem__(self, key)
        fields = taint.record_fields(self._var, key)
        if not fields:
            return value
        if fields is WHOLE or value.__class__ is not dict:  # a view stands only for a plain record
            taint.hit = True
            return value
        return _Record(value, taint, fields)

    def get(self, key: Any, default: Any = None) -> Any:
        self._taint.member(self._var)
        return self[key] if dict.__contains__(self, key) else default

    def __contains__(self, key: object) -> bool:
        self._taint.member(self._var)
        return dict.__contains__(self, key)

    def keys(self) -> Any:
        self._taint.member(self._var)
        return dict.keys(self)

    def __iter__(self) -> Any:
        self._taint.member(self._var)
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._taint.member(self._var)
        return dict.__len__(self)

    def _everything(self) -> None:
        if self._taint.tainted(self._var):
            self._taint.hit = True

    __hash__ = FrozenMap.__hash__


class _Record(_Whole, dict[Any, Any]):
    """A record (or a call's input or output) with some fields tainted: reading one is noted."""

    __slots__ = ("_fields", "_taint")

    def __init__(self, record: Mapping[Any, Any], taint: _Taint, fields: _Fields) -> None:
        dict.__init__(self, record)
        self._taint = taint
        self._fields = fields

    def _read(self, name: Any) -> None:
        if self._fields is WHOLE or name in self._fields:
            self._taint.hit = True

    def __getitem__(self, name: Any) -> Any:
        self._read(name)
        return dict.__getitem__(self, name)

    def get(self, name: Any, default: Any = None) -> Any:
        self._read(name)
        return dict.get(self, name, default)

    def __iter__(self) -> Any:  # field names are known: holes are values (keeps ``dict(view)`` slow)
        return dict.__iter__(self)

    def _everything(self) -> None:
        if self._fields:
            self._taint.hit = True

    __hash__ = None


__all__ = ["Replayed", "matches", "needs_output", "prove_failure", "rejected", "replay"]
