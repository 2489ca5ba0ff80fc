"""The twenty-fifth held-out set (``impls/league*``): eight planted bugs 7 to 10 calls deep,
written without reading the fuzzer, in shapes the earlier sets have less of (rosters of three
kept by each team beside the players' own team, a transfer that must take the player off the old
roster, and a free agent who signs at any time while a player of a team moves only while the
window is open; matches numbered by the service between two distinct teams, two to play per
team; a lineup of two per team fielded and dropped one by one, its count kept beside it; cards
once per player and match, yellow unless ``red`` is given, two yellows across matches or a red
one suspending for the team's next match, a suspension kept as a set on the team, served by the
team's next result on either side, carried by a transfer to the new team, and barring a result
while the player is fielded; the cards counted on the player whatever team they play for).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct service answers that trace as the contract says, the planted one
does not), and the correct service gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over tuples of (correct, planted)
states, every call (refused calls and reads included) asked at every state, states told apart by
everything each implementation holds. On a small domain, teams a and b, players x and y
(registered as free agents or on a or b), matches 1 and 2: every team added, player added,
transfer of either player to either team, the window closed, a and b scheduled either way round,
every field and drop of x or y in match 1 or 2, results of 1 and 2 without goals and with one
home goal, every booking of x or y in 1 or 2 yellow and with ``red``, the season ended, every
standing, player and match read (42 calls at each state), the search found nothing within 6
calls for any bug (some 970 states within 6, every bug tracked); ``RedCardAddsYellow`` at 7;
``TransferForgetsSuspension`` and ``TransferResetsYellows`` at 8 (and ``TransferLeavesOldRoster``,
whose 7 needs a third player); ``ServedByHomeSideOnly``, ``DropKeepsLineupCount`` and
``ResultIgnoresSuspension`` at 9 (some 52,800 states within 9), nothing within 9 for
``BookedOnceByLastMatch``. On a larger one, teams a, b and c, players x, y and z (free or on any
team), matches 1 to 3, every call as above (83 at each state): nothing within 6 for any bug
(some 9,100 states within 6), ``RedCardAddsYellow`` and ``TransferLeavesOldRoster`` at 7 (some
45,000 within 7), nothing within 7 for the others. On teams a, b and c, players x and y, matches
1 to 3, without the goals and the standings (none of these bugs reads them), every other call as
above (57 at each state): nothing within 8 for ``ServedByHomeSideOnly``,
``DropKeepsLineupCount``, ``ResultIgnoresSuspension`` and ``BookedOnceByLastMatch`` (some 33,700
states within 8). For ``BookedOnceByLastMatch`` (a player's bookings), player x alone, matches 1
to 3, the teams, registrations, transfers, schedules, results, bookings and player reads: found
at 10, nothing within 9. The planted service's answers on each trace below break the contract
outright (``verify``); the traces show one at each length, as the searches found them or the
same shape with other names.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import league_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def team(name: str) -> Call:
    return ("addTeam", {"team": name})


def player(name: str = "x", on: str = "a") -> Call:
    return ("addPlayer", {"player": name, "team": on})


def transfer(to: str, name: str = "x") -> Call:
    return ("transfer", {"player": name, "team": to})


def schedule(home: str = "a", away: str = "b") -> Call:
    return ("schedule", {"home": home, "away": away})


def result(number: int, **goals: Any) -> Call:
    return ("result", {"match": number, **goals})


def field(number: int, name: str = "x") -> Call:
    return ("field", {"match": number, "player": name})


def book(number: int, name: str = "x", **options: Any) -> Call:
    return ("book", {"match": number, "player": name, **options})


def info(name: str = "x") -> Call:
    return ("playerInfo", {"player": name})


# Teams a and b, and x playing for a.
LEAGUE: list[Call] = [team("a"), team("b"), player()]

TRACES: dict[str, list[Call]] = {
    # x, y and z on a, x moved to b: a has room for w.
    "TransferLeavesOldRoster": [
        *LEAGUE,
        player("y"),
        player("z"),
        transfer("b"),
        player("w"),
    ],
    # A red card in match 1: x has no yellow card.
    "RedCardAddsYellow": [*LEAGUE, schedule(), result(1), book(1, red=True), info()],
    # Sent off in match 1 and moved to b: suspended for b's next match.
    "TransferForgetsSuspension": [
        *LEAGUE,
        schedule(),
        result(1),
        book(1, red=True),
        transfer("b"),
        info(),
    ],
    # A yellow card in match 1 and a move to b: x still has it.
    "TransferResetsYellows": [*LEAGUE, schedule(), result(1), book(1), transfer("b"), info()],
    # x of b, the away side, sent off in match 1: b's match 2 serves the suspension.
    "ServedByHomeSideOnly": [
        team("a"),
        team("b"),
        player(on="b"),
        schedule(),
        result(1),
        book(1, red=True),
        schedule(),
        result(2),
        info(),
    ],
    # x and y fielded for a, x dropped: a fields one, and x again.
    "DropKeepsLineupCount": [
        *LEAGUE,
        player("y"),
        schedule(),
        field(1),
        field(1, "y"),
        ("drop", {"match": 1, "player": "x"}),
        field(1),
    ],
    # x fielded in match 2, then sent off in match 1: match 2 is not played with x.
    "ResultIgnoresSuspension": [
        *LEAGUE,
        schedule(),
        schedule(),
        field(2),
        result(1),
        book(1, red=True),
        result(2),
    ],
    # x booked in match 1, then in match 2: not in match 1 again.
    "BookedOnceByLastMatch": [
        *LEAGUE,
        schedule(),
        schedule(),
        result(1),
        result(2),
        book(1),
        book(2),
        book(1),
    ],
}
MINIMAL = {
    "TransferLeavesOldRoster": 7,
    "RedCardAddsYellow": 7,
    "TransferForgetsSuspension": 8,
    "TransferResetsYellows": 8,
    "ServedByHomeSideOnly": 9,
    "DropKeepsLineupCount": 9,
    "ResultIgnoresSuspension": 9,
    "BookedOnceByLastMatch": 10,
}


class TestLeague(HeldOutSet):
    name, module, correct = "league", league_impl, "League"
    traces, minimal = TRACES, MINIMAL
