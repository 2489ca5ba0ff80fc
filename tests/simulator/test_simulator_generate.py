"""Trajectory generation: valid, covering, diverse, deterministic, loadable, parallel."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.contracts.model import Contract
from envfactory.statemachine.walk import explore, generate, goal_predicate
from envfactory.trajectory import dumps_jsonl, read_trajectories

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["bank/bank.yaml", "petstore/petstore.yaml", "tickets/tickets.yaml"]


def _load(name: str) -> Contract:
    return envfactory.load(ROOT / "examples" / name)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_trajectories_are_valid_distinct_and_cover_every_operation(name: str) -> None:
    contract = _load(name)
    trajs = list(generate(contract, 50, seed=2))
    assert len(trajs) == 50
    results = list(envfactory.verify(contract, trajs))
    assert Counter(r.verdict for r in results) == {"valid": 50}, [
        r.message for r in results if r.verdict != "valid"
    ][:3]
    calls = {tuple((s.tool, repr(s.input)) for s in t.steps) for t in trajs}
    assert len(calls) == 50
    assert len({t.id for t in trajs}) == 50
    used = {s.tool for t in trajs for s in t.steps}
    assert used == set(explore(contract).operations)
    assert used == set(contract.operations)  # every operation of the examples is reachable
    lengths = Counter(len(t.steps) for t in trajs)
    assert len(lengths) >= 5


def test_coverage_trajectories_cover_every_explored_edge() -> None:
    from envfactory.statemachine.walk import Abstraction, cover_paths

    contract = _load("bank/bank.yaml")
    found = explore(contract, seed=1)
    abstraction = Abstraction(contract)
    covered = set()
    for path in cover_paths(found):
        sim = envfactory.Simulator(contract)
        for tool, value in path:
            pre = abstraction.of(sim.state)
            assert sim.call(tool, value).ok
            covered.add((pre, tool, abstraction.of(sim.state)))
    assert set(found.edges) <= covered


def test_same_seed_same_file_other_seed_other_file() -> None:
    contract = _load("petstore/petstore.yaml")
    a = dumps_jsonl(generate(contract, 20, seed=7))
    b = dumps_jsonl(generate(contract, 20, seed=7))
    c = dumps_jsonl(generate(contract, 20, seed=8))
    assert a == b and a != c


@pytest.mark.parametrize("goal", ["rich", "len(accounts) >= 3"])
def test_goal_directed_trajectories_end_in_the_goal(goal: str) -> None:
    contract = _load("bank/bank.yaml")
    holds = goal_predicate(contract, goal)
    trajs = list(generate(contract, 15, seed=1, goal=goal))
    assert len(trajs) == 15
    for traj in trajs:
        sim = envfactory.Simulator(contract, seed=traj.seed or 0)
        for step in traj.steps:
            assert sim.call(step.tool, step.input).ok
        assert holds(sim.state), traj.id
    assert all(r.verdict == "valid" for r in envfactory.verify(contract, trajs))


def test_unreachable_goal_is_a_usage_error() -> None:
    contract = _load("bank/bank.yaml")
    with pytest.raises(envfactory.UsageError):
        list(generate(contract, 3, seed=1, goal="transfers < 0", max_length=3))


def test_cli_jobs_give_the_same_bytes_and_datasets_reads_the_file(tmp_path: Path) -> None:
    two = tmp_path / "two.jsonl"
    contract = ROOT / "examples" / "tickets" / "tickets.yaml"
    result = run("generate", str(contract), "-n", "40", "-o", str(two), "--seed", "5", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert "wrote 40 trajectories" in result.stderr
    serial = dumps_jsonl(generate(envfactory.load(contract), 40, seed=5))
    assert two.read_text() == serial
    assert all(not isinstance(t, Exception) for t in read_trajectories(two))

    import datasets

    data = datasets.load_dataset("json", data_files=str(two), split="train", cache_dir=str(tmp_path / "hf"))
    assert len(data) == 40
    assert [row["id"] for row in data] == [
        t.id for t in read_trajectories(two) if not isinstance(t, Exception)
    ]
    assert {step["tool"] for row in data for step in row["steps"]} == set(
        envfactory.load(contract).operations
    )


def test_cli_rejects_an_unknown_goal_name(tmp_path: Path) -> None:
    result = run(
        "generate",
        str(ROOT / "examples" / "bank" / "bank.yaml"),
        "-n",
        "2",
        "-o",
        str(tmp_path / "x"),
        "--goal",
        "richh",
    )
    assert result.returncode == 2 and "rich" in result.stderr and "Traceback" not in result.stderr


def test_a_failed_run_leaves_the_previous_file_and_no_partial_one(tmp_path: Path) -> None:
    """``-o`` is written beside itself and renamed on success: a run that fails (here: more
    distinct trajectories than a one-call contract has) keeps the last good file as it was."""
    out = tmp_path / "runs.jsonl"
    good = run("generate", str(ROOT / "examples" / "bank" / "bank.yaml"), "-n", "2", "-o", str(out))
    assert good.returncode == 0, good.stderr
    before = out.read_bytes()
    assert before.count(b"\n") == 2 and oct(out.stat().st_mode & 0o777) != oct(0o600)
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(
        'envfactory: "1"\ninfo: {title: Tiny, version: "1"}\nstate: {}\n'
        "operations:\n  ping: {input: {type: object, additionalProperties: false}}\n"
    )
    bad = run("generate", str(tiny), "-n", "50", "--max-length", "1", "-o", str(out))
    assert bad.returncode == 2 and "could be generated" in bad.stderr, bad.stderr
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl", "tiny.yaml"]


def test_a_contract_with_no_call_allowed_at_the_start_says_so(tmp_path: Path) -> None:
    """The OpenAPI link example reads users, repositories and pull requests that no operation
    adds: the message said to raise --max-length or lower -n, neither of which helps."""
    doc = ROOT / "tests" / "realworld" / "corpus" / "link-example.yaml"
    bad = run("generate", str(doc), "-n", "5", "-o", str(tmp_path / "out.jsonl"))
    assert bad.returncode == 2 and "no call that the initial state allows" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "out.jsonl").exists()


@pytest.mark.slow
def test_ray_engine_matches_local(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    contract = str(ROOT / "examples" / "bank" / "bank.yaml")
    local.write_text(dumps_jsonl(generate(envfactory.load(contract), 30, seed=3)))
    result = run(
        "generate", contract, "-n", "30", "-o", str(remote), "--seed", "3", "--engine", "ray", "--jobs", "2"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert local.read_bytes() == remote.read_bytes()


@pytest.mark.parametrize("name", ["bank/bank.yaml", "petstore/petstore.yaml"])
def test_generation_covers_every_edge_of_the_state_graph(name: str) -> None:
    from envfactory.solver.graph import compile as compile_graph
    from envfactory.statemachine.abstraction import predicates, valuation

    contract = _load(name)
    graph = compile_graph(contract)
    preds = predicates(contract)

    def node(ident: str) -> tuple[bool, ...]:
        return tuple(graph.nodes[ident]["valuation"][p.text] for p in preds)

    edges = {(node(u), data["operation"], node(v)) for u, v, data in graph.edges(data=True)}
    assert edges
    covered = set()
    for traj in generate(contract, 40, seed=0):
        sim = envfactory.Simulator(contract, seed=traj.seed or 0)
        for step in traj.steps:
            before = valuation(preds, sim.state)
            assert sim.call(step.tool, step.input).ok
            covered.add((before, step.tool, valuation(preds, sim.state)))
    assert edges <= covered
    assert covered <= edges  # every concrete transition is one the graph has


def _wide_contract(tmp_path: Path, operations: int) -> Contract:
    """A document of ``operations`` creates, each answering a record with many optional fields."""
    lines = ["openapi: 3.0.0", "info: {title: wide, version: '1'}", "paths:"]
    for i in range(operations):
        lines += [
            f"  /things{i}:",
            "    post:",
            f"      operationId: make{i}",
            "      responses:",
            "        '201':",
            "          description: made",
            "          content:",
            "            application/json:",
            "              schema: {$ref: '#/components/schemas/Thing'}",
        ]
    optional = ", ".join(f"f{k}: {{type: string}}" for k in range(30))
    lines += [
        "components:",
        "  schemas:",
        "    Thing:",
        "      type: object",
        f"      properties: {{id: {{type: integer}}, {optional}}}",
        "      required: [id]",
    ]
    path = tmp_path / "wide.yaml"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return envfactory.load(path)


def test_a_lean_simulator_answers_only_required_fields_and_stays_valid(tmp_path: Path) -> None:
    from envfactory.statemachine.simulator import Simulator

    contract = _wide_contract(tmp_path, 2)
    full = [Simulator(contract, seed=s).call("make0", {}) for s in range(10)]
    lean = [Simulator(contract, seed=s, lean=True).call("make0", {}) for s in range(10)]
    assert all(r.ok for r in full + lean)
    assert all(set(r.output) == {"id"} for r in lean)
    assert sum(len(r.output) for r in full) > 10 * 5
    assert Simulator(contract, lean=True).fork().lean


def test_exploring_a_large_document_draws_lean_answers_and_generation_stays_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from envfactory.statemachine import walk

    made: list[bool] = []
    real = walk.Simulator

    def counting(*args: Any, **kw: Any) -> Any:
        made.append(bool(kw.get("lean")))
        return real(*args, **kw)

    monkeypatch.setattr(walk, "Simulator", counting)
    contract = _wide_contract(tmp_path, walk.LEAN_EXPLORE + 1)
    found = explore(contract, seed=1)
    assert made == [True] and len(found.operations) == walk.LEAN_EXPLORE + 1
    trajs = list(generate(contract, 5, seed=1))
    results = list(envfactory.verify(contract, trajs))
    assert Counter(r.verdict for r in results) == {"valid": 5}
    # the trajectories' answers are full ones: replayed, not the exploration's lean answers
    assert any(len(s.output) > 1 for t in trajs for s in t.steps)
    made.clear()
    explore(_wide_contract(tmp_path, 2), seed=1)
    assert made == [False]


def test_exploration_draws_one_input_per_state_for_an_operation_without_effects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call without effects leaves the same state: one witness is its whole edge, so the other
    draws were spent for nothing (most of a large API's operations are reads: 327 of Stripe's
    417). Counted, not timed; the operations that write still get ``draws_per_op`` draws."""
    from envfactory.statemachine import walk

    contract = _load("petstore/petstore.yaml")
    reads = {name for name, op in contract.operations.items() if not op.effects}
    writes = set(contract.operations) - reads
    assert reads and writes
    drawn: Counter[tuple[str, int]] = Counter()
    alive: list[Any] = []  # each state's simulator kept, so that no id is reused for another state
    real = walk.InputDrawer.enabled

    def counting(self: Any, sim: Any, tool: str, *args: Any, **kw: Any) -> Any:
        alive.append(sim)
        drawn[(tool, id(sim))] += 1
        return real(self, sim, tool, *args, **kw)

    monkeypatch.setattr(walk.InputDrawer, "enabled", counting)
    found = explore(contract, seed=3, draws_per_op=3)
    assert found.operations.keys() >= reads
    assert all(n == 1 for (tool, _), n in drawn.items() if tool in reads)
    assert any(n > 1 for (tool, _), n in drawn.items() if tool in writes)


def test_a_plain_string_is_a_word_drawn_with_the_samplers_own_random() -> None:
    """Faker's ``word()`` drew a uniform choice through its weighted sampling at ten times the
    cost; the sampler draws from Faker's word list with its own ``random`` (same seed, same
    words) and makes no Faker for it."""
    import random

    from faker.providers.lorem.en_US import Provider

    from envfactory.statemachine import sampling

    samplers = [sampling.Sampler(random.Random(5)) for _ in range(2)]
    first, again = ([s.value({"type": "string"}) for _ in range(3)] for s in samplers)
    assert first == again and set(first) <= set(Provider.word_list)
    assert all(s._faker is None for s in samplers)
    drawn = {sampling.Sampler(random.Random(s)).value({"type": "string"}) for s in range(40)}
    assert len(drawn) > 20


@pytest.mark.parametrize("name", ["cloud", "chat"])
def test_a_name_a_clause_wants_equal_to_a_records_is_drawn_from_the_state(name: str) -> None:
    """The cloud's calls name an ``actor`` who must be a member of the project with a role, and
    the chat's a ``by`` who must own or moderate the channel: no key use says so, and with names
    drawn from the schema alone ``generate`` used 2 of the cloud's 14 operations and 8 of the
    chat's 15. Strings the state holds are now drawn too."""
    contract = envfactory.load(ROOT / "tests" / "fuzz" / "impls" / f"{name}.yaml")
    trajs = list(generate(contract, 60, seed=5))
    assert Counter(r.verdict for r in envfactory.verify(contract, trajs)) == {"valid": 60}
    used = {s.tool for t in trajs for s in t.steps}
    assert len(used) >= len(contract.operations) - 2, sorted(set(contract.operations) - used)
