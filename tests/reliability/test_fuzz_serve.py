"""The fuzzer's HTTP client and ``serve`` agree on the wire, so fuzzing the project's own server
of every bundled and test-corpus contract finds nothing (issue 20 item 8): an empty path
parameter is an empty segment, a "/" inside one stays inside it, a non-object input to an
operation without a JSON body is one no request expresses, a header value HTTP cannot carry
travels percent-encoded, and a parameter that would change type on the wire (``-1`` of a string
parameter, ``"-1"`` of an integer one) is not sent. Deterministic: fixed seed and example count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import HttpTarget
from envfactory.server import running
from tests.published import loaded

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = sorted(
    [
        *(ROOT / "examples").glob("*/*.yaml"),
        ROOT / "tests" / "simulator" / "pets_openapi.yaml",
        *(ROOT / "tests" / "realworld" / "corpus").glob("*.yaml"),
    ]
)
PETSTORE_V3 = ROOT / "tests" / "realworld" / "corpus" / "swagger-petstore-v3.yaml"


# the solver's prefixes are left out: what these tests check is the wire, and planning took most
# of their time (38 of 45 seconds for Box's 296 operations)
pytestmark = pytest.mark.usefixtures("no_planner")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
def test_fuzzing_our_own_serve_finds_nothing(path: Path) -> None:
    summary = _fuzz_served(path, 25)
    assert [str(f.message) for f in summary.findings] == []


def _fuzz_served(path: Path, examples: int) -> Any:
    """The fuzzer's summary of ``examples`` cases (seed 0) against ``serve`` of the contract."""
    contract = loaded(path)
    with running(contract) as url:
        target = HttpTarget(url, contract, timeout=300)
        try:
            return fuzz(contract, target, seed=0, max_examples=examples)
        finally:
            target.close()


LARGE = sorted((ROOT / "tests" / "realworld" / "corpus").glob("*.json"))  # Box, Stripe: as published


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("path", LARGE, ids=lambda p: p.name)
def test_fuzzing_our_own_serve_of_the_large_documents_finds_nothing(path: Path) -> None:
    """Stripe (form bodies, deepObject fields) and Box (``fields=a,b`` arrays, multipart
    uploads, operations told apart by a ``#fragment``): a few cases each, every call checked."""
    summary = _fuzz_served(path, 15)
    assert summary.calls > 100
    assert [str(f.message) for f in summary.findings] == []


@pytest.mark.timeout(600)
def test_the_wire_corners_answer_as_the_model_does() -> None:
    contract = envfactory.load(PETSTORE_V3)
    with running(contract) as url:
        target = HttpTarget(url, contract, timeout=300)
        try:
            # an empty path parameter reaches the precondition (no such user), not the router
            assert target.call("getUserByName", {"username": ""}).status == 404
            # a "/" inside a path parameter stays in it
            assert target.call("getUserByName", {"username": "a/b"}).status == 404
            # a non-object input has no request: rejected as the model rejects it, never sent as {}
            assert target.call("getInventory", [{}]).status == 422
            # a header value h11 refuses travels percent-encoded: an answer, not a crash
            assert target.call("deletePet", {"petId": 5, "api_key": "\x00 x"}).status < 500
            # the integer -1 of a string parameter would arrive as "-1": not sent, rejected
            assert target.call("loginUser", {"username": -1}).status == 422
            assert target.call("loginUser", {"username": "-1"}).accepted
        finally:
            target.close()
