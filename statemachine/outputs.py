"""Responses made to satisfy an operation's ``ensures``: the one output synthesizer.

The simulator answers every accepted call with an output, and so do ``serve``, ``generate``, the
gym environment and the fuzzer's agent target, all through a ``Simulator``. Fields that
``ensures`` pins down (``output.id == input.id``, ``output == pets[input.petId]``,
``output.books == values(books)``) are computed from the post-state; the rest are drawn from the
output schema (``sampling``) and echo the input and the stored records where the schema admits
it. Where an ensures clause is not a plain equation, the *output solver* is asked: a function
given to the simulator (``OutputSolver``), made by the solver layer over the one symbolic core
(``envfactory.solver.outputs``) and installed by the package's composition root, so that this
layer never imports the solver.

Imports from ``envfactory.contracts`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts._validate import SchemaValidator
from envfactory.contracts.errors import ContractError, EvaluationError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.model import Clause, Operation
from envfactory.contracts.values import FrozenMap
from envfactory.statemachine.keys import key_uses
from envfactory.statemachine.paths import Path, deref, get_path, plain_copy, schema_at, set_path
from envfactory.statemachine.sampling import ATTEMPTS, Sampler

OutputSolver = Callable[[Operation, Sequence[ir.Expr], FrozenMap, Any, Any], Any]
"""``solve(op, exprs, state, input, current)``: an output on which ``exprs`` (and the output
schema) hold after ``op`` ran into ``state`` on ``input``, close to ``current``; None when none."""


class _Plan:
    """What ``ensures`` fixes for one operation: (path, compiled right side) pairs, outermost first."""

    __slots__ = ("assign", "rest", "root")

    def __init__(self, op: Operation) -> None:
        self.root = op.output_schema
        assign: list[tuple[Path, Callable[[Env], Any]]] = []
        rest: list[ir.Expr] = []
        for clause in op.ensures:
            for part in ir.conjuncts(clause.expr):
                pair = ir.pinned_output(part)
                if pair is None:
                    rest.append(part)
                else:
                    assign.append((pair[0], compile_expr(pair[1])))
        assign.sort(key=lambda item: len(item[0]))
        self.assign = assign
        self.rest = rest


class OutputSynthesizer:
    """Builds an operation's output: schema sample, then the fields ``ensures`` pins, then Z3."""

    def __init__(self, operations: Mapping[str, Operation], collections: Sequence[str] = ()) -> None:
        self._plans = {name: _Plan(op) for name, op in operations.items()}
        self._needed = {name: output_reads(op) for name, op in operations.items()}
        self._collections = tuple(collections)
        names = frozenset(collections)
        self._reads = {
            name: [u for u in key_uses(op, names) if u.fresh is not True] for name, op in operations.items()
        }
        self._writes = {
            name: [
                (e.target.var, compile_expr(e.target.key))
                for e in sorted(op.effects, key=lambda e: len(e.target.fields))
                if e.target.key is not None
                and e.value is not None
                and "output" not in ir.free_names(e.target.key)
            ]
            for name, op in operations.items()
        }

    def output(
        self,
        op: Operation,
        state: FrozenMap,
        input: Any,
        sampler: Sampler,
        base: Any = None,
        pre: FrozenMap | None = None,
        solve: OutputSolver | None = None,
    ) -> Any:
        """An output for ``op`` after it ran into ``state`` (the post-state) on ``input``.

        ``base`` replaces the schema sample (used by producers whose output was drawn before the
        effects); ``pre``, the pre-state, lets the record an effect wrote be echoed; ``solve`` is
        asked where ``ensures`` still fails. The caller re-checks the result.
        """
        plan = self._plans[op.name]
        value = base
        if value is None and op.output_schema is not None:
            value = _echo_input(op, _valid_sample(op, sampler), input)
            # what the effects and ensures read is drawn present first; echoing the state then
            # shows the stored records there (an inferred list clause reads ``output.entries``)
            value = _present(op, value, self._needed[op.name], sampler)
            value = self._echo_state(op, value, state, input, pre)
        env = Env(state, input)
        for path, fn in plan.assign:
            try:
                value = set_path(value, path, plain_copy(fn(env)))
            except EvaluationError:
                continue
        if op.ensures and solve is not None and not clauses_hold(op.ensures, state, input, value):
            # every clause, the pinned equations too: given only the rest, the solver was free to
            # move a pinned field to meet them (the auction's ``available == funds - held`` kept
            # the drawn ``available`` and moved ``funds`` off the account's)
            solved = solve(op, [c.expr for c in op.ensures], state, input, value)
            if solved is None and plan.assign and plan.rest:
                solved = solve(op, plan.rest, state, input, value)  # a pinned side outside Z3's fragment
            if solved is not None:
                value = solved
        return value

    def _records(self, op: Operation, state: FrozenMap, input: Any, pre: FrozenMap | None) -> Iterator[Any]:
        """The records the call wrote (keys evaluated on the pre-state), then those it read."""
        if pre is not None:
            env = Env(pre, input)
            for var, key_fn in self._writes[op.name]:
                collection = state.get(var)
                try:
                    key = key_fn(env)
                    if isinstance(collection, FrozenMap):
                        yield collection.get(key)
                except (EvaluationError, TypeError):
                    continue
        for use in self._reads[op.name]:
            collection = state.get(use.collection)
            if isinstance(collection, FrozenMap):
                try:
                    yield collection.get(get_path(input, use.path))
                except TypeError:
                    continue

    def _echo_state(
        self, op: Operation, value: Any, state: FrozenMap, input: Any, pre: FrozenMap | None
    ) -> Any:
        """What the API holds, where the schema admits it: the record the call wrote or the
        input's key names (``GET /pets/{id}`` answers with that pet), or a collection's records
        for a list."""
        validator = op.output_validator
        if isinstance(value, dict):
            for record in self._records(op, state, input, pre):
                if isinstance(record, dict):
                    props = _properties(op.output_schema)
                    shown = {k: plain_copy(v) for k, v in record.items() if props is None or k in props}
                    if not shown:
                        continue
                    for candidate in (shown, {**value, **shown}):
                        if validator is None or validator.is_valid(candidate):
                            return candidate
            return self._listed(op, value, state, input)
        elif isinstance(value, list):
            # the collection the ensures speak of (an inferred lister's), else the first that fits
            fitting = []
            for name in self._collections:
                collection = state.get(name)
                if isinstance(collection, FrozenMap):
                    items = [plain_copy(v) for v in collection.values()]
                    if validator is None or validator.is_valid(items):
                        if clauses_hold(op.ensures, state, input, items):
                            return items
                        fitting.append(items)
            if fitting:
                return fitting[0]
        return value

    def _listed(self, op: Operation, value: dict[str, Any], state: FrozenMap, input: Any) -> Any:
        """A list property the ``ensures`` speak of (an inferred lister's ``output.entries``)
        shows a collection's records, or none, where the drawn one breaks them."""
        if clauses_hold(op.ensures, state, input, value):
            return value
        validator = op.output_validator
        shown = [
            [plain_copy(v) for v in collection.values()]
            for name in self._collections
            if isinstance(collection := state.get(name), FrozenMap)
        ]
        for field, current in value.items():
            if not isinstance(current, list):
                continue
            for items in [*shown, []]:
                candidate = {**value, field: items}
                if (validator is None or validator.is_valid(candidate)) and clauses_hold(
                    op.ensures, state, input, candidate
                ):
                    return candidate
        return value


def _properties(schema: Any) -> frozenset[str] | None:
    """The property names an object schema declares (None when it declares none)."""
    node = deref(schema, schema)
    props = node.get("properties") if isinstance(node, Mapping) else None
    return frozenset(props) if isinstance(props, Mapping) and props else None


def _valid_sample(op: Operation, sampler: Sampler) -> Any:
    schema = op.output_schema
    validator = op.output_validator
    value = sampler.value(schema, schema)
    for _ in range(ATTEMPTS):
        if validator is None or validator.is_valid(value):
            return value
        value = sampler.value(schema, schema)
    return value


def output_reads(op: Operation) -> tuple[Path, ...]:
    """The output fields ``op``'s effects and ensures read (each with the records above it),
    shortest first: what an answer must hold, not null, for the effects to be defined (the key
    of a created record and the record) and the ensures to be decidable."""
    found: set[Path] = set()
    exprs = [c.expr for c in op.ensures]
    for effect in op.effects:
        exprs.extend(e for e in (effect.target.key, effect.value) if e is not None)
    for expr in exprs:
        for node in ir.walk(expr):
            path = ir.field_path(node, "output")
            if path is not None:
                found.add(path)
    return tuple(sorted(found, key=lambda p: (len(p), p)))


def _present(op: Operation, value: Any, paths: Sequence[Path], sampler: Sampler) -> Any:
    """``value`` with every path in ``paths`` present and not null: each missing or null one
    drawn (not null) from the output schema, a whole record where a record is missing, so that
    its required fields come with it (DigitalOcean wraps a created record in a field it leaves
    optional; Twilio writes every field nullable, the created record's ``sid`` too)."""
    schema = op.output_schema
    if schema is None or all(get_path(value, p) is not None for p in paths):
        return value
    validator = op.output_validator
    filled = value
    for _ in range(ATTEMPTS):
        filled = value
        for path in paths:
            if get_path(filled, path) is not None:
                continue
            if path and not isinstance(get_path(filled, path[:-1]), Mapping):
                continue  # a record drawn as something else (a string id for an expandable one)
            name = path[-1] if path else None
            filled = set_path(filled, path, sampler.present(schema_at(schema, path), schema, name))
        if validator is None or validator.is_valid(filled):
            break
    return filled


def _echo_input(op: Operation, value: Any, input: Any) -> Any:
    """Free output fields named like input fields take the input's value (an API echoes what it
    was given: the title of the ticket just created), where the schema admits it."""
    if not (isinstance(value, dict) and isinstance(input, Mapping)):
        return value
    shared = [k for k in value if k in input]
    if not shared:
        return value
    echoed = {**value, **{k: plain_copy(input[k]) for k in shared}}
    validator = op.output_validator
    return echoed if validator is None or validator.is_valid(echoed) else value


class OneOfCheck:
    """``Exclusive`` for the sampler: each ``oneOf`` of a contract's output schemas compiled once
    into a validator of its own (with the definitions it reaches), asked whether a drawn value
    matches exactly one branch. Whole-output re-draws cannot fix an overlap that every draw of a
    branch has (OpenAI's open transcription objects: a verbose answer is a plain one too)."""

    def __init__(self) -> None:
        self._compiled: dict[int, tuple[list[Any], SchemaValidator | None]] = {}

    def __call__(self, branches: list[Any], root: Any, value: Any) -> bool:
        hit = self._compiled.get(id(branches))
        if hit is None or hit[0] is not branches:
            defs = {k: root[k] for k in ("$defs", "definitions") if isinstance(root, Mapping) and k in root}
            try:
                validator: SchemaValidator | None = SchemaValidator({"oneOf": branches, **defs})
            except ContractError:
                validator = None  # a reference this piece cannot resolve: the whole output decides
            hit = self._compiled[id(branches)] = (branches, validator)
        return hit[1] is None or hit[1].is_valid(value)


def clauses_hold(clauses: Sequence[Clause], state: FrozenMap, input: Any, output: Any = None) -> bool:
    """Whether every clause is true here; one the evaluator cannot evaluate (a missing key, a
    wrong type) does not hold."""
    env = Env(state, input, output)
    for clause in clauses:
        try:
            if clause.fn(env) is not True:
                return False
        except EvaluationError:
            return False
    return True


__all__ = ["OneOfCheck", "OutputSolver", "OutputSynthesizer", "clauses_hold", "output_reads"]
