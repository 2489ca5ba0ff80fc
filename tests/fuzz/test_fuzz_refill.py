"""Refills: after a record leaves a count a requires bounds, the count filled up again.

A target that keeps such a count as a counter of its own must give the slot back on every way a
record leaves it; the chat server's ``SlotKeptOnModeratorDelete`` gives it back only when the
author deletes their own message, and shows it on the next post of that author in that channel,
a call a step drawn at random seldom makes (``Case.refill``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from envfactory.fuzz.findings import FindingError
from envfactory.fuzz.machine import READ_ODDS, REFILL_ODDS, Case, plans
from envfactory.fuzz.steering import Fill, fills

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_cases import CHAT, chat_case  # noqa: E402
from fuzz_sources import Fixed, Seeded  # noqa: E402

# o owns c (a limit of two), u is in it with two messages standing
AT_LIMIT: list[tuple[str, dict[str, Any]]] = [
    ("register", {"user": "o"}),
    ("register", {"user": "u"}),
    ("createChannel", {"channel": "c", "owner": "o", "limit": 2}),
    ("join", {"channel": "c", "user": "u"}),
    ("post", {"channel": "c", "user": "u"}),
    ("post", {"channel": "c", "user": "u"}),
]


def _case(cls: str) -> Case:
    return chat_case(cls, AT_LIMIT)


def _posts(case: Case) -> list[Any]:
    return [(plan, fixed) for plan, fixed in case.left if plan.name == "post"]


def test_a_count_a_requires_bounds_is_read_off_with_the_fields_its_filter_holds() -> None:
    """A post counts the messages of its channel and author; a new limit those of its channel
    (per person, through a quantifier over the users: no input field names the author)."""
    (post,) = fills(CHAT.operations["post"], CHAT)
    assert post == Fill(
        "messages", (("channel", "channel"), ("user", "author")), frozenset({"channel", "author"})
    )
    (limit,) = fills(CHAT.operations["setLimit"], CHAT)
    assert limit.fields == (("channel", "channel"),)
    (seats,) = fills(CHAT.operations["join"], CHAT)  # the items of a list the call's record holds
    assert seats == Fill("channels", (), frozenset({"members"}), "channel")
    assert seats.values("c", {"members": ["o"]}) == {"channel": "c"}
    assert post.values(1, {"channel": "c", "author": "u"}) == {"channel": "c", "user": "u"}
    assert post.values(1, {"channel": "c"}) is None


def test_a_delete_by_a_moderator_is_followed_by_the_posts_it_made_room_for() -> None:
    """After o deletes one of u's messages, the calls that count one more beside it are u's post
    in c and o's new limit for c; the refill posts as u in c, and the planted server refuses the
    post the contract lets in (eight calls, the bug's minimum)."""
    case = _case("SlotKeptOnModeratorDelete")
    case.send(CHAT.operations["deleteMessage"], {"message": 1, "by": "o"})
    assert sorted((plan.name, fixed) for plan, fixed in case.left) == [
        ("post", {"channel": "c", "user": "u"}),
        ("setLimit", {"channel": "c"}),
    ]
    with pytest.raises(FindingError) as found:
        case.refill(_posts(case), Seeded(0))
    finding = found.value.finding
    assert finding.operation == "post" and len(finding.steps) == 8
    assert finding.steps[-1].input == {"channel": "c", "user": "u"}


def test_a_refill_goes_on_while_the_model_accepts_and_ends_with_the_call_it_refuses() -> None:
    """On the correct server the refill posts again until the limit refuses one: that call is
    sent too (the boundary), and the refill ends there."""
    case = _case("Chat")
    case.send(CHAT.operations["deleteMessage"], {"message": 1, "by": "o"})
    src = Seeded(0)
    case.refill(_posts(case), src)
    while case.filling is not None:
        case.refill((), src)
    posts = case.steps[len(AT_LIMIT) + 1 :]
    assert [(s.tool, s.input, s.status) for s in posts] == [
        ("post", {"channel": "c", "user": "u"}, 200),
        ("post", {"channel": "c", "user": "u"}, 429),
    ]


def test_only_a_record_taken_out_of_a_count_offers_a_refill() -> None:
    """A pin changes a channel, no message: nothing left a count. A post adds to one."""
    case = _case("Chat")
    assert case.left == ()  # the last post made a message: it left no count
    case.send(CHAT.operations["pin"], {"message": 1, "by": "o"})
    assert case.left == ()


def test_a_list_a_limit_counts_is_filled_again_after_another_operation_moved_it() -> None:
    """u's leave takes a seat out of c's four: the join that counts them is offered on c. A join
    moves the count itself (the step before again fills it), and a leave of c leaves the
    moderators as they were: no promote."""
    case = _case("Chat")
    case.send(CHAT.operations["leave"], {"channel": "c", "user": "u"})
    assert [(plan.name, fixed) for plan, fixed in case.left] == [("join", {"channel": "c"})]
    case.send(CHAT.operations["join"], {"channel": "c", "user": "u"})
    assert case.left == ()


def test_a_read_back_comes_first_and_the_refill_after_it() -> None:
    """The step after a change reads the changed record back half the time (``unread``); a read
    moves no count, so the refill the change offered is still offered at the step after it."""
    case = _case("Chat")
    ops = plans(case.session)
    case.send(CHAT.operations["deleteMessage"], {"message": 1, "by": "o"})
    # a step of a case under way, with the read of the channel pending and nothing else
    case.started, case.relive, case.again, case.stale = True, None, None, None
    case.unread = case._reads([("channels", "c")], ())
    assert case.unread and _posts(case)
    case.step(ops, Fixed(0, {READ_ODDS: READ_ODDS - 1}, once=True))
    read = case.steps[-1]
    assert CHAT.operations[read.tool].effects == () and read.input.get("channel") == "c"
    assert _posts(case)
    case.step(ops, Fixed(0, {REFILL_ODDS: REFILL_ODDS - 1}, once=True))
    assert (case.steps[-1].tool, case.steps[-1].input) == ("post", {"channel": "c", "user": "u"})
