"""`plan` and `prove` (symbolic, Z3) against explicit-state breadth-first search, as N grows.

The contract (``bench/contracts/warehouse.py``) has (N + 2) ** N reachable concrete states. For
each N, in one run:

* plan: BMC for the goal (six calls at every N) vs BFS over concrete states with every input of
  the bounded domain (items and amounts 1..N) until the goal;
* prove: k-induction of the invariants vs BFS visiting every reachable state to check them.

BFS gets a time limit per N and is reported as "> limit" when it runs out. The symbolic times
should stay nearly flat while the explicit ones explode.

    python bench/bench_plan_prove.py [--sizes 3,4,5,6,8,16] [--limit 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "contracts"))

from warehouse import write

import envfactory
from envfactory.solver.bmc import holds, plan
from envfactory.solver.induction import prove
from envfactory.statemachine.reachability import explicit_bfs, input_domain


def _fmt(seconds: float | None, limit: float) -> str:
    return f"> {limit:.0f}s" if seconds is None else f"{seconds:8.3f}s"


def _ratio(explicit: float | None, symbolic: float, limit: float) -> str:
    if explicit is None:
        return f"> {limit / symbolic:7.1f}x"
    return f"{explicit / symbolic:9.1f}x"


def row(n: int, folder: Path, limit: float) -> str:
    """Time the four runs for one N; one line of the table."""
    contract = envfactory.load(write(n, folder))
    goal = contract.goals["three_full"]
    domain = input_domain(contract, ints=range(0, n + 1))

    started = time.perf_counter()
    result = plan(contract, goal, max_depth=8)
    plan_z3 = time.perf_counter() - started
    assert result.status == "found" and result.depth == 6, result

    search = explicit_bfs(contract, lambda s: holds(goal, s), domain, max_depth=8, time_limit=limit)
    plan_bfs = None if search.cut else search.seconds
    if not search.cut:
        assert search.depth == result.depth

    started = time.perf_counter()
    proof = prove(contract)
    prove_z3 = time.perf_counter() - started
    assert proof.status == "proved", proof

    def broken(state: Any) -> bool:
        return not all(holds(c, state) for c in contract.invariants)

    full = explicit_bfs(contract, broken, domain, max_depth=10 * n, time_limit=limit)
    prove_bfs = None if full.cut else full.seconds
    count = (n + 2) ** n
    states = f"{count:,}" if count < 10**7 else f"{count:.1e}"
    return (
        f"{n:>3} {states:>10} | {plan_z3:8.3f}s {_fmt(plan_bfs, limit):>9} "
        f"{_ratio(plan_bfs, plan_z3, limit):>10} | {prove_z3:8.3f}s "
        f"{_fmt(prove_bfs, limit):>9} {_ratio(prove_bfs, prove_z3, limit):>10}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3,4,5,6,8,16")
    parser.add_argument("--limit", type=float, default=4.0, help="BFS seconds per N and task")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'N':>3} {'states':>10} | {'plan Z3':>9} {'plan BFS':>9} {'ratio':>10} | "
        f"{'prove Z3':>9} {'prove BFS':>9} {'ratio':>10}"
    )
    with tempfile.TemporaryDirectory(prefix="envfactory-bench-") as folder:
        for n in sizes:
            print(row(n, Path(folder), args.limit), flush=True)
    print("ratio = explicit BFS time / symbolic time (higher: symbolic faster)")


if __name__ == "__main__":
    main()
