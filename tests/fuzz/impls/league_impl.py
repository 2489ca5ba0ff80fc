"""A sports league (``league.yaml``), correct, and one class per planted bug, 7 to 10 calls deep.

A twenty-fifth held-out set, written without looking at the fuzzer's code. Its shapes: teams and
players registered under free names, a player on a team when told (a free agent otherwise), three
to a team at most; transfers between two teams while a window is open that an admin call closes
(a free agent signs at any time), refused for a player fielded in a match still to play; matches
numbered by the service between two distinct teams, each with two matches to play at most; a
lineup of two players of each team at most, fielded and dropped one by one; a result recorded
once, with goals of each side that are none unless told, giving three points for a win and one
for a draw; cards given once per player and match in played matches, yellow unless told red, two
yellows across matches (the count starting over) or a red one suspending the player for their
team's next match, which a result of that team serves, a suspension a transfer carries to the new
team; a suspended player neither fielded nor left in a lineup whose result is recorded; a season
that ends once nothing is left to play, after which nothing is scheduled; a standing ranked by
points, then goal difference. The minimal length is in each docstring, with why it cannot be
shorter.

The implementation keeps some state where the contract does not look: each team's roster (beside
the players' teams), its suspended players as a set served by the team's next result (the
contract compares the team's matches played with a mark on the player), its wins, draws and
losses (the contract keeps points) and its count of matches to play (beside the matches); each
match's count of players fielded per team (beside its lineup); each player's matches booked in
(the contract keeps who was booked on the match) and matches fielded in still to play; and one
phase for the window and the season.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

ROSTER = 3  # players on a team
FIELDED = 2  # players of one team fielded in a match
TO_PLAY = 2  # matches a team has scheduled and not played
YELLOWS = 2  # yellow cards that suspend
GOALS = 5  # the most goals a side is told to have scored


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _flag(value: Any) -> bool:
    return value is ABSENT or type(value) is bool


class League:
    def __init__(self) -> None:
        self.phase = "window"  # window (transfers open), closed, ended
        # roster (list), suspended (set), to_play, played, won, drawn, lost, scored, conceded
        self.teams: dict[str, dict[str, Any]] = {}
        self.players: dict[str, dict[str, Any]] = {}  # team, yellows, booked (set), fielded (set)
        # home, away, played, goals (home, away), lineup (list), counts (per team)
        self.matches: dict[int, dict[str, Any]] = {}
        self.next_match = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _team(self, team: Any) -> dict[str, Any]:
        need(team in self.teams, 404)
        return self.teams[team]

    def _player(self, player: Any) -> dict[str, Any]:
        need(player in self.players, 404)
        return self.players[player]

    def _match(self, match: Any) -> dict[str, Any]:
        need(match in self.matches, 404)
        return self.matches[match]

    def _suspended(self, name: str) -> bool:
        team = self.players[name]["team"]
        return team is not None and name in self.teams[team]["suspended"]

    # -- teams and players -----------------------------------------------------------------------

    def addTeam(self, team: Any) -> None:
        need(_name(team), 422)
        need(team not in self.teams, 409)
        self.teams[team] = {
            "roster": [],
            "suspended": set(),
            "to_play": 0,
            "played": 0,
            "won": 0,
            "drawn": 0,
            "lost": 0,
            "scored": 0,
            "conceded": 0,
        }

    def addPlayer(self, player: Any, team: Any = ABSENT) -> None:
        need(_name(player) and (team is ABSENT or _name(team)), 422)
        need(player not in self.players, 409)
        if team is not ABSENT:
            need(len(self._team(team)["roster"]) < ROSTER, 429)
        self.players[player] = {"team": None, "yellows": 0, "booked": set(), "fielded": set()}
        if team is not ABSENT:
            self._join(player, team)

    def _join(self, player: str, team: str) -> None:
        self.players[player]["team"] = team
        self.teams[team]["roster"].append(player)

    def transfer(self, player: Any, team: Any) -> None:
        need(_name(player) and _name(team), 422)
        record = self._player(player)
        new = self._team(team)
        old = record["team"]
        need(old != team, 409)
        need(old is None or self.phase == "window", 423)
        need(not record["fielded"], 409)
        need(len(new["roster"]) < ROSTER, 429)
        suspended = self._suspended(player)
        if old is not None:
            self._leave(player, old)
        self._join(player, team)
        if suspended:
            self._carry(player, old, team)

    def _leave(self, player: str, team: str) -> None:
        """Off the old team's roster."""
        self.teams[team]["roster"].remove(player)

    def _carry(self, player: str, old: Any, new: str) -> None:
        """A suspension moves to the new team's next match."""
        self.teams[old]["suspended"].discard(player)
        self.teams[new]["suspended"].add(player)

    def closeWindow(self) -> None:
        need(self.phase == "window", 409)
        self.phase = "closed"

    # -- matches ---------------------------------------------------------------------------------

    def schedule(self, home: Any, away: Any) -> dict[str, Any]:
        need(_name(home) and _name(away), 422)
        first = self._team(home)
        second = self._team(away)
        need(home != away, 422)
        need(self.phase != "ended", 423)
        need(first["to_play"] < TO_PLAY and second["to_play"] < TO_PLAY, 429)
        number = self.next_match
        self.next_match += 1
        self.matches[number] = {
            "home": home,
            "away": away,
            "played": False,
            "goals": (0, 0),
            "lineup": [],
            "counts": {home: 0, away: 0},
        }
        first["to_play"] += 1
        second["to_play"] += 1
        return {"match": number}

    def field(self, match: Any, player: Any) -> None:
        need(is_int(match) and _name(player), 422)
        record = self._match(match)
        person = self._player(player)
        need(not record["played"], 409)
        team = person["team"]
        need(team is not None and team in (record["home"], record["away"]), 403)
        need(player not in record["lineup"], 409)
        need(not self._suspended(player), 403)
        need(record["counts"][team] < FIELDED, 429)
        record["lineup"].append(player)
        record["counts"][team] += 1
        person["fielded"].add(match)

    def drop(self, match: Any, player: Any) -> None:
        need(is_int(match) and _name(player), 422)
        record = self._match(match)
        need(not record["played"], 409)
        need(player in record["lineup"], 404)
        record["lineup"].remove(player)
        self._unfield(record, player)
        self.players[player]["fielded"].discard(match)

    def _unfield(self, record: dict[str, Any], player: str) -> None:
        """One player of their team fewer fielded in the match."""
        record["counts"][self.players[player]["team"]] -= 1

    def result(self, match: Any, homeGoals: Any = ABSENT, awayGoals: Any = ABSENT) -> None:
        need(is_int(match), 422)
        ours = option(homeGoals, 0, GOALS, 0)
        theirs = option(awayGoals, 0, GOALS, 0)
        record = self._match(match)
        need(not record["played"], 409)
        need(self._lineup_eligible(record), 409)
        record["played"] = True
        record["goals"] = (ours, theirs)
        self._count(record["home"], ours, theirs)
        self._count(record["away"], theirs, ours)
        for team in self._serving(record):
            self.teams[team]["suspended"].clear()
        for name in record["lineup"]:
            self.players[name]["fielded"].discard(match)

    def _lineup_eligible(self, record: dict[str, Any]) -> bool:
        """No suspended player fielded."""
        return not any(self._suspended(name) for name in record["lineup"])

    @staticmethod
    def _serving(record: dict[str, Any]) -> tuple[str, ...]:
        """The teams whose suspended players have served their suspension by this match."""
        return (record["home"], record["away"])

    def _count(self, team: str, scored: int, conceded: int) -> None:
        side = self.teams[team]
        side["played"] += 1
        side["to_play"] -= 1
        side["scored"] += scored
        side["conceded"] += conceded
        if scored > conceded:
            side["won"] += 1
        elif scored == conceded:
            side["drawn"] += 1
        else:
            side["lost"] += 1

    # -- cards -----------------------------------------------------------------------------------

    def book(self, match: Any, player: Any, red: Any = ABSENT) -> dict[str, Any]:
        need(is_int(match) and _name(player) and _flag(red), 422)
        record = self._match(match)
        person = self._player(player)
        need(record["played"], 409)
        team = person["team"]
        need(team is not None and team in (record["home"], record["away"]), 403)
        need(not self._booked(person, match), 409)
        self._note(person, match)
        if red is not ABSENT and red:
            self._send_off(person)
            self.teams[team]["suspended"].add(player)
        else:
            person["yellows"] += 1
            if person["yellows"] >= YELLOWS:
                person["yellows"] = 0
                self.teams[team]["suspended"].add(player)
        return {"suspended": self._suspended(player)}

    @staticmethod
    def _booked(person: dict[str, Any], match: int) -> bool:
        """Whether the player was booked in this match already."""
        return match in person["booked"]

    @staticmethod
    def _note(person: dict[str, Any], match: int) -> None:
        person["booked"].add(match)

    def _send_off(self, person: dict[str, Any]) -> None:
        """A red card: the yellow ones stand as they are."""

    # -- the season ------------------------------------------------------------------------------

    def endSeason(self) -> None:
        need(self.phase != "ended", 409)
        need(all(record["played"] for record in self.matches.values()), 409)
        self.phase = "ended"

    # -- reads -----------------------------------------------------------------------------------

    def _points(self, side: dict[str, Any]) -> int:
        points: int = 3 * side["won"] + side["drawn"]
        return points

    def _key(self, side: dict[str, Any]) -> tuple[int, int]:
        return (self._points(side), side["scored"] - side["conceded"])

    def standing(self, team: Any) -> dict[str, Any]:
        need(_name(team), 422)
        side = self._team(team)
        mine = self._key(side)
        ahead = sum(1 for other in self.teams.values() if self._key(other) > mine)
        return {
            "played": side["played"],
            "points": self._points(side),
            "goalDifference": side["scored"] - side["conceded"],
            "rank": 1 + ahead,
        }

    def playerInfo(self, player: Any) -> dict[str, Any]:
        need(_name(player), 422)
        person = self._player(player)
        return {"team": person["team"], "yellows": person["yellows"], "suspended": self._suspended(player)}

    def matchInfo(self, match: Any) -> dict[str, Any]:
        need(is_int(match), 422)
        record = self._match(match)
        return {
            "home": record["home"],
            "away": record["away"],
            "status": "played" if record["played"] else "scheduled",
            "homeGoals": record["goals"][0],
            "awayGoals": record["goals"][1],
            "lineup": list(record["lineup"]),
        }


class TransferLeavesOldRoster(League):
    """B1, 7 calls: addTeam a, addTeam b, addPlayer (x, team a), addPlayer (y, team a), addPlayer
    (z, team a), transfer (x, b), addPlayer (w, team a): a transfer puts the player on the new
    team's roster but leaves them on the old one's too, so team a, down to two players, refuses a
    third as full (429). It needs two teams, a roster at its limit (three signings with `team`
    given), a transfer out of it, and another signing for it (a registration or a transfer)."""

    def _leave(self, player: str, team: str) -> None:
        pass


class RedCardAddsYellow(League):
    """B2, 7 calls: addTeam a, addTeam b, addPlayer (x, team a), schedule (a, b), result 1, book
    (1, x, red), playerInfo x: a red card is counted as a yellow one as well, so x reads one
    yellow card, not none (the red card suspends either way, and the booking answers only that).
    It needs two teams, a player of one, a played match, a booking with `red` given, and a read
    of the player."""

    def _send_off(self, person: dict[str, Any]) -> None:
        person["yellows"] += 1


class TransferForgetsSuspension(League):
    """B3, 8 calls: addTeam a, addTeam b, addPlayer (x, team a), schedule (a, b), result 1, book
    (1, x, red), transfer (x, b), playerInfo x: a transfer leaves the player's suspension with
    the old team, so x, suspended for b's next match, reads not suspended (and would be fielded).
    It needs a suspended player (two teams, a player, a played match, a red card: two yellow ones
    take two matches), a transfer to the other team (or a third one), and a read (or a field in a
    match to play)."""

    def _carry(self, player: str, old: Any, new: str) -> None:
        pass


class TransferResetsYellows(League):
    """B4, 8 calls: addTeam a, addTeam b, addPlayer (x, team a), schedule (a, b), result 1, book
    (1, x), transfer (x, b), playerInfo x: a transfer wipes the player's yellow cards, so x reads
    none, not one, at b (and a second yellow card would not suspend them). It needs a yellow card
    (two teams, a player of one, a played match, a booking), a transfer (a free agent has no
    cards: only a player of a team is booked), and a read."""

    def _leave(self, player: str, team: str) -> None:
        super()._leave(player, team)
        self.players[player]["yellows"] = 0


class ServedByHomeSideOnly(League):
    """B5, 9 calls: addTeam a, addTeam b, addPlayer (x, team b), schedule (a, b), result 1, book
    (1, x, red), schedule (a, b), result 2, playerInfo x: a result serves the suspensions of the
    home team's players only, so x, of the away team b, reads suspended still after b's next
    match. It needs a suspended player (two teams, a player, a played match, a red card: two
    yellow ones take two matches), another match with their team as the away side, its result,
    and a read (or a booking in it: a field would need a third match)."""

    @staticmethod
    def _serving(record: dict[str, Any]) -> tuple[str, ...]:
        return (record["home"],)


class DropKeepsLineupCount(League):
    """B6, 9 calls: addTeam a, addTeam b, addPlayer (x, team a), addPlayer (y, team a), schedule
    (a, b), field (1, x), field (1, y), drop (1, x), field (1, x): a drop takes the player out of
    the lineup but not out of the team's count of players fielded, so with y alone fielded for a
    the match refuses x again as two of the team fielded (429). It needs the count at its limit
    of two and a drop (two players fielded, or one fielded, dropped and fielded again), and a
    field after it."""

    def _unfield(self, record: dict[str, Any], player: str) -> None:
        pass


class ResultIgnoresSuspension(League):
    """B7, 9 calls: addTeam a, addTeam b, addPlayer (x, team a), schedule (a, b), schedule (a, b),
    field (2, x), result 1, book (1, x, red), result 2: a result is recorded with a suspended
    player in the lineup (refused, 409). A suspended player is never fielded, so x must be
    fielded in one match before the red card in the other, which must be played first: two
    teams, a player, two matches, a field, a result, a red card, and the other result."""

    def _lineup_eligible(self, record: dict[str, Any]) -> bool:
        return True


class BookedOnceByLastMatch(League):
    """B8, 10 calls: addTeam a, addTeam b, addPlayer (x, team a), schedule (a, b), schedule (a,
    b), result 1, result 2, book (1, x), book (2, x), book (1, x): a player's booking is checked
    against the last match they were booked in only, so x, booked in match 1 and then in match 2,
    is booked in match 1 again (refused, 409). It needs two played matches (two teams, two
    schedules, two results), a player, and three bookings."""

    @staticmethod
    def _booked(person: dict[str, Any], match: int) -> bool:
        last: bool = person.get("last") == match
        return last

    @staticmethod
    def _note(person: dict[str, Any], match: int) -> None:
        person["last"] = match
