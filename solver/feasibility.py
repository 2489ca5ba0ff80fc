"""Trajectory feasibility: does any completion of a trajectory's unknowns verify?

Unknowns are ``{"$var": name}`` holes (same name, same value), steps without a recorded output
(free within the output schema and the ``ensures``), and initial state the trajectory leaves open
(open-world contracts: any key the trajectory touches may have existed before step 0).

``decide`` encodes every check of every step (``solver.encode``, ``solver.schema``,
``solver.effects``) as a constraint. A first pass asserts them all outright on a preprocessing
solver (``_quick``: substituting the equalities that pin most unknowns down costs far less than
solving under assumptions) and takes its ``sat`` when the completion verifies. Otherwise each
check is guarded by its own assumption literal on ONE tracked solver, which decides as if the
first pass had not run:

* ``feasible``: the model gives the witness (holes, outputs, initial state, assumptions), and the
  completed trajectory is re-run through the concrete ``Machine``; a completion that does not
  verify there is never reported (the verdict is ``unknown`` instead).
* ``invalid``: a check that fails whatever the unknowns are gets its concrete kind and the
  concrete message of a completion's failure there: where the encoding folds it to false, or
  where the solver's completion of the steps before the first step without one fails there on a
  check that reads nothing the unknowns decide (``statemachine.taint``, which the verifier runs
  on its own candidate completions first, so both report it alike); otherwise the first step
  whose prefix has no completion gets kind ``infeasible`` and ``core``, the unsat core over the
  assumption literals minimized by deletion (every member needed).
* ``unknown``: time-out, resource limit (``rlimit``, deterministic), a construct outside the
  symbolic fragment, or an ``unsat`` that leans on an approximation (see ``Tracker``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import z3

from envfactory.contracts import values as V
from envfactory.contracts.errors import EnvfactoryError
from envfactory.contracts.ir import free_names
from envfactory.contracts.model import Clause, Contract, Operation, StateVar
from envfactory.contracts.parser import Effect
from envfactory.contracts.semantics import Failure, Machine
from envfactory.contracts.state import coerce_key
from envfactory.solver.effects import apply_effects
from envfactory.solver.effort import UNITS_PER_SECOND
from envfactory.solver.encode import Encoder, SymEnv, Tracker, free_of, holds
from envfactory.solver.schema import Schemas
from envfactory.solver.symbolic import (
    NULL,
    Budget,
    Map,
    Py,
    Slot,
    SVal,
    Term,
    Unsupported,
    and_,
    eq,
    implies,
    not_,
    or_,
    or_all,
    read,
    same_term,
    to_z3,
)
from envfactory.statemachine.taint import (
    matches,
    needs_output,
    prove_failure,
    rejected,
    replay,
)
from envfactory.trajectory import (
    BROKEN_ARGUMENTS,
    Hole,
    Step,
    Trajectory,
    completion_message,
    iter_holes,
    short_json,
)


def quick() -> Any:
    """The tactic of a quick first attempt: simplification, then the SMT core."""
    return z3.Then("simplify", "propagate-values", "solve-eqs", "smt")


_QUICK = quick()
"""The solver of the first, untracked pass: cheap preprocessing, then the SMT core."""
PREFIX_SEARCH = "bisect"
"""How an infeasible trajectory's first failing step is found: ``bisect`` over the prefixes of
tracked checks, or ``scan`` (one check per step from the first; the reference the tests compare
bisection with)."""

QUICK_SHARE = 0.25
"""The part of the time and resource limits the untracked first pass may spend, so that the
tracked solver still gets its own full resource limit and most of the time."""
RLIMIT_PER_SECOND = UNITS_PER_SECOND
"""Z3 resource units allowed per second of ``timeout``: the deterministic twin of the time-out."""
MAX_HOLES = 5_000
MAX_STEPS = 10_000
MAX_OPEN_PASSES = 4

_KIND_WORD = {
    "input_schema": "input schema",
    "precondition": "requires",
    "output_schema": "output schema",
    "postcondition": "ensures",
    "invariant": "invariant",
    "rejected": "was rejected",
}


@attrs.frozen(slots=True)
class SymbolicVerdict:
    """The answer for one trajectory with unknowns (see the module docstring)."""

    verdict: str
    step: int | None = None
    kind: str | None = None
    message: str = ""
    witness: dict[str, Any] | None = None
    core: list[dict[str, Any]] | None = None
    operation: str | None = None
    clause: str | None = None
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False)


@attrs.frozen(slots=True, eq=False)
class Tracked:
    """One check of one step, as a constraint the solver can name in a core."""

    step: int
    kind: str
    term: Term
    operation: str
    text: str | None = None
    location: str | None = None
    clause: Clause | None = None
    notes: tuple[str, ...] = ()
    """Approximations this constraint leans on: an ``unsat`` that needs it is not trusted."""

    def describe(self) -> str:
        word = _KIND_WORD.get(self.kind, self.kind)
        if self.text is not None and self.kind in ("precondition", "postcondition", "invariant"):
            return f"step {self.step} {self.operation} {word} {self.text}"
        if self.text is not None:
            return f"step {self.step} {self.operation} {self.text}"
        return f"step {self.step} {self.operation} {word}"

    def to_core(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "clause": self.text or _KIND_WORD.get(self.kind, self.kind),
            "location": self.location,
        }


@attrs.define
class _Stop:
    """A check that fails whatever the unknowns are (or an unknown tool): a concrete failure."""

    step: int
    kind: str
    message: str
    tracked: Tracked | None = None


@attrs.define
class _Encoding:
    tracker: Tracker
    holes: dict[str, SVal] = attrs.field(factory=dict)
    outputs: dict[int, SVal] = attrs.field(factory=dict)
    initial: dict[str, SVal] = attrs.field(factory=dict)
    unknown_initial: list[str] = attrs.field(factory=list)
    universe: dict[str, list[Slot]] = attrs.field(factory=dict)
    hard: list[Term] = attrs.field(factory=list)
    tracked: list[Tracked] = attrs.field(factory=list)
    sticky: list[str] = attrs.field(factory=list)
    stop: _Stop | None = None
    checked: dict[int, tuple[Any, ...]] = attrs.field(factory=dict)


def _has_hole(value: Any) -> bool:
    return next(iter_holes(value), None) is not None


def _validates(schemas: Schemas, value: SVal, raw: Any, schema: Any, validator: Any) -> Term:
    """Whether a step's input or output validates: symbolically where it has holes, else by the
    compiled validator (None: anything goes)."""
    if _has_hole(raw):
        return schemas.holds(value, schema)
    return validator is None or bool(validator.is_valid(raw))


def _parts(effect: Effect) -> list[Any]:
    return [p for p in (effect.value, effect.target.key) if p is not None]


def _loc(clause: Clause | Effect | None) -> str | None:
    return str(clause.loc) if clause is not None else None


class _Decider:
    def __init__(
        self,
        contract: Contract,
        trajectory: Trajectory,
        timeout: float,
        allow_rejected: bool,
        start: int = 0,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        self.contract = contract
        self.trajectory = trajectory
        self.first = start if state is not None else 0
        self.state = state
        self.timeout = max(float(timeout), 0.001)
        self.allow_rejected = allow_rejected
        self.start = time.monotonic()
        self.deadline = self.start + self.timeout
        self.machine = Machine(contract)

    # -- encoding -------------------------------------------------------------------------------

    def _key_kind(self, var: StateVar) -> str:
        key_type = var.key_type
        return (
            "integer" if key_type is not None and getattr(key_type, "kind", None) == "integer" else "string"
        )

    def _initial(self, enc: _Encoding, encoder: Encoder, preset: Mapping[str, list[Term]]) -> None:
        if self.state is not None:  # the concrete pre-state of step ``start``, every variable known
            for name, var in self.contract.state.items():
                enc.initial[name] = Py(self.state[name], self._key_kind(var) if var.collection else None)
            return
        overrides = self.trajectory.initial or {}
        unknown = sorted(set(overrides) - set(self.contract.state))
        if unknown:
            raise EnvfactoryError(f"initial names unknown state variable(s): {', '.join(unknown)}")
        for name, var in self.contract.state.items():
            schemas = Schemas(encoder, var.schema)
            if name in overrides:
                raw = overrides[name]
                if var.collection:
                    enc.initial[name] = self._collection(var, raw, enc, encoder)
                else:
                    enc.initial[name] = schemas.build(raw, var.schema, enc.holes)
                if _has_hole(raw):
                    enc.unknown_initial.append(name)
            elif var.known:
                value = var.initial
                if var.collection:
                    value = self.machine.initial_state({name: value})[name]
                enc.initial[name] = Py(value, self._key_kind(var) if var.collection else None)
            elif var.collection:
                slots: list[Slot] = []
                for j, key in enumerate(preset.get(name, [])):
                    base = f"u!{name}!{j}"
                    value = schemas.fresh(var.schema, base)
                    present = z3.Bool(base + "?")
                    enc.hard.append(implies(present, schemas.holds(value, var.schema)))
                    for earlier in slots:
                        enc.hard.append(implies(eq(earlier.key, key), not_(present)))
                    slots.append(Slot(key, present, value))
                enc.universe[name] = slots
                enc.initial[name] = Map(tuple(slots), self._key_kind(var), True, name)
                enc.unknown_initial.append(name)
            else:
                value = schemas.fresh(var.schema, f"i!{name}")
                enc.hard.append(schemas.holds(value, var.schema))
                enc.initial[name] = value
                enc.unknown_initial.append(name)

    def _collection(self, var: StateVar, raw: Any, enc: _Encoding, encoder: Encoder) -> Map:
        schemas = Schemas(encoder, var.schema)
        entries: list[tuple[Any, Any]]
        if isinstance(raw, Mapping):
            entries = [(coerce_key(var, k), v) for k, v in raw.items()]
        elif isinstance(raw, list):
            entries = []
            for item in raw:
                if not (isinstance(item, Mapping) and "id" in item) or isinstance(item["id"], Hole):
                    raise EnvfactoryError(f"{var.name}: a list of records needs a known 'id' in each record")
                entries.append((coerce_key(var, item["id"]), item))
        else:
            raise EnvfactoryError(f"{var.name} is a collection; its value must be an object of key -> record")
        slots = tuple(
            Slot(k, True, schemas.build(v, var.schema, enc.holes)) for k, v in dict(entries).items()
        )
        return Map(slots, self._key_kind(var), False, var.name)

    def encode(self, preset: Mapping[str, list[Term]], collect: bool) -> _Encoding:
        tracker = Tracker()
        encoder = Encoder(tracker, deadline=self.deadline)
        enc = _Encoding(tracker)
        self._initial(enc, encoder, preset)
        enc.sticky = list(tracker.inexact)
        state: dict[str, SVal] = dict(enc.initial)
        steps = self.trajectory.steps
        if len(steps) - self.first > MAX_STEPS:
            raise Unsupported(f"the trajectory has {len(steps)} steps; the solver takes at most {MAX_STEPS}")
        for i in range(self.first, len(steps)):
            step = steps[i]
            if time.monotonic() > self.deadline:
                raise Budget(f"encoding took longer than the {self.timeout:g} s time limit")
            op = self.contract.operations.get(step.tool)
            if op is None and rejected(step, self.allow_rejected):
                continue
            if op is None:
                failure = self.machine.check_tool(step.tool)
                assert failure is not None
                if not collect:
                    enc.stop = _Stop(i, "unknown_tool", failure.message)
                    break
                continue
            try:
                state = self._step(i, step, op, state, enc, encoder, collect)
            except Budget:
                raise
            except Unsupported as err:
                enc.stop = _Stop(i, "unsupported", err.message)
                break
            if len(enc.holes) > MAX_HOLES:
                raise Unsupported(f"the trajectory has more than {MAX_HOLES} holes")
            if enc.stop is not None:
                break
        return enc

    def _track(self, enc: _Encoding, item: Tracked, collect: bool) -> None:
        if item.term is True:
            return
        if item.term is False and not collect and enc.stop is None:
            enc.stop = _Stop(item.step, item.kind, "", item)
        enc.tracked.append(item)

    def _step(
        self,
        i: int,
        step: Step,
        op: Operation,
        state: dict[str, SVal],
        enc: _Encoding,
        encoder: Encoder,
        collect: bool,
    ) -> dict[str, SVal]:
        """Encode one call in the order ``Machine`` checks it, stopping where a check surely fails."""
        name = op.name
        refused = rejected(step, self.allow_rejected)

        tracker = encoder.tracker
        mark = [len(tracker.inexact)]

        def carried() -> None:
            """Approximations made while building values ride along into every later check."""
            enc.sticky.extend(tracker.inexact[mark[0] :])
            mark[0] = len(tracker.inexact)

        def track(kind: str, term: Term, text: str | None, where: Clause | Effect | None = None) -> bool:
            own = tracker.inexact[mark[0] :]
            mark[0] = len(tracker.inexact)
            notes = tuple(dict.fromkeys([*enc.sticky, *own]))
            clause = where if isinstance(where, Clause) else None
            self._track(enc, Tracked(i, kind, term, name, text, _loc(where), clause, notes), collect)
            return enc.stop is not None and not collect

        def track_all(kind: str, clauses: Sequence[Clause], env: SymEnv) -> bool:
            """``track`` each clause in ``env`` in turn, up to the first that stops the step."""
            return any(track(kind, holds(encoder.encode(c.expr, env)), c.source, c) for c in clauses)

        in_schemas = Schemas(encoder, op.input_schema)
        value = in_schemas.build(step.input, op.input_schema, enc.holes)
        carried()
        if BROKEN_ARGUMENTS in (step.meta or {}):
            input_ok: Term = False
        else:
            input_ok = _validates(in_schemas, value, step.input, op.input_schema, op.input_validator)
        if refused:
            carried()
            return self._rejected_step(i, step, op, state, value, input_ok, enc, encoder, collect)
        if track("input_schema", input_ok, "input schema"):
            return state
        if track_all("precondition", op.requires, SymEnv(state, value, NULL)):
            return state
        out_schemas = Schemas(encoder, op.output_schema)
        if step.has_output:
            output = out_schemas.build(step.output, op.output_schema or {}, enc.holes)
        elif needs_output(op):
            output = out_schemas.fresh(op.output_schema or {}, f"o!{i}")
            enc.outputs[i] = output
        else:
            output = NULL
        post, effects = apply_effects(encoder, op.effects, state, value, output)
        carried()
        for effect, term in effects:
            if track("precondition", term, effect.source, effect):
                return state
        if step.status is not None and step.status >= 400:
            if step.status >= 500 and self.allow_rejected:
                return state  # the server failed: under --allow-rejected, a call that changed nothing
            text = f"is permitted here, so it must succeed, but it was answered with status {step.status}"
            if track("postcondition", False, text):
                return state
        output_ok: Term = True
        if step.has_output and op.output_schema is not None:
            output_ok = _validates(out_schemas, output, step.output, op.output_schema, op.output_validator)
        elif i in enc.outputs:
            output_ok = out_schemas.holds(output, op.output_schema or {})
        if track("output_schema", output_ok, "output schema"):
            return state
        if track_all("postcondition", op.ensures, SymEnv(post, value, output)):
            return state
        inv_env = SymEnv(post)
        for clause in self.contract.invariants:
            reads = tuple(post[v] for v in sorted(free_of(clause.expr)) if v in post)
            last = enc.checked.get(id(clause))
            if (
                last is not None
                and len(last) == len(reads)
                and all(a is b for a, b in zip(last, reads, strict=True))
            ):
                continue  # the very same values were checked at an earlier step (objects are immutable)
            enc.checked[id(clause)] = reads  # held, so that no freed value's id can stand for a new one
            if track("invariant", holds(encoder.encode(clause.expr, inv_env)), clause.source, clause):
                return state
        return post

    def _rejected_step(
        self,
        i: int,
        step: Step,
        op: Operation,
        state: dict[str, SVal],
        value: SVal,
        input_ok: Term,
        enc: _Encoding,
        encoder: Encoder,
        collect: bool,
    ) -> dict[str, SVal]:
        """A call recorded as refused with a 4xx under ``allow_rejected``: the input is invalid, or a
        false ``requires`` names that status (any 4xx without an error), or every requires holds
        and an effect is undefined. The state stays as it was."""
        env = SymEnv(state, value, NULL)
        explained: list[Term] = []
        every: list[Term] = []
        for clause in op.requires:
            held = holds(encoder.encode(clause.expr, env))
            every.append(held)
            if matches(clause, step.status):
                explained.append(not_(held))
        all_hold = and_(*every)
        stuck: Term = False
        if all_hold is not False and input_ok is not False:
            # a refused call has no output: effects keyed by or made of it never ran, so only
            # the others may be what refused it (issue 20 item 8)
            ran = [e for e in op.effects if not any("output" in free_names(p) for p in _parts(e))]
            _, effects = apply_effects(encoder, ran, state, value, NULL)
            stuck = not_(and_(*(t for _, t in effects)))
        refused = or_(not_(input_ok), and_(input_ok, or_(or_all(explained), and_(all_hold, stuck))))
        text = f"was answered with status {step.status}, which no false check of this call explains"
        notes = tuple(dict.fromkeys([*enc.sticky, *encoder.tracker.inexact]))
        self._track(enc, Tracked(i, "rejected", refused, op.name, text, notes=notes), collect)
        return state

    def build(self) -> _Encoding:
        """Encode; for open-world collections, re-encode until every key read has an initial slot."""
        open_world = self.state is None and any(
            var.collection and not var.known and var.name not in (self.trajectory.initial or {})
            for var in self.contract.state.values()
        )
        if not open_world:
            return self.encode({}, collect=False)
        preset: dict[str, list[Term]] = {}
        for _ in range(MAX_OPEN_PASSES):
            probe = self.encode(preset, collect=True)
            grown = False
            for name, keys in probe.tracker.open_keys.items():
                known = preset.setdefault(name, [])
                for key in keys:
                    if not any(same_term(key, k) for k in known):
                        known.append(key)
                        grown = True
            if not grown:
                return self.encode(preset, collect=False)
        raise Unsupported("the keys read from an open-world collection did not settle")

    # -- solving --------------------------------------------------------------------------------

    def solver(self) -> z3.Solver:
        """One incremental solver for the whole trajectory (the plain SMT core: the default
        solver's preprocessing costs more than these small, quantifier-free problems need)."""
        s = z3.SimpleSolver()
        s.set("rlimit", self.rlimit(1.0))
        return s

    def rlimit(self, share: float) -> int:
        """Z3 resource units for a pass that may spend ``share`` of the limit; at least one,
        since Z3 reads 0 as no limit at all."""
        return max(int(self.timeout * RLIMIT_PER_SECOND * share), 1)

    def check(self, s: z3.Solver, lits: list[Any]) -> Any:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return z3.unknown
        s.set("timeout", max(int(remaining * 1000), 1))
        return s.check(*lits)

    def run(self) -> SymbolicVerdict:
        enc = self.build()
        quick = self._quick(enc)
        if quick is not None:
            return quick
        s = self.solver()
        for h in enc.hard:
            if h is not True:
                s.add(to_z3(h))
        lits: list[Any] = []
        for n, item in enumerate(enc.tracked):
            lit = z3.Bool(f"track!{n}")
            s.add(z3.Implies(lit, to_z3(item.term)))
            lits.append(lit)
        by_lit = {lit.get_id(): item for lit, item in zip(lits, enc.tracked, strict=True)}
        stop = enc.stop
        if stop is not None:
            prefix = [lit for lit, item in zip(lits, enc.tracked, strict=True) if item.step < stop.step]
        else:
            prefix = lits
        result = self.check(s, prefix)
        if result == z3.unknown:
            return self._unknown(s)
        if result == z3.sat:
            if stop is not None:
                return self._concrete(stop, enc, s.model())
            return self._feasible(enc, s.model())
        return self._infeasible(s, enc, lits, by_lit)

    def _quick(self, enc: _Encoding) -> SymbolicVerdict | None:
        """The common case first: every check asserted outright (no assumption literals), so the
        solver's preprocessing may substitute the equalities that pin most unknowns down. A
        ``sat`` whose completion verifies concretely is the answer; anything else (``unsat``, a
        limit, a completion that does not verify) goes to the tracked solver, which decides as
        if this pass had not run, so verdicts and cores do not depend on it."""
        stop = enc.stop
        terms = [h for h in enc.hard if h is not True]
        for item in enc.tracked:
            if stop is not None and (item.step > stop.step or item is stop.tracked):
                break  # the checks of the stopping step before the one that fails are kept, so
                # that the completion replays up to that check
            terms.append(item.term)
        if any(t is False for t in terms):
            return None
        s = _QUICK.solver()
        s.set("rlimit", self.rlimit(QUICK_SHARE))
        remaining = (self.deadline - time.monotonic()) * QUICK_SHARE
        if remaining <= 0:
            return None
        s.set("timeout", max(int(remaining * 1000), 1))
        try:
            if terms:
                s.add(to_z3(and_(*terms)))
            if s.check() != z3.sat:
                return None
            model = s.model()
        except z3.Z3Exception:
            return None
        verdict = self._concrete(stop, enc, model) if stop is not None else self._feasible(enc, model)
        return None if verdict.verdict == "unknown" else verdict

    def _unknown(self, s: z3.Solver) -> SymbolicVerdict:
        reason = s.reason_unknown() or "unknown"
        # Z3 says "canceled" both at its time-out and at its resource limit: the clock tells which
        if "timeout" in reason or time.monotonic() >= self.deadline:
            why = f"the solver timed out after {self.timeout:g} s"
        elif any(word in reason for word in ("canceled", "resource", "rlimit", "max.")):
            why = "the solver reached its resource limit"
        else:
            why = f"the solver gave up: {reason}"
        return SymbolicVerdict("unknown", message=why)

    # -- verdicts -------------------------------------------------------------------------------

    def _concrete(self, stop: _Stop, enc: _Encoding, model: z3.ModelRef) -> SymbolicVerdict:
        """A check that fails whatever the unknowns are: report it with its concrete kind."""
        op = self.trajectory.steps[stop.step].tool
        if stop.kind == "unsupported":
            return SymbolicVerdict(
                "unknown", stop.step, None, f"outside the symbolic fragment: {stop.message}", operation=op
            )
        if stop.kind == "unknown_tool":
            return SymbolicVerdict("invalid", stop.step, "unknown_tool", stop.message, operation=op)
        item = stop.tracked
        assert item is not None
        failure = self._replay_failure(stop.step, enc, model)
        if failure is not None and failure.kind == item.kind:
            loc = failure.location
            return SymbolicVerdict(
                "invalid",
                stop.step,
                failure.kind,
                failure.message,
                operation=op,
                clause=failure.clause_text,
                location=str(loc) if loc is not None else None,
            )
        kind = "precondition" if item.kind == "rejected" else item.kind
        message = f"{item.describe()}: it fails whatever the unknown values are"
        return SymbolicVerdict(
            "invalid", stop.step, kind, message, operation=op, clause=item.text, location=item.location
        )

    def _replay_failure(self, upto: int, enc: _Encoding, model: z3.ModelRef) -> Failure | None:
        """The concrete Machine's failure at step ``upto`` of the completion in ``model``."""
        try:
            completed = self._completion(enc, model)
            return self._replay(completed, stop_at=upto)[1]
        except (EnvfactoryError, Unsupported, ValueError, TypeError):
            return None

    def _feasible(self, enc: _Encoding, model: z3.ModelRef) -> SymbolicVerdict:
        witness = self._witness(enc, model)
        completed = self._completion(enc, model)
        at, failure = self._replay(completed)
        if failure is not None:
            return SymbolicVerdict(
                "unknown",
                at,
                failure.kind,
                f"the solver's completion does not verify concretely at step {at}: {failure.message}",
                operation=self.trajectory.steps[at].tool if at is not None else None,
            )
        return SymbolicVerdict("feasible", message=self._feasible_message(witness), witness=witness)

    def _feasible_message(self, witness: dict[str, Any]) -> str:
        return completion_message(witness["holes"], len(witness["outputs"]), witness["assumptions"])

    def _witness(self, enc: _Encoding, model: z3.ModelRef) -> dict[str, Any]:
        holes = {name: V.to_json(read(v, model)) for name, v in enc.holes.items()}
        outputs = {i: V.to_json(read(v, model)) for i, v in enc.outputs.items()}
        initial: dict[str, Any] = {}
        assumptions: list[str] = []
        for name in enc.unknown_initial:
            value = read(enc.initial[name], model)
            initial[name] = V.to_json(value)
            var = self.contract.state[name]
            if name in enc.universe:
                for key in value:
                    assumptions.append(f"{name}[{json.dumps(key)}] existed before step 0")
            elif not var.known and name not in (self.trajectory.initial or {}):
                assumptions.append(f"{name} was {short_json(V.to_json(value))} before step 0")
        return {"holes": holes, "outputs": outputs, "initial": initial, "assumptions": assumptions}

    def _completion(self, enc: _Encoding, model: z3.ModelRef) -> Trajectory:
        values = {name: V.to_json(read(v, model)) for name, v in enc.holes.items()}

        def fill(value: Any) -> Any:
            if isinstance(value, Hole):
                return values.get(value.name)
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [fill(v) for v in value]
            return value

        initial = dict(fill(dict(self.trajectory.initial or {})))
        for name in enc.unknown_initial:
            initial[name] = V.to_json(read(enc.initial[name], model))
        steps = []
        for i, step in enumerate(self.trajectory.steps):
            if step.has_output:
                steps.append(attrs.evolve(step, input=fill(step.input), output=fill(step.output)))
            elif i in enc.outputs:
                output = V.to_json(read(enc.outputs[i], model))
                steps.append(attrs.evolve(step, input=fill(step.input), output=output, has_output=True))
            else:
                steps.append(attrs.evolve(step, input=fill(step.input)))
        return attrs.evolve(self.trajectory, steps=tuple(steps), initial=initial)

    def _replay(self, traj: Trajectory, stop_at: int | None = None) -> tuple[int | None, Failure | None]:
        """Run a completed trajectory through the concrete ``Machine`` with the checks and the
        rejection rules of ``envfactory verify``: (step, failure) or (None, None)."""
        done = replay(self.machine, traj, self.allow_rejected, stop_at)
        return done.step, done.failure

    def _infeasible(
        self, s: z3.Solver, enc: _Encoding, lits: list[Any], by_lit: Mapping[int, Tracked]
    ) -> SymbolicVerdict:
        steps = sorted({item.step for item in enc.tracked})

        def prefix(j: int) -> list[Any]:
            return [lit for lit in lits if by_lit[lit.get_id()].step <= j]

        first = self._first_unsat(s, steps, prefix) if PREFIX_SEARCH == "bisect" else None
        if first is None:  # the scan from the first step: the reference, and where bisection balked
            for j in steps:
                result = self.check(s, prefix(j))
                if result == z3.unsat:
                    first = j
                    break
                if result == z3.unknown:
                    return self._unknown(s)
            if first is None:  # pragma: no cover - the whole set was unsat, so some prefix is
                return SymbolicVerdict("unknown", message="the solver's answers disagree")
        elif self.check(s, prefix(first)) != z3.unsat:  # its core, from that prefix's own check
            return self._unknown(s)
        unsat = list(s.unsat_core())  # before ``_proved`` asks the solver again
        proved = self._proved(s, enc, first, [lit for lit in lits if by_lit[lit.get_id()].step < first])
        if proved is not None:
            return proved
        core = self._minimize(s, unsat)
        if core is None:
            return self._unknown(s)
        members = sorted((by_lit[lit.get_id()] for lit in core), key=lambda t: (t.step, enc.tracked.index(t)))
        notes = [note for t in members for note in t.notes]
        if notes:
            reason = "; ".join(dict.fromkeys(notes))
            return SymbolicVerdict(
                "unknown",
                first,
                None,
                f"no completion was found, but the encoding is approximate here ({reason})",
                operation=self.trajectory.steps[first].tool,
            )
        at_first = [t for t in members if t.step == first] or members
        culprit = at_first[-1] if at_first else None
        involved = sorted({t.step for t in members})
        message = (
            f"no completion of the unknown values gets past step {first} ({self.trajectory.steps[first].tool}): "
            + "; ".join(t.describe() for t in members)
            + f" conflict (steps {', '.join(map(str, involved))})"
        )
        return SymbolicVerdict(
            "invalid",
            first,
            "infeasible",
            message,
            core=[t.to_core() for t in members],
            operation=self.trajectory.steps[first].tool,
            clause=culprit.text if culprit else None,
            location=culprit.location if culprit else None,
        )

    def _proved(self, s: z3.Solver, enc: _Encoding, first: int, before: list[Any]) -> SymbolicVerdict | None:
        """The concrete failure at step ``first`` when a completion that passes the steps before
        it (the solver's) fails there on a check that reads nothing the unknowns decide
        (``statemachine.taint``): a check that fails whatever the unknowns are, reported with
        its concrete kind, as the verifier's own search for completions reports it."""
        if enc.unknown_initial or self.check(s, before) != z3.sat:
            return None  # an unknown initial state is not tracked
        try:
            found = prove_failure(
                self.machine,
                self._completion(enc, s.model()),
                self.trajectory.steps,
                self.allow_rejected,
                start=self.first,
                state=self.state if self.state is None else V.FrozenMap(self.state),
            )
        except (
            EnvfactoryError,
            Unsupported,
            ArithmeticError,
            TypeError,
            ValueError,
            KeyError,
            AttributeError,
        ):
            return None
        if found is None or found.step != first or found.failure is None:
            return None
        failure = found.failure
        loc = failure.location
        return SymbolicVerdict(
            "invalid",
            first,
            failure.kind,
            failure.message,
            operation=self.trajectory.steps[first].tool,
            clause=failure.clause_text,
            location=str(loc) if loc is not None else None,
        )

    def _first_unsat(self, s: z3.Solver, steps: list[int], prefix: Callable[[int], list[Any]]) -> int | None:
        """The first step whose prefix of tracked checks is unsat, by bisection: a longer prefix
        holds a shorter one, so unsat is monotone along ``steps`` and the answer is the linear
        scan's, in a logarithmic number of checks (the scan made one per step from the first
        hole: a 50-step trajectory failing at its end paid 40). None when a check answers
        unknown (the caller scans, as before) or the last prefix is not unsat."""
        lo, hi = 0, len(steps) - 1
        if not steps or self.check(s, prefix(steps[hi])) != z3.unsat:
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            result = self.check(s, prefix(steps[mid]))
            if result == z3.unsat:
                hi = mid
            elif result == z3.sat:
                lo = mid + 1
            else:
                return None
        return steps[lo]

    def _minimize(self, s: z3.Solver, core: list[Any]) -> list[Any] | None:
        """Deletion-based minimization: drop each member whose absence keeps the set unsat."""
        i = 0
        while i < len(core):
            trial = core[:i] + core[i + 1 :]
            result = self.check(s, trial)
            if result == z3.unsat:
                smaller = {lit.get_id() for lit in s.unsat_core()}
                core = [lit for lit in trial if lit.get_id() in smaller]
            elif result == z3.sat:
                i += 1
            else:
                return None
        return core


def decide(
    contract: Contract,
    trajectory: Trajectory,
    *,
    timeout: float = 5.0,
    allow_rejected: bool = False,
    start: int = 0,
    state: Mapping[str, Any] | None = None,
) -> SymbolicVerdict:
    """Decide whether any completion of the trajectory's unknowns verifies (module docstring).

    ``state``, when given, is the concrete state before step ``start`` (every variable known),
    as the concrete verifier computed it through the steps before, which hold no unknowns and
    passed every check: encoding starts there (issue 17 item 5)."""
    try:
        return _Decider(contract, trajectory, timeout, allow_rejected, start, state).run()
    except Budget as err:
        return SymbolicVerdict(
            "unknown", message=f"too large for the solver within its limits: {err.message}"
        )
    except Unsupported as err:
        return SymbolicVerdict("unknown", message=f"outside the symbolic fragment: {err.message}")
    except EnvfactoryError as err:
        return SymbolicVerdict("unknown", message=f"the trajectory cannot be encoded: {err.message}")
    except z3.Z3Exception as err:
        return SymbolicVerdict("unknown", message=f"the solver failed: {err}")
    except RecursionError:
        return SymbolicVerdict(
            "unknown", message="the expression or value is nested too deeply for the solver"
        )
