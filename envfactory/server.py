"""The stateful mock HTTP server: a contract's simulator behind a real ASGI app.

Native contracts answer ``POST /{operation}`` with the input as the JSON body; OpenAPI contracts
answer on their own paths and methods (path, query, header and body parameters gathered into the
operation's input). An allowed call gets the operation's success status (200, or the 2xx its
OpenAPI document gives, such as 201) and the output as JSON, or no body at all where the document
gives none (204); a forbidden one the failing clause's status and ``{"error", "clause",
"kind"}``; an unknown operation 404; a body that is not JSON, too large or too deep 400/413; a
schema-invalid input 422.

State is per session (header ``X-Envfactory-Session``; one default session without it), each
session a ``Simulator`` behind its own ``asyncio.Lock`` so that concurrent calls never lose an
update. ``GET /_state``, ``POST /_reset`` (also ``/_envfactory/reset``, where fuzz targets ask) and ``GET /_trajectory`` (the session's calls as a
trajectory file) inspect and reset a session. Hostile clients are bounded: body size and JSON
depth caps here, a read timeout on bodies, a header timeout and a per-address connection limit
(``guarded_protocol``), uvicorn's header size, keep-alive and concurrency limits in ``serve``, and
history and session bounds (``MockServer``). Integers keep their exact value at any size, and
calls re-check invariants only where they wrote, as ``verify`` does (``_Rechecks``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

import orjson
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from envfactory._fastpath import (
    broken_invariant,
    invariants_of,
    monotone_rechecks,
    moved,
    rechecks,
)
from envfactory.contracts import httpcodec
from envfactory.contracts._validate import SchemaValidator
from envfactory.contracts.errors import EnvfactoryError, EvaluationError, TrajectoryError
from envfactory.contracts.evaluator import Compiled, Env, compile_expr
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.semantics import Failure
from envfactory.contracts.values import FrozenMap
from envfactory.contracts.values import to_json as state_value_to_json
from envfactory.statemachine.simulator import Response as SimResponse
from envfactory.statemachine.simulator import Simulator
from envfactory.trajectory import dumps_trajectory, to_json

SESSION_HEADER = "x-envfactory-session"
DEFAULT_SESSION = "default"
MAX_BODY_BYTES = 1 << 20
MAX_JSON_DEPTH = 64
MAX_SESSIONS = 1024
BODY_TIMEOUT = 10.0
MAX_HEADER_BYTES = 16 << 10
HEADER_TIMEOUT = 10.0  # seconds for a request line and headers to arrive
MAX_CONNECTIONS_PER_CLIENT = 128
MAX_CONNECTIONS = 1000
CALL_OVERHEAD = 256  # bytes a kept call costs beyond its input and output (the entry, the response)
MAX_HISTORY = 10_000  # calls kept per session
MAX_HISTORY_BYTES = 8 << 20  # bytes of inputs and outputs kept per session
MAX_TOTAL_HISTORY_BYTES = 64 << 20  # ... and over all sessions
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))  # digits to "0", the rest " "
_LONG_LITERAL = b"0" * 19  # a literal that may not fit in 64 bits
_LOG = logging.getLogger("envfactory.server")
_SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Rechecks:
    """What a call re-checks of the invariants, decided as ``verify`` decides it
    (``envfactory._fastpath``): per operation, only the invariants reading what it writes, and an
    ``all(body for k in c)`` only at the keys the call wrote, so a call costs the same at 10,000
    records as at none. Sound only on a state known to hold every invariant: the served
    simulator checks whole whenever the state is not the one its last check passed."""

    def __init__(self, contract: Contract) -> None:
        invariants = invariants_of(contract)
        self.plans: dict[str, tuple[Any, tuple[tuple[str, Compiled], ...]]] = {}
        self.monotone: dict[str, tuple[Any, tuple[tuple[str, int], ...]]] = {}
        for name, op in contract.operations.items():
            base = rechecks(invariants, op)
            keys = tuple(
                (e.target.var, compile_expr(e.target.key)) for e in op.effects if e.target.key is not None
            )
            self.plans[name] = (
                SimpleNamespace(invariants=base),
                keys,
            )  # all broken_invariant reads of a Plan
            found = monotone_rechecks(base, op)
            if found is not None:
                self.monotone[name] = (SimpleNamespace(invariants=found[0]), found[1])
        self.whole = 0  # whole re-checks so far (tests count them)

    def plan(self, op: Operation, pre: FrozenMap, post: FrozenMap) -> Any:
        """The re-checks for one call: the per-key plan where the variables it moved moved the
        way its invariants' bodies allow (``monotone_rechecks``), else ``verify``'s."""
        monotone = self.monotone.get(op.name)
        if monotone is not None and all(moved(pre.get(v), post.get(v), sign) for v, sign in monotone[1]):
            return monotone[0]
        return self.plans[op.name][0]


class _ServedSimulator(Simulator):
    """The simulator with ``verify``'s incremental invariant re-checks (see ``_Rechecks``)."""

    def __init__(self, contract: Contract, checks: _Rechecks, **options: Any) -> None:
        self._checks = checks
        self._good: FrozenMap | None = None  # the last state every invariant held on
        super().__init__(contract, **options)

    def invariant_failure(
        self, op: Operation, pre: FrozenMap, post: FrozenMap, value: Any, output: Any
    ) -> Failure | None:
        keys = self._checks.plans[op.name][1]
        if pre is self._good:
            plan = self._checks.plan(op, pre, post)
            try:
                env = Env(pre, value, output)
                keyed = [(var, key(env)) for var, key in keys]
            except EvaluationError:
                keyed = None
            if keyed is not None and broken_invariant(plan, post, keyed, Env(post)) is None:
                self._good = post
                return None
        self._checks.whole += 1
        failure = self.machine.check_invariants(post)
        self._good = post if failure is None else None
        return failure


class _Session:
    """One client's simulator, its lock, and what its kept history costs (bytes per call)."""

    __slots__ = ("dropped", "history_bytes", "lock", "name", "note", "sim", "sizes")

    def __init__(self, name: str, sim: Simulator, note: str | None) -> None:
        self.name = name
        self.sim = sim
        self.lock = asyncio.Lock()
        self.sizes: deque[int] = deque()
        self.history_bytes = 0
        self.dropped = 0
        self.note = note  # why an earlier session of this name is gone, said once in /_state

    def headers(self) -> dict[str, str]:
        out = {
            "x-envfactory-history": f"kept={len(self.sizes)} dropped={self.dropped} bytes={self.history_bytes}"
        }
        if self.note is not None:
            out["x-envfactory-evicted"] = self.note
        return out


class MockServer:
    """The app's state: the contract and its sessions, bounded.

    A session keeps at most ``max_history`` calls and ``max_history_bytes`` of them (inputs and
    outputs as sent); past either, its oldest calls are dropped (down to half) and
    ``/_trajectory`` starts from the state before the first kept call, saying how many went. All
    sessions together keep at most ``max_total_bytes`` of history, and at most ``max_sessions``
    sessions live: past either, the least recently used session is evicted, said in the log and
    in the ``X-Envfactory-Evicted`` header of the next ``/_state`` of that name.
    """

    def __init__(
        self,
        contract: Contract,
        *,
        seed: int = 0,
        max_sessions: int = MAX_SESSIONS,
        max_history: int = MAX_HISTORY,
        max_history_bytes: int = MAX_HISTORY_BYTES,
        max_total_bytes: int = MAX_TOTAL_HISTORY_BYTES,
    ) -> None:
        self.contract = contract
        self.seed = seed
        self.max_sessions = max_sessions
        self.max_history = max_history
        self.max_history_bytes = max_history_bytes
        self.max_total_bytes = max_total_bytes
        self.total_bytes = 0
        self.sessions: OrderedDict[str, _Session] = OrderedDict()
        self.evicted: OrderedDict[str, str] = OrderedDict()  # name -> why, the newest few thousand
        self._state_validators: dict[str, tuple[SchemaValidator, SchemaValidator | None]] = {}
        self.rechecks = _Rechecks(contract)

    def record(self, session: _Session, size: int) -> None:
        """Account one call of ``size`` bytes to ``session``; trim and evict past the bounds."""
        session.sizes.append(size)
        session.history_bytes += size
        self.total_bytes += size
        if len(session.sizes) > self.max_history or session.history_bytes > self.max_history_bytes:
            before = session.history_bytes
            while session.sizes and (
                len(session.sizes) > self.max_history // 2
                or session.history_bytes > self.max_history_bytes // 2
            ):
                session.history_bytes -= session.sizes.popleft()
            session.dropped += session.sim.forget(len(session.sizes))
            self.total_bytes -= before - session.history_bytes
        while self.total_bytes > self.max_total_bytes and len(self.sessions) > 1:
            oldest = next(iter(self.sessions))
            if oldest == session.name:
                self.sessions.move_to_end(oldest)
                continue
            self._evict(oldest, f"history of all sessions over {self.max_total_bytes} bytes")

    def forget_history(self, session: _Session) -> None:
        self.total_bytes -= session.history_bytes
        session.sizes.clear()
        session.history_bytes = 0
        session.dropped = 0

    def _evict(self, name: str, why: str) -> None:
        gone = self.sessions.pop(name)
        self.total_bytes -= gone.history_bytes
        self.evicted[name] = why
        if len(self.evicted) > 4 * self.max_sessions:
            self.evicted.popitem(last=False)
        _LOG.warning("session %r evicted (%s) after %d calls", name, why, gone.sim.steps)

    def _validators(self, name: str) -> tuple[SchemaValidator, SchemaValidator | None]:
        found = self._state_validators.get(name)
        if found is None:
            var = self.contract.state[name]
            key = SchemaValidator(var.key_schema) if var.collection and var.key_schema is not None else None
            found = self._state_validators[name] = (SchemaValidator(var.schema), key)
        return found

    def initial_problem(self, sim: Simulator, initial: Mapping[str, Any]) -> Response | None:
        """A 400 answer when ``initial`` could not be a trajectory's ``initial``: a name the state
        lacks, a value or record outside its schema, or an invariant it breaks (with the clause)."""
        try:
            state = sim.machine.initial_state(initial)
        except EnvfactoryError as err:
            return _error(400, f"initial: {err.message}", kind="initial")
        for name in sorted(initial):
            var = self.contract.state[name]
            value, key_check = self._validators(name)
            if not var.collection:
                problem = _schema_problem(value, state_value_to_json(state[name]), name)
            else:
                problem = None
                for key, record in state[name].items():
                    problem = (key_check and _schema_problem(key_check, key, f"{name} key {key!r}")) or (
                        _schema_problem(value, state_value_to_json(record), f"{name}[{key!r}]")
                    )
                    if problem:
                        break
            if problem:
                return _error(400, problem, kind="initial")
        failure = sim.machine.check_invariants(state)
        if failure is not None:
            extra = {"clause": failure.clause_text}
            if failure.location is not None:
                extra["location"] = str(failure.location)
            return _error(
                400, f"the initial state breaks invariant: {failure.message}", kind="invariant", **extra
            )
        return None

    def session(self, request: Request) -> _Session:
        name = request.headers.get(SESSION_HEADER, DEFAULT_SESSION)
        if not _SESSION_ID.match(name):
            raise _BadRequest(400, f"{SESSION_HEADER} must be 1-128 letters, digits or ._:-")
        found = self.sessions.get(name)
        if found is None:
            if len(self.sessions) >= self.max_sessions:
                self._evict(next(iter(self.sessions)), f"more than {self.max_sessions} sessions")
            note = self.evicted.pop(name, None)
            sim = _ServedSimulator(self.contract, self.rechecks, seed=self.seed)
            found = self.sessions[name] = _Session(name, sim, note)
        else:
            self.sessions.move_to_end(name)
        return found


def _dumps(value: Any) -> bytes:
    """JSON bytes; the standard library's exact integers where orjson refuses one past 64 bits."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _schema_problem(validator: SchemaValidator, value: Any, where: str) -> str | None:
    violation = validator.first(value)
    if violation is None:
        return None
    path = "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in violation.path)
    return f"initial {where}{path}: {violation.message}"


def _json(status: int, value: Any) -> Response:
    return Response(_dumps(value), status_code=status, media_type="application/json")


def _error(status: int, message: str, **extra: Any) -> Response:
    return _json(status, {"error": message, **extra})


async def _read_json(request: Request) -> Any:
    return _parse_json(await _read_body(request))


async def _read_body(request: Request) -> bytes:
    """The body's bytes, bounded in size (413) and in the time it takes to arrive (408)."""
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise _BadRequest(400, "bad Content-Length")
        if int(length) > MAX_BODY_BYTES:
            raise _BadRequest(413, f"body larger than {MAX_BODY_BYTES} bytes")
    chunks: list[bytes] = []
    size = 0

    async def collect() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _BadRequest(413, f"body larger than {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(collect(), getattr(request.app.state, "body_timeout", BODY_TIMEOUT))
    except TimeoutError:
        raise _BadRequest(408, "the body took too long to arrive") from None
    data = b"".join(chunks)
    # what keeping the parsed body costs: its bytes, and some 64 more per value (a Python object
    # and its slot), counted from the separators at C speed
    request.state.body_bytes = size + 64 * (data.count(b",") + data.count(b"&") + 1)
    return data


def _parse_json(data: bytes) -> Any:
    """A JSON body's value (None for an empty body), integers exact at any size."""
    if not data.strip():
        return None
    try:
        value = orjson.loads(data)
        if _LONG_LITERAL in data.translate(_DIGITS):
            # orjson turns an integer past 64 bits into a float (two ids above 2^64 became one):
            # read such a body with the standard library, whose integers are exact, as the
            # simulator and the fuzzer's model keep them; answers fall back the same way (_dumps)
            value = json.loads(data)
    except (ValueError, RecursionError) as err:  # orjson.JSONDecodeError is a ValueError
        raise _BadRequest(400, f"the body is not JSON: {err}") from None
    if _too_deep(value, MAX_JSON_DEPTH):
        raise _BadRequest(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def _too_deep(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _respond(response: SimResponse, op: Operation) -> Response:
    if response.accepted:
        if not op.success_body or response.status == 204:
            return Response(status_code=response.status)  # 204 and friends: no body at all
        return _json(response.status, response.output)
    failure = response.failure
    extra: dict[str, Any] = {}
    if failure is not None:
        extra["kind"] = failure.kind
        if failure.clause_text is not None:
            extra["clause"] = failure.clause_text
        if failure.location is not None:
            extra["location"] = str(failure.location)
    return _error(response.status, response.error or "rejected", **extra)


Endpoint = Callable[[Request], Awaitable[Response]]


def _guard(handler: Endpoint) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except _BadRequest as err:
            return _error(err.status, err.message)

    return endpoint


def create_app(
    contract: Contract,
    *,
    seed: int = 0,
    max_sessions: int = MAX_SESSIONS,
    body_timeout: float = BODY_TIMEOUT,
    **bounds: int,
) -> Starlette:
    """The ASGI app serving ``contract`` (see the module docstring for the routes); a body that
    takes longer than ``body_timeout`` seconds to arrive is answered 408; ``bounds`` are
    ``MockServer``'s history bounds."""
    server = MockServer(contract, seed=seed, max_sessions=max_sessions, **bounds)

    async def call(request: Request, op: Operation, value: Any) -> Response:
        session = server.session(request)
        async with session.lock:
            answer = _respond(session.sim.call(op.name, value), op)
            size = (
                CALL_OVERHEAD
                + getattr(request.state, "body_bytes", 0)
                + len(request.url.query)
                + len(answer.body)
            )
            server.record(session, size + len(request.url.path))
            return answer

    async def state(request: Request) -> Response:
        session = server.session(request)
        async with session.lock:
            answer = _json(200, session.sim.state_json())
            answer.headers.update(session.headers())
            session.note = None
            return answer

    async def reset(request: Request) -> Response:
        session = server.session(request)
        body = await _read_json(request)
        seed_value: int | None = None
        initial: Mapping[str, Any] | None = None
        if isinstance(body, dict):
            raw_seed = body.get("seed")
            if raw_seed is not None and (not isinstance(raw_seed, int) or isinstance(raw_seed, bool)):
                raise _BadRequest(400, "seed must be an integer")
            seed_value = raw_seed
            raw_initial = body.get("initial")
            if raw_initial is not None and not isinstance(raw_initial, dict):
                raise _BadRequest(400, "initial must be an object")
            initial = raw_initial
        elif body is not None:
            raise _BadRequest(400, "the reset body must be an object: {seed, initial}")
        async with session.lock:
            if initial is not None:
                problem = server.initial_problem(session.sim, initial)
                if problem is not None:
                    return problem
            try:
                session.sim.reset(seed=seed_value, initial=initial)
            except EnvfactoryError as err:
                raise _BadRequest(400, str(err)) from None
            server.forget_history(session)
            return _json(200, session.sim.state_json())

    async def trajectory(request: Request) -> Response:
        session = server.session(request)
        name = request.headers.get(SESSION_HEADER, DEFAULT_SESSION)
        async with session.lock:
            meta = None
            if session.dropped:
                meta = {
                    "dropped_calls": session.dropped,
                    "note": f"the oldest {session.dropped} calls were dropped to bound memory; "
                    "initial is the state before the first call kept",
                }
            traj = session.sim.trajectory(id=f"session-{name}", meta=meta)
        try:
            line = dumps_trajectory(traj)
        except TrajectoryError:  # a value orjson cannot write: never a 500 for the session
            line = _dumps(to_json(traj))
        return Response(line + b"\n", media_type="application/x-ndjson")

    routes = [
        Route("/_state", _guard(state), methods=["GET"]),
        Route("/_reset", _guard(reset), methods=["POST"]),
        Route("/_envfactory/reset", _guard(reset), methods=["POST"]),
        Route("/_trajectory", _guard(trajectory), methods=["GET"]),
    ]
    bound = {name: op for name, op in contract.operations.items() if op.http is not None}
    if bound:
        routes.extend(_http_routes(bound, call))
    else:

        async def native(request: Request) -> Response:
            name = unquote(request.path_params["operation"])
            op = contract.operations.get(name)
            if op is None:
                return _error(404, f"no operation {name!r}", kind="unknown_tool")
            data = await _read_body(request)
            # no body is the empty input; a JSON ``null`` is the input null (refused by the schema)
            return await call(request, op, _parse_json(data) if data.strip() else {})

        routes.append(Route("/{operation:envfactory_segment}", _guard(native), methods=["POST"]))

    async def info(request: Request) -> Response:
        return _json(
            200,
            {"title": contract.title, "version": contract.version, "operations": sorted(contract.operations)},
        )

    routes.append(Route("/", info, methods=["GET"]))
    app = Starlette(routes=routes)
    app.state.mock = server
    app.state.body_timeout = body_timeout
    app.add_middleware(_RawSegments)
    app.add_middleware(_HeaderLimit)
    return app


class _RawSegments:
    """Routes on the path as sent, segment by segment: a path parameter holding ``/`` (sent as
    ``%2F``) stays one segment instead of a path no route matches."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        raw = scope.get("raw_path") if scope.get("type") == "http" else None
        if raw and b"%" in raw:
            # escapes of what delimits (``/`` and the style delimiters ``,;=.``, and ``%``) stay
            # escaped: path parameters reach httpcodec raw, split before they are decoded
            text = _PROTECTED.sub(lambda m: "%25" + m.group(1), raw.decode("latin-1"))
            scope = {**scope, "path": unquote(text)}
        await self.app(scope, receive, send)


_PROTECTED = re.compile(r"%(2[FfCcEe5]|3[BbDd])")


class _HeaderLimit:
    """Rejects requests whose headers add up past ``MAX_HEADER_BYTES`` with 431 (uvicorn only
    bounds headers that arrive in pieces, not a huge block read in one go)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            size = sum(len(k) + len(v) for k, v in scope.get("headers", ()))
            if size > MAX_HEADER_BYTES:
                response = _error(431, f"headers larger than {MAX_HEADER_BYTES} bytes")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _http_routes(
    ops: Mapping[str, Operation], call: Callable[[Request, Operation, Any], Awaitable[Response]]
) -> list[Route]:
    by_path: dict[str, dict[str, list[Operation]]] = {}
    for op in ops.values():
        assert op.http is not None
        path = httpcodec.route_path(op.http.path)
        by_path.setdefault(path, {}).setdefault(op.http.method.upper(), []).append(op)
    patterns: dict[str, tuple[re.Pattern[str], list[str]]] = {}
    routes = []
    for path, methods in sorted(by_path.items()):

        def make(methods: dict[str, list[Operation]]) -> Endpoint:
            async def endpoint(request: Request) -> Response:
                candidates = methods.get(request.method.upper())
                named = _named(request, ops, patterns)
                if named is not None:
                    op, path_params = named
                    request.scope["path_params"] = path_params
                elif not candidates:
                    return _error(405, f"{request.method} is not an operation here")
                else:
                    op = _pick(candidates, request)
                value = await _http_input(request, op)
                return await call(request, op, value)

            return endpoint

        routes.append(Route(_starlette_path(path), _guard(make(methods)), methods=sorted(methods)))
    return routes


def _named(
    request: Request, ops: Mapping[str, Operation], patterns: dict[str, tuple[re.Pattern[str], list[str]]]
) -> tuple[Operation, dict[str, str]] | None:
    """The operation ``X-Envfactory-Operation`` names, with its path parameters, where it is one
    of the request's method whose path template matches the request's path (a client's way to
    reach ``/templates/{scope}`` where a concrete ``/templates/enterprise`` answers first)."""
    name = request.headers.get(httpcodec.OPERATION_HEADER)
    op = ops.get(unquote(name)) if name else None
    if op is None or op.http is None or op.http.method.upper() != request.method.upper():
        return None
    if op.name not in patterns:
        patterns[op.name] = (httpcodec.path_pattern(op.http.path), httpcodec.path_names(op.http.path))
    pattern, names = patterns[op.name]
    match = pattern.match(request.scope["path"])
    return None if match is None else (op, dict(zip(names, match.groups())))


def _pick(candidates: list[Operation], request: Request) -> Operation:
    """The operation a request means where several share its method and path (a document told
    them apart by a ``#fragment``): the one ``X-Envfactory-Operation`` names, else the one
    without a fragment, else the first."""
    if len(candidates) > 1:
        named = unquote(request.headers.get(httpcodec.OPERATION_HEADER, ""))
        for op in candidates:
            if op.name == named:
                return op
        for op in candidates:
            if op.http is not None and "#" not in op.http.path:
                return op
    return candidates[0]


class _Segment(Convertor[str]):
    """A path parameter's segment, empty included (``/users/`` has ``username == ""``), so that an
    empty parameter reaches the contract's preconditions as the fuzzer's client sends it. Kept
    raw (delimiters escaped, see ``_RawSegments``): ``httpcodec`` splits it, then decodes."""

    regex = "[^/]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("envfactory_segment", _Segment())


def _starlette_path(path: str) -> str:
    path = path if path.startswith("/") else "/" + path
    return re.sub(r"\{([^{}:]+)\}", r"{\1:envfactory_segment}", path)


async def _http_input(request: Request, op: Operation) -> Any:
    """The operation's input from the request: path, query and header parameters by their
    OpenAPI style, and the body as JSON, form fields or multipart parts (by its Content-Type)."""
    binding = op.http
    assert binding is not None
    form: list[tuple[str, str]] | None = None
    body: Any = None
    null = False
    media: str | None = None
    if binding.body is not None:
        data = await _read_body(request)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == httpcodec.FORM or (kind == "" and binding.media == httpcodec.FORM and data.strip()):
            media = httpcodec.FORM
            try:
                form = httpcodec.raw_pairs(data.decode("utf-8"))
            except UnicodeDecodeError:
                raise _BadRequest(400, "the form body is not UTF-8") from None
        elif kind == httpcodec.MULTIPART:
            media = httpcodec.MULTIPART
            form = await _read_parts(request, data)
        else:
            body = _parse_json(data)
            null = body is None and bool(data.strip())  # a JSON ``null`` body, not an absent one
    value = httpcodec.decode(
        op,
        path=request.path_params,
        query=httpcodec.raw_pairs(request.scope.get("query_string", b"").decode("utf-8", "replace")),
        headers=request.headers,
        form=form,
        media=media,
    )
    if _too_deep(value, MAX_JSON_DEPTH):
        raise _BadRequest(400, f"the parameters nest deeper than {MAX_JSON_DEPTH} levels")
    if form is None and (body is not None or null):
        if binding.body == "*":
            if not isinstance(body, dict):
                raise _BadRequest(422, "the body must be a JSON object")
            value.update((k, v) for k, v in body.items() if k not in value)
        else:
            value[str(binding.body)] = body
    return value


async def _read_parts(request: Request, data: bytes) -> list[tuple[str, str]]:
    """A multipart body's parts as (name, text); a file part's bytes as UTF-8 text."""

    async def stream() -> Any:
        yield data

    try:
        parsed = await MultiPartParser(request.headers, stream(), max_files=64, max_fields=4096).parse()
    except MultiPartException as err:
        raise _BadRequest(400, f"the multipart body cannot be read: {err.message}") from None
    parts: list[tuple[str, str]] = []
    for name, item in parsed.multi_items():
        if isinstance(item, str):
            parts.append((name, item))
        else:
            parts.append((name, (await item.read()).decode("utf-8", "replace")))
            await item.close()
    return parts


# ------------------------------------------------------------------------------------- running


def guarded_protocol(
    header_timeout: float = HEADER_TIMEOUT,
    max_per_client: int = MAX_CONNECTIONS_PER_CLIENT,
    max_connections: int = MAX_CONNECTIONS,
) -> type:
    """uvicorn's h11 protocol with the guards it lacks against idle connections.

    uvicorn starts no timer before a connection's first request line, so 1,000 sockets that send
    nothing held every slot and real requests got 503. Here a request head (line and headers)
    must be complete within ``header_timeout`` seconds of the connection opening or of its first
    byte after a keep-alive pause, else the connection is closed; and a client address may hold
    ``max_per_client`` connections (``max_connections`` in all): past that, the oldest connection
    with no request in progress makes room, so a new client is served while idle ones wait.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None

        def _registry(self) -> OrderedDict[Any, None]:
            found = getattr(self.server_state, "envfactory_connections", None)
            if found is None:
                found = OrderedDict()
                self.server_state.envfactory_connections = found  # type: ignore[attr-defined]
            return found

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            registry = self._registry()
            host = self.client[0] if self.client else None
            same = [c for c in registry if c.client and host is not None and c.client[0] == host]
            if len(same) >= max_per_client:
                _evict_idle(same, self)
            if len(registry) >= max_connections:
                _evict_idle(list(registry), self)
            if not transport.is_closing():
                registry[self] = None
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._registry().pop(self, None)
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                if self._timer is None:
                    self._arm()  # a new request head started: it has header_timeout to finish
            else:
                self._disarm()

        def idle(self) -> bool:
            """No request in progress: the head has not arrived, or the last response went out."""
            return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(header_timeout, self._expire)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expire(self) -> None:
            self._timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def _evict_idle(candidates: list[Any], newcomer: Any) -> None:
    """Close the oldest idle connection among ``candidates``, or the newcomer when none is idle."""
    for conn in candidates:
        if conn is not newcomer and conn.idle() and not conn.transport.is_closing():
            conn.transport.close()
            return
    newcomer.transport.close()


def uvicorn_config(
    app: Any,
    host: str,
    port: int,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    max_per_client: int = MAX_CONNECTIONS_PER_CLIENT,
    **overrides: Any,
) -> Any:
    """uvicorn settings with the limits that keep hostile clients from hurting the server."""
    import uvicorn

    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "timeout_keep_alive": 5,
        "limit_concurrency": 2 * MAX_CONNECTIONS,
        "http": guarded_protocol(header_timeout, max_per_client, MAX_CONNECTIONS),
        "lifespan": "off",
        "access_log": False,
    }
    settings.update(overrides)
    return uvicorn.Config(app, **settings)


def serve(contract: Contract, host: str = "127.0.0.1", port: int = 8000, *, seed: int = 0) -> None:
    """Serve the contract until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn_config(create_app(contract, seed=seed), host, port)).run()


@contextmanager
def running(contract_or_app: Any, host: str = "127.0.0.1", **overrides: Any) -> Iterator[str]:
    """Serve in a background thread on a free port; yields the base URL (tests, fuzzing, replay)."""
    import uvicorn

    app = create_app(contract_or_app) if isinstance(contract_or_app, Contract) else contract_or_app
    # uvicorn binds the port itself: a socket handed over with ``sockets=`` comes back through
    # ``socket.fromfd`` with protocol 0, asyncio then leaves Nagle on, and every response waits
    # ~40 ms on a delayed ACK.
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind((host, 0))
    port = probe.getsockname()[1]
    probe.close()
    server = uvicorn.Server(uvicorn_config(app, host, port, **overrides))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(1000):
            if server.started:
                break
            if not thread.is_alive():
                raise RuntimeError("the server thread stopped while starting")
            threading.Event().wait(0.01)
        if not server.started:
            raise RuntimeError("the server did not start")
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


__all__ = ["SESSION_HEADER", "MockServer", "create_app", "running", "serve", "uvicorn_config"]
