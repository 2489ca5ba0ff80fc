"""A refused call of a producer (effects keyed by its output) has no output: its output-keyed
effects never ran, so they neither break the encoding nor explain the refusal; its other effects
still may (issue 20 item 8, the solver half)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.contracts.errors import Location
from envfactory.solver import feasibility as F
from envfactory.trajectory import parse_trajectory

ROOT = Path(__file__).resolve().parents[2]
PETSTORE = ROOT / "tests" / "realworld" / "corpus" / "swagger-petstore-v3.yaml"

STOCK = """\
envfactory: "1"
info: {title: Stock, version: "1.0"}
state:
  items:
    collection: {key: {type: integer}, value: {type: string}}
  stock:
    collection: {key: {type: string}, value: {type: integer}}
operations:
  take:
    input:
      type: object
      properties: {sku: {type: string}, n: {type: integer, minimum: 1}}
      required: [sku, n]
    output: {type: object, properties: {id: {type: integer}}, required: [id]}
    effects:
      - items[output.id] = input.sku
      - stock[input.sku] = stock[input.sku] - input.n
"""
"""``take`` is a producer (``items[output.id]``) whose other effect is undefined when the sku is
not in stock: that, and only that, explains a refusal."""

PET = {"id": 10, "name": "doggie", "photoUrls": ["u"]}


def _traj(steps: list[dict[str, Any]], initial: dict[str, Any] | None = None) -> Any:
    raw: dict[str, Any] = {"id": "t", "steps": steps}
    if initial is not None:
        raw["initial"] = initial
    return parse_trajectory(raw, Location("<test>"))


@pytest.fixture(scope="module")
def petstore() -> Any:
    return envfactory.load(PETSTORE)


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("stock") / "stock.yaml"
    path.write_text(STOCK, encoding="utf-8")
    return envfactory.load(path)


def test_an_added_pet_then_a_refused_invalid_add_verifies_as_the_first_call_alone(petstore: Any) -> None:
    added = {"tool": "addPet", "input": PET, "output": PET}
    refused = {"tool": "addPet", "input": {"name": 5, "photoUrls": ["u"]}, "status": 422}
    alone = F.decide(petstore, _traj([added]), allow_rejected=True)
    both = F.decide(petstore, _traj([added, refused]), allow_rejected=True)
    assert alone.verdict == "feasible"  # open world: the pets before the first call are assumed
    assert both.verdict == "feasible", both.message
    [result] = envfactory.verify(petstore, [_traj([added, refused])], allow_rejected=True)
    assert result.verdict == "feasible", result.message


def test_a_valid_add_refused_with_no_clause_to_explain_it_is_invalid(petstore: Any) -> None:
    added = {"tool": "addPet", "input": PET, "output": PET}
    refused = {"tool": "addPet", "input": {"name": "rex", "photoUrls": []}, "status": 422}
    verdict = F.decide(petstore, _traj([added, refused]), allow_rejected=True)
    assert verdict.verdict == "invalid"
    assert verdict.step == 1
    assert "no false check of this call explains" in verdict.message


@pytest.mark.parametrize(
    ("sku", "expected"),
    [
        ("zz", "feasible"),  # not in stock: the stock effect is undefined, which explains the 409
        ("a", "invalid"),  # in stock: every effect that could run is defined, nothing explains it
    ],
)
def test_effects_not_reading_the_output_still_explain_a_refusal(stock: Any, sku: str, expected: str) -> None:
    steps = [
        {"tool": "take", "input": {"sku": "a", "n": {"$var": "n"}}, "output": {"id": 1}},
        {"tool": "take", "input": {"sku": sku, "n": 1}, "status": 409},
    ]
    traj = _traj(steps, initial={"items": {}, "stock": {"a": 5}})
    verdict = F.decide(stock, traj, allow_rejected=True)
    assert verdict.verdict == expected, verdict.message
    if expected == "invalid":
        assert verdict.step == 1
