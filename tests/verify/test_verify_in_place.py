"""verify() changes a run's state in place: a step that fails half-way or is rejected leaves it as
it was, and a stored copy of a collection does not change with the collection."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.trajectory import Step, Trajectory
from envfactory.verification import Result, verify

CONTRACT = """\
envfactory: "1"
info: {title: In place, version: "1"}
state:
  items:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: integer}}, required: [n]}}
  saved:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: integer}}, required: [n]}}
  box: {initial: {}}
  mirror:
    collection: {key: {type: string}, value: {type: object, properties: {n: {type: integer}}, required: [n]}}
operations:
  swap:
    input: {type: object, properties: {k: {type: string}, gone: {type: string}}, required: [k, gone]}
    effects: ['items[input.k] = {"n": 1}', "del items[input.gone]"]
  put:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires:
      - check: not (input.k in items)
        error: {status: 409}
    effects: ['items[input.k] = {"n": 0}']
  save:
    input: {type: object}
    effects: [saved = items]
  box_it:
    input: {type: object}
    effects: [box = saved]
  mirror_it:
    input: {type: object}
    effects: [mirror = box]
  put_in_mirror:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    effects: ['mirror[input.k] = {"n": 5}']
  keep_in_saved:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    effects: ['saved[input.k] = {"n": 5}']
  absent_from_box:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: [not (input.k in box)]
  absent_from_saved:
    input: {type: object, properties: {k: {type: string}}, required: [k]}
    requires: [not (input.k in saved)]
"""


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path: Path = tmp_path_factory.mktemp("inplace") / "inplace.yaml"
    path.write_text(CONTRACT)
    return envfactory.load(path)


def _one(contract: envfactory.Contract, *steps: Step, **kwargs: bool) -> Result:
    (result,) = verify(contract, [Trajectory(id="t", steps=steps)], **kwargs)
    return result


def test_effects_that_fail_half_way_change_nothing(contract: envfactory.Contract) -> None:
    """``swap`` writes ``items["a"]`` and then fails to delete a missing key: with
    --allow-rejected the 404 is a rejection, so ``items["a"]`` was never written and ``put``
    may create it."""
    half = Step("swap", {"k": "a", "gone": "nope"}, status=404)
    result = _one(contract, half, Step("put", {"k": "a"}), allow_rejected=True)
    assert result.verdict == "valid", result.message
    # without the flag the half-done step is the failure, explained on the state before it
    result = _one(contract, half, Step("put", {"k": "a"}))
    assert (result.verdict, result.step, result.kind) == ("invalid", 0, "precondition")
    assert "no such key" in result.message


def test_a_rejected_first_write_leaves_the_next_trajectory_alone(contract: envfactory.Contract) -> None:
    """The run's first write to ``items`` is undone with the step, and so is its copy: the next
    write copies again instead of changing the initial state the next trajectory starts from."""
    first = Trajectory(
        id="1", steps=(Step("swap", {"k": "a", "gone": "nope"}, status=404), Step("put", {"k": "b"}))
    )
    second = Trajectory(id="2", steps=(Step("put", {"k": "b"}),))
    results = verify(contract, [first, second], allow_rejected=True)
    assert [r.verdict for r in results] == ["valid", "valid"]


def test_a_server_failure_after_effects_changes_nothing(contract: envfactory.Contract) -> None:
    failed = Step("put", {"k": "a"}, status=503)
    assert _one(contract, failed, Step("put", {"k": "a"}), allow_rejected=True).verdict == "valid"


def test_a_saved_collection_keeps_its_keys_when_the_original_changes(contract: envfactory.Contract) -> None:
    steps = (Step("save", {}), Step("put", {"k": "a"}), Step("absent_from_saved", {"k": "a"}))
    result = _one(contract, *steps)
    assert result.verdict == "valid", result.message
    steps = (Step("put", {"k": "a"}), Step("save", {}), Step("absent_from_saved", {"k": "a"}))
    result = _one(contract, *steps)
    assert (result.verdict, result.step) == ("invalid", 2)
    # ``items`` was the run's own (written at step 0) when ``saved`` took it
    steps = (Step("put", {"k": "a"}), Step("save", {}), Step("put", {"k": "b"}))
    result = _one(contract, *steps, Step("absent_from_saved", {"k": "b"}))
    assert result.verdict == "valid", result.message


def test_a_variable_given_a_saved_collection_is_a_copy_too(contract: envfactory.Contract) -> None:
    """``box`` is not declared a collection (it has no type), but holds one once ``box = saved``
    ran: later writes to ``saved``, or to ``mirror`` given ``box``'s value, must not show in it."""
    steps = (Step("save", {}), Step("box_it", {}), Step("keep_in_saved", {"k": "b"}))
    result = _one(contract, *steps, Step("absent_from_box", {"k": "b"}))
    assert result.verdict == "valid", result.message
    # and ``mirror = box`` copies: ``box`` holds a collection because an effect gave it one
    steps = (Step("save", {}), Step("box_it", {}), Step("mirror_it", {}), Step("put_in_mirror", {"k": "c"}))
    result = _one(contract, *steps, Step("absent_from_box", {"k": "c"}))
    assert result.verdict == "valid", result.message


def test_one_run_leaves_the_next_its_own_initial_state(contract: envfactory.Contract) -> None:
    """Runs share the contract's initial state; each changes its own copy."""
    first = Trajectory(id="1", steps=(Step("put", {"k": "a"}),))
    second = Trajectory(id="2", steps=(Step("put", {"k": "a"}),))
    assert [r.verdict for r in verify(contract, [first, second])] == ["valid", "valid"]


def test_a_run_copies_a_collection_at_its_first_write_and_only_then(contract: envfactory.Contract) -> None:
    from envfactory._fastpath import Run, apply_effects
    from envfactory.contracts.evaluator import Env
    from envfactory.contracts.values import FrozenMap
    from envfactory.verification import Verifier

    put = Verifier(contract).plans["put"].effects
    saved = FrozenMap({"x": {"n": 1}})
    initial = FrozenMap({"items": FrozenMap(), "saved": saved, "box": {}, "mirror": FrozenMap()})
    run = Run(initial)
    apply_effects(put, run, Env(run.state, {"k": "a"}), [])
    first = run.state["items"]
    assert dict(first) == {"a": {"n": 0}} and initial["items"] == {}  # the initial state is untouched
    apply_effects(put, run, Env(run.state, {"k": "b"}), [])
    assert run.state["items"] is first and set(first) == {"a", "b"}  # owned now: changed in place
    assert run.state["saved"] is saved  # never written: never copied
    run.rollback()  # undoes the last step only
    assert set(run.state["items"]) == {"a"}
