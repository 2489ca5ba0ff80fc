"""The eighth held-out set (``impls/reviews*``): eight planted bugs 8 to 11 calls deep behind an
OpenAPI 3.1 contract with ``x-envfactory`` clauses, written in session 15 in shapes the earlier
sets do not have (a number the server assigns, one user logged in at a time, reviewers and
approvals as lists, a majority written with ``//``, a ``release/`` branch prefix, a lifecycle that
comes back to draft), and measured (``bench/bench_fuzz_cli.py --sets reviews``) on the fuzzer as
it was.

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct board answers that trace as the contract says, the planted one
does not), and the correct board gives the fuzzer no finding.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import reviews_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402

OUT: Call = ("logout", {})
ONE = {"number": 1}


def signup(name: str, **extra: Any) -> Call:
    return ("signup", {"name": name, **extra})


def login(name: str) -> Call:
    return ("login", {"name": name})


def pull(branch: str = "x", **extra: Any) -> Call:
    return ("openPull", {"branch": branch, **extra})


def ask(reviewer: str, number: int = 1) -> Call:
    return ("requestReview", {"number": number, "reviewer": reviewer})


def on(op: str, number: int = 1) -> Call:
    return (op, {"number": number})


TRACES: dict[str, list[Call]] = {
    "HalfQuorum": [
        signup("a"),
        signup("b", admin=True),
        signup("c"),
        login("a"),
        pull(),
        ask("b"),
        ask("c"),
        OUT,
        login("b"),
        on("approve"),
        on("merge"),
    ],
    "OwnApprovalKept": [
        signup("a"),
        signup("b", admin=True),
        login("a"),
        pull(),
        ask("b"),
        OUT,
        login("b"),
        on("approve"),
        on("push"),
        on("getPull"),
    ],
    "BranchReopens": [
        signup("a"),
        login("a"),
        pull(),
        pull(),
        on("close", 1),
        on("reopen", 1),
        on("close", 2),
        on("reopen", 2),
    ],
    "Resurrected": [
        signup("a"),
        login("a"),
        pull(),
        on("close"),
        OUT,
        ("removeUser", {"name": "a"}),
        signup("a"),
        ("getUser", {"name": "a"}),
    ],
    "ReleaseSelfMerge": [
        signup("a"),
        signup("b"),
        login("a"),
        pull("release/x"),
        ask("b"),
        OUT,
        login("b"),
        on("approve"),
        OUT,
        login("a"),
        on("merge"),
    ],
    "DraftRefund": [
        signup("a"),
        login("a"),
        pull(draft=True),
        on("close"),
        pull(),
        pull(),
        pull(),
        pull(),
    ],
    "RecreatedReviewer": [
        signup("a"),
        signup("b"),
        login("a"),
        pull(),
        ask("b"),
        ("removeUser", {"name": "b"}),
        signup("b"),
        OUT,
        login("b"),
        on("approve"),
    ],
    "ReopenedDraftApproved": [
        signup("a"),
        signup("b"),
        login("a"),
        pull(),
        ask("b"),
        on("close"),
        on("reopen"),
        OUT,
        login("b"),
        on("approve"),
    ],
}
MINIMAL = {
    "HalfQuorum": 11,
    "OwnApprovalKept": 10,
    "BranchReopens": 8,
    "Resurrected": 8,
    "ReleaseSelfMerge": 11,
    "DraftRefund": 8,
    "RecreatedReviewer": 10,
    "ReopenedDraftApproved": 10,
}


class TestReviews(HeldOutSet):
    name, module, correct = "reviews", reviews_impl, "Reviews"
    traces, minimal = TRACES, MINIMAL
