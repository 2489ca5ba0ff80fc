"""Issue tracker (``tracker.yaml``), correct, and one class per planted bug, 7 to 9 calls deep.

An eighteenth held-out set, written without looking at the fuzzer's code. Its shapes: issues
numbered by the tracker (the calls on one use the number it answered), worth an optional number
of points; a limit of three issues in progress per person; a tally of issues finished per person,
who may leave the team and come back under the same name with none; an issue reopened twice at
most, given to the person an optional field names or to nobody; "blocks" links between two
distinct issues, two per issue at most, a third dropping the oldest (a queue), with an issue not
closed while one of its blockers is not done; sprints planned, active and closed, with a capacity
in points summed over their issues; an issue moved between two distinct sprints; a sprint closed
with its unfinished issues sent back to the backlog or into another sprint an optional field
names, which must have room for all of them. The minimal length is in each docstring, with why it
cannot be shorter.

The implementation keeps some state where the contract does not look: each person's count of
issues in progress and a tally of finished issues by name (beside the team), each issue's count
of blockers not done yet and the sprint it is in (beside the sprints' lists), and each sprint's
load in points.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

WIP = 3  # issues in progress per person
REOPENS = 2  # per issue
LINKS = 2  # blockers an issue lists
POINTS = 1  # an issue's without `points`
CAPACITY = 3  # a sprint's without `capacity`


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


class Tracker:
    def __init__(self) -> None:
        self.users: set[str] = set()
        self.wip: dict[str, int] = {}  # by name: issues in progress
        self.done: dict[str, int] = {}  # by name: issues finished since they joined
        self.issues: dict[int, dict[str, Any]] = {}
        self.next_issue = 1
        self.sprints: dict[str, dict[str, Any]] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _issue(self, issue: Any) -> dict[str, Any]:
        need(issue in self.issues, 404)
        return self.issues[issue]

    def _sprint(self, sprint: str) -> dict[str, Any]:
        need(sprint in self.sprints, 404)
        return self.sprints[sprint]

    def _blocked_by_me(self, issue: int) -> list[dict[str, Any]]:
        return [r for r in self.issues.values() if issue in r["blockers"]]

    # -- team ------------------------------------------------------------------------------------

    def addUser(self, user: Any) -> None:
        need(_name(user), 422)
        need(user not in self.users, 409)
        self.users.add(user)
        self.wip[user] = 0
        self.done.setdefault(user, 0)

    def removeUser(self, user: Any) -> None:
        need(_name(user), 422)
        need(user in self.users, 404)
        need(self.wip[user] == 0, 409)
        self._leave(user)

    def _leave(self, user: str) -> None:
        """Whoever leaves takes their tally with them."""
        self.users.discard(user)
        del self.wip[user]
        del self.done[user]

    def userInfo(self, user: Any) -> dict[str, Any]:
        need(_name(user), 422)
        need(user in self.users, 404)
        return {"wip": self.wip[user], "done": self.done[user]}

    # -- issues ----------------------------------------------------------------------------------

    def createIssue(self, points: Any = ABSENT) -> dict[str, Any]:
        worth = option(points, 1, 3, POINTS)
        number = self.next_issue
        self.next_issue += 1
        self.issues[number] = {
            "points": worth,
            "status": "todo",
            "assignee": None,
            "reopens": 0,
            "blockers": [],
            "open_blockers": 0,
            "sprint": None,
        }
        return {"issue": number}

    def startIssue(self, issue: Any, user: Any) -> None:
        need(is_int(issue) and _name(user), 422)
        record = self._issue(issue)
        need(user in self.users, 403)
        need(record["status"] == "todo", 409)
        need(self._has_room(user), 429)
        record["status"], record["assignee"] = "progress", user
        self.wip[user] += 1

    def _has_room(self, user: str) -> bool:
        """Three issues in progress per person at most."""
        return self.wip[user] < WIP

    def finishIssue(self, issue: Any) -> None:
        need(is_int(issue), 422)
        record = self._issue(issue)
        need(record["status"] == "progress", 409)
        need(record["open_blockers"] == 0, 423)
        self.wip[record["assignee"]] -= 1
        self.done[record["assignee"]] += 1
        self._done(issue, record)

    def closeIssue(self, issue: Any) -> None:
        need(is_int(issue), 422)
        record = self._issue(issue)
        need(record["status"] == "todo", 409)
        need(record["open_blockers"] == 0, 423)
        self._done(issue, record)

    def _done(self, issue: int, record: dict[str, Any]) -> None:
        record["status"] = "done"
        for other in self._blocked_by_me(issue):
            other["open_blockers"] -= 1

    def reopenIssue(self, issue: Any, assignee: Any = ABSENT) -> None:
        need(is_int(issue) and (assignee is ABSENT or _name(assignee)), 422)
        record = self._issue(issue)
        need(record["status"] == "done", 409)
        need(record["reopens"] < REOPENS, 429)
        need(assignee is ABSENT or assignee in self.users, 403)
        record["status"] = "todo"
        self._reopened(record, assignee)
        for other in self._blocked_by_me(issue):
            other["open_blockers"] += 1

    def _reopened(self, record: dict[str, Any], assignee: Any) -> None:
        """Every reopen counts; the issue goes to whoever it names, or to nobody."""
        record["reopens"] += 1
        record["assignee"] = None if assignee is ABSENT else assignee

    def block(self, issue: Any, by: Any) -> None:
        need(is_int(issue) and is_int(by), 422)
        need(issue in self.issues and by in self.issues, 404)
        need(issue != by, 409)
        record = self.issues[issue]
        need(by not in record["blockers"], 409)
        if len(record["blockers"]) == LINKS:
            self._unlink(record, self._evicted(record))
        record["blockers"].append(by)
        if self.issues[by]["status"] != "done":
            record["open_blockers"] += 1

    def _evicted(self, record: dict[str, Any]) -> int:
        """A third link drops the oldest."""
        oldest: int = record["blockers"][0]
        return oldest

    def _unlink(self, record: dict[str, Any], by: int) -> None:
        record["blockers"].remove(by)
        if self.issues[by]["status"] != "done":
            record["open_blockers"] -= 1

    def unblock(self, issue: Any, by: Any) -> None:
        need(is_int(issue) and is_int(by), 422)
        record = self._issue(issue)
        need(by in record["blockers"], 404)
        self._unlink(record, by)

    def issueInfo(self, issue: Any) -> dict[str, Any]:
        need(is_int(issue), 422)
        record = self._issue(issue)
        return {
            "points": record["points"],
            "status": record["status"],
            "assignee": record["assignee"],
            "blockers": list(record["blockers"]),
            "sprint": record["sprint"],
        }

    # -- sprints ---------------------------------------------------------------------------------

    def createSprint(self, sprint: Any, capacity: Any = ABSENT) -> None:
        need(_name(sprint), 422)
        room = option(capacity, 3, 5, CAPACITY)
        need(sprint not in self.sprints, 409)
        self.sprints[sprint] = {"status": "planned", "capacity": room, "issues": [], "load": 0}

    def startSprint(self, sprint: Any) -> None:
        need(_name(sprint), 422)
        record = self._sprint(sprint)
        need(record["status"] == "planned", 409)
        record["status"] = "active"

    def addToSprint(self, issue: Any, sprint: Any) -> None:
        need(is_int(issue) and _name(sprint), 422)
        record = self._issue(issue)
        receiving = self._sprint(sprint)
        need(receiving["status"] != "closed", 409)
        need(record["status"] != "done", 409)
        need(record["sprint"] is None, 409)
        need(receiving["load"] + record["points"] <= receiving["capacity"], 413)
        self._put(issue, record, sprint, receiving)

    def _put(self, issue: int, record: dict[str, Any], name: str, receiving: dict[str, Any]) -> None:
        receiving["issues"].append(issue)
        receiving["load"] += record["points"]
        record["sprint"] = name

    def moveIssue(self, issue: Any, source: Any, target: Any) -> None:
        need(is_int(issue) and _name(source) and _name(target), 422)
        need(source in self.sprints and target in self.sprints, 404)
        need(source != target, 409)
        giving, receiving = self.sprints[source], self.sprints[target]
        need(issue in giving["issues"], 404)
        need(receiving["status"] != "closed", 409)
        record = self.issues[issue]
        need(record["status"] != "done", 409)
        need(self._fits_move(giving, receiving, record["points"]), 413)
        giving["issues"].remove(issue)
        giving["load"] -= record["points"]
        self._put(issue, record, target, receiving)

    def _fits_move(self, giving: dict[str, Any], receiving: dict[str, Any], points: int) -> bool:
        """An issue moved must fit the sprint it moves to."""
        return bool(receiving["load"] + points <= receiving["capacity"])

    def closeSprint(self, sprint: Any, into: Any = ABSENT) -> None:
        need(_name(sprint) and (into is ABSENT or _name(into)), 422)
        record = self._sprint(sprint)
        need(record["status"] == "active", 409)
        carried = self._carried(record)
        points = sum(self.issues[i]["points"] for i in carried)
        if into is not ABSENT:
            receiving = self._sprint(into)
            need(into != sprint, 409)
            need(receiving["status"] != "closed", 409)
            need(self._fits_carry(receiving, points), 413)
        for number in record["issues"]:
            self.issues[number]["sprint"] = None
        record["status"], record["issues"], record["load"] = "closed", [], 0
        if into is not ABSENT:
            for number in carried:
                self._put(number, self.issues[number], into, receiving)

    def _carried(self, record: dict[str, Any]) -> list[int]:
        """The issues a closed sprint hands on: the ones not done, in their order."""
        return [i for i in record["issues"] if self.issues[i]["status"] != "done"]

    def _fits_carry(self, receiving: dict[str, Any], points: int) -> bool:
        """The sprint named takes them all, on top of what it holds."""
        return bool(receiving["load"] + points <= receiving["capacity"])

    def sprintInfo(self, sprint: Any) -> dict[str, Any]:
        need(_name(sprint), 422)
        record = self._sprint(sprint)
        return {
            "status": record["status"],
            "capacity": record["capacity"],
            "load": record["load"],
            "issues": list(record["issues"]),
        }


class FourthInProgress(Tracker):
    """T1, 9 calls: addUser u, createIssue four times, startIssue (1 to 4, u): the limit of three
    issues in progress is checked as at most three before the start, not under three, so a fourth
    start is let through (refused, 429). It needs one person and four issues, each started by
    them: nothing but a start puts an issue in progress, one at a time."""

    def _has_room(self, user: str) -> bool:
        return self.wip[user] <= WIP


class BlockersAsStack(Tracker):
    """T2, 8 calls: createIssue four times, block (4 by 1), block (4 by 2), block (4 by 3),
    issueInfo 4: a third link drops the newest blocker, not the oldest, so the issue lists 1 and
    3, not 2 and 3. It needs an issue and three distinct others blocking it (a link to itself
    or one made twice is refused) and a read of the list (or an unblock of 1 or 2, a close after
    the other two are done)."""

    def _evicted(self, record: dict[str, Any]) -> int:
        newest: int = record["blockers"][-1]
        return newest


class RejoinKeepsDone(Tracker):
    """T3, 7 calls: addUser u, createIssue, startIssue (1, u), finishIssue 1, removeUser u, addUser
    u, userInfo u: the tally of finished issues is kept by name and not dropped when the person
    leaves, so back on the team they read one issue done, not none. Only a finish counts (a
    start first, by someone on the team), the person leaves and comes back, and only a read
    shows the tally."""

    def _leave(self, user: str) -> None:
        self.users.discard(user)
        del self.wip[user]


class ReopenNamedUncounted(Tracker):
    """T4, 8 calls: addUser u, createIssue, closeIssue 1, reopenIssue (1, assignee u), closeIssue
    1, reopenIssue 1, closeIssue 1, reopenIssue 1: a reopen that names an assignee is not
    counted, so a third reopen is let through (refused, 429). It needs the limit reached (three
    reopens, each of a done issue: a close before each) with one of the first two naming someone
    on the team (the optional field present), and no read shows the count."""

    def _reopened(self, record: dict[str, Any], assignee: Any) -> None:
        if assignee is ABSENT:
            record["reopens"] += 1
        record["assignee"] = None if assignee is ABSENT else assignee


class CapacityOfSource(Tracker):
    """T5, 7 calls: createSprint (s, capacity 5), createSprint t, createIssue (points 3),
    createIssue, addToSprint (1, t), addToSprint (2, s), moveIssue (2, s to t): a move is checked
    against the capacity of the sprint the issue leaves, not the one it goes to, so four points
    are let into a sprint of three (refused, 413). The two capacities differ (one given), and
    since an issue is three points at most and a sprint three at least, the sprint moved to holds
    an issue already: two sprints, two issues, two adds and the move."""

    def _fits_move(self, giving: dict[str, Any], receiving: dict[str, Any], points: int) -> bool:
        return bool(receiving["load"] + points <= giving["capacity"])


class CarryIgnoresLoad(Tracker):
    """T6, 8 calls: createSprint s, createSprint t, createIssue (points 3), createIssue,
    addToSprint (1, t), addToSprint (2, s), startSprint s, closeSprint (s into t): the room a
    sprint named by a close must have is summed over the issues carried into it only, not with
    the ones it holds, so four points are let into a sprint of three (refused, 413). It needs
    issues in both sprints (one carried, at least one held: an issue is three points at most), the
    closed sprint started first, and the optional ``into``."""

    def _fits_carry(self, receiving: dict[str, Any], points: int) -> bool:
        return bool(points <= receiving["capacity"])


class DoneCarriedOver(Tracker):
    """T7, 8 calls: createSprint s, createSprint t, createIssue, addToSprint (1, s), closeIssue 1,
    startSprint s, closeSprint (s into t), sprintInfo t: a sprint closed into another hands on
    its done issues too, not only the unfinished ones, so the other one holds the done issue
    (and its point). It needs a done issue in the sprint (added before it is done), the sprint
    started and closed with the optional ``into`` (without it nothing is carried), and a read
    of what the other one holds (the close answers nothing)."""

    def _carried(self, record: dict[str, Any]) -> list[int]:
        return list(record["issues"])


class UnblockDoneDecrements(Tracker):
    """T8, 8 calls: createIssue three times, block (3 by 1), block (3 by 2), closeIssue 1, unblock
    (3, 1), closeIssue 3: a link taken away counts as a blocker fewer not done (never below
    none), even when its blocker is done already, so the count of blockers still open is one
    short and an issue still blocked by 2 is closed (refused, 423). It needs a done blocker
    unlinked (a link, a close, an unblock), a blocker not done still linked (with none, the count
    is kept at none and nothing shows), the issue itself, and its close."""

    def _unlink(self, record: dict[str, Any], by: int) -> None:
        record["blockers"].remove(by)
        record["open_blockers"] = max(record["open_blockers"] - 1, 0)
