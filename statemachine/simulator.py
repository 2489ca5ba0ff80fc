"""The simulator: a contract executed on immutable state snapshots, deterministically.

``Simulator(contract, seed=0)`` answers ``call(tool, input)`` the way the API the contract
describes would: a call the contract forbids gets the failing clause's ``error`` status (or 404
for an unknown tool, 422 for an input that breaks its schema, 400 otherwise) and changes
nothing; an allowed call moves the state and returns the operation's success status (the 2xx
its OpenAPI document gives, such as 201 or 204; 200 otherwise) with an output that satisfies
the output schema and the ``ensures`` clauses (see ``outputs``). The state is a ``FrozenMap``
snapshot and the history a persistent linked list, so ``fork()`` is O(1). Output values come
from a generator seeded with ``(seed, step index)``: the same seed and calls give the same bytes.

Open-world contracts (initial values unknown) start empty or null here, and the trajectory a
simulator records says so in its ``initial``, so that it verifies as ``valid``.

Imports ``envfactory.contracts`` and ``envfactory.trajectory`` only.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.memo import per_contract
from envfactory.contracts.model import UNKNOWN, Contract, Operation
from envfactory.contracts.semantics import Failure, Machine
from envfactory.contracts.state import initial_state
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as value_to_json
from envfactory.statemachine import installed_solver
from envfactory.statemachine.outputs import OneOfCheck, OutputSolver, OutputSynthesizer, clauses_hold
from envfactory.statemachine.paths import get_path, plain_copy, schema_at, set_path
from envfactory.statemachine.sampling import Sampler, derive_seed
from envfactory.trajectory import Step, Trajectory

STATUS_OK = 200  # an allowed call on an operation that documents no other success status
STATUS_UNKNOWN_TOOL = 404
STATUS_BAD_INPUT = 422
STATUS_FORBIDDEN = 400


@attrs.frozen(slots=True)
class Response:
    """The answer to one call: status, output (None when rejected), error text, and why.

    ``failure`` is the broken check of a rejected call; on an accepted call it is set only when
    the contract itself could not be satisfied (an ensures the simulator could not meet, or an
    invariant the call breaks), which is a bug in the contract.
    """

    status: int
    output: Any = None
    error: str | None = None
    failure: Failure | None = None
    accepted: bool = True

    @property
    def ok(self) -> bool:
        """Accepted with every check passing."""
        return self.accepted and self.failure is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "output": self.output}
        if self.error is not None:
            out["error"] = self.error
        if self.failure is not None:
            out["kind"] = self.failure.kind
            if self.failure.clause_text is not None:
                out["clause"] = self.failure.clause_text
        return out


@attrs.frozen(slots=True)
class _Entry:
    """One node of the persistent history list (newest first)."""

    tool: str
    input: Any
    response: Response
    parent: _Entry | None
    length: int


class _Compiled:
    """Per-contract work done once and shared by every fork: the machine and output plans."""

    def __init__(self, contract: Contract) -> None:
        closed = (
            contract.with_closed_world() if any(not v.known for v in contract.state.values()) else contract
        )
        self.contract = closed
        self.machine = Machine(closed)
        self.outputs = OutputSynthesizer(
            closed.operations, [n for n, v in closed.state.items() if v.collection]
        )
        self.opened = {
            name: value_to_json(var.initial)
            for name, var in closed.state.items()
            if not contract.state[name].known
        }
        self.fresh_keys = {name: _fresh_key_paths(op) for name, op in closed.operations.items()}
        self.producers = frozenset(name for name, op in closed.operations.items() if op.reads_output)
        self.one_of = OneOfCheck()


@per_contract(keep=64)
def _compiled(contract: Contract) -> _Compiled:
    return _Compiled(contract)


class Simulator:
    """A deterministic, stateful stand-in for the API a contract describes."""

    def __init__(
        self,
        contract: Contract,
        *,
        seed: int = 0,
        initial: Mapping[str, Any] | None = None,
        solve_output: OutputSolver | None = None,
        lean: bool = False,
    ) -> None:
        """``solve_output`` answers the ensures no plain equation settles (default: the solver
        installed by the composition root, see ``statemachine.install_solver``); ``lean`` answers
        with the smallest valid outputs (no optional fields: exploring a large document, where
        only the state the calls leave matters)."""
        self.contract = contract
        self.lean = lean
        self._c = _compiled(contract)
        self.solve_output = solve_output if solve_output is not None else installed_solver()
        self.seed = seed
        self._initial: dict[str, Any] | None = None
        self._state: FrozenMap = FrozenMap()
        self._last: _Entry | None = None
        self.reset(seed=seed, initial=initial)

    # -- lifecycle --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, initial: Mapping[str, Any] | None = None) -> FrozenMap:
        """Back to the initial state (``initial`` overrides declared values); returns it."""
        if seed is not None:
            self.seed = seed
        overrides = dict(initial) if initial is not None else None
        if overrides is not None:
            unknown = {k for k, v in overrides.items() if v is UNKNOWN}
            overrides = {k: v for k, v in overrides.items() if k not in unknown}
        self._initial = overrides
        self._state = initial_state(self._c.contract, overrides)
        self._last = None
        return self._state

    def fork(self) -> Simulator:
        """An independent copy that shares every snapshot (O(1))."""
        twin = object.__new__(Simulator)
        twin.contract = self.contract
        twin._c = self._c
        twin.solve_output = self.solve_output
        twin.lean = self.lean
        twin.seed = self.seed
        twin._initial = self._initial
        twin._state = self._state
        twin._last = self._last
        return twin

    def forget(self, keep: int) -> int:
        """Drop all but the newest ``keep`` calls from the history and return how many went: the
        state and step count (so the output seeds) stay, and ``trajectory()`` starts from the
        state before the first kept call, so it still verifies. Bounds a long-lived session."""
        entries = list(self._entries())  # newest first
        if len(entries) <= keep:
            return 0
        state = initial_state(self._c.contract, self._initial)
        for entry in reversed(entries[keep:]):
            if entry.response.accepted:
                op = self._c.contract.operations[entry.tool]
                state = self._c.machine.apply(state, op, entry.input, entry.response.output)
        self._initial = {name: value_to_json(value) for name, value in state.items()}
        node = None
        for entry in reversed(entries[:keep]):
            node = _Entry(entry.tool, entry.input, entry.response, node, entry.length)
        self._last = node
        return len(entries) - keep

    # -- reading ----------------------------------------------------------------------------------

    @property
    def state(self) -> FrozenMap:
        """The current state snapshot (never changed in place)."""
        return self._state

    @property
    def machine(self) -> Machine:
        return self._c.machine

    @property
    def steps(self) -> int:
        return self._last.length if self._last is not None else 0

    @property
    def history(self) -> list[tuple[str, Any, Response]]:
        """Every call so far, oldest first, as (tool, input, response)."""
        return [(e.tool, e.input, e.response) for e in reversed(list(self._entries()))]

    def _entries(self) -> Iterator[_Entry]:
        node = self._last
        while node is not None:
            yield node
            node = node.parent

    def state_json(self) -> dict[str, Any]:
        return {name: value_to_json(self._state[name]) for name in sorted(self._state)}

    # -- calling ----------------------------------------------------------------------------------

    def call(self, tool: str, input: Any) -> Response:
        """Run one call: check it, move the state if allowed, and return the response."""
        value = plain_copy(input)
        response, post = self._run(tool, value, self._state, self.steps)
        self._state = post
        self._last = _Entry(tool, value, response, self._last, self.steps + 1)
        return response

    def peek(self, tool: str, input: Any) -> tuple[Response, FrozenMap]:
        """What ``call`` would answer and the state it would leave, without recording anything."""
        return self._run(tool, plain_copy(input), self._state, self.steps)

    def enabled(self, tool: str, input: Any) -> bool:
        """Whether the contract allows this call now (tool, input schema and requires)."""
        op = self._c.contract.operations.get(tool)
        if op is None:
            return False
        if op.input_validator is not None and not op.input_validator.is_valid(input):
            return False
        return clauses_hold(op.requires, self._state, input)

    def _run(self, tool: str, value: Any, pre: FrozenMap, index: int) -> tuple[Response, FrozenMap]:
        machine = self._c.machine
        failure = machine.check_tool(tool)
        if failure is not None:
            return _reject(STATUS_UNKNOWN_TOOL, failure), pre
        op = self._c.contract.operations[tool]
        failure = machine.check_input(op, value)
        if failure is not None:
            return _reject(STATUS_BAD_INPUT, failure), pre
        failure = machine.check_requires(pre, op, value)
        if failure is not None:
            return _reject(failure.error_status or STATUS_FORBIDDEN, failure), pre
        sampler = Sampler(random.Random(derive_seed(self.seed, index, tool)), exclusive=self._c.one_of)
        sampler.lean = self.lean
        try:
            output, post = self._execute(op, value, pre, sampler)
        except EvaluationError:
            failure = machine.effect_failure(pre, op, value, None)
            return _reject(STATUS_FORBIDDEN, failure), pre
        problem = (
            machine.check_output(op, output)
            or machine.check_ensures(post, op, value, output)
            or self.invariant_failure(op, pre, post, value, output)
        )
        return Response(op.success_status, plain_copy(output), None, problem, True), post

    def invariant_failure(
        self, op: Operation, pre: FrozenMap, post: FrozenMap, value: Any, output: Any
    ) -> Failure | None:
        """The invariant an accepted call broke, if any: here every invariant over the whole
        ``post``; a subclass may re-check only what the call wrote (the server does)."""
        return self._c.machine.check_invariants(post)

    def _execute(self, op: Operation, value: Any, pre: FrozenMap, sampler: Sampler) -> tuple[Any, FrozenMap]:
        synth = self._c.outputs
        machine = self._c.machine
        if op.name not in self._c.producers:
            post = machine.apply(pre, op, value)
            return synth.output(op, post, value, sampler, pre=pre, solve=self.solve_output), post
        # A producer: the output (say, a new id) feeds the effects. Draw it, keep its keys fresh,
        # apply, then let ensures fix what they pin on the post-state, and re-apply if that moved.
        output = synth.output(op, pre, value, sampler, solve=self.solve_output)
        output = _freshen(output, self._c.fresh_keys[op.name], pre, sampler, op.output_schema)
        post = machine.apply(pre, op, value, output)
        for _ in range(2):
            again = synth.output(op, post, value, sampler, base=output, solve=self.solve_output)
            if again == output:
                break
            output = again
            post = machine.apply(pre, op, value, output)
        return output, post

    # -- recording --------------------------------------------------------------------------------

    def trajectory(
        self, id: str = "sim", *, accepted_only: bool = False, meta: Mapping[str, Any] | None = None
    ) -> Trajectory:
        """The calls so far as a trajectory (rejected calls keep their status, no output)."""
        steps = []
        for tool, input, response in self.history:
            if not response.accepted:
                if accepted_only:
                    continue
                steps.append(Step(tool, plain_copy(input), None, response.status, False))
            else:
                steps.append(
                    Step(tool, plain_copy(input), plain_copy(response.output), response.status, True)
                )
        initial: dict[str, Any] | None = None
        if self._c.opened or self._initial:
            initial = {**self._c.opened, **{k: value_to_json(v) for k, v in (self._initial or {}).items()}}
        return Trajectory(
            id=id,
            steps=tuple(steps),
            contract=os.path.basename(self.contract.path) if self.contract.path else None,
            seed=self.seed,
            initial=initial,
            meta=dict(meta) if meta is not None else None,
        )


def _reject(status: int, failure: Failure) -> Response:
    message = failure.message
    if failure.clause is not None and failure.clause.error is not None and failure.clause.error.message:
        message = failure.clause.error.message
    return Response(status, None, message, failure, False)


def _fresh_key_paths(op: Operation) -> list[tuple[str, tuple[str, ...]]]:
    """(collection, output path) for every effect ``c[output.f...] = ...`` of a producer."""
    found = []
    for effect in op.effects:
        key = effect.target.key
        if key is None or effect.value is None:
            continue
        path = ir.field_path(key, "output")
        if path:
            found.append((effect.target.var, path))
    return found


def _freshen(
    output: Any,
    paths: list[tuple[str, tuple[str, ...]]],
    state: FrozenMap,
    sampler: Sampler,
    schema: Any,
) -> Any:
    """The producer's output with every key it creates present and not yet in its collection.

    A key the output schema leaves optional is still drawn when the sample left it out: a server
    that creates a resource names it, and an absent key would file the record under ``null``.
    """
    for var, path in paths:
        collection = state.get(var)
        if not isinstance(collection, FrozenMap):
            continue
        key = get_path(output, path)
        if key is None and schema is not None:
            drawn = sampler.present(schema_at(schema, path), schema, path[-1])
            if isinstance(drawn, int | str) and not isinstance(drawn, bool):
                key = drawn
                output = set_path(output, path, key)
        if key is None or key not in collection:
            continue
        ints = [k for k in collection if isinstance(k, int) and not isinstance(k, bool)]
        if isinstance(key, int) and not isinstance(key, bool):
            fresh: Any = max(ints, default=0) + 1
        else:
            fresh = f"{key}-{sampler.rng.getrandbits(32):08x}"
        output = set_path(output, path, fresh)
    return output


__all__ = ["Response", "Simulator"]
