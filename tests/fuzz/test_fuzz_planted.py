"""Planted bugs in Python implementations of the bundled contracts: each found and shrunk.

Every implementation in ``impls/`` is a correct one with one bug of a different kind; the
fuzzer must find it (among whatever else the bug shows: OffByOneBank's check of the amount before
the account also answers a wrong status), as the right finding kind on the right operation, shrunk to the shortest
call sequence that shows it, and must find nothing at all in the correct implementations.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target

ROOT = Path(__file__).resolve().parents[2]
IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts


def _contract(name: str) -> envfactory.Contract:
    return envfactory.load(ROOT / "examples" / name / f"{name}.yaml")


def _run(
    example: str,
    factory: str,
    mode: str,
    *,
    engine: str = "fast",
    max_examples: int = 150,
    seed: int = 0,
    multiple: bool = True,
):
    contract = _contract(example)
    target = open_target(f"python:{IMPLS / f'{example}_impl.py'}:{factory}", contract)
    return fuzz(
        contract,
        target,
        mode=mode,
        seed=seed,
        max_examples=max_examples,
        steps=20,
        engine=engine,
        multiple=multiple,
    )


PLANTED = [
    # (example, factory, mode, operation, kind, minimal sequence of tools)
    ("bank", "OffByOneBank", "adversarial", "deposit", "valid_rejected", ["open", "deposit"]),
    ("bank", "LostUpdateBank", "valid", "deposit", "postcondition", ["open", "deposit", "deposit"]),
    ("bank", "UnvalidatedBank", "adversarial", "open", "forbidden_accepted", ["open"]),
    (
        "petstore",
        "UseAfterDeleteStore",
        "adversarial",
        "getPet",
        "forbidden_accepted",
        ["login", "addPet", "deletePet", "getPet"],
    ),
    ("petstore", "WrongStatusStore", "adversarial", "adopt", "wrong_status", ["login", "addPet", "adopt"]),
    ("petstore", "CrashingStore", "adversarial", "addPet", "crash", ["login", "addPet"]),
    (
        "tickets",
        "HidingTickets",
        "valid",
        "list_open",
        "postcondition",
        ["create_ticket", "assign", "start", "list_open"],
    ),
]


SHOWN_TWICE = {"UseAfterDeleteStore"}


@pytest.mark.parametrize(
    ("example", "factory", "mode", "operation", "kind", "tools"), PLANTED, ids=[p[1] for p in PLANTED]
)
def test_planted_bug_is_found_and_shrunk(example, factory, mode, operation, kind, tools):
    # 300 examples: a use after delete takes a probe of a gone key after a create and a delete, which
    # seeds 1-5 find within 150 and seed 0 within 300 (the corpus replays spend some of the cases)
    # up to the first finding, but where that one shows the bug another way (the deleted pet
    # read back with a 200 breaks getPet's ensures before a probe of it is judged forbidden)
    summary = _run(example, factory, mode, max_examples=300, multiple=factory in SHOWN_TWICE)
    found = {(f.operation, f.kind): f for f in summary.findings}
    assert (operation, kind) in found, [(f.operation, f.kind) for f in summary.findings]
    finding = found[(operation, kind)]
    assert [s.tool for s in finding.steps] == tools
    assert finding.steps[-1].tool == operation


@pytest.mark.parametrize("mode", ["valid", "adversarial"])
@pytest.mark.parametrize(
    ("example", "factory"), [("bank", "Bank"), ("petstore", "PetStore"), ("tickets", "Tickets")]
)
def test_correct_implementation_has_no_finding(example, factory, mode):
    summary = _run(example, factory, mode, max_examples=60)
    assert summary.findings == ()
    assert summary.calls > 100
    if mode == "adversarial":
        assert summary.rejected > 0  # forbidden calls were sent, and rejected as the contract says


def test_rule_based_machine_finds_the_same_bug():
    summary = _run("petstore", "CrashingStore", "adversarial", engine="rules", max_examples=100)
    crash = [f for f in summary.findings if f.kind == "crash"]
    assert crash and [s.tool for s in crash[0].steps] == ["login", "addPet"]
    assert "UnicodeEncodeError" in crash[0].message


@pytest.mark.usefixtures("light_planner")  # what is compared is the run, not how deep it plans
def test_same_seed_same_run():
    first = _run("tickets", "HidingTickets", "adversarial", max_examples=40, seed=7)
    second = _run("tickets", "HidingTickets", "adversarial", max_examples=40, seed=7)
    assert [f.to_json() for f in first.findings] == [f.to_json() for f in second.findings]
    assert [f.steps for f in first.findings] == [f.steps for f in second.findings]


@pytest.mark.usefixtures("light_planner")
def test_same_seed_same_run_whatever_else_the_process_loaded(tmp_path, monkeypatch):
    """Hypothesis mines literals from every loaded non-library module; a module loaded in between
    (another test, the user's notebook) must not change a seeded run."""
    first = _run("petstore", "UseAfterDeleteStore", "adversarial", max_examples=30)
    source = "\n".join(f"LIMIT_{i} = {1_000_003 + 7919 * i}" for i in range(300))
    (tmp_path / "unrelated_constants.py").write_text(source + '\nNAME = "Ⱥ-unrelated"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "unrelated_constants", raising=False)
    importlib.import_module("unrelated_constants")
    second = _run("petstore", "UseAfterDeleteStore", "adversarial", max_examples=30)
    assert (first.calls, first.test_cases) == (second.calls, second.test_cases)
    assert [f.to_json() for f in first.findings] == [f.to_json() for f in second.findings]
