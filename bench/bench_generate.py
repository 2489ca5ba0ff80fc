"""Benchmark: trajectory generation against naive baselines, in one process run.

1. Valid trajectories per second: ``generate`` vs rejection sampling (random operations with
   inputs drawn from their schemas, run on the simulator; a trajectory is kept only when every
   call was allowed, and only once).
2. State-graph edge coverage for a fixed time budget on a contract with deep states (an order
   pipeline of six stages): ``generate`` vs a random walk that keeps whichever random calls the
   contract allows.
3. ``--jobs 2`` vs ``--jobs 1`` (process pool; the same file either way).

Run: ``.venv/bin/python bench/bench_generate.py`` (about a minute).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import envfactory  # noqa: E402
from envfactory.contracts.model import Contract  # noqa: E402
from envfactory.solver.graph import compile as compile_graph  # noqa: E402
from envfactory.statemachine.abstraction import predicates, valuation  # noqa: E402
from envfactory.statemachine.sampling import Sampler  # noqa: E402
from envfactory.statemachine.simulator import Simulator  # noqa: E402
from envfactory.statemachine.walk import LoadSpec, ProcessWalks, generate  # noqa: E402
from envfactory.trajectory import Trajectory, dumps_jsonl  # noqa: E402

PIPELINE = """envfactory: "1"
info: {title: Order pipeline, version: "1"}
state:
  orders:
    collection:
      key: {type: integer}
      value:
        type: object
        properties: {stage: {type: string, enum: [new, paid, packed, shipped, delivered, closed]}}
        required: [stage]
  archived: {type: integer, initial: 0}
operations:
  create:
    input: {type: object, properties: {id: {type: integer, minimum: 1, maximum: 100000}}, required: [id]}
    requires: [not (input.id in orders)]
    effects: ['orders[input.id] = {"stage": "new"}']
%(stages)s
  archive:
    input: {type: object, properties: {id: {type: integer, minimum: 1, maximum: 100000}}, required: [id]}
    requires: ['input.id in orders and orders[input.id].stage == "closed"']
    effects: ["del orders[input.id]", "archived = archived + 1"]
goals:
  archived_one: archived >= 1
"""
STAGES = [
    ("pay", "new", "paid"),
    ("pack", "paid", "packed"),
    ("ship", "packed", "shipped"),
    ("deliver", "shipped", "delivered"),
    ("close", "delivered", "closed"),
]


def pipeline_contract(folder: Path) -> Contract:
    stages = "\n".join(
        f"""  {name}:
    input: {{type: object, properties: {{id: {{type: integer, minimum: 1, maximum: 100000}}}}, required: [id]}}
    requires: ['input.id in orders and orders[input.id].stage == "{before}"']
    effects: ['orders[input.id].stage = "{after}"']"""
        for name, before, after in STAGES
    )
    path = folder / "pipeline.yaml"
    path.write_text(PIPELINE % {"stages": stages})
    return envfactory.load(path)


def random_calls(contract: Contract, rng: random.Random, sim: Simulator) -> tuple[str, object]:
    tool = rng.choice(sorted(contract.operations))
    op = contract.operations[tool]
    return tool, Sampler(rng).value(op.input_schema, op.input_schema)


def rejection_sampling(contract: Contract, budget: float, seed: int = 0) -> tuple[int, int]:
    """Valid distinct trajectories found in ``budget`` seconds, and calls made."""
    rng = random.Random(seed)
    kept: set[str] = set()
    calls = 0
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline:
        sim = Simulator(contract, seed=rng.getrandbits(31))
        ok = True
        for _ in range(rng.randint(1, 10)):
            tool, value = random_calls(contract, rng, sim)
            calls += 1
            if not sim.call(tool, value).ok:
                ok = False
                break
        if ok:
            kept.add(repr([(t, i) for t, i, _ in sim.history]))
    return len(kept), calls


def timed_generate(contract: Contract, budget: float, seed: int = 0) -> tuple[int, list[Trajectory]]:
    """Trajectories ``generate`` streams out in ``budget`` seconds (planning included)."""
    made = []
    deadline = time.perf_counter() + budget
    for traj in generate(contract, 100_000, seed=seed):
        made.append(traj)
        if time.perf_counter() >= deadline:
            break
    return len(made), made


def graph_edges(contract: Contract) -> set[tuple[object, str, object]]:
    graph = compile_graph(contract)
    preds = predicates(contract)

    def node(ident: str) -> tuple[bool, ...]:
        return tuple(graph.nodes[ident]["valuation"][p.text] for p in preds)

    return {(node(u), d["operation"], node(v)) for u, v, d in graph.edges(data=True)}


def covered_by(
    contract: Contract, histories: list[list[tuple[str, object]]]
) -> set[tuple[object, str, object]]:
    preds = predicates(contract)
    seen = set()
    for calls in histories:
        sim = Simulator(contract)
        for tool, value in calls:
            before = valuation(preds, sim.state)
            if sim.call(tool, value).ok:
                seen.add((before, tool, valuation(preds, sim.state)))
    return seen


def random_walk(contract: Contract, budget: float, seed: int = 0) -> list[list[tuple[str, object]]]:
    rng = random.Random(seed)
    walks = []
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline:
        sim = Simulator(contract, seed=rng.getrandbits(31))
        for _ in range(10):
            tool, value = random_calls(contract, rng, sim)
            twin = sim.fork()
            if twin.call(tool, value).ok:
                sim = twin
        walks.append([(t, i) for t, i, _ in sim.history])
    return walks


def main() -> None:
    print("1. valid distinct trajectories per second (generate n=300, planning included;")
    print("   rejection sampling given the same wall time)")
    for name in ("bank/bank.yaml", "petstore/petstore.yaml", "tickets/tickets.yaml"):
        contract = envfactory.load(ROOT / "examples" / name)
        start = time.perf_counter()
        count = sum(1 for _ in generate(contract, 300, seed=0))
        spent = time.perf_counter() - start
        ours = count / spent
        kept, calls = rejection_sampling(contract, spent)
        base = kept / spent
        ratio = ours / base if base else float("inf")
        print(
            f"   {name:24s} generate {ours:7.1f}/s ({spent:.2f} s)   rejection sampling {base:7.1f}/s"
            f" ({kept} kept of {calls} calls)   ratio {ratio:.1f}x"
        )

    print("2. state-graph edge coverage in 3 s, deep pipeline contract (planning included)")
    with tempfile.TemporaryDirectory() as tmp:
        contract = pipeline_contract(Path(tmp))
        edges = graph_edges(contract)
        _, made = timed_generate(contract, 3.0)
        covered = covered_by(contract, [[(s.tool, s.input) for s in t.steps] for t in made]) & edges
        walked = covered_by(contract, random_walk(contract, 3.0)) & edges
        stages = {s.tool for t in made for s in t.steps}
        print(
            f"   graph edges {len(edges)}: generate covers {len(covered)} ({len(stages)} operations),"
            f" random walk {len(walked)}"
        )
        print(f"   coverage ratio {len(covered) / max(1, len(walked)):.1f}x")

    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"3. --jobs 2 vs 1 (tickets, n=1500; {os.cpu_count()} CPUs, load average {load:.1f})")
    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    start = time.perf_counter()
    serial = dumps_jsonl(generate(contract, 1500, seed=1))
    one = time.perf_counter() - start
    runner = ProcessWalks(LoadSpec(str(ROOT / "examples" / "tickets" / "tickets.yaml")), 2)
    try:
        start = time.perf_counter()
        parallel = dumps_jsonl(generate(contract, 1500, seed=1, map_walks=runner))
        two = time.perf_counter() - start
    finally:
        runner.close()
    assert parallel == serial, "parallel output differs from serial output"
    print(
        f"   jobs 1 {one:.2f} s ({1500 / one:.0f}/s)   jobs 2 {two:.2f} s ({1500 / two:.0f}/s)   speed-up {one / two:.2f}x (same bytes)"
    )


if __name__ == "__main__":
    main()
