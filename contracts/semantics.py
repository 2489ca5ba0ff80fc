"""The concrete step semantics of a contract, shared by the verifier, the simulator and the fuzzer.

One call is: the tool must exist (``unknown_tool``), its input must validate (``input_schema``),
every ``requires`` must hold in the pre-state (``precondition``), the effects are applied
simultaneously, then the output must validate (``output_schema``), every ``ensures`` must hold
(``postcondition``) and every invariant must hold in the post-state (``invariant``).
A clause that is undefined in a state (a missing key, a null read) counts as false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts import state as S
from envfactory.contracts.errors import EnvfactoryError, EvaluationError, Location, UsageError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.explain import describe
from envfactory.contracts.interpreter import explain
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.contracts.parser import Effect, target_as_expr
from envfactory.contracts.printer import to_source
from envfactory.contracts.values import FrozenMap, missing_key, set_path

CHECK_KINDS = (
    "unknown_tool",
    "input_schema",
    "precondition",
    "output_schema",
    "postcondition",
    "invariant",
    "infeasible",
)


@attrs.frozen(slots=True)
class Failure:
    """Why one call broke the contract."""

    kind: str
    message: str
    clause: Clause | None = None
    effect: Effect | None = None
    values: Mapping[str, Any] = attrs.field(factory=dict)
    path: tuple[str | int, ...] = ()
    reason: str | None = None

    @property
    def location(self) -> Location | None:
        if self.clause is not None:
            return self.clause.loc
        if self.effect is not None:
            return self.effect.loc
        return None

    @property
    def clause_text(self) -> str | None:
        if self.clause is not None:
            return self.clause.source
        if self.effect is not None:
            return self.effect.source
        return None

    @property
    def error_status(self) -> int | None:
        if self.clause is not None and self.clause.error is not None:
            return self.clause.error.status
        return None


class _CompiledEffect:
    """An effect with its key and value compiled, ready to run on a pre-state."""

    __slots__ = ("delete", "effect", "fields", "key", "value", "var")

    def __init__(self, effect: Effect) -> None:
        self.effect = effect
        self.var = effect.target.var
        self.fields = effect.target.fields
        self.key = compile_expr(effect.target.key) if effect.target.key is not None else None
        self.value = compile_expr(effect.value) if effect.value is not None else None
        self.delete = effect.value is None


class Machine:
    """The contract's transition relation over concrete states, with failures explained."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self._effects: dict[str, list[_CompiledEffect]] = {
            name: [_CompiledEffect(e) for e in op.effects] for name, op in contract.operations.items()
        }
        self._invariants = tuple((clause, ir.free_names(clause.expr)) for clause in contract.invariants)
        """Each invariant with the state names it reads."""

    # -- states ---------------------------------------------------------------------------------

    def initial_state(self, overrides: Mapping[str, Any] | None = None) -> FrozenMap:
        return S.initial_state(self.contract, overrides)

    # -- the checks, one per kind ---------------------------------------------------------------

    def check_tool(self, tool: str) -> Failure | None:
        if tool in self.contract.operations:
            return None
        import difflib

        close = difflib.get_close_matches(tool, list(self.contract.operations), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return Failure("unknown_tool", f"the contract has no operation {tool!r}{hint}")

    def check_input(self, op: Operation, value: Any) -> Failure | None:
        validator = op.input_validator
        if validator is None or validator.is_valid(value):
            return None
        violation = validator.first(value)
        path = tuple(violation.path) if violation is not None else ()
        message = violation.message if violation is not None else "input does not match its schema"
        where = "input" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in path)
        return Failure("input_schema", f"{op.name}: {where}: {message}", path=path)

    def check_output(self, op: Operation, value: Any) -> Failure | None:
        validator = op.output_validator
        if validator is None or validator.is_valid(value):
            return None
        violation = validator.first(value)
        path = tuple(violation.path) if violation is not None else ()
        message = violation.message if violation is not None else "output does not match its schema"
        where = "output" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in path)
        return Failure("output_schema", f"{op.name}: {where}: {message}", path=path)

    def _clause_failure(self, kind: str, clause: Clause, env: Env, op: Operation | None) -> Failure | None:
        try:
            if clause.fn(env) is True:
                return None
        except EvaluationError:
            pass
        verb = {"precondition": "requires", "postcondition": "ensures"}.get(kind, kind)
        sentence, shown, reason = describe(clause, env, f"{op.name} {verb}" if op is not None else verb)
        return Failure(kind, sentence, clause=clause, values=shown, reason=reason)

    def check_requires(self, state: FrozenMap, op: Operation, value: Any) -> Failure | None:
        env = Env(state, value)
        for clause in op.requires:
            failure = self._clause_failure("precondition", clause, env, op)
            if failure is not None:
                return failure
        return None

    def check_ensures(self, post: FrozenMap, op: Operation, value: Any, output: Any) -> Failure | None:
        env = Env(post, value, output)
        for clause in op.ensures:
            failure = self._clause_failure("postcondition", clause, env, op)
            if failure is not None:
                return failure
        return None

    def check_invariants(self, state: FrozenMap, before: FrozenMap | None = None) -> Failure | None:
        """The first invariant ``state`` breaks. With ``before``, a state every invariant holds in
        (the pre-state of an accepted call), an invariant none of whose names changed (by
        identity: a write makes a new value) holds still and is not evaluated again: most calls
        of a fuzz run read, or write one collection of several (a fifth of the fuzzer's time on
        the auction's eight invariants was spent on ones the call could not have changed)."""
        env = Env(state)
        for clause, reads in self._invariants:
            if before is not None and all(state.get(n) is before.get(n) for n in reads):
                continue
            failure = self._clause_failure("invariant", clause, env, None)
            if failure is not None:
                return failure
        return None

    # -- effects ----------------------------------------------------------------------------------

    def apply(self, state: FrozenMap, op: Operation, value: Any, output: Any = None) -> FrozenMap:
        """The post-state: every key and value evaluated on the pre-state, then written in order.

        Raises ``EvaluationError`` when an effect is undefined (its key or value reads a missing
        key, or it writes a field of a record that does not exist).
        """
        effects = self._effects[op.name]
        if not effects:
            return state
        env = Env(state, value, output)
        planned = [
            (ce, ce.key(env) if ce.key is not None else None, ce.value(env) if ce.value is not None else None)
            for ce in effects
        ]
        new = state
        for ce, key, result in planned:
            new = _write(new, ce, key, result)
        return new

    def effect_failure(self, state: FrozenMap, op: Operation, value: Any, output: Any) -> Failure:
        """Explain why ``apply`` raised: the first effect that is undefined on this pre-state."""
        env = Env(state, value, output)
        for effect in op.effects:
            for part in (effect.target.key, effect.value):
                if part is None:
                    continue
                values, reason = explain(part, env)
                if reason is not None:
                    return Failure(
                        "precondition",
                        f"{op.name}: effect {effect.source!r} is undefined here: {reason}",
                        effect=effect,
                        values=values,
                        reason=reason,
                    )
        try:
            self.apply(state, op, value, output)
        except EvaluationError as err:
            culprit = next((e for e in op.effects if e.target.fields), op.effects[0] if op.effects else None)
            return Failure(
                "precondition",
                f"{op.name}: effect {culprit.source if culprit else ''!r} is undefined here: {err.message}",
                effect=culprit,
                reason=err.message,
            )
        raise AssertionError("effect_failure called for effects that apply")  # pragma: no cover


def broken_at_start(contract: Contract, overrides: Mapping[str, Any] | None = None) -> list[Clause]:
    """The invariants a fully known initial state (the declared one, or with ``overrides``)
    breaks, in order; empty when it keeps them or when part of it is unknown (open world).
    Nothing valid starts from such a state: no trajectory, plan or generated run."""
    try:
        state = S.initial_state(contract, overrides)
    except EnvfactoryError:
        return []
    if len(state) < len(contract.state):
        return []
    env = Env(state)
    return [clause for clause in contract.invariants if not holds(clause, env)]


def holds(clause: Clause, env: Env) -> bool:
    """Whether ``clause`` is defined and true in ``env``: how every check reads a clause (a
    ``TypeError`` is an unhashable key a loose schema let through, undefined like the rest)."""
    try:
        return clause.fn(env) is True
    except (EvaluationError, TypeError):
        return False


def require_valid_start(contract: Contract) -> None:
    """Raise ``UsageError`` when the declared initial state breaks an invariant: for the commands
    that make runs from it (``generate``, ``fuzz``), which would make only invalid ones."""
    broken = broken_at_start(contract)
    if broken:
        raise UsageError(
            f"the initial state breaks invariant {broken[0].source} ({broken[0].loc}), "
            "so no valid call sequence starts there"
        )


def _write(state: FrozenMap, ce: _CompiledEffect, key: Any, value: Any) -> FrozenMap:
    var = ce.var
    if ce.key is None:
        return state.insert(var, value)
    try:
        collection = state[var]
    except KeyError:
        raise EvaluationError.unset(var) from None
    if not isinstance(collection, FrozenMap):
        raise EvaluationError(f"{var} is not a collection")
    if isinstance(key, Mapping | list):
        raise missing_key(var, key)
    if ce.delete:
        if key not in collection:
            raise EvaluationError(f"del {var}[{key!r}]: there is no such key")
        return state.insert(var, collection.remove(key))
    if ce.fields:
        if key not in collection:
            raise EvaluationError(
                f"{var} has no key {key!r}, so {to_source(target_as_expr(ce.effect.target))} cannot be set"
            )
        record = collection[key]
        value = set_path(record, ce.fields, value, f"{var}[{key!r}]")
    return state.insert(var, collection.insert(key, value))
