"""``serve`` re-checks invariants as ``verify`` does: per operation only those reading what it
writes, and ``all(... for k in c)`` only at the keys written, so a call's checks do not grow with
the state; the answers are those of the plain simulator (issue 20 item 7). Counts, not timing."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts.errors import EnvfactoryError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.parser import parse_expr
from envfactory.contracts.polarity import polarity
from envfactory.server import MockServer, _ServedSimulator, create_app, running
from envfactory.statemachine.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]

OVERDRAFT = """
envfactory: "1"
info: {title: Overdraft, version: "1"}
state:
  accounts:
    collection: {key: {type: string}, value: {type: object, properties: {balance: {type: integer}}}}
operations:
  open:
    input: {type: object, properties: {id: {type: string}}, required: [id]}
    requires: [not (input.id in accounts)]
    effects: ['accounts[input.id] = {"balance": 0}']
  move:
    input: {type: object, properties: {id: {type: string}, amount: {type: integer}}, required: [id, amount]}
    requires: [input.id in accounts]
    effects: ["accounts[input.id].balance = accounts[input.id].balance + input.amount"]
invariants:
  - all(accounts[a].balance >= 0 for a in accounts)
"""


@pytest.mark.timeout(600)
def test_a_call_rechecks_only_the_keys_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "overdraft.yaml"
    path.write_text(OVERDRAFT)
    app = create_app(envfactory.load(path))
    mock: MockServer = app.state.mock
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        for n in range(300):
            assert client.post("/open", json={"id": f"a{n}"}).status_code == 200
            assert client.post("/move", json={"id": f"a{n}", "amount": 5}).status_code == 200
        assert mock.rechecks.whole == 1  # the first call, on a state never checked before
        # a call that breaks the invariant at its key is still caught, and named
        sim = mock.sessions["default"].sim
        broken = sim.call("move", {"id": "a7", "amount": -6})
        assert broken.failure is not None and broken.failure.kind == "invariant"
        assert broken.failure.clause_text == "all(accounts[a].balance >= 0 for a in accounts)"
        # on a state not known good, the whole check comes back
        before = mock.rechecks.whole
        assert client.post("/move", json={"id": "a7", "amount": 6}).status_code == 200
        assert mock.rechecks.whole == before + 1
        assert client.post("/_reset").status_code == 200
        assert client.post("/open", json={"id": "b"}).status_code == 200
        assert mock.rechecks.whole == before + 2


@pytest.mark.parametrize("example", ["bank/bank.yaml", "tickets/tickets.yaml", "petstore/petstore.yaml"])
def test_served_answers_are_the_simulators(example: str) -> None:
    contract = envfactory.load(ROOT / "examples" / example)
    served = MockServer(contract).rechecks

    plain, incremental = Simulator(contract, seed=3), _ServedSimulator(contract, served, seed=3)
    rng = random.Random(11)
    names = sorted(contract.operations)
    pools = {"string": ["AA01", "BB02", "ann", "bo"], "integer": [1, 2, 3, 5, 8, 40]}
    junk = [-1, 0, "x", True, None]
    accepted = 0
    for _ in range(400):
        tool = rng.choice(names)
        props = contract.operations[tool].input_schema.get("properties", {})
        value = {
            field: rng.choice(pools.get(schema.get("type"), junk) if rng.random() < 0.9 else junk)
            for field, schema in props.items()
        }
        answer = incremental.call(tool, value)
        assert answer == plain.call(tool, value), (tool, value)
        accepted += answer.accepted
    assert plain.state == incremental.state
    assert accepted >= 40  # the sequence reaches deep enough to compare something


def test_a_ticket_create_rechecks_no_more_at_2000_tickets_than_at_none() -> None:
    """``create_ticket`` writes ``tickets[next_id]`` and raises ``next_id``, which
    ``all(t < next_id for t in tickets)`` reads besides the key: ``t < next_id`` only grows with
    ``next_id``, so the tickets it did not write keep it and only the new one is checked."""
    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    checks = MockServer(contract).rechecks
    assert "create_ticket" in checks.monotone
    sim = _ServedSimulator(contract, checks, seed=0)
    for n in range(2000):
        assert sim.call("create_ticket", {"title": f"t{n}", "priority": "low"}).accepted
    assert checks.whole == 1  # the first call only: no call re-read the other tickets


LADDER = """
envfactory: "1"
info: {title: Ladder, version: "1"}
state:
  next_id: {type: integer, initial: 0}
  floor: {type: integer, initial: 0}
  items:
    collection: {key: {type: integer}, value: {type: object, properties: {v: {type: integer}}}}
operations:
  add:
    input: {type: object, properties: {v: {type: integer}, step: {type: integer}}, required: [v, step]}
    effects: ['items[next_id] = {"v": input.v}', "next_id = next_id + input.step"]
  rewind:
    input: {type: object, properties: {n: {type: integer}}, required: [n]}
    effects: [next_id = next_id - input.n]
  lift:
    input: {type: object, properties: {n: {type: integer}}, required: [n]}
    effects: [floor = floor + input.n]
  bump:
    input: {type: object, properties: {k: {type: integer}, v: {type: integer}}, required: [k, v]}
    requires: [input.k in items]
    effects: ["items[input.k].v = input.v", "floor = floor - 1"]
invariants:
  - all(k < next_id for k in items)
  - all(implies(items[k].v > 0, items[k].v >= floor) for k in items)
"""


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    calls=st.lists(
        st.one_of(
            st.tuples(
                st.just("add"), st.fixed_dictionaries({"v": st.integers(-3, 9), "step": st.integers(-2, 3)})
            ),
            st.tuples(st.just("rewind"), st.fixed_dictionaries({"n": st.integers(-2, 3)})),
            st.tuples(st.just("lift"), st.fixed_dictionaries({"n": st.integers(-3, 3)})),
            st.tuples(
                st.just("bump"), st.fixed_dictionaries({"k": st.integers(0, 4), "v": st.integers(-3, 9)})
            ),
        ),
        max_size=30,
    )
)
def test_per_key_rechecks_under_moving_variables_answer_as_whole_checks(
    ladder: Any, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """Every operation moves a variable an invariant's body reads, up or down by its input:
    the per-key plan is used only where the move keeps the other keys' bodies true, and the
    served answers (breaks included) are those of the plain simulator's whole checks."""
    contract, checks = ladder
    plain, served = Simulator(contract, seed=0), _ServedSimulator(contract, checks, seed=0)
    for tool, value in calls:
        assert served.call(tool, value) == plain.call(tool, value), (tool, value)
    assert served.state == plain.state


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("ladder") / "ladder.yaml"
    path.write_text(LADDER)
    contract = envfactory.load(path)
    checks = MockServer(contract).rechecks
    # the analysis: add raises next_id (+1 for "k < next_id"); lift and bump move floor, which
    # the second body reads with polarity -1; rewind moves next_id against its polarity
    assert dict(checks.monotone["add"][1]) == {"next_id": 1}
    assert dict(checks.monotone["lift"][1]) == {"floor": -1}
    assert dict(checks.monotone["rewind"][1]) == {"next_id": 1}
    return contract, checks


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("t < next_id", "next_id", 1),
        ("t < next_id", "t", -1),
        ("x >= limit - used", "used", 1),
        ("not (x > cap) and y <= cap", "cap", 1),
        ("implies(a > 0, b >= a)", "a", -1),  # a larger a: a premise more often true, a higher bound
        ("a > 0 and b >= a", "a", None),
        ("implies(n > 0, m >= 1)", "n", -1),
        ("x == y", "y", None),
        ("x * y > 0", "y", None),
        ("len(items) <= cap", "cap", 1),
        ("len(items) <= cap", "items", None),
        ("-x < 3 or z", "x", 1),
        ("a < 3", "b", 0),
    ],
)
def test_polarity(text: str, name: str, expected: int | None) -> None:
    assert polarity(parse_expr(text), name) == expected


NAMES = ("x", "y")


@st.composite
def _expressions(draw: Any, depth: int = 0) -> str:
    leaf = st.sampled_from(["x", "y", "0", "1", "-2"])
    if depth > 2 or draw(st.booleans()):
        return draw(leaf)
    kind = draw(st.sampled_from(["cmp", "arith", "bool", "not", "implies"]))
    a, b = draw(_expressions(depth + 1)), draw(_expressions(depth + 1))
    if kind == "cmp":
        return f"({a} {draw(st.sampled_from(['<', '<=', '>', '>=', '==']))} {b})"
    if kind == "arith":
        return f"({a} {draw(st.sampled_from(['+', '-', '*']))} {b})"
    if kind == "bool":
        return f"({a} {draw(st.sampled_from(['and', 'or']))} {b})"
    if kind == "not":
        return f"(not {a})"
    return f"implies({a}, {b})"


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(text=_expressions(), x=st.integers(-4, 4), y=st.integers(-4, 4), d=st.integers(0, 4))
def test_polarity_is_what_evaluation_does(text: str, x: int, y: int, d: int) -> None:
    """Where ``polarity`` answers +1 (-1), raising ``x`` never lowers (raises) the value, in the
    order false < true and of numbers; evaluated by the contract evaluator itself."""
    try:
        node = parse_expr(text)
    except EnvfactoryError:
        return
    sign = polarity(node, "x")
    if sign not in (1, -1):
        return
    fn = compile_expr(node)
    try:
        before, after = fn(Env({"x": x, "y": y})), fn(Env({"x": x + d, "y": y}))
    except EnvfactoryError:
        return
    if isinstance(before, bool) != isinstance(after, bool):
        return
    assert (after >= before) if sign > 0 else (after <= before), (text, x, y, d)
