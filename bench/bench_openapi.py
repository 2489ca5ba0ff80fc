"""OpenAPI contracts: per-call input/output validation, and loading the published documents.

The per-call path of ``verify``/``fuzz``/``serve`` validates every input and output against the
operation's schema. envfactory bundles each OpenAPI schema once (refs into ``$defs``, dialect
normalized) and compiles it (``jsonschema-rs``); the baseline validates the same calls with the
pure-Python ``jsonschema`` Draft 2020-12 validator built once on the same bundled schemas, the
way a straightforward implementation would. Both see identical schemas and values in one process
run; the script prints the ratio and the absolute figures, plus how long each published document
takes to load (parse, translate, infer, bundle, type-check, compile).

Then, on the large published documents (Stripe, Box), the part of loading that issue 16 made
scale, before and after in the same run: every operation's schemas bundled per use (each one a
self-contained copy of everything it refers to, then typed on its own: the loader before) against
one shared ``$defs`` per document (each reference copied and normalized once, typed once). It
prints the time and how many schema nodes each way builds, and the whole ``envfactory.load``.
Whole-process figures as a user runs ``check`` are measured with ``/usr/bin/time -v`` (see the
issue-16 note); this script compares the two ways inside one process.

    python bench/bench_openapi.py [--rounds N] [--skip-large]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

import envfactory

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "realworld" / "corpus"

PET = {
    "id": 10,
    "name": "doggie",
    "photoUrls": ["a", "b"],
    "category": {"id": 1, "name": "Dogs"},
    "tags": [{"id": 1, "name": "good"}],
    "status": "available",
}
ORDER = {
    "id": 5,
    "petId": 10,
    "quantity": 1,
    "shipDate": "2026-01-01T00:00:00Z",
    "status": "placed",
    "complete": False,
}
USER = {
    "id": 1,
    "username": "ann",
    "firstName": "Ann",
    "lastName": "Lee",
    "email": "a@b.c",
    "password": "x",
    "phone": "1",
    "userStatus": 1,
}


def calls() -> list[tuple[str, str, Any]]:
    """(operation, input|output, value): valid and broken values, as an agent's trajectories have them."""
    valid: list[tuple[str, str, Any]] = [
        ("addPet", "input", PET),
        ("addPet", "output", PET),
        ("updatePet", "input", {**PET, "status": "sold"}),
        ("getPetById", "input", {"petId": 10}),
        ("getPetById", "output", PET),
        ("findPetsByStatus", "input", {"status": "pending"}),
        ("findPetsByStatus", "output", [PET] * 5),
        ("placeOrder", "input", ORDER),
        ("placeOrder", "output", ORDER),
        ("createUser", "input", USER),
        ("updateUser", "input", {"username": "ann", "body": USER}),
        ("deletePet", "input", {"petId": 10, "api_key": "k"}),
    ]
    broken: list[tuple[str, str, Any]] = [
        ("addPet", "input", {"name": "x"}),
        ("addPet", "input", {**PET, "status": "lost"}),
        ("getPetById", "input", {"petId": "ten"}),
        ("placeOrder", "input", {**ORDER, "quantity": "one"}),
        ("findPetsByStatus", "output", [PET, {"name": 3}]),
    ]
    return valid * 3 + broken


def _raw_schemas(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per operation, the raw input wrapper and output schema the translator bundles."""
    from envfactory.contracts import _refs

    result = []
    for item in doc["paths"].values():
        for method, op in item.items():
            if method not in ("get", "put", "post", "delete", "patch") or not isinstance(op, Mapping):
                continue
            props: dict[str, Any] = {}
            for param in [*item.get("parameters", []), *op.get("parameters", [])]:
                param = _refs.resolve_local(doc, param["$ref"]) if "$ref" in param else param
                props[param["name"]] = param.get("schema", {})
            for media in (op.get("requestBody") or {}).get("content", {}).values():
                props["body"] = media.get("schema", {})
                break
            result.append({"type": "object", "properties": props})
            for code, response in sorted(op.get("responses", {}).items()):
                if str(code).startswith("2"):
                    for media in (response.get("content") or {}).values():
                        result.append(media.get("schema", {}))
                        break
                    break
    return result


def _nodes(node: Any, seen: set[int]) -> int:
    if id(node) in seen or not isinstance(node, Mapping | list):
        return 0
    seen.add(id(node))
    values = node.values() if isinstance(node, Mapping) else node
    return 1 + sum(_nodes(v, seen) for v in values)


def large_documents() -> None:
    """Bundling and typing every operation's schemas: per use (before) against shared (after)."""
    from envfactory.contracts import _refs, types
    from envfactory.contracts._source import load_document
    from envfactory.contracts._validate import normalize_openapi

    for name in ("stripe-spec3.json", "box-openapi.json"):
        path = CORPUS / name
        if not path.exists():
            continue
        doc = load_document(path)
        raws = _raw_schemas(doc)
        version = str(doc["openapi"])

        start = time.perf_counter()
        seen: set[int] = set()
        before_nodes = 0
        kept = []  # alive while counting, so that no id is reused
        for raw in raws:
            bundled = normalize_openapi(_refs.bundle(raw, document=doc, document_path=path), version)
            kept.append(bundled)
            before_nodes += _nodes(bundled, seen)
            types.from_schema(bundled, lambda ref, b=bundled: _refs.resolve_local(b, ref))
        t_before = time.perf_counter() - start
        del kept

        start = time.perf_counter()
        shared = _refs.DocumentBundler(doc, path, transform=lambda s, v=version: normalize_openapi(s, v))
        cache: dict[Any, Any] = {}
        kept = []
        for raw in raws:
            bundled = shared.bundle(raw)
            kept.append(bundled)
            types.from_schema(bundled, lambda ref, b=bundled: _refs.resolve_local(b, ref), cache=cache)
        t_after = time.perf_counter() - start
        seen = set()  # counted once all are built: the shared $defs grow as schemas use them
        after_nodes = sum(_nodes(bundled, seen) for bundled in kept)

        start = time.perf_counter()
        contract = envfactory.load(path)
        t_load = time.perf_counter() - start
        size = len(json.dumps(contract.operations[next(iter(contract.operations))].input_schema["$defs"]))
        print(f"{name}: {len(raws)} schemas of {len(contract.operations)} operations")
        print(f"  per use (before): {t_before:.2f} s, {before_nodes} schema nodes built")
        print(f"  shared (after):   {t_after:.2f} s, {after_nodes} schema nodes built")
        print(
            f"  ratio: {t_before / t_after:.1f}x faster, {before_nodes / max(after_nodes, 1):.1f}x fewer nodes"
        )
        print(
            f"  envfactory.load (parse, translate, infer, type-check): {t_load:.2f} s; shared $defs {size} bytes"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--skip-large", action="store_true", help="leave out Stripe and Box")
    args = parser.parse_args()
    if not args.skip_large:
        large_documents()

    load_times = {}
    for path in sorted(CORPUS.glob("*.yaml")):
        start = time.perf_counter()
        envfactory.load(path)
        load_times[path.name] = time.perf_counter() - start

    contract = envfactory.load(CORPUS / "swagger-petstore-v3.yaml")
    work = calls()
    ours = []
    theirs = []
    for name, side, value in work:
        op = contract.operations[name]
        schema = op.input_schema if side == "input" else op.output_schema
        validator = op.input_validator if side == "input" else op.output_validator
        ours.append((validator, value))
        theirs.append((jsonschema.Draft202012Validator(dict(schema)), value))
    verdicts_ours = [v.is_valid(x) for v, x in ours]
    verdicts_theirs = [v.is_valid(x) for v, x in theirs]
    assert verdicts_ours == verdicts_theirs, "the two validators disagree"

    start = time.perf_counter()
    for _ in range(args.rounds):
        for validator, value in ours:
            validator.is_valid(value)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.rounds):
        for validator, value in theirs:
            validator.is_valid(value)
    t_theirs = time.perf_counter() - start

    n = args.rounds * len(work)
    print(
        f"per-call validation, swagger-petstore-v3, {len(work)} values x {args.rounds} rounds ({n} checks):"
    )
    print(f"  envfactory (bundled, compiled):  {t_ours:.3f} s  ({t_ours / n * 1e6:.2f} us/check)")
    print(f"  jsonschema Draft 2020-12 (pure): {t_theirs:.3f} s  ({t_theirs / n * 1e6:.2f} us/check)")
    print(f"  ratio: {t_theirs / t_ours:.1f}x faster")
    print("loading the published documents (parse, translate, infer, bundle, type-check, compile):")
    for name, seconds in load_times.items():
        print(f"  {name}: {seconds * 1000:.1f} ms")


if __name__ == "__main__":
    main()
