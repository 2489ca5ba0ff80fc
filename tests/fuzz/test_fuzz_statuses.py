"""A listed value counted otherwise (``branches.statuses``): a ``requires`` that counts records
filtered by a field compared with one of the values its schema lists (``shows[...].status !=
"closed"``) gives, for each other listed value, the call on which the clause and its mutant (that
value kept out of the count too) differ, as a clause outcome counted and planned for: an
implementation that stops counting a cancelled show's seats as it does a closed one's agrees with
the contract until a customer holds seats of a cancelled show and books past the limit."""

from __future__ import annotations

import sys
from pathlib import Path

import envfactory
from envfactory.contracts.printer import to_source
from envfactory.fuzz import oracle
from envfactory.fuzz.branches import find, statuses
from envfactory.fuzz.reach import goal_of
from envfactory.fuzz.runner import Session, clause_outcomes
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))
sys.path.insert(0, str(IMPLS.parent))

import boxoffice_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402
from model_states import after, planned  # noqa: E402

BOXOFFICE = envfactory.load(IMPLS / "boxoffice.yaml")
RUNNERS = envfactory.load(IMPLS / "runners.yaml")
CANCELLED = 'book: requires 7 also "cancelled" for shows[bookings[b].show].status != "closed"'

# a customer with two seats of a show then cancelled, booking three of another
CANCELLED_SEATS = [
    ("signup", {"name": "s"}),
    ("addShow", {"show": "x"}),
    ("addShow", {"show": "y", "capacity": 3}),
    ("setShow", {"show": "x", "status": "onsale"}),
    ("setShow", {"show": "y", "status": "onsale"}),
    ("book", {"booking": "b1", "customer": "s", "show": "x", "seats": 2}),
    ("setShow", {"show": "x", "status": "cancelled"}),
]
PAST_THE_LIMIT = {"booking": "b2", "customer": "s", "show": "y", "seats": 3}


def test_each_other_listed_value_of_a_counted_filter_is_an_outcome_on_the_stricter_side() -> None:
    names = [(b.outcomes[0], b.refused) for b in statuses(BOXOFFICE.operations["book"], BOXOFFICE)]
    # the seat limit counts fewer seats with a value kept out: the contract is the stricter,
    # and the outcome is a refusal the mutant would let through
    assert names == [
        ('book: requires 7 also "seated" for bookings[b].status != "cancelled"', True),
        ('book: requires 7 also "waiting" for bookings[b].status != "cancelled"', True),
        ('book: requires 7 also "scheduled" for shows[bookings[b].show].status != "closed"', True),
        ('book: requires 7 also "onsale" for shows[bookings[b].show].status != "closed"', True),
        (CANCELLED, True),
    ]
    assert {name for name, _ in names} <= set(clause_outcomes(BOXOFFICE))
    branch, taken = find(BOXOFFICE, CANCELLED) or (None, None)
    assert branch is not None and taken == CANCELLED
    assert 'shows[bookings[b].show].status != "cancelled"' in to_source(branch.parts[0])
    assert goal_of(CANCELLED, BOXOFFICE) == ("book", 6, branch.parts[0])
    # a limit of running jobs counts more with a value let in: the mutant is the stricter, and
    # that side is no outcome
    assert statuses(RUNNERS.operations["pickJob"], RUNNERS) == ()


def test_a_run_counts_the_outcome_on_a_refusal_the_mutant_would_let_through() -> None:
    book = BOXOFFICE.operations["book"]
    for status, counted in (("closed", False), ("cancelled", True)):
        session = Session(BOXOFFICE, open_target("sim", BOXOFFICE), mode="valid", time_budget=None)
        calls = [*CANCELLED_SEATS[:-1], ("setShow", {"show": "x", "status": status})]
        machine, state = after(BOXOFFICE, calls)
        expect = oracle.judge(machine, state, book, PAST_THE_LIMIT)
        # with the show closed, its seats no longer count and the booking goes through
        assert expect.accepted is not counted
        session.outcome(book, expect, state, PAST_THE_LIMIT)
        assert (CANCELLED in session.outcomes) is counted
        assert all(CANCELLED not in b.outcomes for b in session.open_branches["book"])
    assert all(CANCELLED not in b.outcomes for b in session.open_refusals["book"])


def test_the_solver_plans_the_refusal_on_which_the_implementation_counting_otherwise_differs() -> None:
    """The box office's CancelledShowNotHeld stops counting a cancelled show's seats at once:
    the route to the outcome ends in the one call it lets through where the contract refuses
    it, eight calls in (its minimal depth)."""
    route, trace = planned(BOXOFFICE, CANCELLED)
    assert route.refused and len(route.operations) == 8
    assert shows_last(boxoffice_impl.BoxOffice(), boxoffice_impl.CancelledShowNotHeld(), trace)
