"""A review board (``reviews.yaml``, an OpenAPI 3.1 document), correct, and one class per planted
bug, 8 to 11 calls deep.

An eighth held-out set (session 15), written without looking at the fuzzer's code and measured on
it as it was. Its contract is the first in OpenAPI form (paths, operationIds, request bodies and
path parameters, ``x-envfactory`` clauses), and its bugs lean on what the other sets do not have:
a number the server assigns and later calls name by path; one user logged in at a time (a nullable
session), so every change of actor costs a logout and a login; reviewers and approvals kept as
lists (membership, length); a majority rule written with ``//``; a branch prefix (``release/``);
and a lifecycle draft, open, closed, draft again. The minimal length is in each docstring, with
why it cannot be shorter.

The implementation keeps some state where the contract does not look: how many pull requests each
name has opened (a log kept across removals, as the contract counts by name), each user's signup
serial and the serials of the reviewers asked, whether a pull request was ever open for review,
and how often it was reopened, in a table of its own.

Each minimal length was checked by a breadth-first search over pairs of (correct, planted) states,
every read asked at every state, on a small domain: names a, b (and c for HalfQuorum and
Resurrected), admin present or absent, branches x (and y, or release/x, where the bug reads
them), drafts, and pull requests 1 to 5 (1 to 3, or 1 alone for the 10- and 11-call bugs). It
found each hand-written length as the shortest, and for HalfQuorum and ReleaseSelfMerge no
showing sequence of 10 calls or fewer.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need

QUOTA = 4
REVIEWERS = 3
PUSHES = 3
REOPENS = 1
LIVE = ("draft", "open")


def _flag(value: Any) -> bool:
    """An optional boolean input: absent reads as false; anything else must be a boolean."""
    need(value is ABSENT or type(value) is bool, 422)
    return value is True


class Reviews:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.session: str | None = None
        self.next_number = 1
        self.opened: dict[str, int] = {}
        self.serial: dict[str, int] = {}
        self.signups = 0
        self.reopens: dict[Any, int] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _user(self, name: Any) -> dict[str, Any]:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        need(name in self.users, 404)
        return self.users[name]

    def _actor(self) -> str:
        need(self.session is not None, 401)
        assert self.session is not None
        return self.session

    def _pull(self, number: Any) -> dict[str, Any]:
        need(is_int(number) and number >= 1, 422)
        need(number in self.pulls, 404)
        return self.pulls[number]

    def _author_or_admin(self, pull: dict[str, Any], name: str) -> bool:
        return pull["author"] == name or bool(self.users[name]["admin"])

    # -- users and the session -------------------------------------------------------------------

    def signup(self, name: Any, admin: Any = ABSENT) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        is_admin = _flag(admin)
        need(name not in self.users, 409)
        self.users[name] = {"admin": is_admin, "merged": 0}
        self.signups += 1
        self.serial[name] = self.signups
        self._new_account(name)

    def _new_account(self, name: str) -> None:
        """The contract counts pull requests by name: a name made again keeps its count."""
        self.opened.setdefault(name, 0)

    def getUser(self, name: Any) -> dict[str, Any]:
        user = self._user(name)
        return {"admin": user["admin"], "opened": self.opened[name], "merged": user["merged"]}

    def removeUser(self, name: Any) -> None:
        self._user(name)
        need(self.session != name, 409)
        need(all(p["author"] != name or p["status"] not in LIVE for p in self.pulls.values()), 409)
        del self.users[name]

    def login(self, name: Any) -> None:
        need(is_str(name), 422)
        need(self.session is None, 409)
        need(name in self.users, 404)
        self.session = name

    def logout(self) -> None:
        self._actor()
        self.session = None

    def whoami(self) -> dict[str, Any]:
        return {"user": self.session, "open": sum(p["status"] == "open" for p in self.pulls.values())}

    # -- pull requests ---------------------------------------------------------------------------

    def openPull(self, branch: Any, draft: Any = ABSENT) -> dict[str, Any]:
        need(is_str(branch) and 1 <= len(branch) <= 12, 422)
        is_draft = _flag(draft)
        actor = self._actor()
        need(self._quota_used(actor) < QUOTA, 429)
        number = self.next_number
        self.next_number += 1
        self.pulls[number] = {
            "author": actor,
            "branch": branch,
            "status": "draft" if is_draft else "open",
            "reviewers": [],
            "approvals": [],
            "pushes": 0,
            "reopened": 0,
            "ready_once": not is_draft,
            "serials": [],
        }
        self.opened[actor] += 1
        return {"number": number, "status": self.pulls[number]["status"]}

    def _quota_used(self, name: str) -> int:
        return self.opened[name]

    def getPull(self, number: Any) -> dict[str, Any]:
        pull = self._pull(number)
        return {
            "author": pull["author"],
            "branch": pull["branch"],
            "status": pull["status"],
            "reviewers": list(pull["reviewers"]),
            "approvals": list(pull["approvals"]),
            "pushes": pull["pushes"],
            "reopened": pull["reopened"],
        }

    def requestReview(self, number: Any, reviewer: Any) -> dict[str, Any]:
        need(is_str(reviewer), 422)
        actor = self._actor()
        pull = self._pull(number)
        need(pull["author"] == actor, 403)
        need(reviewer in self.users, 404)
        need(reviewer != actor, 409)
        need(pull["status"] in LIVE, 409)
        need(reviewer not in pull["reviewers"], 409)
        need(len(pull["reviewers"]) < REVIEWERS, 429)
        pull["reviewers"].append(reviewer)
        pull["serials"].append(self.serial[reviewer])
        return {"reviewers": list(pull["reviewers"])}

    def approve(self, number: Any) -> dict[str, Any]:
        actor = self._actor()
        pull = self._pull(number)
        need(self._is_reviewer(pull, actor), 403)
        need(self._approvable(pull), 409)
        need(actor not in pull["approvals"], 409)
        pull["approvals"].append(actor)
        return {"approvals": len(pull["approvals"])}

    def _is_reviewer(self, pull: dict[str, Any], name: str) -> bool:
        return name in pull["reviewers"]

    def _approvable(self, pull: dict[str, Any]) -> bool:
        return bool(pull["status"] == "open")

    def push(self, number: Any) -> dict[str, Any]:
        actor = self._actor()
        pull = self._pull(number)
        need(self._author_or_admin(pull, actor), 403)
        need(pull["status"] in LIVE, 409)
        need(pull["pushes"] < PUSHES, 429)
        pull["pushes"] += 1
        self._dismiss(pull, actor)
        return {"pushes": pull["pushes"]}

    def _dismiss(self, pull: dict[str, Any], pusher: str) -> None:
        """A push dismisses every approval: what was approved is not what is there now."""
        pull["approvals"] = []

    def markReady(self, number: Any) -> None:
        actor = self._actor()
        pull = self._pull(number)
        need(pull["author"] == actor, 403)
        need(pull["status"] == "draft", 409)
        need(not pull["branch"].endswith("-wip"), 409)
        pull["status"] = "open"
        pull["ready_once"] = True

    def merge(self, number: Any) -> dict[str, Any]:
        actor = self._actor()
        pull = self._pull(number)
        need(pull["status"] == "open", 409)
        need(self._author_or_admin(pull, actor), 403)
        need(len(pull["approvals"]) >= self._quorum(pull), 409)
        need(self._release_ok(pull, actor), 403)
        pull["status"] = "merged"
        author = self.users[pull["author"]]
        author["merged"] += 1
        return {"merged": author["merged"]}

    def _quorum(self, pull: dict[str, Any]) -> int:
        """A majority of the reviewers asked: 1 of 1, 2 of 2, 2 of 3 (and 1 when none was asked)."""
        return len(pull["reviewers"]) // 2 + 1

    def _release_ok(self, pull: dict[str, Any], name: str) -> bool:
        return not pull["branch"].startswith("release/") or bool(self.users[name]["admin"])

    def close(self, number: Any) -> None:
        actor = self._actor()
        pull = self._pull(number)
        need(self._author_or_admin(pull, actor), 403)
        need(pull["status"] in LIVE, 409)
        pull["status"] = "closed"

    def reopen(self, number: Any) -> None:
        actor = self._actor()
        pull = self._pull(number)
        need(pull["author"] == actor, 403)
        need(pull["status"] == "closed", 409)
        key = self._reopen_key(number, pull)
        need(self.reopens.get(key, 0) < REOPENS, 429)
        self.reopens[key] = self.reopens.get(key, 0) + 1
        pull.update(status="draft", reopened=pull["reopened"] + 1, approvals=[])

    def _reopen_key(self, number: int, pull: dict[str, Any]) -> Any:
        return number


class HalfQuorum(Reviews):
    """R1, 11 calls: signup a, signup (b, admin), signup c, login a, openPull, requestReview b,
    requestReview c, logout, login b, approve, merge: the majority is rounded the wrong way, so
    with exactly two reviewers one approval is let through. With 0, 1 or 3 reviewers the two
    rules agree, so three users are needed; the approver must log in after the author asked
    (a logout and a login), and merging as the approver (an admin) saves going back to the author."""

    def _quorum(self, pull: dict[str, Any]) -> int:
        return max(1, (len(pull["reviewers"]) + 1) // 2)


class OwnApprovalKept(Reviews):
    """R2, 10 calls: signup a, signup (b, admin), login a, openPull, requestReview b, logout,
    login b, approve, push, getPull: a push dismisses every approval but the pusher's own. Only
    an admin reviewer can both approve and push someone else's pull request, and any approval
    takes the eight calls before it; then the push, and a read (getPull, a second approve or a
    merge) that sees the approval still there."""

    def _dismiss(self, pull: dict[str, Any], pusher: str) -> None:
        pull["approvals"] = [name for name in pull["approvals"] if name == pusher]


class BranchReopens(Reviews):
    """R3, 8 calls: signup a, login a, openPull x, openPull x, close 1, reopen 1, close 2,
    reopen 2: the once-only reopen is counted per branch, not per pull request, so a second
    pull request from the same branch cannot be reopened. Two pull requests whose branch names
    are equal, each closed, the first reopened: six calls after the two to log in."""

    def _reopen_key(self, number: int, pull: dict[str, Any]) -> Any:
        return pull["branch"]


class Resurrected(Reviews):
    """R4, 8 calls: signup a, login a, openPull, close, logout, removeUser a, signup a, getUser a:
    a name signed up again starts its count of pull requests at nought, where the contract counts
    every pull request opened under that name. The count needs a login and a pull request; the
    removal needs it closed and the user logged out; then the new signup and a read."""

    def _new_account(self, name: str) -> None:
        self.opened[name] = 0


class ReleaseSelfMerge(Reviews):
    """R5, 11 calls: signup a, signup b, login a, openPull release/x, requestReview b, logout,
    login b, approve, logout, login a, merge: the author merges their own release branch without
    being an admin. An admin merging is right, and a non-admin who is not the author is refused
    before the branch is looked at, so the merge is the author's, after an approval (the quorum
    is checked before the branch), which takes two changes of session."""

    def _release_ok(self, pull: dict[str, Any], name: str) -> bool:
        return name == pull["author"] or super()._release_ok(pull, name)


class DraftRefund(Reviews):
    """R6, 8 calls: signup a, login a, openPull (draft), close 1, openPull x4: a draft closed
    before it was ever open for review gives its place in the quota of four back, so a fifth pull
    request is let in. It needs the optional ``draft`` field present, the close, and the count
    exactly at the limit."""

    def _quota_used(self, name: str) -> int:
        discarded = sum(
            1
            for p in self.pulls.values()
            if p["author"] == name and p["status"] == "closed" and not p["ready_once"]
        )
        return self.opened[name] - discarded


class RecreatedReviewer(Reviews):
    """R7, 10 calls: signup a, signup b, login a, openPull, requestReview b, removeUser b,
    signup b, logout, login b, approve: the reviewer is recognised by the account asked, not by
    name, so a user made again under a reviewer's name is refused an approval the contract
    allows. The removal needs no logout (a is logged in); the approval needs b logged in."""

    def _is_reviewer(self, pull: dict[str, Any], name: str) -> bool:
        return self.serial[name] in pull["serials"]


class ReopenedDraftApproved(Reviews):
    """R8, 10 calls: signup a, signup b, login a, openPull, requestReview b, close, reopen,
    logout, login b, approve: a reopened pull request is a draft again, but one that was open for
    review before is approved as if it were open. The order open, close, reopen on one pull
    request, then the change of session to the reviewer."""

    def _approvable(self, pull: dict[str, Any]) -> bool:
        return super()._approvable(pull) or (pull["status"] == "draft" and bool(pull["ready_once"]))
