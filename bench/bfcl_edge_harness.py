"""An independent edge-case harness for BFCL's executable API classes (issue 15's BFCL criterion).

Run: ``.venv/bin/python bench/bfcl_edge_harness.py [--json FILE] [--compare FUZZ.json ...]``

It does not use envfactory. For each of the eight classes it reads the parameter types from the
function doc and calls the methods directly, each call on a copy of an instance (a fresh one has
the default scenario, ``_load_scenario({})``):

* first, on the default state, every parameter in turn at the edges of its JSON type (integers
  past 64 bits and past every float, 10**7 and the like, -0.0, 1e308, 5e-324, NaN and Infinity as
  Python's json reads them, empty, very long, Unicode, control-character and path-like strings,
  empty lists, lists of wrong or null items, objects with a field missing, extra or of the wrong
  type) and at every wrong JSON type, the others plain (their default, else an enum value, else
  an ordinary value), written as integers, left out where optional, or all null;
* then on the distinct states (instance state and the values seen so far) that one, two and three
  earlier calls reach, where each call takes names and ids from the outputs before it (a token, an
  order id, a user id, a file name) or the plain names ``a`` and ``b``, in one parameter or in
  every parameter of its type, and may store a wrong value in one parameter (``echo`` writing a
  number into a file): ``mkdir a; touch b; cp b a; cp b a``, ``authenticate; register_credit_card
  (token, card_number=[])``, ``list_users; get_user_id(Alice); message_login(USR001);
  search_messages(7)``. Each call of a sequence probes its own method too. Nothing is written
  per method: the same rules make every call.

A Python ``TypeError`` from binding the arguments (``inspect.signature(...).bind``) is the
caller's error and no call. A method "crashes" when a call raises (any exception: the classes
answer errors with dicts), runs past ``--call-timeout`` seconds (a hang) or dies past a 2 GiB
address space; each class runs in a forked child, and a hang or a death costs that method alone
(a new child goes on without it). Printed: the methods shown crashing per class and in all, with
one witness each; ``--compare`` reads the JSON summaries of ``envfactory fuzz --format json``
runs (one per class) and prints which of those methods the fuzzer found crashing (kinds crash,
hang and resource) and which it missed.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import random
import re
import resource
import select
import signal
import sys
import traceback
from collections.abc import Iterator
from copy import deepcopy
from pathlib import Path
from typing import Any

PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASSES = {
    "gorilla_file_system": ("gorilla_file_system", "GorillaFileSystem"),
    "math_api": ("math_api", "MathAPI"),
    "message_api": ("message_api", "MessageAPI"),
    "posting_api": ("posting_api", "TwitterAPI"),
    "ticket_api": ("ticket_api", "TicketAPI"),
    "trading_bot": ("trading_bot", "TradingBot"),
    "travel_booking": ("travel_booking", "TravelAPI"),
    "vehicle_control": ("vehicle_control", "VehicleControlAPI"),
}
MEMORY = 2 << 30
NAMES: tuple[Any, ...] = ("a", "b", 1)
"""The values every sequence starts with: two names (so that a two-name operation meets equal
and distinct names) and an id."""
POOL = 4
"""Values kept from a sequence's outputs for its later calls (the newest first)."""
STATES = (40, 40, 40)
"""Distinct states (instance state and value pool) kept after one, two and three calls; the
plainest calls first."""
HARNESS_ERROR = 3
"""The exit status of a child whose exploration failed in the harness's own code."""
BIG = 10**400  # an integer (JSON allows it) no float can hold
NAN, INF = float("nan"), float("inf")  # Python's json reads and writes NaN and Infinity

WRONG: list[Any] = [
    None,
    True,
    False,
    0,
    7,
    -1,
    1.5,
    BIG,
    NAN,
    "",
    "x",
    [],
    {},
    [1, 2],
    ["x"],
    [None],
    [[]],
    {"a": 1},
    {"a": None},
]
"""The wrong JSON type (or a hostile value) for any parameter."""
POISON: list[Any] = [None, 7, "x", []]
"""Wrong values a call deep in a sequence gets in one parameter (fewer: there are many such calls)."""
INTS: list[Any] = [
    0,
    -1,
    1,
    2,
    2**31,
    -(2**31),
    2**53 + 1,
    2**63,
    -(2**63) - 1,
    2**64 + 1,
    10**6,
    10**7,
    10**9,
    10**30,
    -(10**30),
    BIG,
    -BIG,
]
FLOATS: list[Any] = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e30, -1e30, 1e308, -1e308, NAN, INF, -INF]
STRINGS: list[Any] = [
    "",
    " ",
    "x" * 10_000,
    "ü€😀",
    "\ud800",
    "\x00",
    "\n",
    "\t",
    "/",
    ".",
    "..",
    "a/b",
    "-1",
    "0",
    "1.5",
    "1e999",
    "nan",
    "None",
    "null",
    "true",
    "%s{}",
    "2024-02-30",
    "a" * 256,
]
EDGES: dict[str, list[Any]] = {
    "integer": INTS,
    "float": [*FLOATS, 0, 1, -1, 2**64 + 1, 10**30, -(10**30), BIG, -BIG],  # a JSON number may be an integer
    "string": STRINGS,
    "boolean": [False, True],
}


def func_doc_path(name: str) -> Path:
    """The class's function doc (its tool list) in the installed ``bfcl_eval`` package."""
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data" / "multi_turn_func_doc" / f"{name}.json"


def func_docs(name: str) -> list[dict[str, Any]]:
    path = func_doc_path(name)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def kind_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "string")
    return {"number": "float", "object": "dict", "list": "array", "tuple": "array"}.get(kind, kind)


def enum_of(schema: dict[str, Any]) -> list[Any]:
    """The schema's enum, or the one BFCL writes into the description (``[Enum]: [...]``)."""
    if schema.get("enum"):
        return list(schema["enum"])
    match = re.search(r"\[Enum\]:\s*(\[[^\]]*\])", schema.get("description", ""))
    if match:
        try:
            values = json.loads(match.group(1))
        except ValueError:
            return []
        return values if isinstance(values, list) else []
    return []


def plain(schema: dict[str, Any], ints: bool = False) -> Any:
    """An ordinary value of the parameter's type: its default, else its first enum value; with
    ``ints`` a number is written as an integer (JSON's ``1`` rather than ``1.0``)."""
    if "default" in schema:
        return schema["default"]
    kind = kind_of(schema)
    enum = enum_of(schema)
    if enum and kind != "array":
        return enum[0]
    if kind == "array":
        items = dict(schema.get("items") or {"type": "string"})
        if enum and "enum" not in items:
            items["enum"] = enum
        return [plain(items, ints)]
    if kind == "dict":
        return {p: plain(s, ints) for p, s in (schema.get("properties") or {}).items()}
    return {"integer": 1, "float": 3 if ints else 2.5, "boolean": True}.get(kind, NAMES[0])


def edges(schema: dict[str, Any]) -> list[Any]:
    """The edge values of a parameter's own type, nested ones included, then every wrong type."""
    kind = kind_of(schema)
    out: list[Any] = list(EDGES.get(kind, []))
    out += [e for e in enum_of(schema) if kind != "array"]
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        item = plain(items)
        out += [[], [item, item], [None], [item, None], [BIG, 1.0], [1e308, -1e308, 1e308], [NAN], [[]], [{}]]
        out += [[e] for e in edges(items)]
    if kind == "dict":
        props = schema.get("properties") or {}
        full = plain(schema)
        out += [{}, {"": None}, {"a": None}, {"a": []}, {**full, "zz": 1}]
        for p, s in props.items():
            out.append({k: v for k, v in full.items() if k != p})
            out += [{**full, p: e} for e in [*WRONG, *EDGES.get(kind_of(s), [])]]
    return out + WRONG


def parameters(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    params = doc.get("parameters", {}).get("properties", {}) or {}
    return params, list(doc.get("parameters", {}).get("required", []) or [])


def matches(value: Any, schema: dict[str, Any]) -> bool:
    """Whether a value seen earlier fits the parameter's type (a name for a string, an id for
    an integer or number)."""
    kind = kind_of(schema)
    if isinstance(value, str):
        return kind == "string"
    return isinstance(value, int) and kind in ("integer", "float")


def variants(doc: dict[str, Any], pool: tuple[Any, ...], first: bool) -> Iterator[tuple[dict[str, Any], int]]:
    """The arguments one call of a method gets, each with its weight (how far from plain). A base
    is the plain arguments, the required ones alone, the arguments as integers, every argument
    null, an enum value, or a value of the pool in one or in every parameter of its type; each base
    is then tried with one parameter at an edge value (all of them on the first call of a
    sequence, a few wrong ones deeper)."""
    params, required = parameters(doc)
    base = {p: plain(s) for p, s in params.items()}
    bases: list[tuple[dict[str, Any], int]] = [(base, 0), ({p: base[p] for p in required}, 1)]
    if first:
        bases += [({p: plain(s, ints=True) for p, s in params.items()}, 1), ({p: None for p in params}, 3)]
    for p, s in params.items():
        bases += [({**base, p: e}, 1) for e in enum_of(s) if kind_of(s) != "array" and e != base[p]]
    for value in (*pool, *NAMES):
        fits = [p for p, s in params.items() if matches(value, s)]
        if len(fits) > 1:
            bases.append(({**base, **dict.fromkeys(fits, value)}, 1))
        bases += [({**base, p: value}, 1) for p in fits]
    seen: set[str] = set()
    for args, weight in bases:
        key = repr(sorted(args.items()))
        if key in seen:
            continue
        seen.add(key)
        yield args, weight
        for p, s in params.items():
            for value in edges(s) if first else POISON:
                yield {**args, p: value}, weight + 2


def harvest(output: Any, pool: tuple[Any, ...]) -> tuple[Any, ...]:
    """The pool after a call: the names and ids its output shows (values, and the keys of
    records), newest first."""
    found: list[Any] = []

    def walk(value: Any, depth: int) -> None:
        if len(found) >= POOL or depth > 3:
            return
        if isinstance(value, dict):
            if "error" in value:  # an error's message names nothing new
                return
            for key, item in value.items():
                if isinstance(item, dict) and isinstance(key, (str, int)):
                    walk(key, depth)
                walk(item, depth + 1)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, depth + 1)
        elif (
            (isinstance(value, str) and 0 < len(value) <= 64)
            or (isinstance(value, int) and not isinstance(value, bool))
        ) and (value not in NAMES and value not in found):
            found.append(value)

    walk(output, 0)
    merged = [*found, *(v for v in pool if v not in found)]
    return tuple(merged[:POOL])


def state_key(obj: Any) -> str:
    """The instance's state as text (random generators left out: their text is their address);
    a state whose text never ends (``mkdir a; mv a a`` puts a directory inside itself) is a
    state of its own."""
    try:
        return repr(sorted((k, v) for k, v in vars(obj).items() if not isinstance(v, random.Random)))
    except RecursionError:
        return f"cyclic {id(obj)}"


def instance(cls_name: str) -> Any:
    module_name, class_name = CLASSES[cls_name]
    obj = getattr(importlib.import_module(f"{PACKAGE}.{module_name}"), class_name)()
    load = getattr(obj, "_load_scenario", None)
    if load is not None:
        load({})
    return obj


def _plain(cls_name: str) -> Any:
    """A plain factory (``python:bench/bfcl_edge_harness.py:<class>``): a fresh instance with the
    default scenario, no time limit of its own, as a user would write one."""

    def factory() -> Any:
        return instance(cls_name)

    factory.__name__ = cls_name
    return factory


gorilla_file_system = _plain("gorilla_file_system")
math_api = _plain("math_api")
message_api = _plain("message_api")
posting_api = _plain("posting_api")
ticket_api = _plain("ticket_api")
trading_bot = _plain("trading_bot")
travel_booking = _plain("travel_booking")
vehicle_control = _plain("vehicle_control")


def explore(cls_name: str, skip: set[str], out: Any) -> None:
    """The child's work: every method's variants on the default state, then on the distinct
    states that up to three earlier calls reach (each call of a sequence is a probe of its own
    method too). Writes the method before each call (so that the parent can name a hang) and
    each method's first crash."""
    docs = func_docs(cls_name)
    signatures: dict[str, inspect.Signature] = {}
    crashed = set(skip)
    frontier: list[tuple[Any, tuple[Any, ...], list[tuple[str, dict[str, Any]]], int]] = [
        (instance(cls_name), (), [], 0)
    ]
    for depth in range(len(STATES) + 1):
        found: dict[str, tuple[int, int, int, Any, tuple[Any, ...], list[tuple[str, dict[str, Any]]]]] = {}
        ranks: dict[tuple[str, bool], int] = {}
        for obj, pool, sequence, total in frontier:
            here = state_key(obj) + repr(pool)
            for doc in docs:
                name = doc["name"]
                if name in skip:
                    continue
                method = getattr(obj, name)
                signature = signatures.setdefault(name, inspect.signature(method))
                for args, weight in variants(doc, pool, not sequence):
                    if depth == len(STATES) and name in crashed:
                        break  # the last calls are probes only
                    try:
                        signature.bind(**args)
                    except TypeError:  # Python refuses the arguments before the method runs
                        continue
                    copy = deepcopy(obj)
                    out.write(name + "\n")
                    try:
                        result = getattr(copy, name)(**args)
                    except BaseException as exc:
                        if name not in crashed:
                            crashed.add(name)
                            tb = traceback.extract_tb(exc.__traceback__)[-1]
                            witness = {
                                "method": name,
                                "what": f"{len(sequence)} calls before",
                                "calls": [[m, repr(k)[:200]] for m, k in [*sequence, (name, args)]],
                                "exception": f"{type(exc).__name__}: {str(exc)[:120]}",
                                "line": f"{Path(tb.filename).name}:{tb.lineno}",
                            }
                            out.write(json.dumps({"crash": witness}) + "\n")
                        continue
                    if depth < len(STATES):
                        after = harvest(result, pool)
                        key = state_key(copy) + repr(after)
                        if key not in found and key != here:
                            group = (name, weight > 1)  # plain calls, and calls that stored a wrong value
                            rank = ranks[group] = ranks.get(group, -1) + 1
                            found[key] = (
                                rank,
                                total + weight,
                                len(found),
                                copy,
                                after,
                                [*sequence, (name, args)],
                            )
        if depth == len(STATES):
            break
        # every method's plainest call first, then every method's next: a few methods that make
        # many distinct states do not crowd out the rest
        kept = sorted(found.values(), key=lambda item: item[:3])[: STATES[depth]]
        frontier = [(obj, pool, sequence, total) for _, total, _, obj, pool, sequence in kept]


def probe_class(cls_name: str, call_timeout: float) -> dict[str, dict[str, Any]]:
    """Run ``explore`` in forked children; a call past its time limit, a child killed (memory)
    marks the method it was in as crashing, and a new child goes on without that method."""
    crashing: dict[str, dict[str, Any]] = {}
    skip: set[str] = set()
    while True:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            out = os.fdopen(write, "w", buffering=1)
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
            sys.setrecursionlimit(10_000)
            code = 0
            try:
                explore(cls_name, skip, out)
            except MemoryError:
                code = 1  # past the address-space limit outside a call: the method it was in
            except BaseException:
                traceback.print_exc()  # the harness's own error: said, not taken for a crash
                code = HARNESS_ERROR
            finally:
                out.flush()
                os._exit(code)
        os.close(write)
        buffer = b""
        current = ""
        hung = False
        try:
            while True:
                ready, _, _ = select.select([read], [], [], call_timeout)
                if not ready:
                    hung = True
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = os.read(read, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.startswith(b"{"):
                        witness = json.loads(line)["crash"]
                        crashing.setdefault(witness["method"], witness)
                    else:
                        current = line.decode()
        finally:
            os.close(read)
            _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == HARNESS_ERROR:
            raise RuntimeError(f"the harness failed exploring {cls_name} (in {current})")
        died = not hung and (os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0)
        if os.environ.get("HARNESS_DEBUG"):
            print(f"  child ended: hung {hung} died {died} status {status} in {current}", file=sys.stderr)
        if not (hung or died) or not current or current in skip:
            return crashing
        what = f"hang (> {call_timeout} s)" if hung else f"child died (status {status})"
        crashing.setdefault(
            current, {"method": current, "what": "", "calls": [], "exception": what, "line": ""}
        )
        skip = {*crashing, current}


def harness(call_timeout: float) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for cls_name in CLASSES:
        docs = func_docs(cls_name)
        crashing = probe_class(cls_name, call_timeout)
        order = [d["name"] for d in docs]
        crashing = {m: crashing[m] for m in order if m in crashing}
        found[cls_name] = {"methods": order, "crashing": crashing}
        print(f"{cls_name:22} {len(crashing):2} of {len(docs):2} methods crash", flush=True)
    return found


def fuzz_crashes(paths: list[str]) -> dict[str, set[str]]:
    """Methods with a crash, hang or resource finding in ``envfactory fuzz --format json`` outputs,
    keyed by the class named in the file name (``<class>.json``)."""
    out: dict[str, set[str]] = {}
    for path in paths:
        cls_name = Path(path).stem
        summary = json.loads(Path(path).read_text())
        out[cls_name] = {
            f["operation"]
            for f in summary.get("findings", [])
            if f.get("kind") in ("crash", "hang", "resource")
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--call-timeout", type=float, default=3.0)
    parser.add_argument("--json", help="write the methods shown crashing (with witnesses) here")
    parser.add_argument("--load", help="read an earlier --json output instead of running the harness")
    parser.add_argument("--compare", nargs="*", default=[], help="fuzz --format json outputs, one per class")
    parser.add_argument("--verbose", action="store_true", help="print each witness")
    args = parser.parse_args()
    found = json.loads(Path(args.load).read_text()) if args.load else harness(args.call_timeout)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))
    total = sum(len(v["crashing"]) for v in found.values())
    methods = sum(len(v["methods"]) for v in found.values())
    print(f"harness: {total} of {methods} methods crash on JSON inputs")
    if args.verbose:
        for cls_name, v in found.items():
            for method, w in v["crashing"].items():
                print(f"  {cls_name}.{method}: {w.get('what')} -> {w.get('exception')} {w.get('line')}")
    if args.compare:
        fuzzed = fuzz_crashes(args.compare)
        hit = 0
        for cls_name, v in found.items():
            shown = set(v["crashing"])
            got = fuzzed.get(cls_name, set())
            hit += len(shown & got)
            missed = sorted(shown - got)
            extra = sorted(got - shown)
            print(
                f"{cls_name:22} fuzz found {len(shown & got):2} of {len(shown):2}; missed {missed}; beyond harness {extra}"
            )
        print(f"fuzz found crashes in {hit} of the {total} methods the harness shows crashing")


if __name__ == "__main__":
    main()
