"""An independent edge-case harness for BFCL's executable API classes (issue 15's BFCL criterion).

Run: ``.venv/bin/python bench/bfcl_edge_harness.py [--json FILE] [--compare FUZZ.json ...]``

It does not use envfactory. For each method of the eight classes it reads the parameter types
from the function doc and calls the method directly, on a fresh instance with the default
scenario (``_load_scenario({})``), with JSON values chosen by hand:

* every parameter in turn at the edges of its declared type (0, -1, integers past 64 bits,
  -0.0, 1e308, empty, very long and non-ASCII strings, empty and odd lists) and of the wrong
  JSON type (null, true, a number, a string, a list, an object), the others at plain values;
* a required argument missing, and no arguments at all (a ``TypeError`` Python raises while
  binding the arguments, before the method runs, does not count: it is the caller's error);
* simple stateful pairs: each other method (or the same one) called first with plain values,
  every string the same name, then this one with plain values.

A method "crashes" when a call raises (any exception: the classes answer errors with dicts),
runs past ``--call-timeout`` seconds (a hang) or past a 2 GiB address space. Each method runs in
its own forked child, so a hang or a memory blow-up costs that method alone. Printed: the methods
shown crashing per class and in all, with one witness call each; ``--compare`` reads the JSON
summaries of ``envfactory fuzz --format json`` runs (one per class) and prints which of those
methods the fuzzer found crashing (kinds crash, hang and resource) and which it missed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import select
import signal
import sys
import traceback
from collections.abc import Iterator
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
NAME = "a"

WRONG: list[Any] = [None, True, 7, 1.5, "x", [], {}, [1, 2], {"a": 1}]
EDGES: dict[str, list[Any]] = {
    "integer": [0, -1, 1, 2**63, -(2**63) - 1, 2**64 + 1, 10**30, -(10**30)],
    "float": [0.0, -0.0, -1.0, 1e308, -1e308, 5e-324, 1e30, -1e30, 0.5],
    "string": ["", " ", "x" * 10_000, "ü€😀", "\x00", "/", "..", "a/b", "-1", "0", "1e999"],
    "boolean": [False],
    "array": [[], [None], [""], [0], [1e308, -1e308, 1e308], [[]], [{}], ["x" * 1000]],
    "dict": [{}, {"": None}],
}


def func_doc_path(name: str) -> Path:
    """The class's function doc (its tool list) in the installed ``bfcl_eval`` package."""
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data" / "multi_turn_func_doc" / f"{name}.json"


def func_docs(name: str) -> list[dict[str, Any]]:
    path = func_doc_path(name)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plain(schema: dict[str, Any]) -> Any:
    """An ordinary value of the parameter's type (the first enum value where there is one)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        return [plain(items)]
    return {"integer": 1, "float": 1.0, "number": 1.0, "boolean": True, "dict": {}, "object": {}}.get(
        kind, NAME
    )


def calls(
    doc: dict[str, Any], docs: list[dict[str, Any]]
) -> Iterator[tuple[list[tuple[str, dict[str, Any]]], str]]:
    """Call sequences for one method, each with a short description."""
    name = doc["name"]
    params = doc.get("parameters", {}).get("properties", {}) or {}
    required = doc.get("parameters", {}).get("required", []) or []
    base = {p: plain(s) for p, s in params.items()}
    for p, schema in params.items():
        kind = "float" if schema.get("type") == "number" else schema.get("type", "string")
        for value in [*EDGES.get(kind, []), *WRONG]:
            yield [(name, {**base, p: value})], f"{p}={value!r:.40}"
    for p in required:
        yield [(name, {k: v for k, v in base.items() if k != p})], f"without {p}"
    yield [(name, {})], "no arguments"
    yield [(name, {p: None for p in params})], "every argument null"
    for other in docs:
        other_base = {
            p: plain(s) for p, s in (other.get("parameters", {}).get("properties", {}) or {}).items()
        }
        yield [(other["name"], other_base), (name, base)], f"after {other['name']}"


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


def probe_method(
    cls_name: str, doc: dict[str, Any], docs: list[dict[str, Any]], call_timeout: float
) -> dict[str, Any] | None:
    """Run the method's calls in a forked child; the first crash, hang or memory blow-up, or None."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run every call, report each start and each crash
        os.close(read)
        out = os.fdopen(write, "w", buffering=1)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        sys.setrecursionlimit(10_000)
        for index, (sequence, what) in enumerate(calls(doc, docs)):
            out.write(json.dumps({"start": index, "what": what}) + "\n")
            obj = instance(cls_name)
            for step, (method, kwargs) in enumerate(sequence):
                last = step == len(sequence) - 1
                try:
                    getattr(obj, method)(**kwargs)
                except BaseException as exc:
                    tb = traceback.extract_tb(exc.__traceback__)[-1]
                    if not last or tb.filename == __file__:
                        # the setup call failed, or Python refused the arguments (a missing
                        # one) before the method ran: not the method's crash
                        break
                    out.write(
                        json.dumps(
                            {
                                "crash": index,
                                "what": what,
                                "calls": [[m, repr(k)[:200]] for m, k in sequence],
                                "exception": f"{type(exc).__name__}: {str(exc)[:120]}",
                                "line": f"{Path(tb.filename).name}:{tb.lineno}",
                            }
                        )
                        + "\n"
                    )
                    os._exit(0)
        os._exit(0)
    os.close(write)
    buffer = b""
    current: dict[str, Any] = {}
    result: dict[str, Any] | None = None
    try:
        while True:
            ready, _, _ = select.select([read], [], [], call_timeout)
            if not ready:  # a call past its time limit: a hang
                result = {"what": current.get("what"), "exception": f"hang (> {call_timeout} s)", "line": ""}
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read, 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "crash" in message:
                    result = message
                else:
                    current = message
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    if result is None and os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        result = {
            "what": current.get("what"),
            "exception": f"killed by signal {os.WTERMSIG(status)}",
            "line": "",
        }
    elif result is None and os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
        result = {"what": current.get("what"), "exception": "child died (memory?)", "line": ""}
    return result


def harness(call_timeout: float) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for cls_name in CLASSES:
        docs = func_docs(cls_name)
        crashing = {}
        for doc in docs:
            witness = probe_method(cls_name, doc, docs, call_timeout)
            if witness is not None:
                crashing[doc["name"]] = witness
        found[cls_name] = {"methods": [d["name"] for d in docs], "crashing": crashing}
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
