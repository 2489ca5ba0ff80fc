"""Use after delete, one key at a time (``machine.Case.use_after_delete``, ``Case._broken``): a
deleted key named in a call whose other fields are valid, so that the clause the deleted key
breaks is the one the call is refused by; and a call sent again as it was once its key is made
again (``Case.as_before``).

The pharmacy's ``LicenceOutlivesDismissal`` keeps a licence register beside its staff list and
forgets to strike a dismissed pharmacist off it: a fill awaiting its check is still checked by
them. A check naming a dismissed pharmacist and a fill that is gone is refused for the fill by
both implementations; only the fill that awaits its check shows the bug. The registry's
``GrantOutlivesDelete`` keeps the tokens a package name authorized after the package is deleted:
made again by another user, the package is still the old owner's to delete.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.contracts.model import Contract
from envfactory.fuzz import machine
from envfactory.fuzz.findings import FindingError
from envfactory.fuzz.machine import Case, OpPlan, plans
from envfactory.fuzz.runner import Session, fuzz
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Fixed, Seeded

IMPLS = Path(__file__).resolve().parent / "impls"
PHARMACY = IMPLS / "pharmacy.yaml"
AWAITING = [
    ("addDrug", {"drug": "d", "stock": 1}),
    ("hire", {"name": "a", "role": "pharmacist"}),
    ("hire", {"name": "t"}),
    ("prescribe", {"patient": "p", "drug": "d"}),
    ("prepare", {"rx": 1, "actor": "t"}),
    ("dismiss", {"name": "a"}),
]
"""A fill prepared by t awaits its check; a, the pharmacist, has just been dismissed."""


@pytest.fixture(scope="module")
def pharmacy() -> Contract:
    return envfactory.load(PHARMACY)


def _dismissed(contract: Contract, impl: str, mode: str = "adversarial") -> tuple[Session, Case]:
    target = open_target(f"python:{IMPLS / 'pharmacy_impl.py'}:{impl}", contract)
    session = Session(contract, target, mode=mode, time_budget=None)
    case = Case(session)
    for name, value in AWAITING:
        case.send(contract.operations[name], value)
    return session, case


def _readers(session: Session) -> list[tuple[str, str]]:
    """The (operation, field) pairs ``use_after_delete`` chooses among after a dismissal."""
    return [
        (plan.name, key.field)
        for plan in plans(session)
        for key in plan.steer.keys
        if key.collection == "staff" and not key.fresh
    ]


def test_a_dismissed_pharmacist_is_named_in_a_check_of_the_fill_that_awaits_it(pharmacy: Contract) -> None:
    """The step after the dismissal names the dismissed pharmacist; the fill is the one that
    awaits its check, as a valid call draws it, and the planted register lets the check through."""
    session, case = _dismissed(pharmacy, "LicenceOutlivesDismissal")
    assert case.stale == ("staff", "a")
    readers = _readers(session)
    which = readers.index(("check", "actor"))
    with pytest.raises(FindingError):
        case.use_after_delete(plans(session), "staff", "a", src=Fixed(0, {len(readers): which}, once=True))
    last = case.steps[-1]
    assert (last.tool, last.input, last.status) == ("check", {"rx": 1, "actor": "a"}, 200)


def test_the_correct_pharmacy_refuses_the_dismissed_pharmacist_s_check(pharmacy: Contract) -> None:
    session, case = _dismissed(pharmacy, "Pharmacy")
    readers = _readers(session)
    which = readers.index(("check", "actor"))
    assert case.use_after_delete(plans(session), "staff", "a", src=Fixed(0, {len(readers): which}, once=True))
    last = case.steps[-1]
    assert (last.tool, last.input, last.status) == ("check", {"rx": 1, "actor": "a"}, 403)


def test_the_step_after_a_delete_uses_the_deleted_key_about_once_in_stale_odds(pharmacy: Contract) -> None:
    runs = 300
    named = 0
    for seed in range(runs):
        session, case = _dismissed(pharmacy, "Pharmacy")
        case.started = True
        case.step(plans(session), Seeded(seed))
        step = case.steps[len(AWAITING)] if len(case.steps) > len(AWAITING) else None
        named += (
            step is not None
            and any(step.input.get(f) == "a" for f in ("actor", "name"))
            and step.status >= 400
        )
    # other steps name ``a`` too now and then (a probe's breaking draw): the share is at least
    # the odds' and not far past them
    assert runs / machine.STALE_ODDS * 0.8 < named < runs / machine.STALE_ODDS * 1.6


def test_a_valid_mode_case_never_names_the_deleted_key(pharmacy: Contract) -> None:
    for seed in range(60):
        session, case = _dismissed(pharmacy, "Pharmacy", mode="valid")
        case.started = True
        case.step(plans(session), Seeded(seed))
        assert all(s.status < 400 for s in case.steps[len(AWAITING) :])


def _check(session: Session) -> OpPlan:
    (plan,) = [p for p in plans(session) if p.name == "check"]
    return plan


def test_a_breaking_draw_breaks_the_key_of_the_collection_that_lost_one(pharmacy: Contract) -> None:
    """After the dismissal, a probe's breaking draw of a check breaks the actor alone (or, one
    time in two, every key as before): the fill stays the one that awaits its check."""
    session, case = _dismissed(pharmacy, "Pharmacy")
    plan = _check(session)
    chosen = {case._broken(plan, Seeded(seed)) for seed in range(40)}
    assert chosen == {"actor", None}
    dismissed = awaiting = 0
    for seed in range(80):
        value = case.draw(plan, Seeded(seed), breaking=True, broken="actor")
        assert value["actor"] not in case.state["staff"]
        dismissed += value["actor"] == "a"
        awaiting += value["rx"] == 1
    assert dismissed > 40  # six times in eight the key that is gone
    assert awaiting > 45  # as a valid call draws it: six times in eight the live fill


def test_a_breaking_draw_with_no_key_gone_breaks_either_key_alone(pharmacy: Contract) -> None:
    session = Session(pharmacy, open_target("sim", pharmacy), mode="adversarial", time_budget=None)
    case = Case(session)
    for name, value in AWAITING[:-1]:
        case.send(pharmacy.operations[name], value)
    chosen = {case._broken(_check(session), Seeded(seed)) for seed in range(60)}
    assert chosen == {"rx", "actor", None}


def test_the_licence_kept_after_a_dismissal_is_found_in_seven_calls(pharmacy: Contract) -> None:
    target = open_target(f"python:{IMPLS / 'pharmacy_impl.py'}:LicenceOutlivesDismissal", pharmacy)
    # bounded by examples, not time; seed 6 finds it in about 4 s where seed 3 took 15 (seeds 1-8:
    # every one finds it, in 4 to 45 s)
    summary = fuzz(pharmacy, target, seed=6, max_examples=3000, multiple=False)
    # the check let through (200 for 403), or refused for what comes after the staff check
    # (423 for 403): the register's one bug, found as either, each in seven calls
    assert summary.findings
    for finding in summary.findings:
        assert (finding.operation, len(finding.steps)) == ("check", 7)
        assert finding.kind in {"forbidden_accepted", "wrong_status"}
        check = finding.steps[-1]
        dismissed = [s.input["name"] for s in finding.steps if s.tool == "dismiss" and s.status == 200]
        assert check.tool == "check" and check.input["actor"] in dismissed


REGISTRY = IMPLS / "registry.yaml"
REMADE = [
    ("signup", {"user": "u"}),
    ("signup", {"user": "v"}),
    ("createToken", {"user": "u"}),
    ("createPackage", {"token": 1, "package": "p"}),
    ("deletePackage", {"token": 1, "package": "p"}),
    ("createToken", {"user": "v"}),
    ("createPackage", {"token": 2, "package": "p"}),
]
"""Package p made by u, deleted, and made again by v."""


def _remade(impl: str) -> tuple[Session, Case]:
    contract = envfactory.load(REGISTRY)
    target = open_target(f"python:{IMPLS / 'registry_impl.py'}:{impl}", contract)
    session = Session(contract, target, mode="adversarial", time_budget=None)
    case = Case(session)
    for name, value in REMADE:
        case.send(contract.operations[name], value)
    return session, case


def test_a_call_that_named_a_key_before_it_was_made_again_is_sent_again_as_it_was() -> None:
    """The old owner's delete of p, sent again once v has made p again: the registry that keeps
    the tokens each name authorized lets it through."""
    session, case = _remade("GrantOutlivesDelete")
    assert case.again == ("packages", "p")
    with pytest.raises(FindingError):
        case.as_before(plans(session), "packages", "p", src=Seeded(0))
    last = case.steps[-1]
    assert (last.tool, last.input, last.status) == ("deletePackage", {"token": 1, "package": "p"}, 200)


def test_the_correct_registry_refuses_the_old_owner_s_call() -> None:
    session, case = _remade("Registry")
    assert case.as_before(plans(session), "packages", "p", src=Seeded(0))
    last = case.steps[-1]
    assert (last.tool, last.input, last.status) == ("deletePackage", {"token": 1, "package": "p"}, 403)
    assert len(case.steps) == len(REMADE) + 1


def test_a_key_no_earlier_call_named_has_no_call_to_send_again() -> None:
    """No accepted call named q: nothing to send again, and no step is taken."""
    session, case = _remade("Registry")
    assert not case.as_before(plans(session), "packages", "q", src=Seeded(0))
    assert len(case.steps) == len(REMADE)
