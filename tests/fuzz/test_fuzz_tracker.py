"""The twenty-first held-out set (``impls/tracker*``): eight planted bugs 7 to 9 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (issues numbered by the
tracker and worth an optional number of points; a limit of three issues in progress per person
reached by four starts; a tally per person that must be forgotten when they leave and come back
under the same name; an issue reopened twice at most, the optional assignee of a reopen present
on one of them; "blocks" links between two distinct issues, two per issue with a third dropping
the oldest, a queue; a count of blockers not done kept beside the links; sprints planned, active
and closed, with a capacity in points summed over their issues; an issue moved between two
distinct sprints, checked against the wrong one; a sprint closed into another named by an
optional field, which must hold what it has and what comes in).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct tracker answers that trace as the contract says, the planted one
does not), and the correct tracker gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, states told apart by
everything either implementation holds, on a small domain: users u and v; issues of one or three
points, every issue number given (and the next one) started by either user, finished, closed,
reopened with no assignee or either user, read, and blocking or unblocked from every other; sprints
s and t of capacity three or five, started, read, closed alone or into either, and every issue added
to either or moved between them. Each bug's search left out the operations that neither read nor
write what its planted class changes and only refuse calls a shortest trace would not make: the
sprints for the bugs of people and reopens (and the links, which only refuse closes), the sprints
for the links' bugs, the team and the links for the sprints' bugs (a close makes an issue done
without anyone). A search over every operation (all the above plus issues of two points and sprints
of four) to 7 calls found ``RejoinKeepsDone`` at 7 and nothing shorter (some 100,000 pair states
within 6 calls). The searches found nothing shorter than each stated length, and found a difference
at it; the traces below show one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import tracker_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def issue(points: int | None = None) -> Call:
    return ("createIssue", {} if points is None else {"points": points})


def sprint(name: str, capacity: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"sprint": name}
    return ("createSprint", kwargs if capacity is None else {**kwargs, "capacity": capacity})


def user(op: str, name: str = "u") -> Call:
    return (op, {"user": name})


def on(op: str, number: int) -> Call:
    return (op, {"issue": number})


def start(number: int, name: str = "u") -> Call:
    return ("startIssue", {"issue": number, "user": name})


def reopen(number: int, assignee: str | None = None) -> Call:
    kwargs: dict[str, Any] = {"issue": number}
    return ("reopenIssue", kwargs if assignee is None else {**kwargs, "assignee": assignee})


def link(op: str, number: int, by: int) -> Call:
    return (op, {"issue": number, "by": by})


def add(number: int, name: str) -> Call:
    return ("addToSprint", {"issue": number, "sprint": name})


def close(name: str, into: str | None = None) -> Call:
    kwargs: dict[str, Any] = {"sprint": name}
    return ("closeSprint", kwargs if into is None else {**kwargs, "into": into})


# Issue 1 of three points in sprint t (full, capacity three) and issue 2 of one in sprint s.
TWO_SPRINTS: list[Call] = [issue(3), issue(), add(1, "t"), add(2, "s")]

TRACES: dict[str, list[Call]] = {
    # Four issues started by u: the fourth is one over three.
    "FourthInProgress": [user("addUser"), *[issue()] * 4, *[start(n) for n in (1, 2, 3, 4)]],
    # Issue 4 blocked by 1, 2 and 3: the third link drops 1, the oldest.
    "BlockersAsStack": [*[issue()] * 4, *[link("block", 4, n) for n in (1, 2, 3)], on("issueInfo", 4)],
    # u finishes an issue, leaves and comes back: none done since.
    "RejoinKeepsDone": [
        user("addUser"),
        issue(),
        start(1),
        on("finishIssue", 1),
        user("removeUser"),
        user("addUser"),
        user("userInfo"),
    ],
    # Three reopens of issue 1, the first naming u: the third is one over two.
    "ReopenNamedUncounted": [
        user("addUser"),
        issue(),
        on("closeIssue", 1),
        reopen(1, "u"),
        on("closeIssue", 1),
        reopen(1),
        on("closeIssue", 1),
        reopen(1),
    ],
    # Issue 2 moved from s (capacity 5) into t (three, full).
    "CapacityOfSource": [
        sprint("s", 5),
        sprint("t"),
        *TWO_SPRINTS,
        ("moveIssue", {"issue": 2, "source": "s", "target": "t"}),
    ],
    # s closed into t, full: issue 2's point does not fit on top of issue 1's three.
    "CarryIgnoresLoad": [
        sprint("s"),
        sprint("t"),
        *TWO_SPRINTS,
        ("startSprint", {"sprint": "s"}),
        close("s", "t"),
    ],
    # A done issue in s, s closed into t: t holds nothing.
    "DoneCarriedOver": [
        sprint("s"),
        sprint("t"),
        issue(),
        add(1, "s"),
        on("closeIssue", 1),
        ("startSprint", {"sprint": "s"}),
        close("s", "t"),
        ("sprintInfo", {"sprint": "t"}),
    ],
    # Issue 3 blocked by 1 and 2; 1 closed and unlinked: 2 still blocks 3.
    "UnblockDoneDecrements": [
        *[issue()] * 3,
        link("block", 3, 1),
        link("block", 3, 2),
        on("closeIssue", 1),
        link("unblock", 3, 1),
        on("closeIssue", 3),
    ],
}
MINIMAL = {
    "FourthInProgress": 9,
    "BlockersAsStack": 8,
    "RejoinKeepsDone": 7,
    "ReopenNamedUncounted": 8,
    "CapacityOfSource": 7,
    "CarryIgnoresLoad": 8,
    "DoneCarriedOver": 8,
    "UnblockDoneDecrements": 8,
}


class TestTracker(HeldOutSet):
    name, module, correct = "tracker", tracker_impl, "Tracker"
    traces, minimal = TRACES, MINIMAL
