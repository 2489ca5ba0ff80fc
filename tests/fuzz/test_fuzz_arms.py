"""A condition inside a ``requires`` read one way only (``branches.arms``), as a clause outcome
counted and planned for.

A restore in the drive looks for the item's name where it comes back: its folder while that is
live, the root otherwise. The planted ``RestoreNameCheckedInOldFolder`` always looks in the old
folder; it agrees with the contract until an item comes back at the root, its folder in the
trash, under a name another item there has: a restore refused at the root, seven calls deep,
that no ``requires`` outcome tells apart from one refused in a live folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import envfactory
from envfactory.fuzz import oracle
from envfactory.fuzz.branches import arms, find
from envfactory.fuzz.reach import goal_of
from envfactory.fuzz.runner import Session, clause_outcomes
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))
sys.path.insert(0, str(IMPLS.parent))

import drive_impl  # noqa: E402
from fuzz_impl_check import shows_last  # noqa: E402
from model_states import after, planned  # noqa: E402

DRIVE = envfactory.load(IMPLS / "drive.yaml")
STOREFRONT = envfactory.load(IMPLS / "storefront.yaml")
AT_ROOT = "restore: requires 4 always items[input.item].parent"


def test_each_arm_of_a_condition_in_a_requires_is_a_refusal_the_mutant_lets_through() -> None:
    restore = DRIVE.operations["restore"]
    names = [(b.outcomes[0], b.refused) for b in arms(restore, DRIVE)]
    assert names == [(AT_ROOT, True), ("restore: requires 4 always 0", True)]
    assert {name for name, _ in names} <= set(clause_outcomes(DRIVE))
    # two conditions of one clause closing on the same arm are named apart
    move = [b.outcomes[0] for b in arms(DRIVE.operations["move"], DRIVE)]
    assert "move: requires 6 always 3 (condition 2)" in move
    assert "move: requires 6 always 3 (condition 3)" in move
    branch, taken = find(DRIVE, AT_ROOT) or (None, None)
    assert branch is not None and taken == AT_ROOT
    assert goal_of(AT_ROOT, DRIVE) == ("restore", 3, branch.parts[0])
    # an optional field's default read one way: the points an order redeems, where given
    assert "placeOrder: requires 3 always input.points" in {
        b.outcomes[0] for b in arms(STOREFRONT.operations["placeOrder"], STOREFRONT)
    }
    # a requires with no condition gives none
    assert arms(DRIVE.operations["delete"], DRIVE) == ()


def test_the_solver_plans_the_restore_refused_at_the_root_where_the_old_folder_is_asked() -> None:
    route, trace = planned(DRIVE, AT_ROOT)
    assert route.refused and len(trace) == 7  # the bug's minimal depth
    assert shows_last(drive_impl.Drive(), drive_impl.RestoreNameCheckedInOldFolder(), trace)


def test_a_run_counts_the_outcome_on_a_refusal_at_the_root_and_not_in_a_live_folder() -> None:
    restore = DRIVE.operations["restore"]
    # u's file 2 in folder 1, both trashed (the file first), and a file 3 at the root under its
    # name; then the same with folder 1 restored first, so that 2 comes back there
    trashed = [
        ("register", {"user": "u"}),
        ("createFolder", {"by": "u", "parent": 0, "name": "a"}),
        ("upload", {"by": "u", "parent": 1, "name": "x", "size": 1}),
        ("delete", {"by": "u", "item": 2}),
        ("delete", {"by": "u", "item": 1}),
        ("upload", {"by": "u", "parent": 0, "name": "x", "size": 1}),
    ]
    live = [
        *trashed,
        ("restore", {"by": "u", "item": 1}),
        ("upload", {"by": "u", "parent": 1, "name": "x", "size": 1}),
    ]
    for calls, counted in ((trashed, True), (live, False)):
        session = Session(DRIVE, open_target("sim", DRIVE), mode="valid", time_budget=None)
        machine, state = after(DRIVE, calls)
        value = {"by": "u", "item": 2}
        expect = oracle.judge(machine, state, restore, value)
        assert not expect.accepted and expect.clause == restore.requires[3]  # the name is taken
        session.outcome(restore, expect, state, value)
        assert (AT_ROOT in session.outcomes) is counted
        assert (AT_ROOT in {b.outcomes[0] for b in session.open_refusals["restore"]}) is not counted
