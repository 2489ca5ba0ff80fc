"""A value read part-way through the effects (``branches.afters``): a ``requires`` that reads a
value its effects move by a sum (``points = points + used - earned``) gives, for a part of the
move or all of it, the refusal its mutant (the value read as if that part were made) would let
through, as a clause outcome counted and planned for: an implementation that checks a cancel
after giving back the points an order redeemed agrees with the contract until an order has both
redeemed and earned points and the earned ones are spent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs

import envfactory
from envfactory.contracts.printer import to_source
from envfactory.fuzz import influence, oracle, reach
from envfactory.fuzz.branches import afters, find
from envfactory.fuzz.reach import goal_of
from envfactory.fuzz.runner import Session, clause_outcomes
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))
sys.path.insert(0, str(IMPLS.parent))

import storefront_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402
from model_states import after, planned  # noqa: E402

STOREFRONT = envfactory.load(IMPLS / "storefront.yaml")
POINTS = "customers[orders[input.id].customer].points"
GIVEN_BACK = f"cancelOrder: requires 3 after {POINTS} + orders[input.id].used"

# an order that redeemed two points and earned one, then that point spent on a third order
SPENT: list[tuple[str, dict[str, Any]]] = [
    ("registerCustomer", {"name": "c"}),
    ("addProduct", {"sku": "x", "price": 5, "stock": 5}),
    ("placeOrder", {"customer": "c", "sku": "x", "qty": 2}),
    ("payOrder", {"id": 1}),
    ("placeOrder", {"customer": "c", "sku": "x", "qty": 2, "points": 2}),
    ("payOrder", {"id": 2}),
    ("placeOrder", {"customer": "c", "sku": "x", "qty": 1, "points": 1}),
]


def test_a_move_that_loosens_the_clause_is_an_outcome_and_one_that_tightens_it_is_none() -> None:
    names = [(b.outcomes[0], b.refused) for b in afters(STOREFRONT.operations["cancelOrder"], STOREFRONT)]
    # the points an order redeemed move the check toward holding (an invariant keeps them at or
    # above zero); the earned ones move it away, alone or in the whole move, and are no outcome
    assert names == [(GIVEN_BACK, True)]
    assert {name for name, _ in names} <= set(clause_outcomes(STOREFRONT))
    branch, taken = find(STOREFRONT, GIVEN_BACK) or (None, None)
    assert branch is not None and taken == GIVEN_BACK
    assert to_source(branch.parts[0]) == f"{POINTS} + orders[input.id].used >= orders[input.id].earned"
    assert goal_of(GIVEN_BACK, STOREFRONT) == ("cancelOrder", 2, branch.parts[0])
    # a stock taken by an order and checked after the take is stricter than the contract, never
    # looser; nor is a counter checked after its ``+ 1``
    for name in ("placeOrder", "payOrder", "registerCustomer"):
        assert afters(STOREFRONT.operations[name], STOREFRONT) == ()


def test_a_run_counts_the_outcome_on_a_refusal_the_mutant_would_let_through() -> None:
    cancel = STOREFRONT.operations["cancelOrder"]
    # order 2 redeemed two points and earned one, spent since: the mutant lets its cancel in;
    # order 1 redeemed none: refused by both
    for order, counted in ((1, False), (2, True)):
        session = Session(STOREFRONT, open_target("sim", STOREFRONT), mode="valid", time_budget=None)
        machine, state = after(STOREFRONT, SPENT)
        expect = oracle.judge(machine, state, cancel, {"id": order})
        assert not expect.accepted
        session.outcome(cancel, expect, state, {"id": order})
        assert (GIVEN_BACK in session.outcomes) is counted


def test_the_solver_plans_the_refusal_on_which_the_implementation_checking_early_differs() -> None:
    """The storefront's RefundBeforeCheck asks whether the customer still has the points an
    order earned after giving back the ones redeemed on it: the route to the outcome ends in
    the one cancel it lets through where the contract refuses it, eight calls in (its minimal
    depth)."""
    route, trace = planned(STOREFRONT, GIVEN_BACK)
    assert route.refused and len(route.operations) == 8
    assert shows_last(storefront_impl.Storefront(), storefront_impl.RefundBeforeCheck(), trace)


def test_the_planner_phases_come_in_their_order(monkeypatch: Any) -> None:
    """Beside a time budget's search, the planner's phases run one after the other. The plan up
    to the stones' depth comes first; then the influence goals on a read apt to be kept as a
    copy are relayed from the corpus (those on one read of several first, then all that are
    left), before the relays on from the stones (which took until 14
    to 17 s of a 20 s run on four held-out sets); then the refusals a weak mutant lets through
    (``afters``, ``statuses``) are planned past the stones, before the other relays (the
    storefront's RefundBeforeCheck route, eight calls, came after 20 s behind them); the other
    goals after those."""
    phases: list[tuple[str, str, list[Any], int]] = []
    rounds_from: list[Any] = []
    real_stepwise = reach.stepwise
    near_route = reach.Route(("registerCustomer",), ({"name": "c"},), goal=("registerCustomer", None))

    def stepwise(contract: Any, goals: Any, **kw: Any) -> Any:
        phases.append(("plan", kw.get("parts", "both"), list(goals), kw["effort"]))
        if kw.get("parts") == "near":
            kw["report"](near_route)
        if kw.get("parts") == "rounds":
            rounds_from.extend(kw["near"])
        return real_stepwise(contract, goals, **{**kw, "effort": 1})

    def relay(contract: Any, starts: Any, goals: Any, **kw: Any) -> Any:
        phases.append(("relay", "", list(goals), kw["effort"]))
        return []

    monkeypatch.setattr(reach, "stepwise", stepwise)
    monkeypatch.setattr(reach, "relay", relay)
    monkeypatch.setattr(reach, "_apart", lambda work, seconds, report: work(False, report))
    given = goal_of(GIVEN_BACK, STOREFRONT)
    shipped = goal_of("shipOrder: accepted", STOREFRONT)
    assert given is not None and shipped is not None
    by_name = {influence.name(g): g for g in influence.goals(STOREFRONT)}
    # the order's status, read inside a count: kept; the stock, a plain read: not
    counted = by_name["placeOrder: requires 5 fails, by orders[...].status as payOrder changed it"]
    stock = by_name["placeOrder: requires 4 fails, by products[...].stock as restock changed it"]
    assert influence.kept(STOREFRONT, counted) and not influence.kept(STOREFRONT, stock)
    # one read of several as before the write (the storefront has none: the cloud's move asks
    # for a manager in two quantifiers), relayed before the other kept goals
    copied = (counted[0], counted[1], attrs.evolve(counted[2], read=(4, 0)))
    heard: list[Any] = []
    reach.plan_apart(
        STOREFRONT,
        [shipped, given],
        effort=10**6,
        seconds=60,
        report=heard.append,
        starts=list,
        then=lambda: [stock, counted, copied],
    )
    # the rounds go on from the near plan's routes; past the stones, the refusals get half the
    # effort: a goal no state meets does not hold the relays back for all of it
    assert heard[0] == near_route and rounds_from == [near_route]
    assert phases == [
        ("plan", "near", [shipped, given], 10**6),
        ("relay", "", [copied], 3 * 10**5),
        ("relay", "", [counted, copied], 3 * 10**5),
        ("plan", "rounds", [shipped, given], 10**6),
        ("plan", "deep", [given], 10**6 // 2),
        ("relay", "", [shipped, given], 3 * 10**5),
        ("relay", "", [stock], 3 * 10**5),
        ("plan", "deep", [shipped, given], 10**6),
        ("plan", "both", [stock, counted, copied], 10**6),
    ]
