"""The Contract model: what every way in (native, OpenAPI, tool lists) produces.

Frozen attrs values. Compiled artefacts (clause closures, schema validators) ride along as
fields excluded from equality, built once by the loader so that every user shares them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts import types as T
from envfactory.contracts.errors import Location
from envfactory.contracts.evaluator import Compiled, compile_expr
from envfactory.contracts.parser import Effect

CLAUSE_KINDS = ("requires", "ensures", "invariant", "goal")


class _Unknown:
    """The value of a state variable whose initial value is not known (open world)."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


@attrs.frozen(slots=True)
class ErrorSpec:
    """The response a forbidden call gets: an HTTP-like status and a message."""

    status: int
    message: str | None = None


@attrs.frozen(slots=True)
class Clause:
    """One ``requires``/``ensures``/invariant/goal: the IR, the text as written, where it stands."""

    expr: ir.Expr
    source: str
    loc: Location
    kind: str
    name: str | None = None
    error: ErrorSpec | None = None
    inferred: bool = False
    fn: Compiled = attrs.field(eq=False, repr=False, default=None)

    def __attrs_post_init__(self) -> None:
        if self.fn is None:
            object.__setattr__(self, "fn", compile_expr(self.expr))

    def describe(self) -> str:
        mark = " (inferred)" if self.inferred else ""
        return f"{self.source}{mark}"


@attrs.frozen(slots=True)
class StateVar:
    """A state variable: a scalar, or a collection mapping keys to records."""

    name: str
    type: T.Type
    schema: Mapping[str, Any]
    initial: Any
    loc: Location
    collection: bool = False
    key_type: T.Type | None = None
    key_schema: Mapping[str, Any] | None = None
    inferred: bool = False

    @property
    def known(self) -> bool:
        return self.initial is not UNKNOWN


@attrs.frozen(slots=True)
class HttpBinding:
    """How an operation is reached over HTTP (OpenAPI contracts): method, path and parameters."""

    method: str
    path: str
    path_params: tuple[str, ...] = ()
    query_params: tuple[str, ...] = ()
    header_params: tuple[str, ...] = ()
    body: str | None = None  # None: no body; "*": input fields are the body's properties; else the field name
    body_fields: tuple[str, ...] = ()
    # the documented success response: the status a server answers an allowed call with, whether
    # that response carries a JSON body (not for 204 or a response without ``content``), and every
    # 2xx the document lists for the operation
    success_status: int = 200
    success_body: bool = True
    success_statuses: tuple[int, ...] = (200,)
    # the request body's media type (JSON, application/x-www-form-urlencoded or multipart/form-data)
    # and each parameter's and form field's OpenAPI serialization: (field, style, explode)
    media: str = "application/json"
    styles: tuple[tuple[str, str, bool], ...] = ()


Validator = Any  # envfactory.contracts._validate.SchemaValidator (kept loose to avoid an import cycle)


@attrs.frozen(slots=True)
class Operation:
    """One tool or API operation with its schemas and clauses."""

    name: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    input_type: T.Type
    output_type: T.Type
    requires: tuple[Clause, ...] = ()
    effects: tuple[Effect, ...] = ()
    ensures: tuple[Clause, ...] = ()
    loc: Location = Location("<contract>")
    description: str | None = None
    errors: Mapping[int, str] = attrs.field(factory=dict)
    http: HttpBinding | None = None
    inferred_effects: bool = False
    input_validator: Validator = attrs.field(eq=False, repr=False, default=None)
    output_validator: Validator = attrs.field(eq=False, repr=False, default=None)

    @functools.cached_property
    def reads_output(self) -> bool:
        """Whether effects depend on the response (a producer whose id comes back); kept, since
        the fuzzer's model asks it on every call it judges."""
        for effect in self.effects:
            parts = [p for p in (effect.value, effect.target.key) if p is not None]
            if any("output" in ir.free_names(p) for p in parts):
                return True
        return False

    @property
    def writes(self) -> frozenset[str]:
        return frozenset(e.target.var for e in self.effects)

    @property
    def success_status(self) -> int:
        """The status an allowed call is answered with: the documented 2xx (OpenAPI), else 200."""
        return self.http.success_status if self.http is not None else 200

    @property
    def success_body(self) -> bool:
        """Whether that answer carries a JSON body (no for 204 or a response without content)."""
        return self.http.success_body if self.http is not None else True

    @property
    def success_statuses(self) -> tuple[int, ...]:
        """Every 2xx status the specification documents for the operation (200 for native ones)."""
        return self.http.success_statuses if self.http is not None else (200,)


@attrs.frozen(slots=True)
class Contract:
    """A loaded, type-checked contract."""

    title: str
    version: str
    path: str
    kind: str
    state: Mapping[str, StateVar]
    operations: Mapping[str, Operation]
    invariants: tuple[Clause, ...] = ()
    goals: Mapping[str, Clause] = attrs.field(factory=dict)
    schemas: Mapping[str, Any] = attrs.field(factory=dict)
    open_world: bool = False
    description: str | None = None
    # defects the loader read past (kind, message, where): reported as warning findings
    load_defects: tuple[tuple[str, str, Location], ...] = ()

    def operation(self, name: str) -> Operation | None:
        return self.operations.get(name)

    def state_types(self) -> dict[str, T.Type]:
        return {name: var.type for name, var in self.state.items()}

    def collections(self) -> frozenset[str]:
        """The state variables that are collections (keyed records), by name."""
        return frozenset(name for name, var in self.state.items() if var.collection)

    def clauses(self) -> Iterator[tuple[str | None, Clause]]:
        """Every clause with the operation it belongs to: each operation's ``requires`` and
        ``ensures``, then the invariants and goals (``None``)."""
        for name, op in self.operations.items():
            for clause in (*op.requires, *op.ensures):
                yield name, clause
        for clause in (*self.invariants, *self.goals.values()):
            yield None, clause

    def with_closed_world(self) -> Contract:
        """The same contract with every unknown initial value made known (empty or null)."""
        state = {
            name: attrs.evolve(var, initial=_closed_initial(var)) if not var.known else var
            for name, var in self.state.items()
        }
        return attrs.evolve(self, state=state, open_world=False)


def _closed_initial(var: StateVar) -> Any:
    if var.collection:
        return {}
    return None


ClauseFactory = Callable[..., Clause]
