"""The verifier's hot path: each operation's checks planned once, effects applied in place on
the run's own copy of the state (``Run``), and invariants re-checked only where a step wrote.

Everything here decides the common case fast and defers to the reference semantics
(``envfactory.contracts.semantics.Machine``) for anything it cannot settle: a probe that is not
plainly true falls back to the whole clause, and an error is explained by the machine. ``Plan``
holds per operation what the loop needs; ``apply_effects`` is ``Machine.apply`` without copies
(``Run.rollback`` undoes it); ``rechecks`` re-checks ``all(body for k in c)`` at the written keys
only; ``complete_output`` fills in a missing response that the ensures pin by equalities.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.parser import Effect
from envfactory.contracts.polarity import polarity
from envfactory.contracts.semantics import holds
from envfactory.contracts.values import FrozenMap, missing_key, set_path
from envfactory.contracts.values import to_json as value_to_json


@attrs.frozen(slots=True)
class Plan:
    """Per operation, what the hot loop needs, computed once."""

    op: Operation
    requires: tuple[Clause, ...]
    ensures: tuple[Clause, ...]
    output_ensures: tuple[Clause, ...]  # the ensures that read ``output``
    has_effects: bool
    reads_output: bool
    effects: tuple[Write, ...]
    invariants: tuple[Recheck, ...]  # the invariants that read a variable this operation writes
    requires_fns: tuple[Compiled, ...]  # the compiled clauses, in order
    ensures_fns: tuple[Compiled, ...]
    input_valid: Callable[[Any], Any] | None  # the compiled input schema's test (see ``raw_test``)
    output_valid: Callable[[Any], Any] | None
    requires_all: Callable[[Env], bool] | None = None  # generated: True when every requires surely holds
    ensures_all: Callable[[Env], bool] | None = None  # the same for the ensures (``contracts.codegen``)
    step: Callable[[Env, Run, bool], bool] | None = None  # the generated checker of a whole step
    # ``monotone_rechecks`` of ``invariants``: per-key re-checks sound while each guard variable
    # moves the way its sign says (the generated checker tests that; the closures check whole)
    monotone: tuple[tuple[Recheck, ...], tuple[tuple[str, int], ...]] | None = None


SCHEMA_TRIPS = (ValueError, TypeError, OverflowError)
"""What a compiled schema test raises on a value it cannot take: the value is invalid."""


def raw_test(validator: Any) -> Callable[[Any], Any] | None:
    """The compiled validator's own ``is_valid``, one call less than the wrapper's per step; the
    caller treats ``SCHEMA_TRIPS`` as invalid, exactly as ``SchemaValidator.is_valid`` does."""
    if validator is None:
        return None
    inner = getattr(validator, "_validator", None)
    test: Callable[[Any], Any] = getattr(inner, "is_valid", None) or validator.is_valid
    return test


@attrs.frozen(slots=True)
class Invariant:
    """An invariant, the state it reads, and for ``all(body for k in c)`` whose body reads ``c``
    only at ``c[k]``: the probe from ``per_key_probe``."""

    clause: Clause
    reads: frozenset[str]
    per_key: PerKey | None


def invariants_of(contract: Contract) -> tuple[Invariant, ...]:
    """The contract's invariants, each with the state it reads and its per-key probe."""
    state = frozenset(contract.state)
    return tuple(
        Invariant(c, ir.free_names(c.expr) & state, per_key_probe(c, state)) for c in contract.invariants
    )


@attrs.frozen(slots=True)
class PerKey:
    """``all(body for k in c)`` checked one key at a time: ``body`` is the body with ``k`` read
    as ``input``; ``others`` are the other state variables it reads (``t < next_id`` reads
    ``next_id``). A step that leaves ``others`` as they were and writes ``c`` at some keys keeps
    the invariant at every other key, so only the written keys need the check."""

    collection: str
    body: Compiled
    others: frozenset[str]
    fields: frozenset[str] | None  # the fields of ``c[k]`` the body reads; None: the whole record


@attrs.frozen(slots=True)
class Recheck:
    """How one invariant is re-checked after one operation: at the keys of its ``per_key``
    collection the step wrote, or whole (``per_key`` None)."""

    invariant: Invariant
    per_key: PerKey | None


def rechecks(invariants: tuple[Invariant, ...], op: Operation) -> tuple[Recheck, ...]:
    """The re-checks ``op`` needs after it applied.

    An invariant reading nothing the operation writes still holds after it. One that is a
    ``PerKey`` over a collection the operation writes only by key, reading no other variable the
    operation writes, still holds at every key but those written (it held before the step, and
    nothing it reads there changed): those are all it needs; and none at all when every write is
    to a field the body does not read (``c[k].status = ...`` against ``all(k < next_id ...)``): a
    field is written only where the key exists, so the keys stay as they were. Anything else is
    checked whole.
    """
    writes = frozenset(op.writes)
    whole = frozenset(e.target.var for e in op.effects if e.target.key is None)
    out = []
    for inv in invariants:
        if inv.reads.isdisjoint(writes):
            continue
        probe = inv.per_key
        keyed = probe is not None and probe.collection not in whole and probe.others.isdisjoint(writes)
        if keyed and probe is not None and _fields_unread(probe, op):
            continue
        out.append(Recheck(inv, probe if keyed else None))
    return tuple(out)


def monotone_rechecks(
    base: tuple[Recheck, ...], op: Operation
) -> tuple[tuple[Recheck, ...], tuple[tuple[str, int], ...]] | None:
    """``base`` with whole re-checks of ``all(body for k in c)`` made per key where the operation
    writes ``c`` only by key but also writes a variable the body reads (``create_ticket`` writes
    ``tickets[next_id]`` and ``next_id`` against ``all(t < next_id for t in tickets)``).

    Sound given the guards returned, ``(variable, sign)``: the body's polarity in the variable is
    ``sign`` and the call moved it that way (checked at run time, numbers only): every key the
    call did not write kept its record, and its body, true before, is true after. None when no
    re-check gains."""
    whole_writes = frozenset(e.target.var for e in op.effects if e.target.key is None)
    writes = frozenset(op.writes)
    out: list[Recheck] = []
    guards: dict[str, int] = {}
    gained = False
    for check in base:
        probe = check.invariant.per_key
        node = check.invariant.clause.expr
        if check.per_key is None and probe is not None and probe.collection not in whole_writes:
            assert isinstance(node, ir.Quant)
            signs = {v: polarity(node.body, v) for v in probe.others & writes}
            if all(sign in (1, -1) and guards.get(v, sign) == sign for v, sign in signs.items()):
                guards.update((v, sign) for v, sign in signs.items() if sign is not None)
                out.append(Recheck(check.invariant, probe))
                gained = True
                continue
        out.append(check)
    return (tuple(out), tuple(sorted(guards.items()))) if gained else None


def moved(before: Any, after: Any, sign: int) -> bool:
    """Whether a number moved (or stayed) the way ``sign`` says; False for anything else."""
    numbers = (int, float)
    if (
        not (isinstance(before, numbers) and isinstance(after, numbers))
        or isinstance(before, bool)
        or (isinstance(after, bool))
    ):
        return False
    return after >= before if sign > 0 else after <= before


def _fields_unread(probe: PerKey, op: Operation) -> bool:
    """Whether every write of ``op`` to the probe's collection sets a field its body never reads."""
    read = probe.fields
    if read is None:
        return False
    return all(
        e.value is not None and e.target.fields and e.target.fields[0] not in read
        for e in op.effects
        if e.target.var == probe.collection
    )


class Write:
    """One effect compiled for ``apply_effects``: the target's variable, key and fields, the
    value, and whether the value may hold a state collection itself (``unshare``: then the run
    stops owning its collections, see ``apply_effects``)."""

    __slots__ = ("fields", "key", "unshare", "value", "var")

    def __init__(self, var: str, key: Any, fields: tuple[str, ...], value: Any, unshare: bool) -> None:
        self.var = var
        self.key = key
        self.fields = fields
        self.value = value  # None: ``del``
        self.unshare = unshare

    @classmethod
    def of(cls, effect: Effect, collection_vars: frozenset[str]) -> Write:
        """``effect`` compiled; ``collection_vars`` names the state's collections (``collection_vars()``)."""
        target = effect.target
        key = compile_expr(target.key) if target.key is not None else None
        value = compile_expr(effect.value) if effect.value is not None else None
        unshare = effect.value is not None and not _flowing_names(effect.value).isdisjoint(collection_vars)
        return cls(target.var, key, target.fields, value, unshare)


def collection_vars(contract: Contract) -> frozenset[str]:
    """The state variables declared collections: the only ones a run writes by key, so the only
    ones whose objects it owns (see ``Run``); an effect whose value one of them flows into
    (``saved = items``) makes the run give up what it owns (``Write.unshare``)."""
    return frozenset(name for name, var in contract.state.items() if var.collection)


def _flowing_names(node: ir.Expr | None) -> frozenset[str]:
    """The names whose own object ``node``'s value may be or hold: only a name gives one, through
    literals and branches; an index, a field, a call or a quantifier gives an element or a new
    value."""
    if isinstance(node, ir.Name):
        return frozenset((node.id,))
    if isinstance(node, ir.ListLit | ir.RecordLit):
        parts = node.items if isinstance(node, ir.ListLit) else node.values
        return frozenset().union(*(_flowing_names(p) for p in parts))
    if isinstance(node, ir.IfExp):
        return _flowing_names(node.body) | _flowing_names(node.orelse)
    return frozenset()


class Run:
    """One trajectory's state as the verifier changes it in place, step by step.

    ``state`` is the run's own copy of the top level. A collection in it is changed in place
    only once the run has copied it (``owned``): the first write to a collection copies it, so a
    run that writes little copies little, however large the initial state. Records are shared: a
    write replaces them, never changes them. ``undo`` holds what the current step overwrote, for
    ``rollback``.
    """

    __slots__ = ("owned", "state", "undo")

    def __init__(self, state: FrozenMap) -> None:
        self.state = FrozenMap(state)
        self.owned: set[str] = set()
        self.undo: list[tuple[dict[Any, Any], Any, Any]] = []  # (container, key, former or _MISSING)

    def rollback(self) -> None:
        """Put back what the step's ``apply_effects`` overwrote: the state is as before the step.
        The run gives up its collections (they are copied again when next written): rare, and
        simpler than working out which ones it still owns."""
        for container, key, former in reversed(self.undo):
            if former is _MISSING:
                dict.pop(container, key, None)
            else:
                dict.__setitem__(container, key, former)
        self.undo.clear()
        self.owned.clear()


def apply_effects(writes: tuple[Write, ...], run: Run, env: Env, keyed: list[tuple[str, Any]]) -> None:
    """``Machine.apply``, in place on ``run.state``.

    Every key and value is evaluated on the pre-state first (effects are simultaneous), then
    written in order; raises ``EvaluationError`` exactly where ``Machine.apply`` does (the caller
    asks ``Machine.effect_failure`` for the explanation, after ``run.rollback()``). ``keyed``
    collects the ``(collection, key)`` pairs written, for incremental invariant checks.

    In place is sound because nothing else holds a collection the run owns: the run copied it,
    and a value that may hold a collection (``Write.unshare``: ``saved = items``) makes the run
    give up all it owns, so that whichever of the two is written next is copied first.
    """
    run.undo.clear()
    if len(writes) == 1:  # most operations write one location: no list of planned writes
        w = writes[0]
        _put(
            w,
            w.key(env) if w.key is not None else None,
            w.value(env) if w.value is not None else None,
            run,
            keyed,
        )
        return
    planned = [
        (w, w.key(env) if w.key is not None else None, w.value(env) if w.value is not None else None)
        for w in writes
    ]
    for w, key, value in planned:
        _put(w, key, value, run, keyed)


def applied(writes: tuple[Write, ...], state: FrozenMap, env: Env) -> FrozenMap:
    """The post-state of ``writes`` as a new state, ``state`` unchanged (for replays)."""
    run = Run(state)
    apply_effects(writes, run, env, [])
    return run.state


def _put(w: Write, key: Any, value: Any, run: Run, keyed: list[tuple[str, Any]]) -> None:
    """One planned write into ``run.state``, logged in ``run.undo``."""
    var = w.var
    state = run.state
    if w.unshare:
        run.owned.clear()
    if w.key is None:
        run.undo.append((state, var, state.get(var, _MISSING)))
        dict.__setitem__(state, var, value)
        run.owned.discard(var)
        return
    if key.__class__ is not str and key.__class__ is not int and isinstance(key, Mapping | list):
        raise missing_key(var, key)  # as Machine.apply
    keyed.append((var, key))
    collection = state.get(var, _MISSING)
    if collection is _MISSING:
        raise EvaluationError.unset(var)
    if collection.__class__ is not FrozenMap:
        raise EvaluationError(f"{var} is not a collection")
    record = collection.get(key, _MISSING)
    if w.value is None and record is _MISSING:
        raise EvaluationError(f"del {var}[{key!r}]: there is no such key")
    if w.fields:
        if record is _MISSING:
            raise EvaluationError(f"{var} has no key {key!r}")
        if record.__class__ is dict and len(w.fields) == 1:  # c[k].f = v, the common case
            updated = dict(record)
            updated[w.fields[0]] = value
            value = updated
        else:
            value = set_path(record, w.fields, value, f"{var}[{key!r}]")
    if var not in run.owned:  # the run's first write to this collection: copy it
        run.undo.append((state, var, collection))
        collection = FrozenMap(collection)
        dict.__setitem__(state, var, collection)
        run.owned.add(var)
    run.undo.append((collection, key, record))
    if w.value is None:
        dict.__delitem__(collection, key)
    else:
        dict.__setitem__(collection, key, value)


_MISSING: Any = object()


def per_key_probe(clause: Clause, state: frozenset[str]) -> PerKey | None:
    """For ``all(body for k in c)`` whose body reads ``c`` only at ``c[k]`` and otherwise only
    state variables (``state``) and constants: the ``PerKey`` probe, with ``k`` renamed to
    ``input`` so that the caller checks one written key with one call (``env.input = key``).
    The body reads no ``input`` of its own (its free names are state variables), so the renaming
    changes nothing but where the key comes from."""
    node = clause.expr
    if not (
        isinstance(node, ir.Quant)
        and node.kind == "all"
        and node.cond is None
        and isinstance(node.domain, ir.Name)
        and node.domain.id in state
        and ir.free_names(node) <= state
    ):
        return None
    coll, var = node.domain.id, node.var
    uses = [n for n in ir.walk(node.body) if isinstance(n, ir.Name) and n.id == coll]
    indexed = [
        n
        for n in ir.walk(node.body)
        if isinstance(n, ir.Index)
        and isinstance(n.obj, ir.Name)
        and n.obj.id == coll
        and isinstance(n.key, ir.Name)
        and n.key.id == var
    ]
    if len(uses) != len(indexed) or any(isinstance(n, ir.Quant) for n in ir.walk(node.body)):
        return None
    others = frozenset(ir.free_names(node.body) - {coll, var})
    fields = [
        n.name for n in ir.walk(node.body) if isinstance(n, ir.Attr) and any(n.obj is i for i in indexed)
    ]
    read = frozenset(fields) if len(fields) == len(indexed) else None  # else some c[k] is read whole
    return PerKey(coll, compile_expr(_rename(node.body, var, "input")), others, read)


def _rename(node: ir.Expr, old: str, new: str) -> ir.Expr:
    """``node`` with every ``Name(old)`` read as ``Name(new)`` (no binders inside: checked above)."""
    if isinstance(node, ir.Name):
        return attrs.evolve(node, id=new) if node.id == old else node
    changes: dict[str, Any] = {}
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        if isinstance(value, ir.Expr):
            changes[field.name] = _rename(value, old, new)
        elif isinstance(value, tuple) and any(isinstance(v, ir.Expr) for v in value):
            changes[field.name] = tuple(_rename(v, old, new) if isinstance(v, ir.Expr) else v for v in value)
    return attrs.evolve(node, **changes) if changes else node


def broken_invariant(plan: Plan, post: FrozenMap, keyed: list[tuple[str, Any]], env: Env) -> Invariant | None:
    """The first invariant a step broke, or None, by the operation's ``rechecks``. Sound because
    they all held before the step (the initial state is checked whole). ``env`` is scratch space
    (no locals bound): it is left reading ``post``."""
    env.state = post
    env.output = None
    for check in plan.invariants:
        probe = check.per_key
        items: Any = post.get(probe.collection) if probe is not None else None
        if probe is not None and items.__class__ is FrozenMap:  # the written keys, then done
            coll, body = probe.collection, probe.body
            try:
                for written, key in keyed:
                    if written == coll and key in items:
                        env.input = key
                        if body(env) is not True:
                            break
                else:
                    continue
            except UNDEFINED:
                pass
            env.input = None
        if not holds(check.invariant.clause, env):
            return check.invariant
    return None


UNDEFINED = (EvaluationError, TypeError)
"""What a clause raises where it is undefined (TypeError: an unhashable key read by the evaluator)."""


def failing(clauses: tuple[Clause, ...], env: Env) -> list[Clause]:
    """The clauses that are false (or undefined) in ``env``; empty in the common case."""
    bad: list[Clause] | None = None
    for clause in clauses:
        try:
            if clause.fn(env) is True:
                continue
        except UNDEFINED:
            pass
        if bad is None:
            bad = []
        bad.append(clause)
    return bad or []


class _NoOutput:
    pass


NO_OUTPUT: Any = _NoOutput()


def complete_output(plan: Plan, post: FrozenMap, value: Any) -> Any:
    """An output the ensures fix by equalities (``output.f == e``), if it satisfies everything.

    This decides the common case of a missing response without Z3: when the ensures pin every
    field they read and the result validates, the step is satisfiable with that response.
    """
    from envfactory.contracts.interpreter import evaluate

    env = Env(post, value)
    assigned: dict[tuple[str, ...], Any] = {}
    try:
        for clause in plan.output_ensures:
            _collect_equalities(clause.expr, env, assigned, evaluate)
    except (_Unsolvable, EvaluationError):
        return NO_OUTPUT
    if not assigned:
        return NO_OUTPUT
    output: Any
    if () in assigned:
        if len(assigned) > 1:
            return NO_OUTPUT
        output = assigned[()]
    else:
        output = {}
        for path, item in assigned.items():
            node = output
            for part in path[:-1]:
                nxt = node.setdefault(part, {})
                if not isinstance(nxt, dict):
                    return NO_OUTPUT
                node = nxt
            node[path[-1]] = item
    output = value_to_json(output)
    validator = plan.op.output_validator
    if validator is not None and not validator.is_valid(output):
        return NO_OUTPUT
    env = Env(post, value, output)
    if failing(plan.ensures, env):
        return NO_OUTPUT
    return output


class _Unsolvable(Exception):
    pass


def _collect_equalities(node: ir.Expr, env: Env, out: dict[tuple[str, ...], Any], evaluate: Any) -> None:
    for part in ir.conjuncts(node):
        pinned = ir.pinned_output(part)
        if pinned is None:
            if "output" in ir.free_names(part):
                raise _Unsolvable
            continue
        path, other = pinned
        value = evaluate(other, env)
        if path in out and out[path] != value:
            raise _Unsolvable
        out[path] = value
