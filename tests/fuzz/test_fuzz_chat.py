"""The twenty-second held-out set (``impls/chat*``): eight planted bugs 7 to 10 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (channels under a free name,
two per owner, with an optional limit of messages standing per person and an optional privacy;
four members per channel, the owner first; moderators made by the owner, two at most; invites
numbered by the server, good for an optional number of joins and counted per join, not per
person; a mute whose optional ``muted`` mutes when absent; a ban for good, by join or by invite,
that unpins the banned person's messages from a bounded list; messages numbered by the server,
each person's count of them standing checked against the limit and given back by a delete
whoever makes it; a limit set again, checked against everyone's messages, members or not; a
moderator's rights checked against the wrong channel; a moderator who leaves and comes back).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct server answers that trace as the contract says, the planted one
does not), and the correct server gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, states told apart by
everything either implementation holds (up to swapping the two users' names and the two
channels', under which the calls asked are the same), on a small domain: users o and u; channels
c and d, made by either with no limit or a limit of two or four, public or private; every join,
leave, post and read of either user in either channel; every promote, ban and mute (without
``muted``, and with it true and false) of either user by either in either channel; every limit
set (two, three, four) and invite made (good for one or two) by either in either channel; every
invite number given (and the next) accepted by either; every message number given (and the
next) pinned or deleted by either. Over every operation, the searches found nothing within 6
calls for any bug; ``InvitePardonsBan`` and ``MuteTogglesByDefault`` at 7 (some 6,400 pair states
within 6 calls), nothing within 7 for the others; ``SlotKeptOnModeratorDelete``,
``ModeratorAnywhereDeletes`` and ``LeaverStaysModerator`` at 8 (some 31,000 within 7), nothing
within 8 for the others; ``LimitIgnoresLeavers`` and ``InviteCountsPeople`` at 9 (some 148,000
within 8). The search for ``BanUnpinSkips`` to 10 kept every operation on one channel only (a
second one neither reads nor writes the first one's pins, members or messages) and found it at
10, nothing within 9 (some 29,000 within 9). At each length the planted server's answers were
checked against the contract: on every trace found for a bug, the correct one's are valid; on
some of ``InvitePardonsBan``'s and ``LeaverStaysModerator``'s, the planted one's wrong status is
another failing clause's (a later one's), but on most it breaks the contract outright, as it does
on every trace found for the others. The traces below show one at each length.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import chat_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def register(name: str) -> Call:
    return ("register", {"user": name})


def channel(name: str, owner: str = "o", **options: Any) -> Call:
    return ("createChannel", {"channel": name, "owner": owner, **options})


def member(op: str, name: str = "u", where: str = "c") -> Call:
    return (op, {"channel": where, "user": name})


def moderate(op: str, name: str = "u", by: str = "o", where: str = "c") -> Call:
    return (op, {"channel": where, "by": by, "user": name})


def message(op: str, number: int, by: str = "o") -> Call:
    return (op, {"message": number, "by": by})


def invite(**options: Any) -> Call:
    return ("createInvite", {"channel": "c", "by": "o", **options})


def accept(number: int, name: str = "u") -> Call:
    return ("accept", {"invite": number, "user": name})


# o owns channel c (public, a limit of three) and u is in it.
IN_C: list[Call] = [register("o"), register("u"), channel("c"), member("join")]

TRACES: dict[str, list[Call]] = {
    # u at the limit of two; o deletes one of u's messages: u has a slot again.
    "SlotKeptOnModeratorDelete": [
        register("o"),
        register("u"),
        channel("c", limit=2),
        member("join"),
        member("post"),
        member("post"),
        message("deleteMessage", 1),
        member("post"),
    ],
    # u leaves with three messages standing: the limit stays above two.
    "LimitIgnoresLeavers": [
        *IN_C,
        *[member("post")] * 3,
        member("leave"),
        ("setLimit", {"channel": "c", "by": "o", "limit": 2}),
    ],
    # An invite good for two, taken by u twice: a third join is one too many.
    "InviteCountsPeople": [
        register("o"),
        register("u"),
        channel("c"),
        invite(uses=2),
        accept(1),
        member("leave"),
        accept(1),
        member("leave"),
        accept(1),
    ],
    # u moderates d only: o's message in c is not u's to delete.
    "ModeratorAnywhereDeletes": [
        register("o"),
        register("u"),
        channel("c"),
        channel("d"),
        member("join", where="d"),
        moderate("promote", where="d"),
        member("post", "o"),
        message("deleteMessage", 1, "u"),
    ],
    # u's two messages pinned one after the other; u banned: nothing stays pinned.
    "BanUnpinSkips": [
        *IN_C,
        member("post"),
        member("post"),
        message("pin", 1),
        message("pin", 2),
        moderate("ban"),
        ("channelInfo", {"channel": "c"}),
    ],
    # u made a moderator, leaves and comes back: a plain member.
    "LeaverStaysModerator": [
        *IN_C,
        moderate("promote"),
        member("leave"),
        member("join"),
        member("memberInfo"),
    ],
    # u banned from c: an invite into c does not let them back.
    "InvitePardonsBan": [*IN_C, moderate("ban"), invite(), accept(1)],
    # u muted twice with nothing said: still muted.
    "MuteTogglesByDefault": [*IN_C, moderate("mute"), moderate("mute"), member("post")],
}
MINIMAL = {
    "SlotKeptOnModeratorDelete": 8,
    "LimitIgnoresLeavers": 9,
    "InviteCountsPeople": 9,
    "ModeratorAnywhereDeletes": 8,
    "BanUnpinSkips": 10,
    "LeaverStaysModerator": 8,
    "InvitePardonsBan": 7,
    "MuteTogglesByDefault": 7,
}


class TestChat(HeldOutSet):
    name, module, correct = "chat", chat_impl, "Chat"
    traces, minimal = TRACES, MINIMAL
