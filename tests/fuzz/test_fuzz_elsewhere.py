"""Values from elsewhere: a field a requires compares with a place of the record the call names,
taken from another record of the collection.

A target that checks a role against any record, not the named one, lets in the call the contract
refuses; the chat server's ``ModeratorAnywhereDeletes`` lets a moderator of one channel delete a
message of another. The value that shows it is what another record holds (``steering.Elsewhere``),
tried after the call that put it there (``Case.granted``) and in probes (``Case.elsewhere``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from envfactory.fuzz.findings import FindingError
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.steering import elsewhere

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_cases import CHAT, chat_case
from fuzz_sources import Seeded

# o owns c, with a message of o's, and d, where u moderates
TWO_CHANNELS: list[tuple[str, dict[str, Any]]] = [
    ("register", {"user": "o"}),
    ("register", {"user": "u"}),
    ("createChannel", {"channel": "c", "owner": "o"}),
    ("createChannel", {"channel": "d", "owner": "o"}),
    ("post", {"channel": "c", "user": "o"}),
    ("join", {"channel": "d", "user": "u"}),
    ("promote", {"channel": "d", "by": "o", "user": "u"}),
]


def _case(cls: str, calls: list[tuple[str, dict[str, Any]]] = TWO_CHANNELS) -> Case:
    return chat_case(cls, calls)


def test_the_places_a_field_is_compared_with_are_read_off_the_requires() -> None:
    """A delete's ``by`` is compared with the message's author, its channel's owner and the
    channel's moderators; a post's ``user`` with the channel's members (the muted ones are those
    it must not be among: any other channel's are let in)."""
    places = {(s.field, s.collection, s.place) for s in elsewhere(CHAT.operations["deleteMessage"], CHAT)}
    assert places == {
        ("by", "messages", "author"),
        ("by", "channels", "owner"),
        ("by", "channels", "moderators"),
    }
    places = {(s.field, s.collection, s.place) for s in elsewhere(CHAT.operations["post"], CHAT)}
    assert places == {("user", "channels", "members")}  # muted: a place the user must not be in
    places = {(s.field, s.place) for s in elsewhere(CHAT.operations["promote"], CHAT)}
    assert places == {("by", "owner"), ("user", "members")}
    # a key of the collection itself is no place of a record
    assert elsewhere(CHAT.operations["register"], CHAT) == ()


def test_another_records_values_are_those_the_named_one_does_not_hold() -> None:
    """The moderators of the channels other than the message's, less the message's channel's own;
    nothing where the named record is not there."""
    case = _case("Chat")
    (mods,) = (s for s in elsewhere(CHAT.operations["deleteMessage"], CHAT) if s.place == "moderators")
    assert mods.values(case.state, {"message": 1, "by": "x"}) == ["u"]
    assert mods.values(case.state, {"message": 9, "by": "x"}) == []
    case.send(CHAT.operations["join"], {"channel": "c", "user": "u"})
    case.send(CHAT.operations["promote"], {"channel": "c", "by": "o", "user": "u"})
    assert mods.values(case.state, {"message": 1, "by": "x"}) == []  # u moderates c too now


def test_a_role_just_granted_is_tried_on_another_record_and_shows_the_planted_bug() -> None:
    """After u is made moderator of d, the calls that may take u from elsewhere are offered; the
    delete of c's message by u is refused by the contract and let in by the planted server, at the
    bug's minimal eight calls. On the correct server the same call is sent and refused (403)."""
    case = _case("ModeratorAnywhereDeletes")
    granted = {(plan.name, spec.place, value) for plan, spec, value in case.granted}
    assert ("deleteMessage", "moderators", "u") in granted and ("pin", "moderators", "u") in granted
    deletes = [g for g in case.granted if g[0].name == "deleteMessage"]
    with pytest.raises(FindingError) as found:
        case.elsewhere(deletes, Seeded(0))
    finding = found.value.finding
    assert finding.operation == "deleteMessage" and len(finding.steps) == 8
    assert finding.steps[-1].input == {"message": 1, "by": "u"}

    case = _case("Chat")
    assert case.elsewhere([g for g in case.granted if g[0].name == "deleteMessage"], Seeded(0))
    last = case.steps[-1]
    assert (last.tool, last.input, last.status) == ("deleteMessage", {"message": 1, "by": "u"}, 403)


def test_a_call_the_model_accepts_is_not_sent_as_one_from_elsewhere() -> None:
    """Where no other record holds a value the named one lacks, nothing is sent."""
    case = _case("Chat")
    sent = len(case.steps)
    posts = [
        (plan, spec, None)
        for plan in plans(case.session)
        if plan.name == "post"
        for spec in plan.steer.elsewhere
    ]
    case.send(CHAT.operations["leave"], {"channel": "d", "user": "u"})  # u is in no channel now
    assert not case.elsewhere(posts, Seeded(0))
    assert len(case.steps) == sent + 1


# o owns c and made an invite good for two joins; u took it
INVITED: list[tuple[str, dict[str, Any]]] = [
    ("register", {"user": "o"}),
    ("register", {"user": "u"}),
    ("createChannel", {"channel": "c", "owner": "o"}),
    ("createInvite", {"channel": "c", "by": "o", "uses": 2}),
    ("accept", {"invite": 1, "user": "u"}),
]


def _invited(cls: str) -> Case:
    return _case(cls, INVITED)


def test_a_leave_turns_the_join_back_on_and_the_redo_runs_the_pair_past_the_invites_uses() -> None:
    """u's leave takes u out of c's members: the accept the model refused before it (u was a
    member) it accepts after it. The redo sends the accept, the leave, the accept again: the
    planted server, which counts the people who took the invite, lets the third join in (nine
    calls, the bug's minimum)."""
    case = _invited("InviteCountsPeople")
    assert case.undone is None  # a join takes nothing away
    leave = ("leave", {"channel": "c", "user": "u"})
    case.send(CHAT.operations[leave[0]], leave[1])
    assert case.undone is not None and case.undone[1] == leave
    with pytest.raises(FindingError) as found:
        assert case.redo(case.undone, Seeded(0))
        while case.cycling is not None:
            case.cycle()
    finding = found.value.finding
    assert finding.operation == "accept" and len(finding.steps) == 9
    assert [s.tool for s in finding.steps[5:]] == ["leave", "accept", "leave", "accept"]


def test_a_redo_ends_with_the_call_the_model_refuses() -> None:
    """On the correct server the same redo ends at the accept the used-up invite refuses (410)."""
    case = _invited("Chat")
    case.send(CHAT.operations["leave"], {"channel": "c", "user": "u"})
    assert case.undone is not None and case.redo(case.undone, Seeded(0))
    while case.cycling is not None:
        case.cycle()
    assert [(s.tool, s.status) for s in case.steps[5:]] == [
        ("leave", 200),
        ("accept", 200),
        ("leave", 200),
        ("accept", 410),
    ]


def test_no_redo_where_nothing_was_turned_back_on() -> None:
    """A message deleted by its author turns back on no call of the case: no redo."""
    case = _invited("Chat")
    case.send(CHAT.operations["post"], {"channel": "c", "user": "u"})
    case.send(CHAT.operations["deleteMessage"], {"message": 1, "by": "u"})
    assert case.undone is not None
    assert not case.redo(case.undone, Seeded(0)) and case.cycling is None
