"""Targets: the systems a fuzz run (or a replay) drives, behind one small protocol.

``open_target(spec, contract)`` reads a target spec and returns an object with ``reset()``,
``call(tool, input) -> Response`` and ``close()``:

* ``sim``: the contract's own simulator (a self-check of the contract).
* ``http://HOST:PORT[/base]``: a live API. Native contracts are reached as ``POST /{operation}``
  with the input as the JSON body; OpenAPI contracts through each operation's ``HttpBinding``
  (path, query and header parameters by name, the rest as the JSON body). A call that no request
  can express (a missing path parameter, a field with no place when there is no body) is
  rejected by the client itself with 422 rather than sent without it. ``reset()`` posts to
  ``/_envfactory/reset`` (what ``envfactory serve`` answers) and ignores a 404.
* ``python:MODULE:FACTORY``: ``FACTORY()`` gives a fresh object on every ``reset()``; each
  operation is the method of the same name called with the input's fields as keyword arguments;
  the return value is the output, answered with the operation's success status (200, or the
  2xx its OpenAPI document gives). An exception with an integer ``status`` attribute, or a
  returned dict with an ``"error"`` key (status 400 unless it carries ``"status"``), is an error
  response; any other exception is a crash (status 500, the error text starts with ``crash:``).
  Arguments that the method's signature cannot bind (a missing or an unexpected keyword) never
  reach the object: that call is rejected with 422, as a typed API would reject it.

Every target answers with the simulator's ``Response`` so that the fuzzer, ``replay`` and the
simulator share one vocabulary. A status of 0 means the request never got an answer (a refused
connection, a time-out); the fuzzer counts that, like any 5xx, as a crash.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import socket
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import attrs
import orjson

from envfactory.contracts import httpcodec
from envfactory.contracts.errors import UsageError
from envfactory.contracts.model import Contract, Operation
from envfactory.statemachine.simulator import Response, Simulator

RESET_PATH = "/_envfactory/reset"
"""Where an HTTP target is asked to go back to its initial state before each test case."""
CRASH_PREFIX = "crash: "
REACH_TIMEOUT = 10.0
"""Seconds to wait for an HTTP target to accept a connection before a run starts."""
NO_ANSWER = 0


class Target(Protocol):
    """What the fuzzer and ``replay`` drive."""

    spec: str

    def reset(self) -> None: ...

    def call(self, tool: str, input: Any) -> Response: ...

    def close(self) -> None: ...


def is_crash(response: Response) -> bool:
    """A crash: no answer at all, a 5xx, or an exception the object did not mean to raise."""
    return response.status == NO_ANSWER or response.status >= 500


def open_target(
    spec: str,
    contract: Contract,
    *,
    seed: int = 0,
    timeout: float = 10.0,
    isolate: bool | None = None,
    call_timeout: float | None = None,
) -> Target:
    """The target a spec names; raises ``UsageError`` for a spec that does not fit.

    A ``python:`` target runs in a worker process with per-call time and memory limits
    (``isolation.py``) when ``isolate`` says so; by default for a bare tool list, whose methods
    nothing vouches for (a call may never return), and in the fuzzer's own process otherwise."""
    if spec == "sim":
        return SimTarget(contract, seed=seed)
    if spec.startswith(("http://", "https://")):
        return HttpTarget(spec, contract, timeout=timeout)
    if spec.startswith("python:"):
        if isolate or (isolate is None and contract.kind == "tools"):
            from envfactory.fuzz.isolation import CALL_TIMEOUT, IsolatedTarget

            return IsolatedTarget(spec, contract, call_timeout=call_timeout or CALL_TIMEOUT)
        return PythonTarget(spec, contract)
    if spec.startswith("agent:"):
        raise UsageError(f"{spec!r} is an agent, not an API target; 'envfactory fuzz' drives agents itself")
    raise UsageError(
        f"unknown target {spec!r}: expected sim, http://HOST:PORT[/base] or python:MODULE:FACTORY"
    )


def ensure_reachable(target: Target) -> None:
    """Raise ``UsageError`` when an HTTP target does not accept connections at all: one clear
    line before a run, instead of one "crash" or difference per call."""
    if not isinstance(target, HttpTarget):
        return
    parts = urlsplit(target.base)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "localhost", port), timeout=REACH_TIMEOUT):
            pass
    except OSError as err:
        raise UsageError(f"the target {target.spec} cannot be reached: {err.strerror or err}") from None


# ----------------------------------------------------------------------------------------- sim


class SimTarget:
    """The contract's simulator as a target."""

    in_process = True
    """Calls run in this process: their cost is read on its CPU clock (``machine.SLOW_CALL``)."""

    def __init__(self, contract: Contract, *, seed: int = 0) -> None:
        self.spec = "sim"
        self.seed = seed
        self.simulator = Simulator(contract, seed=seed)

    def reset(self) -> None:
        self.simulator.reset(seed=self.seed)

    def call(self, tool: str, input: Any) -> Response:
        return self.simulator.call(tool, input)

    def close(self) -> None:
        return None


# -------------------------------------------------------------------------------------- python


def load_factory(spec: str) -> Callable[..., Any]:
    """``python:MODULE:FACTORY`` (or ``agent:MODULE:CALLABLE``) to the callable it names.

    MODULE is a dotted name importable from the working directory or ``PYTHONPATH``, or a path to
    a ``.py`` file.
    """
    _, _, rest = spec.partition(":")
    module_name, sep, attr = rest.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{spec!r}: expected {spec.partition(':')[0]}:MODULE:NAME")
    module = _import(module_name, spec)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{spec!r}: module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"{spec!r}: {attr!r} is not callable")
    return obj


def _import(module_name: str, spec: str) -> Any:
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        path = Path(module_name).resolve()
        if not path.is_file():
            raise UsageError(f"{spec!r}: no such file {module_name!r}")
        name = f"_envfactory_target_{path.stem}_{abs(hash(str(path))):x}"
        if str(path.parent) not in sys.path:  # sibling modules import, as when run as a script
            sys.path.insert(0, str(path.parent))
        if name in sys.modules:
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UsageError(f"{spec!r}: cannot import {module_name!r}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as err:
            del sys.modules[name]
            raise UsageError(
                f"{spec!r}: importing {module_name!r} failed: {type(err).__name__}: {err}"
            ) from err
        return module
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"{spec!r}: cannot import {module_name!r}: {err}") from err


class PythonTarget:
    """A Python object, fresh from ``FACTORY()`` on every reset, driven method by method."""

    keyword_calls = True
    """Inputs are keyword arguments (so the fuzzer sends no input that is not an object)."""
    in_process = True

    def __init__(self, spec: str, contract: Contract, factory: Callable[[], Any] | None = None) -> None:
        self.spec = spec
        self.contract = contract
        self.factory = factory if factory is not None else load_factory(spec)
        self.obj: Any = None
        self.last_exception: BaseException | None = None
        self._signatures: dict[str, inspect.Signature | None] = {}
        self._param_sets: dict[str, tuple[frozenset[str] | None, frozenset[str]]] = {}
        self._methods: dict[str, str] = {name: _method_name(name) for name in contract.operations}

    def reset(self) -> None:
        self.obj = self.factory()

    def call(self, tool: str, input: Any) -> Response:
        if self.obj is None:
            self.reset()
        method = getattr(self.obj, self._methods.get(tool, _method_name(tool)), None)
        if not callable(method):
            return _error(404, f"the object has no method {tool!r}")
        if input is None:
            input = {}
        if not isinstance(input, Mapping) or not all(isinstance(k, str) for k in input):
            return _error(422, "the input is not an object of named arguments")
        bad = self._unbindable(tool, method, input)
        if bad is not None:
            return _error(422, bad)
        try:
            result = method(**input)
        except Exception as err:
            status = getattr(err, "status", None)
            if isinstance(status, int) and not isinstance(status, bool):
                return Response(
                    status=status,
                    output=None,
                    error=str(err) or type(err).__name__,
                    failure=None,
                    accepted=200 <= status < 300,
                )
            self.last_exception = err
            return _error(500, CRASH_PREFIX + describe_exception(err))
        if isinstance(result, Mapping) and "error" in result:
            status = result.get("status", 400)
            if not isinstance(status, int) or isinstance(status, bool):
                status = 400
            return Response(
                status=status,
                output=_plain(result),
                error=str(result["error"]),
                failure=None,
                accepted=200 <= status < 300,
            )
        op = self.contract.operations.get(tool)
        status = op.success_status if op is not None else 200
        return Response(status=status, output=_plain(result), error=None, failure=None, accepted=True)

    def _unbindable(self, tool: str, method: Callable[..., Any], input: Mapping[str, Any]) -> str | None:
        if tool not in self._signatures:
            try:
                self._signatures[tool] = inspect.signature(method)
            except (TypeError, ValueError):
                self._signatures[tool] = None
        signature = self._signatures[tool]
        if signature is None:
            return None
        names, required = self._params(tool, signature)
        if required <= input.keys() and (names is None or names >= input.keys()):
            return None  # the common case, without Signature.bind (a tenth of a call's cost)
        try:
            signature.bind(**input)
        except TypeError as err:
            return f"{tool}: {err}"
        return None

    def _params(
        self, tool: str, signature: inspect.Signature
    ) -> tuple[frozenset[str] | None, frozenset[str]]:
        """The keywords ``tool`` takes (None: any, it has ``**kwargs``) and those it requires
        (a method with positional-only parameters is left to ``bind``)."""
        known = self._param_sets.get(tool)
        if known is None:
            known = self._param_sets[tool] = _param_sets(signature)
        return known

    def close(self) -> None:
        self.obj = None


def _param_sets(signature: inspect.Signature) -> tuple[frozenset[str] | None, frozenset[str]]:
    """The keywords a signature takes (None: any) and those it requires; a signature with
    positional-only or ``*args`` parameters requires a name no input has, so ``bind`` judges."""
    params = signature.parameters.values()
    if any(p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) for p in params):
        return frozenset(), frozenset({"\0"})
    names = None if any(p.kind is p.VAR_KEYWORD for p in params) else frozenset(p.name for p in params)
    required = frozenset(p.name for p in params if p.default is p.empty and p.kind is not p.VAR_KEYWORD)
    return names, required


def _method_name(name: str) -> str:
    if name.isidentifier():
        return name
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "_" + out


def describe_exception(err: BaseException) -> str:
    """``Type: message (at file:line in function)``: where an unintended exception came from."""
    frames = traceback.extract_tb(err.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    message = str(err)
    if len(message) > 200:
        message = message[:197] + "..."
    return f"{type(err).__name__}: {message}{where}"


def _plain(value: Any) -> Any:
    """A detached JSON copy, so that an object mutating what it returned cannot rewrite history."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except TypeError:
        return value


def _error(status: int, message: str) -> Response:
    return Response(status=status, output=None, error=message, failure=None, accepted=False)


# ---------------------------------------------------------------------------------------- http


class HttpTarget:
    """A live HTTP API, reached with one ``httpx.Client`` (connection reuse)."""

    def __init__(self, url: str, contract: Contract, *, timeout: float = 10.0) -> None:
        import httpx

        self.spec = url
        self.contract = contract
        self.base = url.rstrip("/")
        # TCP_NODELAY: without it a request's headers and body wait on a delayed ACK (~40 ms a call)
        transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self.client = httpx.Client(timeout=timeout, transport=transport)
        self.can_reset = True
        self._prepared: tuple[str, Any, dict[str, Any] | str] | None = None
        self._rivals: dict[str, list[re.Pattern[str]]] = {}

    def reset(self) -> None:
        if not self.can_reset:
            return
        import httpx

        try:
            response = self.client.post(self.base + RESET_PATH)
        except httpx.HTTPError:
            return
        if response.status_code in (404, 405):
            self.can_reset = False

    def request_for(self, op: Operation | None, tool: str, input: Any) -> dict[str, Any]:
        """The request one call becomes (``httpx.Client.request``'s arguments); raises
        ``httpcodec.Unsendable`` where no request expresses the call."""
        if op is None or op.http is None:
            return {"method": "POST", "url": f"{self.base}/{quote(tool, safe='')}", **_json_body(input)}
        return _request_args(self.base, httpcodec.encode(op, input))

    def expressible(self, tool: str, input: Any) -> bool:
        """Whether some request carries ``tool(input)`` so that a server reads it back as it is
        (the fuzzer draws no call for which this is false: no request could ask it)."""
        return not isinstance(self._prepare(tool, input), str)

    def _prepare(self, tool: str, input: Any) -> dict[str, Any] | str:
        """The request for a call, or why no request expresses it (the last one is kept, so that
        ``expressible`` then ``call`` encode once)."""
        if self._prepared is not None and self._prepared[0] == tool and self._prepared[1] is input:
            return self._prepared[2]
        op = self.contract.operations.get(tool)
        found: dict[str, Any] | str
        if op is None or op.http is None:
            found = self.request_for(op, tool, input)
        else:
            try:
                wire = httpcodec.encode(op, input)
            except httpcodec.Unsendable as err:
                found = f"{tool}: {err}"
            else:
                # a server reads each parameter's text as its type (the integer -1 of a string
                # parameter arrives as "-1"): a call that would arrive as another is not sent
                if self._shadowed(op, wire.path):  # another operation answers this path too
                    wire = attrs.evolve(
                        wire, headers=(*wire.headers, (httpcodec.OPERATION_HEADER, quote(op.name, safe="")))
                    )
                travels = _travels(op, input, wire)
                found = _request_args(self.base, wire) if travels else f"{tool}: {_ALTERED}"
        self._prepared = (tool, input, found)
        return found

    def _shadowed(self, op: Operation, path: str) -> bool:
        """Whether another operation of ``op``'s method matches the request path (the server
        might answer with that one: a concrete path beside a template, a ``#fragment``)."""
        rivals = self._rivals.get(op.name)
        if rivals is None:
            assert op.http is not None
            shape = _segments(op.http.path)
            rivals = self._rivals[op.name] = [
                httpcodec.path_pattern(other.http.path)
                for other in self.contract.operations.values()
                if other is not op
                and other.http is not None
                and other.http.method == op.http.method
                and _may_meet(shape, _segments(other.http.path))
            ]
        return any(pattern.match(path) for pattern in rivals)

    def call(self, tool: str, input: Any) -> Response:
        import httpx

        request = self._prepare(tool, input)
        self._prepared = None
        if isinstance(request, str):
            # no request expresses this call: the client cannot send it, which rejects it
            return _error(422, request)
        try:
            answer = self.client.request(**request)
        except httpx.HTTPError as err:
            return _error(NO_ANSWER, f"{CRASH_PREFIX}no answer: {type(err).__name__}: {err}")
        status = answer.status_code
        output: Any = None
        if answer.content:
            try:
                output = answer.json()
            except ValueError:
                output = answer.text
        accepted = 200 <= status < 300
        error = None
        if not accepted:
            error = _error_text(output) or f"HTTP {status}"
        return Response(status=status, output=output, error=error, failure=None, accepted=accepted)

    def close(self) -> None:
        self.client.close()


ENCODED_HEADERS = httpcodec.ENCODED_HEADERS


def _json_body(value: Any) -> dict[str, Any]:
    """``httpx`` arguments for a JSON body: ``json=None`` would send no body at all, which a
    server reads as an absent input, so the value null goes as the text ``null``."""
    if value is None:
        return {"content": b"null", "headers": {"content-type": httpcodec.JSON}}
    return {"json": value}


def _request_args(base: str, wire: httpcodec.WireRequest) -> dict[str, Any]:
    """``httpx`` arguments for a request as ``httpcodec.encode`` writes it."""
    url = base + wire.path + ("?" + wire.query_string if wire.query else "")
    request: dict[str, Any] = {"method": wire.method, "url": url}
    headers = dict(wire.headers)
    if wire.media == httpcodec.JSON:
        body = _json_body(wire.json)
        headers.update(body.pop("headers", {}))
        request.update(body)
    elif wire.media == httpcodec.FORM:
        headers["content-type"] = httpcodec.FORM
        request["content"] = wire.form_body
    elif wire.media == httpcodec.MULTIPART:
        types = dict(wire.part_types)
        request["files"] = [(name, (None, text.encode(), types.get(name))) for name, text in wire.form]
        if not wire.form:  # no parts: an empty multipart body (httpx sends none for no files)
            headers["content-type"] = f"{httpcodec.MULTIPART}; boundary=x"
            request["content"] = b"--x--\r\n"
            del request["files"]
    if headers:
        request["headers"] = headers
    return request


def _travels(op: Operation, input: Any, wire: httpcodec.WireRequest) -> bool:
    """Whether the server reads ``wire`` back as ``input`` (``httpcodec.decode``, as ``serve`` does)."""
    form: Any = None
    if wire.media == httpcodec.FORM:
        form = httpcodec.raw_pairs(wire.form_body)
    elif wire.media == httpcodec.MULTIPART:
        form = wire.form
    read = httpcodec.decode(
        op,
        path=dict(wire.path_params),
        query=httpcodec.raw_pairs(wire.query_string),
        headers={k.lower(): v for k, v in wire.headers},
        form=form,
        media=wire.media,
    )
    if not isinstance(input, Mapping):
        return True  # the whole JSON body, sent as it is
    if wire.media == httpcodec.JSON:
        assert op.http is not None
        if op.http.body == "*":
            read.update((k, v) for k, v in wire.json.items() if k not in read)
        else:
            read[str(op.http.body)] = wire.json
    if httpcodec.same(read, input):
        return True
    # null and empty arrays and objects in a query, header or form write nothing (as common
    # clients send them): the call still travels where what arrives is the input without them
    # and the schema judges both alike
    in_json = set(wire.json) if isinstance(wire.json, Mapping) else set()
    if wire.media == httpcodec.JSON and op.http is not None and op.http.body != "*":
        in_json = {str(op.http.body)}
    pruned = {
        **httpcodec.pruned({k: v for k, v in input.items() if k not in in_json}),
        **{k: input[k] for k in in_json if k in input},
    }
    valid = op.input_validator.is_valid if op.input_validator is not None else (lambda _: True)
    return httpcodec.same(read, pruned) and valid(input) == valid(pruned)


_ALTERED = "the input would not arrive as itself on the wire"


def _segments(template: str) -> list[str | None]:
    """A template's segments, None for one holding a parameter."""
    return [None if "{" in seg else seg for seg in httpcodec.route_path(template).split("/")]


def _may_meet(a: list[str | None], b: list[str | None]) -> bool:
    """Whether two templates could match one path (same segments, literals alike where both are)."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _error_text(output: Any) -> str | None:
    if isinstance(output, Mapping):
        for key in ("error", "message", "detail"):
            if key in output:
                return str(output[key])
    if isinstance(output, str):
        return output[:200]
    return None
