"""A ``requires`` with one record read by another key the call names (``branches.swaps``): the
call accepted where the clause, with that record read in its place, would refuse it is a clause
outcome of its own, counted and planned for, since an implementation that reads the wrong record
agrees with the contract until a state tells the two records apart."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import envfactory
from envfactory.contracts.printer import to_source
from envfactory.contracts.semantics import Machine
from envfactory.fuzz import oracle
from envfactory.fuzz.branches import find, swaps
from envfactory.fuzz.reach import goal_of, plan
from envfactory.fuzz.runner import Session, clause_outcomes
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))

import clinic_impl  # noqa: E402
import courier_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402

CLINIC = envfactory.load(IMPLS / "clinic.yaml")
COURIER = envfactory.load(IMPLS / "courier.yaml")
RECEIVER_CAP = "transfer: requires 8 with input.doctor for input.to (read 2)"


def test_each_record_a_requires_reads_is_swapped_for_the_other_keys_the_call_names() -> None:
    names = [b.outcomes[0] for b in swaps(CLINIC.operations["transfer"], CLINIC)]
    # the senior check and both reads of the room check, each accepted where the swapped clause
    # refuses; `patients[input.patient]` has no other patient key in the call, and `input.doctor
    # in doctors` reads no record
    assert names == [
        "transfer: requires 7 with input.doctor for input.to",
        "transfer: requires 8 with input.doctor for input.to",
        RECEIVER_CAP,
    ]
    assert set(names) <= set(clause_outcomes(CLINIC))
    (cap,) = (b for b in swaps(CLINIC.operations["transfer"], CLINIC) if b.outcomes[0] == RECEIVER_CAP)
    assert [to_source(p) for p in cap.parts] == [
        "input.doctor in doctors",
        "not (doctors[input.to].load < doctors[input.doctor].cap)",
    ]
    assert find(CLINIC, RECEIVER_CAP) == (cap, RECEIVER_CAP)
    # a record's field read as a key is swapped for the same record's other key fields
    attempt = [b.outcomes[0] for b in swaps(COURIER.operations["attempt"], COURIER)]
    assert "attempt: requires 4 with parcels[input.parcel].origin for parcels[input.parcel].to" in attempt
    # an operation with one key of each collection has none
    assert swaps(CLINIC.operations["admit"], CLINIC) == ()


def test_the_outcome_is_taken_only_where_the_two_records_tell_the_clause_apart() -> None:
    (cap,) = (b for b in swaps(CLINIC.operations["transfer"], CLINIC) if b.outcomes[0] == RECEIVER_CAP)

    def state(source_cap: int, receiver_cap: int) -> dict[str, Any]:
        doctors = {
            "d": {"cap": source_cap, "load": 1, "senior": False},
            "e": {"cap": receiver_cap, "load": 1, "senior": False},
        }
        return {"doctors": doctors}

    move = {"patient": "p", "doctor": "d", "to": "e"}
    assert cap.taken(state(1, 2), move) == RECEIVER_CAP  # e has room by its cap, not by d's
    assert cap.taken(state(2, 2), move) is None  # the same caps: no state tells them apart
    assert cap.taken(state(3, 2), move) is None


def test_a_run_counts_the_outcome_on_an_accepted_call_that_tells_the_records_apart() -> None:
    session = Session(CLINIC, open_target("sim", CLINIC), mode="valid", time_budget=None)
    machine = Machine(CLINIC)
    transfer = CLINIC.operations["transfer"]
    for source_cap, counted in ((2, False), (1, True)):
        state = machine.initial_state()
        for name, value in (
            ("addDoctor", {"name": "d", "cap": source_cap}),
            ("addDoctor", {"name": "e", "cap": 2}),
            ("register", {"name": "p"}),
            ("register", {"name": "q"}),
            ("admit", {"patient": "q", "doctor": "e"}),
            ("admit", {"patient": "p", "doctor": "d"}),
        ):
            state = machine.apply(state, CLINIC.operations[name], value)
        value = {"patient": "p", "doctor": "d", "to": "e"}
        expect = oracle.judge(machine, state, transfer, value)
        assert expect.accepted
        session.outcome(transfer, expect, state, value)
        assert (RECEIVER_CAP in session.outcomes) is counted
    assert all(RECEIVER_CAP not in b.outcomes for b in session.open_branches["transfer"])


def trace_of(route: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(name, dict(value)) for name, value in zip(route.operations, route.inputs, strict=True)]


def test_the_solver_plans_a_route_on_which_the_implementation_reading_the_wrong_record_differs() -> None:
    """The clinic's CapOfSource compares the receiver's load with the sender's cap: the planned
    route to the swapped outcome ends in the one call where it answers otherwise than the
    contract, seven calls in (its minimal depth); a route to the transfer merely accepted does
    not tell them apart."""
    machine = Machine(CLINIC)
    for outcome, differs in ((RECEIVER_CAP, True), ("transfer: accepted", False)):
        goal = goal_of(outcome, CLINIC)
        assert goal is not None
        (route,) = plan(CLINIC, [goal], effort=10**9)
        state = machine.initial_state()
        for name, value in zip(route.operations, route.inputs, strict=True):
            assert oracle.judge(machine, state, CLINIC.operations[name], value).accepted
            state = machine.apply(state, CLINIC.operations[name], value)
        trace = trace_of(route)
        assert shows_last(clinic_impl.Clinic(), clinic_impl.CapOfSource(), trace) is differs
        if differs:
            assert len(trace) == 7


def test_a_delivery_counting_the_tries_of_the_hub_it_came_from_is_planned_for() -> None:
    """The courier's TriesOfOrigin: the route to the attempt accepted where the tries of the
    parcel's origin would refuse it ends where the implementation refuses it."""
    outcome = "attempt: requires 4 with parcels[input.parcel].origin for parcels[input.parcel].to"
    goal = goal_of(outcome, COURIER)
    assert goal is not None
    (route,) = plan(COURIER, [goal], effort=10**9)
    assert shows_last(courier_impl.Courier(), courier_impl.TriesOfOrigin(), trace_of(route))
