"""The simulator answers within the document: fuzzing ``--target sim`` finds nothing on every
OpenAPI document of the real-world corpus and on a document that composes its outputs with
allOf, anyOf, oneOf, not, a discriminator, nullable, formats and enums the way Box and Stripe do
(issue 16 item 4: Box's post_comments answered an integer id where the document says string)."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import SimTarget
from envfactory.statemachine.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
COMPOSED = Path(__file__).parent / "composed_openapi.yaml"
DOCUMENTS = sorted([*(ROOT / "tests" / "realworld" / "corpus").glob("*.yaml"), COMPOSED])


@pytest.mark.usefixtures("light_planner")
@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_fuzzing_the_simulator_finds_nothing(path: Path) -> None:
    contract = envfactory.load(path)
    summary = fuzz(contract, SimTarget(contract, seed=1), seed=1, max_examples=40, steps=12)
    assert summary.findings == (), [f.message for f in summary.findings]


def test_an_id_declared_inside_allof_is_answered_as_a_string() -> None:
    contract = envfactory.load(COMPOSED)
    sim = Simulator(contract, seed=5)
    for i in range(20):
        response = sim.call("postComment", {"message": f"m{i}"})
        assert response.ok, response
        assert isinstance(response.output["id"], str) and response.output["type"] == "comment"
    shapes = [Simulator(contract, seed=s).call("postShape", {"size": 3}) for s in range(20)]
    assert all(r.ok for r in shapes)
    assert {r.output["shape"] for r in shapes} == {"circle", "square"}
