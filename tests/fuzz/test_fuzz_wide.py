"""Wide documents (more operations than a case has steps, as Stripe's 417 and Box's 296): every
operation gets its calls, not the first ones of the document most of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.fuzz import machine
from envfactory.fuzz.runner import WIDE, Session, fuzz
from envfactory.fuzz.steering import CROWD, Steer
from envfactory.fuzz.targets import open_target

pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts


def wide_document(resources: int) -> dict[str, Any]:
    """An OpenAPI document of ``resources`` resources, each made by a POST whose id the server
    assigns and read by a GET on that id: twice as many operations."""
    thing = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "label": {"type": "string"}},
        "required": ["id"],
    }
    paths: dict[str, Any] = {}
    for number in range(resources):
        name = f"Thing{number:02d}"
        body = {"type": "object", "properties": {"label": {"type": "string"}}}
        paths[f"/{name.lower()}s"] = {
            "post": {
                "operationId": f"create{name}",
                "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                "responses": {
                    "201": {"description": "made", "content": {"application/json": {"schema": thing}}}
                },
            }
        }
        paths[f"/{name.lower()}s/{{id}}"] = {
            "get": {
                "operationId": f"get{name}",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {"description": "it", "content": {"application/json": {"schema": thing}}},
                    "404": {"description": "none"},
                },
            }
        }
    return {"openapi": "3.0.3", "info": {"title": "Wide", "version": "1"}, "paths": paths}


def _load(tmp_path: Path, resources: int) -> envfactory.Contract:
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(wide_document(resources)))
    return envfactory.load(path)


def test_a_producer_of_ids_the_target_assigns_is_crowded_too(tmp_path: Path) -> None:
    """``things[output.id] = output`` makes a key no input names: past ``CROWD`` of them the
    producer is no longer preferred, as one whose input names the key (left uncrowded, Stripe's
    first operation took half of a run's calls)."""
    contract = _load(tmp_path, 1)
    create = contract.operations["createThing00"]
    (collection,) = {e.target.var for e in create.effects}
    steer = Steer.of(create, contract)
    assert steer.makes == frozenset()  # no input names the key
    assert steer.crowd == ((collection, CROWD),)
    assert steer.possible({collection: {str(k): {"id": str(k)} for k in range(CROWD - 1)}})
    assert not steer.possible({collection: {str(k): {"id": str(k)} for k in range(CROWD)}})


def test_a_wide_contract_orders_its_operations_by_their_calls(tmp_path: Path) -> None:
    """Operations never accepted first, then the fewest called as the round began, then the
    document's order; a contract no wider than a case keeps its own order."""
    contract = _load(tmp_path, WIDE // 2 + 1)
    session = Session(contract, open_target("sim", contract), mode="adversarial", time_budget=None)
    assert session.wide
    plans = machine.plans(session)
    names = [p.name for p in plans]
    session.op_calls.update({names[0]: 5, names[1]: 2, names[2]: 9})
    session.ops_covered.update(names[:2])
    assert [p.name for p in machine.ordered(session, plans)] == names  # not published yet: as before
    session.publish()
    order = [p.name for p in machine.ordered(session, plans)]
    assert order[: len(names) - 3] == [n for n in names if n not in names[:3]]
    assert order[-3:] == [names[2], names[1], names[0]]  # never accepted, then by calls
    session.op_calls[names[3]] += 10
    assert machine.ordered(session, plans) is machine.ordered(session, plans)  # fixed for the round
    narrow = _load(tmp_path, WIDE // 2)
    small = Session(narrow, open_target("sim", narrow), mode="adversarial", time_budget=None)
    assert not small.wide
    small_plans = machine.plans(small)
    small.publish()
    assert machine.ordered(small, small_plans) is small_plans


def test_a_wide_document_has_its_operations_called(tmp_path: Path) -> None:
    """150 operations, 60 test cases of 20 steps: Hypothesis leans to the first choices of
    every draw, so that in the document's order the run called 134 of them (137 on seed 2);
    ordered by their calls round by round, with short rounds, at least 140 (143 before a case
    that follows a planned route stopped replaying a corpus entry after it; seed 2 143 on both,
    and Stripe's document, 20 s, seeds 1-2, 255 and 275 operations accepted against 254 and 274)."""
    contract = _load(tmp_path, 75)
    summary = fuzz(contract, open_target("sim", contract, seed=1), seed=1, max_examples=60)
    assert summary.findings == ()
    assert summary.rounds >= 3
    assert len(summary.operations_covered) >= 140


def test_the_state_graph_without_a_worker_is_built_at_the_end_and_counts_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where no worker can be forked the graph is built when the coverage is asked for, not
    beside the search: the same graph, the same edges counted, as the worker's."""
    from envfactory.fuzz import runner

    contract = envfactory.load(Path(__file__).parent / "impls" / "library.yaml")
    abstraction = runner.Abstraction(contract)
    beside = runner.StateGraph(contract, 30.0)
    _, total = beside.coverage(abstraction, set()) or (0, 0)
    graph = beside.graph
    assert total > 0 and graph is not None
    node = {n: tuple(d["valuation"][p.text] for p in abstraction.preds) for n, d in graph.nodes(data=True)}
    edges = {(node[a], op, node[b]) for a, b, op in list(graph.edges(keys=True))[:3]}
    assert beside.coverage(abstraction, edges) == (len(edges), total)
    monkeypatch.delattr(runner.os, "fork")
    at_the_end = runner.StateGraph(contract, 30.0)
    assert at_the_end.thread is None and at_the_end.graph is None  # nothing built yet
    assert at_the_end.coverage(abstraction, edges) == (len(edges), total)
    assert at_the_end.graph is not None and at_the_end.graph.number_of_edges() == total
