"""OpenAPI contracts: per-call input/output validation, and loading the published documents.

The per-call path of ``verify``/``fuzz``/``serve`` validates every input and output against the
operation's schema. envfactory bundles each OpenAPI schema once (refs into ``$defs``, dialect
normalized) and compiles it (``jsonschema-rs``); the baseline validates the same calls with the
pure-Python ``jsonschema`` Draft 2020-12 validator built once on the same bundled schemas, the
way a straightforward implementation would. Both see identical schemas and values in one process
run; the script prints the ratio and the absolute figures, plus how long each published document
takes to load (parse, translate, infer, bundle, type-check, compile).

    python bench/bench_openapi.py [--rounds N]
"""

from __future__ import annotations

import argparse
import time
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()

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
