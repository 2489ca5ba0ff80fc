"""Differential tests on generated contracts: the symbolic engines against explicit search.

Hypothesis writes small contracts over bounded integers and a flag (inputs drawn from tiny enums,
so explicit breadth-first search over the concrete semantics sees every input). Then:

* a plan exists iff BFS finds one within the depth, it is exactly as short, and ``verify`` finds
  it valid;
* a counterexample from ``prove`` is exactly as short as the BFS path to a bad state, every step
  but the property holds concretely, and its last state breaks the property when replayed;
  a proof means BFS finds no bad state.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.model import Contract
from envfactory.solver.bmc import holds, plan, replay, resolve_goal
from envfactory.solver.induction import prove
from envfactory.statemachine.reachability import explicit_bfs, input_domain
from envfactory.verification import verify

GUARDS = ["a < b", "flag", "not flag", "a + input.x <= 4", "b > 0", "a != b", "input.x > 0", "a >= 2"]
EFFECTS = {
    "a": ["a = a + input.x", "a = b", "a = a + 1", "a = a - 1"],
    "b": ["b = b - 1", "b = input.x", "b = b + a"],
    "flag": ["flag = not flag", "flag = a > b", "flag = true"],
}
GOALS = ["a == 4", "b == 3 and flag", "a + b == 7", "a == b + 2", "not flag and a == 3 and b == 0"]
PROPERTIES = ["a <= 3", "implies(flag, a > 0)", "a + b < 7", "a != b or flag", "b <= 2"]

SETTINGS = settings(
    max_examples=8,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def contracts(draw: st.DrawFn) -> str:
    lines = [
        'envfactory: "1"',
        "info: {title: Generated, version: '1'}",
        "state:",
        f"  a: {{type: integer, initial: {draw(st.integers(0, 2))}}}",
        f"  b: {{type: integer, initial: {draw(st.integers(0, 2))}}}",
        f"  flag: {{type: boolean, initial: {str(draw(st.booleans())).lower()}}}",
        "operations:",
    ]
    for i in range(draw(st.integers(2, 4))):
        guards = draw(st.lists(st.sampled_from(GUARDS), max_size=2, unique=True))
        targets = draw(st.lists(st.sampled_from(sorted(EFFECTS)), min_size=1, max_size=2, unique=True))
        effects = [draw(st.sampled_from(EFFECTS[t])) for t in targets]
        lines += [
            f"  op{i}:",
            "    input: {type: object, properties: {x: {type: integer, enum: [0, 1, 2]}}, required: [x]}",
            f"    requires: {guards!r}",
            f"    effects: {effects!r}",
        ]
    lines += ["invariants:", "  - a >= 0 and a <= 4", "  - b >= 0 and b <= 4"]
    return "\n".join(lines) + "\n"


COLLECTION_OPS = {
    "put": (
        "{type: object, properties: {k: {type: integer, enum: [0, 1, 2]}, x: {type: integer, enum: [0, 1, 2]}}, required: [k, x]}",
        [["not (input.k in items)"], ["not (input.k in items)", "len(items) < 2"], []],
        [['items[input.k] = {"v": input.x}'], ['items[input.k] = {"v": input.x}', "n = n + 1"]],
    ),
    "bump": (
        "{type: object, properties: {k: {type: integer, enum: [0, 1, 2]}}, required: [k]}",
        [["input.k in items"], ["input.k in items", "items[input.k].v < 3"]],
        [["items[input.k].v = items[input.k].v + 1"], ["items[input.k].v = items[input.k].v + 1", "n = 0"]],
    ),
    "drop": (
        "{type: object, properties: {k: {type: integer, enum: [0, 1, 2]}}, required: [k]}",
        [["input.k in items"], ["input.k in items", "n > 0"]],
        [["del items[input.k]"], ["del items[input.k]", "n = n - 1"]],
    ),
    "count": (
        "{type: object}",
        [[], ["len(items) > 0"]],
        [["n = len(items)"], ["n = sum(items[k].v for k in items)"]],
    ),
}
COLLECTION_GOALS = [
    "len(items) == 2 and all(items[k].v >= 2 for k in items)",
    "sum(items[k].v for k in items) == 4",
    "any(items[k].v == 3 for k in items) and n >= 1",
    "n == 3",
]


@st.composite
def collection_contracts(draw: st.DrawFn) -> str:
    lines = [
        'envfactory: "1"',
        "info: {title: Generated, version: '1'}",
        "state:",
        f"  n: {{type: integer, initial: {draw(st.integers(0, 1))}}}",
        "  items:",
        "    collection: {key: {type: integer}, value: {type: object, properties: {v: {type: integer}}, required: [v]}}",
        "operations:",
    ]
    names = draw(st.lists(st.sampled_from(sorted(COLLECTION_OPS)), min_size=2, max_size=4, unique=True))
    for name in names:
        schema, guard_options, effect_options = COLLECTION_OPS[name]
        lines += [
            f"  {name}:",
            f"    input: {schema}",
            f"    requires: {draw(st.sampled_from(guard_options))!r}",
            f"    effects: {draw(st.sampled_from(effect_options))!r}",
        ]
    lines += ["invariants:", "  - all(items[k].v <= 3 for k in items)", "  - n >= 0 and n <= 3"]
    return "\n".join(lines) + "\n"


def _load(text: str) -> Contract:
    with tempfile.TemporaryDirectory(prefix="envfactory-graph-") as folder:
        path = Path(folder) / "generated.yaml"
        path.write_text(text, encoding="utf-8")
        return envfactory.load(path)  # read whole at load: the folder can go


def _in_bounds(contract: Contract) -> bool:
    start = replay(contract, []).states[0]
    return all(holds(c, start) for c in contract.invariants)


@SETTINGS
@given(contracts(), st.sampled_from(GOALS))
def test_plans_are_valid_and_as_short_as_bfs(text: str, goal_text: str) -> None:
    contract = _load(text)
    if not _in_bounds(contract):
        return
    goal = resolve_goal(contract, goal_text)
    search = explicit_bfs(contract, lambda s: holds(goal, s), input_domain(contract), max_depth=5)
    assert not search.cut
    result = plan(contract, goal, max_depth=5)
    assert result.status in ("found", "none")
    assert result.depth == search.depth
    if result.trajectory is not None:
        (verdict,) = list(verify(contract, [result.trajectory]))
        assert verdict.verdict == "valid", verdict.message


@SETTINGS
@given(collection_contracts(), st.sampled_from(COLLECTION_GOALS))
def test_plans_over_collections_match_bfs(text: str, goal_text: str) -> None:
    contract = _load(text)
    goal = resolve_goal(contract, goal_text)
    search = explicit_bfs(contract, lambda s: holds(goal, s), input_domain(contract), max_depth=5)
    assert not search.cut
    result = plan(contract, goal, max_depth=5)
    assert result.status in ("found", "none")
    assert result.depth == search.depth
    if result.trajectory is not None:
        (verdict,) = list(verify(contract, [result.trajectory]))
        assert verdict.verdict == "valid", verdict.message


@SETTINGS
@given(contracts(), st.sampled_from(PROPERTIES))
def test_counterexamples_break_their_invariant_and_are_shortest(text: str, prop_text: str) -> None:
    contract = _load(text)
    if not _in_bounds(contract):
        return
    prop = resolve_goal(contract, prop_text)
    search = explicit_bfs(contract, lambda s: not holds(prop, s), input_domain(contract), max_depth=4)
    result = prove(contract, prop_text, depth=4)
    if result.status == "violated":
        traj = result.counterexample
        assert traj is not None and len(traj.steps) == search.depth
        calls = [(s.tool, s.input, s.output, s.has_output) for s in traj.steps]
        checked = replay(contract, calls)
        assert checked.failure is None  # every step keeps the contract's own clauses
        assert all(holds(prop, s) for s in checked.states[:-1])
        assert not holds(prop, checked.states[-1])  # the last state breaks the property
    elif result.status == "proved":
        assert search.path is None
    else:
        assert search.depth is None  # unknown only where nothing breaks within the depth
