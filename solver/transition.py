"""The one-step transition relation of a contract in Z3: the engine under ``plan``, ``prove``, the graph.

``Transition`` builds, for one operation, the guard (every ``requires``), the effects
(simultaneous, evaluated on the pre-state; a write of a new key into a full collection is not a
transition), the ``ensures`` on the output and the schema constraints on input and output, over
the symbolic states of ``solver.states``. It is the feasibility engine's core read fully
symbolically: the values of ``solver.symbolic``, the IR encoder of ``solver.encode``, the
effect writer of ``solver.effects``; the post-state is a fresh state equal to what the effects
wrote (so a step has the same shape whatever the operation). Strings are read abstractly
(``symbolic.Atom``: identities compared for equality, ordered and measured through
``solver.measures``) where the contract does nothing else with them, as Z3 strings otherwise: a dry run of every clause and effect decides, per contract.
``state_predicate`` parses a user's goal or invariant. Models are read back by ``read``.

Imports the contracts layer, Z3 and these solver modules only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import z3

from envfactory.contracts import ir
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Clause, Contract, Operation
from envfactory.solver.affixes import Affixes
from envfactory.solver.effects import apply_effects
from envfactory.solver.encode import Encoder, SymEnv, holds
from envfactory.solver.schema import LIST_ITEMS, atom_texts
from envfactory.solver.states import (
    StepVars,
    SymState,
    formula,
    fresh_state,
    initial_constraint,
    step_vars,
)
from envfactory.solver.symbolic import NULL, Map, NeedStrings, SVal, Term, and_, eq, not_, or_
from envfactory.solver.symbolic import read as read_value


class Transition:
    """The contract's one-step relation, built from the IR of its clauses and effects.

    ``abstract`` picks the reading of strings: ``None`` tries the abstract one on every clause,
    effect and ``extra`` expression (goals, predicates), and takes Z3 strings when something does
    more with a string than compare it.
    """

    def __init__(
        self,
        contract: Contract,
        *,
        extra: Sequence[Clause | ir.Expr] = (),
        list_items: int = LIST_ITEMS,
        abstract: bool | None = None,
        unread_outputs: bool = True,
    ) -> None:
        self.contract = contract
        self.list_items = list_items
        self.unread = _unread_fields(contract, extra)
        """Field names no clause, effect or ``extra`` expression names: lists there stay whole."""
        self.unread_outputs = False  # the dry run needs none
        self.encoder = Encoder()
        self.texts = frozenset[str]()
        """The strings the contract writes: the only literals its measures of strings look up."""
        self._own(_texts(contract, extra))
        self.atoms: list[tuple[Term, Any]] | None = []
        """The abstract strings' identities made so far, with their schemas; None in the string
        reading."""
        self._frames: dict[tuple[int, int], tuple[SVal, SVal, Term]] = {}
        self.bounded: set[int] = set()
        """Capacities of the lists of unknown length in states and calls made so far (a list of
        unknown length has at most that many items: the relation is bounded there, as in the
        number of collection slots)."""
        self.dropped: dict[str, str] = {}
        """Output constraints left out of ``step`` (``"op: clause"`` -> why): outside the fragment,
        so the relation over-approximates the contract (more behaviours: a proof still holds, and
        a path found is replayed concretely before it is believed)."""
        if abstract is None:
            self.encoder.affixes = Affixes()  # collects the literal prefixes and suffixes tested
            abstract = self._abstract_fits(extra)
            affixes = self.encoder.affixes.frozen()
            measured = self.encoder.lengths.used
            self.encoder, self.bounded, self.dropped = Encoder(), set(), {}
            self.encoder.affixes = affixes
            self.encoder.lengths.used = measured  # inputs are read before the clauses measure them
            self._own(self.texts)
        self.atoms = [] if abstract else None
        self.unread_outputs = unread_outputs
        """Whether calls get the outputs nothing reads (to read a plan's responses back)."""

    def _own(self, texts: frozenset[str]) -> None:
        """Add ``texts`` to the strings the encoder's measures look up as literals."""
        self.texts = self.texts | texts
        self.encoder.ranks.texts = self.encoder.lengths.texts = self.texts

    def _abstract_fits(self, extra: Sequence[Clause | ir.Expr]) -> bool:
        """Whether every clause and effect only compares strings (a dry run in the abstract
        reading; it also gives the contract's literals their identities before any fresh
        string is made, so that a schema's length or pattern can exclude the ones that do
        not fit)."""
        try:
            pre, post = self.fresh_state("dry0", 1), self.fresh_state("dry1", 1)
        except NeedStrings:
            return False
        except SolverError:
            return True  # the state itself is outside the fragment: the callers say so
        for op in self.contract.operations.values():
            try:
                self.step(op, pre, post, self.step_vars(op, "dry"))
            except NeedStrings:
                return False
            except SolverError:
                continue
        for clause in [*self.contract.invariants, *self.contract.goals.values(), *extra]:
            try:
                self.clause(clause, pre)
            except NeedStrings:
                return False
            except SolverError:
                continue
        return True

    def fresh_state(self, tag: str, slots: int | Mapping[str, int]) -> SymState:
        return fresh_state(
            self.contract, self.encoder, tag, slots, self.list_items, self.bounded, self.atoms, self.unread
        )

    def step_vars(self, op: Operation, tag: str) -> StepVars:
        return step_vars(
            op, self.encoder, tag, self.list_items, self.bounded, self.atoms, self.unread_outputs, self.unread
        )

    def reader(self, model: z3.ModelRef, values: Sequence[SVal]) -> Callable[[SVal], Any]:
        """``read`` for ``values`` of ``model``: their abstract strings get texts fitting the
        schemas and the prefix classes of every value of theirs holding the same identity (the
        unrolling's other strings, in operations not chosen or slots not present, are left
        out: one of them may share an identity under a schema no text of it fits)."""
        if not self.atoms:
            return lambda value: read_value(value, model)
        held: set[int] = set()
        for value in values:
            read_value(value, model, None, held)
        atoms = [(t, schema) for t, schema in self.atoms if t.get_id() in held]
        texts = atom_texts(
            model, atoms, self.encoder.affixes, ranks=self.encoder.ranks, lengths=self.encoder.lengths
        )
        return lambda value: read_value(value, model, texts)

    def initial(self, state: SymState, overrides: Mapping[str, Any] | None = None) -> z3.BoolRef:
        if overrides:  # a state given from outside (a trajectory's, a stepping stone): its strings too
            self._own(_strings(overrides))
        return initial_constraint(self.contract, self.encoder, state, overrides)

    def _holds(self, expr: ir.Expr, env: SymEnv) -> Term:
        return holds(self.encoder.encode(expr, env))

    def clause(
        self, clause: Clause | ir.Expr, state: SymState, io: StepVars | None = None, post: bool = False
    ) -> z3.BoolRef:
        expr = clause.expr if isinstance(clause, Clause) else clause
        output = io.output if io is not None and post and io.output is not None else NULL
        env = SymEnv(state.values, io.input if io is not None else NULL, output)
        return formula(self._holds(expr, env))

    def invariants(self, state: SymState, clauses: Sequence[Clause | ir.Expr] | None = None) -> z3.BoolRef:
        chosen = self.contract.invariants if clauses is None else clauses
        return formula(and_(*(self.clause(c, state) for c in chosen)))

    def guard(self, op: Operation, pre: SymState, io: StepVars) -> z3.BoolRef:
        return formula(and_(*(self.clause(c, pre, io) for c in op.requires)))

    def step(self, op: Operation, pre: SymState, post: SymState, io: StepVars) -> z3.BoolRef:
        """The call is accepted in ``pre`` and leads to ``post``: schemas, requires, effects
        (defined, within capacity), ensures. Invariants are the caller's business."""
        guard = self.guard(op, pre, io)
        output = io.output if io.output is not None else NULL
        written, report = apply_effects(self.encoder, op.effects, pre.values, io.input, output)
        defined = and_(*(ok for _, ok in report))
        frame = and_(*(self._frame(written[name], post.values[name]) for name in self.contract.state))
        env = SymEnv(post.values, io.input, output)
        ensures = and_(*(self._ensures(op, c, env) for c in op.ensures))
        return formula(and_(io.constraints, guard, defined, frame, ensures))

    def _frame(self, written: SVal, post: SVal) -> Term:
        """``post`` is what the effects wrote: slot by slot for a bounded collection (whose
        writes had room), as values otherwise. A variable no effect writes is the pre-state's
        own value, the same for every operation: its frame is made once per pair of states."""
        key = (id(written), id(post))
        hit = self._frames.get(key)
        if hit is not None and hit[0] is written and hit[1] is post:
            return hit[2]
        term = self._frame1(written, post)
        self._frames[key] = (written, post, term)
        return term

    def _frame1(self, written: SVal, post: SVal) -> Term:
        if isinstance(written, Map) and isinstance(post, Map) and len(written.slots) == len(post.slots):
            parts: list[Term] = [not_(written.full)]
            for a, b in zip(written.slots, post.slots, strict=True):
                parts.append(eq(a.present, b.present))
                parts.append(
                    or_(not_(b.present), and_(eq(a.key, b.key), self.encoder.equal(a.value, b.value)))
                )
            return and_(*parts)
        return self.encoder.equal(written, post)

    def _ensures(self, op: Operation, clause: Clause, env: SymEnv) -> Term:
        """One ensures clause; one about the output that cannot be encoded is dropped (noted)."""
        try:
            return self._holds(clause.expr, env)
        except NeedStrings:
            raise
        except SolverError as err:
            if "output" not in ir.free_names(clause.expr):
                raise
            self.dropped.setdefault(f"{op.name}: {clause.source}", err.message)
            return True


def _expressions(contract: Contract, extra: Sequence[Clause | ir.Expr]) -> Iterator[ir.Expr]:
    """Every node of every expression of the contract (clauses, effects) and of ``extra``."""
    exprs: list[ir.Expr] = [c.expr if isinstance(c, Clause) else c for c in extra]
    exprs += [clause.expr for _, clause in contract.clauses()]
    for op in contract.operations.values():
        for effect in op.effects:
            exprs += [e for e in (effect.target.key, effect.value) if e is not None]
    for expr in exprs:
        yield from ir.walk(expr)


def _schema_nodes(contract: Contract) -> Iterator[Any]:
    """Every mapping and list inside the contract's schemas (state, inputs, outputs), once."""
    seen: set[int] = set()
    stack: list[Any] = [v.schema for v in contract.state.values()]
    for op in contract.operations.values():
        stack += [op.input_schema, op.output_schema]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, Mapping | list):
            continue
        seen.add(id(node))
        yield node
        stack.extend(node.values() if isinstance(node, Mapping) else node)


def _unread_fields(contract: Contract, extra: Sequence[Clause | ir.Expr]) -> frozenset[str]:
    """The field names of the contract's schemas that no expression of it (nor ``extra``) names:
    by attribute, by a constant index, or as an effect's target field."""
    named: set[str] = set()
    for op in contract.operations.values():
        for effect in op.effects:
            named.update(effect.target.fields)
    for node in _expressions(contract, extra):
        if isinstance(node, ir.Attr):
            named.add(node.name)
        elif isinstance(node, ir.Index) and isinstance(node.key, ir.Const):
            named.add(str(node.key.value))
    return frozenset(_field_names(contract)) - named


def _field_names(contract: Contract) -> set[str]:
    """Every property name the contract's schemas declare (state, inputs, outputs)."""
    names: set[str] = set()
    for node in _schema_nodes(contract):
        props = node.get("properties") if isinstance(node, Mapping) else None
        if isinstance(props, Mapping):
            names.update(str(k) for k in props)
    return names


def _texts(contract: Contract, extra: Sequence[Clause | ir.Expr]) -> frozenset[str]:
    """The strings the contract itself writes: in its expressions, its schemas' ``enum`` and
    ``const``, and its initial state. Another contract's literals, registered in the same
    process, are just strings to this one."""
    found: set[str] = set()
    for node in _expressions(contract, extra):
        if isinstance(node, ir.Const) and isinstance(node.value, str):
            found.add(node.value)
    for node in _schema_nodes(contract):
        if isinstance(node, Mapping):
            found.update(v for v in [*(node.get("enum") or ()), node.get("const")] if isinstance(v, str))
    return frozenset(found) | _strings([v.initial for v in contract.state.values()])


def _strings(value: Any) -> frozenset[str]:
    """Every string inside a JSON-like value, keys included."""
    found: set[str] = set()
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, Mapping):
            stack.extend([*value.keys(), *value.values()])
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return frozenset(found)


def state_predicate(contract: Contract, text: str, kind: str = "goal") -> Clause:
    """A user's goal or invariant expression over the state, parsed and type-checked like the
    contract's own (an ``ExpressionError`` with the column on bad input)."""
    from envfactory.contracts.errors import Location
    from envfactory.contracts.parser import parse_expr
    from envfactory.contracts.typecheck import TypeChecker

    loc = Location(f"<{kind}>", 1, 1)
    expr = parse_expr(text, loc)
    TypeChecker(contract.state_types(), context=kind).check_bool(expr)
    return Clause(expr, " ".join(text.split()), loc, kind)


__all__ = [
    "Transition",
    "state_predicate",
]
