"""Compiled-closure evaluation against the tree-walking interpreter over the same IR.

Evaluates every clause of the bundled contracts (requires, ensures, invariants, goals) on a
populated state, many times, with each interpreter, in one process run, and prints the ratio.
Target: compiled closures at least 5x the tree walker.

    python bench/bench_evaluator.py [--rounds N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from envfactory.contracts import load
from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.interpreter import Interpreter
from envfactory.contracts.values import FrozenMap

ROOT = Path(__file__).resolve().parent.parent / "examples"


def workload() -> list[tuple[object, Env]]:
    """(clause, env) pairs over the three bundled contracts with states of 50 entries."""
    pets = FrozenMap({i: {"id": i, "name": f"p{i}", "price": i % 40} for i in range(1, 51)})
    accounts = FrozenMap(
        {f"AA{i:02d}": {"owner": f"o{i}", "balance": i * 10, "frozen": i % 7 == 0} for i in range(50)}
    )
    tickets = FrozenMap(
        {
            i: {
                "id": i,
                "title": "t",
                "priority": "low",
                "status": ["open", "in_progress", "closed"][i % 3],
                "assignee": "moss",
            }
            for i in range(1, 51)
        }
    )
    states = {
        "petstore": (
            FrozenMap({"user": "ann", "balance": 100, "pets": pets}),
            {"petId": 7, "id": 99, "name": "x", "price": 3},
            {"id": 7, "name": "p7", "price": 7, "count": 50, "balance": 90, "user": "ann"},
        ),
        "bank": (
            FrozenMap({"accounts": accounts, "transfers": 3}),
            {"account": "AA03", "source": "AA03", "target": "AA04", "amount": 5},
            {"balance": 30},
        ),
        "tickets": (
            FrozenMap({"next_id": 51, "tickets": tickets}),
            {"id": 4, "title": "t", "priority": "low", "assignee": "x"},
            {"id": 50, "status": "open", "count": 34},
        ),
    }
    pairs: list[tuple[object, Env]] = []
    for name, (state, inp, out) in states.items():
        contract = load(ROOT / name / f"{name}.yaml")
        env = Env(state, inp, out)
        clauses = [c for op in contract.operations.values() for c in op.requires + op.ensures]
        clauses += list(contract.invariants) + list(contract.goals.values())
        pairs += [(c, env) for c in clauses]
    return pairs


def run(pairs: list[tuple[object, Env]], rounds: int, compiled: bool) -> float:
    interp = Interpreter()
    start = time.perf_counter()
    for _ in range(rounds):
        for clause, env in pairs:
            try:
                if compiled:
                    clause.fn(env)  # type: ignore[attr-defined]
                else:
                    interp.eval(clause.expr, env)  # type: ignore[attr-defined]
            except EvaluationError:
                pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    pairs = workload()
    run(pairs, 5, True), run(pairs, 5, False)  # warm up
    walker = min(run(pairs, args.rounds, False) for _ in range(3))
    compiled = min(run(pairs, args.rounds, True) for _ in range(3))
    evaluations = len(pairs) * args.rounds
    print(f"clauses: {len(pairs)}  evaluations per run: {evaluations}")
    print(f"tree walker:      {evaluations / walker:12,.0f} evaluations/s  ({walker * 1e3:.1f} ms)")
    print(f"compiled closures:{evaluations / compiled:12,.0f} evaluations/s  ({compiled * 1e3:.1f} ms)")
    print(f"ratio compiled/walker: {walker / compiled:.2f}x  (target >= 5x)")


if __name__ == "__main__":
    main()
