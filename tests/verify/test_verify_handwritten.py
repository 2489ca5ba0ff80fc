"""bench/handwritten_tickets.py, the hand-written checker bench_verify.py measures envfactory
against, agrees with ``envfactory.verify`` on generated trajectories and on mutations of them
made to fail at a known place (verdict, step and kind): else the comparison would be unfair."""

from __future__ import annotations

import copy
import random
import sys
from pathlib import Path
from typing import Any

import orjson

import envfactory
from envfactory.statemachine.walk import generate
from envfactory.trajectory import to_json

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import handwritten_tickets as H  # noqa: E402


def _mutate(traj: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(traj)
    steps = out["steps"]
    i = rng.randrange(len(steps))
    step = steps[i]
    kind = rng.randrange(10)
    if kind == 0:
        step["tool"] = step["tool"] + "_x"
    elif kind == 1 and step["input"]:
        del step["input"][rng.choice(sorted(step["input"]))]
    elif kind == 2:
        step["input"]["extra"] = 1
    elif kind == 3 and "id" in step["input"]:
        step["input"]["id"] = rng.choice([999, 0, "1", True])
    elif kind == 4 and step["tool"] == "create_ticket":
        step["input"]["title"] = rng.choice(["", "x" * 121, 7])
    elif kind == 5 and isinstance(step.get("output"), dict) and "id" in step["output"]:
        step["output"]["id"] += rng.choice([1, -1])
    elif kind == 6 and isinstance(step.get("output"), dict) and "status" in step["output"]:
        step["output"]["status"] = rng.choice(["closed", "nope"])
    elif kind == 7 and isinstance(step.get("output"), dict) and "count" in step["output"]:
        step["output"]["count"] += 1
    elif kind == 8 and i + 1 < len(steps):
        steps[i], steps[i + 1] = steps[i + 1], steps[i]
    else:
        steps.insert(i, copy.deepcopy(step))  # a repeated call: often a precondition failure
    return out


def test_the_handwritten_checker_agrees_with_envfactory(tmp_path: Path) -> None:
    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    rng = random.Random(17)
    docs = [to_json(t) for t in generate(contract, 150, seed=5)]
    docs += [_mutate(doc, rng) for doc in docs for _ in range(3)]
    lines = [orjson.dumps(d) for d in docs]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    results = envfactory.verify(contract, envfactory.read_trajectories(path))
    compared = 0
    kinds = set()
    for line, result in zip(lines, results, strict=True):
        mine = H.check(orjson.loads(line))
        if mine is None:
            continue
        compared += 1
        kinds.add(result.kind)
        assert mine == (result.id, result.verdict, result.step, result.kind), (line, result)
    assert compared >= 0.8 * len(lines)
    assert {None, "unknown_tool", "input_schema", "precondition", "output_schema", "postcondition"} <= kinds
