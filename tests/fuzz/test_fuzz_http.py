"""Fuzzing over loopback HTTP: ``envfactory serve`` (no findings) and a buggy server of our own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import HttpTarget, open_target
from envfactory.server import create_app

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(HERE / "impls")]

from fuzz_http_apps import http_app, serving  # noqa: E402
from petstore_impl import UseAfterDeleteStore  # noqa: E402
from tickets_impl import HidingTickets  # noqa: E402


def _contract(name: str) -> envfactory.Contract:
    return envfactory.load(ROOT / "examples" / name / f"{name}.yaml")


@pytest.mark.parametrize("mode", ["valid", "adversarial"])
def test_envfactory_serve_has_no_finding(mode):
    contract = _contract("bank")
    with serving(create_app(contract)) as url:
        target = open_target(url, contract)
        assert isinstance(target, HttpTarget)
        try:
            summary = fuzz(contract, target, mode=mode, seed=1, max_examples=25, steps=12, engine="fast")
        finally:
            target.close()
    assert summary.findings == ()
    assert summary.calls > 50
    assert "open" in summary.operations_covered


def test_buggy_http_server_listing_that_hides_items():
    contract = _contract("tickets")
    with serving(http_app(HidingTickets)) as url:
        target = open_target(url, contract)
        try:
            summary = fuzz(
                contract,
                target,
                mode="valid",
                seed=0,
                max_examples=60,
                steps=12,
                engine="fast",
                multiple=False,
                shrink_cases=40,
            )
        finally:
            target.close()
    found = {(f.operation, f.kind): f for f in summary.findings}
    finding = found[("list_open", "postcondition")]
    assert [s.tool for s in finding.steps] == ["create_ticket", "assign", "start", "list_open"]


def test_buggy_http_server_use_after_delete():
    contract = _contract("petstore")
    with serving(http_app(UseAfterDeleteStore)) as url:
        target = open_target(url, contract)
        try:
            summary = fuzz(
                contract,
                target,
                seed=0,
                max_examples=150,
                steps=20,
                engine="fast",
                multiple=False,
                shrink_cases=40,
            )
        finally:
            target.close()
    kinds = {(f.operation, f.kind) for f in summary.findings}
    assert kinds & {("getPet", "forbidden_accepted"), ("getPet", "postcondition")}
    shortest = min(summary.findings, key=lambda f: len(f.steps))
    assert [s.tool for s in shortest.steps][-2:] in (["deletePet", "getPet"], ["addPet", "getPet"])


def test_no_answer_is_a_crash():
    contract = _contract("bank")
    target = open_target("http://127.0.0.1:9", contract)  # nothing listens on the discard port
    response = target.call("balance", {"account": "AB01"})
    target.close()
    assert response.status == 0 and not response.accepted
    assert response.error is not None and response.error.startswith("crash: ")
