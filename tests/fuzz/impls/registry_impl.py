"""Package registry (``registry.yaml``), correct, and one class per planted bug, 6 to 9 calls deep.

An eighteenth held-out set, written without looking at the fuzzer's code. Its shapes: API tokens
the registry numbers (the calls that use one name the number it answered), scoped to a package
name or not, and revoked for good; packages made under a free name and deleted once every version
is yanked, the name free again with nothing of the old package kept; a list of owners that grows
to three and shrinks, but never to none; a quota of two packages per user, counted up by two
operations (making a package, being added as an owner) and down by two (being removed, the
package deleted); versions published in increasing order, each once, two per token; a version
yanked and unyanked again and again, with two yanks per package; downloads of a given version or
of the newest one not yanked, counted per package. The minimal length is in each docstring, with
why it cannot be shorter.

The implementation keeps some state where the contract does not look: a table of the live tokens
beside the record of every token made, a cache of the tokens each package has authorized before
(consulted first), each user's set of packages owned (the quota), each token's count of versions
published, each package's newest version that is not yanked (what a download without a version
gets), its download count in a table of its own (written by the download path, read with a
default), its count of yanks, and on each version the times it has been yanked.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need

QUOTA = 2  # packages a user owns
OWNERS = 3  # owners of a package
BUDGET = 2  # versions a token publishes
YANKS = 2  # yanks of a package
TOP = 9  # versions are numbered 1 to 9


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _version(value: Any) -> bool:
    return is_int(value) and 1 <= value <= TOP


class Registry:
    def __init__(self) -> None:
        self.users: set[str] = set()
        self.tokens: dict[int, dict[str, Any]] = {}  # every token made: its user, scope, whether revoked
        self.live: dict[int, str] = {}  # the live tokens and their users: what requests check first
        self.spent: dict[Any, int] = {}  # versions published, by token
        self.next_token = 1
        self.packages: dict[str, dict[str, Any]] = {}
        self.owned: dict[str, set[str]] = {}  # by user: the packages they own (the quota)
        self.grants: dict[str, set[int]] = {}  # by package: the tokens it has authorized before
        self.newest: dict[str, int | None] = {}  # by package: its newest version not yanked
        self.downloads: dict[str, int] = {}  # by package name, from the download path
        self.yank_count: dict[str, int] = {}  # by package

    # -- lookups ---------------------------------------------------------------------------------

    def _live(self, token: int) -> str:
        need(token in self.live, 401)
        return self.live[token]

    def _package(self, package: str) -> dict[str, Any]:
        need(package in self.packages, 404)
        return self.packages[package]

    def _scoped(self, token: int, package: str) -> bool:
        """A token scoped to a package name is good for that name alone."""
        scope = self.tokens[token]["scope"]
        return scope is None or scope == package

    def _authorize(self, token: int, package: str) -> str:
        """The user of a live token good for ``package``, an owner of it: a token that passed once
        is remembered (the cache is cleared when a token is revoked, its user removed as an owner,
        or the package deleted), so the next request skips the lookups."""
        if package in self.packages and token in self.grants.get(package, ()):
            return str(self.tokens[token]["user"])
        user = self._live(token)
        record = self._package(package)
        need(self._scoped(token, package) and user in record["owners"], 403)
        self.grants.setdefault(package, set()).add(token)
        return user

    # -- users and tokens ------------------------------------------------------------------------

    def signup(self, user: Any) -> None:
        need(_name(user), 422)
        need(user not in self.users, 409)
        self.users.add(user)
        self.owned[user] = set()

    def createToken(self, user: Any, package: Any = ABSENT) -> dict[str, Any]:
        need(_name(user) and (package is ABSENT or _name(package)), 422)
        need(user in self.users, 404)
        number = self.next_token
        self.next_token += 1
        self.tokens[number] = {
            "user": user,
            "scope": None if package is ABSENT else package,
            "revoked": False,
        }
        self.live[number] = user
        return {"token": number}

    def revokeToken(self, token: Any) -> None:
        need(is_int(token), 422)
        need(token in self.tokens, 404)
        record = self.tokens[token]
        need(not record["revoked"], 409)
        record["revoked"] = True
        del self.live[token]
        self._forget_token(token)

    def _forget_token(self, token: int) -> None:
        """A revoked token leaves every package's cache of authorized tokens."""
        for holders in self.grants.values():
            holders.discard(token)

    # -- packages --------------------------------------------------------------------------------

    def createPackage(self, token: Any, package: Any) -> None:
        need(is_int(token) and _name(package), 422)
        user = self._live(token)
        need(self._scoped(token, package), 403)
        need(package not in self.packages, 409)
        need(len(self.owned[user]) < QUOTA, 429)
        self.packages[package] = {"owners": [user], "releases": {}, "yanked": []}
        self.owned[user].add(package)
        self.newest[package] = None
        self.yank_count[package] = 0

    def deletePackage(self, token: Any, package: Any) -> None:
        need(is_int(token) and _name(package), 422)
        self._authorize(token, package)
        record = self.packages[package]
        need(all(release["yanked"] for release in record["releases"].values()), 409)
        del self.packages[package]
        for owner in record["owners"]:
            self.owned[owner].discard(package)
        self._forget_package(package)
        self._drop_downloads(package)
        del self.newest[package]
        del self.yank_count[package]

    def _forget_package(self, package: str) -> None:
        """A deleted package's cache of authorized tokens goes with it."""
        self.grants.pop(package, None)

    def _drop_downloads(self, package: str) -> None:
        """A deleted package's downloads go with it: a package made again under its name counts
        from none."""
        self.downloads.pop(package, None)

    # -- owners ----------------------------------------------------------------------------------

    def addOwner(self, token: Any, package: Any, user: Any) -> dict[str, Any]:
        need(is_int(token) and _name(package) and _name(user), 422)
        self._authorize(token, package)
        need(user in self.users, 404)
        record = self.packages[package]
        self._may_add(record, user)
        record["owners"].append(user)
        self.owned[user].add(package)
        return {"owners": list(record["owners"])}

    def _may_add(self, record: dict[str, Any], user: str) -> None:
        """Someone not an owner yet, to a package with room for an owner, under their quota."""
        need(user not in record["owners"], 409)
        need(len(record["owners"]) < OWNERS, 413)
        need(len(self.owned[user]) < QUOTA, 429)

    def removeOwner(self, token: Any, package: Any, user: Any) -> dict[str, Any]:
        need(is_int(token) and _name(package) and _name(user), 422)
        self._authorize(token, package)
        record = self.packages[package]
        need(user in record["owners"], 404)
        need(len(record["owners"]) > 1, 409)
        record["owners"].remove(user)
        self._disown(user, package)
        self._forget_owner(user, package)
        return {"owners": list(record["owners"])}

    def _disown(self, user: str, package: str) -> None:
        """Someone removed as an owner has the package off their quota."""
        self.owned[user].discard(package)

    def _forget_owner(self, user: str, package: str) -> None:
        """Someone removed as an owner has their tokens leave the package's cache."""
        holders = self.grants.get(package, set())
        holders -= {t for t in holders if self.tokens[t]["user"] == user}

    # -- versions --------------------------------------------------------------------------------

    def publish(self, token: Any, package: Any, version: Any) -> None:
        need(is_int(token) and _name(package) and _version(version), 422)
        self._authorize(token, package)
        record = self.packages[package]
        releases = record["releases"]
        need(version not in releases, 409)
        need(version > max(releases, default=0), 400)
        key = self._budget_key(token)
        need(self.spent.get(key, 0) < BUDGET, 429)
        releases[version] = {"yanked": False, "yanks": 0}
        self.spent[key] = self.spent.get(key, 0) + 1
        self.newest[package] = version  # above every version published: the newest, not yanked

    def _budget_key(self, token: int) -> Any:
        """Versions published are counted per token."""
        return token

    def yank(self, token: Any, package: Any, version: Any) -> dict[str, Any]:
        need(is_int(token) and _name(package) and _version(version), 422)
        self._authorize(token, package)
        record = self.packages[package]
        need(version in record["releases"], 404)
        release = record["releases"][version]
        need(not release["yanked"], 409)
        need(self._may_yank(package, release), 429)
        release["yanked"] = True
        release["yanks"] += 1
        record["yanked"].append(version)
        self.yank_count[package] += 1
        if self.newest[package] == version:
            self.newest[package] = self._newest_left(record)
        return {"yanks": self.yank_count[package]}

    @staticmethod
    def _newest_left(record: dict[str, Any]) -> int | None:
        """The newest version of a package that is not yanked, none if every one is."""
        return max((v for v, release in record["releases"].items() if not release["yanked"]), default=None)

    def _may_yank(self, package: str, release: dict[str, Any]) -> bool:
        """A package is yanked twice at most, whichever versions."""
        return self.yank_count[package] < YANKS

    def unyank(self, token: Any, package: Any, version: Any) -> None:
        need(is_int(token) and _name(package) and _version(version), 422)
        self._authorize(token, package)
        record = self.packages[package]
        need(version in record["releases"], 404)
        release = record["releases"][version]
        need(release["yanked"], 409)
        release["yanked"] = False
        record["yanked"].remove(version)
        self._restore(package, version)

    def _restore(self, package: str, version: int) -> None:
        """A version unyanked is the newest again if it is above the newest now."""
        newest = self.newest[package]
        if newest is None or version > newest:
            self.newest[package] = version

    # -- downloads and reads ---------------------------------------------------------------------

    def download(self, package: Any, version: Any = ABSENT) -> dict[str, Any]:
        need(_name(package) and (version is ABSENT or _version(version)), 422)
        record = self._package(package)
        if version is ABSENT:
            chosen = self.newest[package]
            need(chosen is not None, 404)
        else:
            need(version in record["releases"], 404)
            need(not record["releases"][version]["yanked"], 410)
            chosen = version
        self.downloads[package] = self.downloads.get(package, 0) + 1
        return {"version": chosen, "downloads": self.downloads[package]}

    def packageInfo(self, package: Any) -> dict[str, Any]:
        need(_name(package), 422)
        record = self._package(package)
        return {
            "owners": list(record["owners"]),
            "versions": list(record["releases"]),
            "yanked": list(record["yanked"]),
            "downloads": self.downloads.get(package, 0),
            "yanks": self.yank_count[package],
        }


class RevokeKeepsGrants(Registry):
    """Y1, 6 calls: signup u, createToken u, createPackage (1, p), publish (1, p, 1), revokeToken
    1, publish (1, p, 2): a revoked token is taken off the live table but left in the cache of
    tokens each package has authorized, which is consulted first, so it publishes to a package it
    was used on before its revocation (401 in the contract). It needs the token authorized on a
    package by a call an owner makes (making the package is not one: there is no owner to ask
    yet), then revoked, then a call on that package; anywhere else it is refused as it should
    be."""

    def _forget_token(self, token: int) -> None:
        pass


class BudgetPerUser(Registry):
    """Y2, 7 calls: signup u, createToken u, createToken u, createPackage (1, p), publish (1, p,
    1), publish (1, p, 2), publish (2, p, 3): the count of versions published is kept per user,
    not per token, so a user's second token is refused (429) its first version once the first
    token has published two. It needs two tokens of one user, a package, and three versions (the
    limit is two a token), each above the last."""

    def _budget_key(self, token: int) -> Any:
        return self.tokens[token]["user"]


class RemovedOwnerQuota(Registry):
    """Y3, 8 calls: signup u, signup v, createToken u, createPackage (1, p), addOwner (1, p, v),
    removeOwner (1, p, u), createPackage (1, q), createPackage (1, r): someone removed as an
    owner keeps the package in their quota, so u, who owns q alone, is refused (429) a second
    package. The quota is read only at its limit: a removal (two users, a package, an owner added
    so that the first may leave), then two packages more (u leaving and making them is the short
    way; v removed instead must make a token first)."""

    def _disown(self, user: str, package: str) -> None:
        pass


class OwnerLimitFirst(Registry):
    """Y4, 8 calls: signup u, signup v, signup w, createToken u, createPackage (1, p), addOwner (1,
    p, v), addOwner (1, p, w), addOwner (1, p, v): adding an owner asks whether the package has
    room for one before whether the user is an owner already, so adding v again to a package with
    three owners is refused for the wrong clause (413, where the contract checks 409 first). It
    needs three owners (three users, a package, two added) and an owner added again."""

    def _may_add(self, record: dict[str, Any], user: str) -> None:
        need(len(record["owners"]) < OWNERS, 413)
        need(user not in record["owners"], 409)
        need(len(self.owned[user]) < QUOTA, 429)


class UnyankTakesNewest(Registry):
    """Y5, 8 calls: signup u, createToken u, createPackage (1, p), publish (1, p, 1), publish (1, p,
    2), yank (1, p, 1), unyank (1, p, 1), download p: a version unyanked is made the package's
    newest whatever the newest is, so a download without a version gets 1 where 2 is the newest
    not yanked. The register is read only by a download without a version, and an unyanked
    version is below the newest only when a higher one was published after it: two versions, the
    lower one yanked and unyanked, and the download."""

    def _restore(self, package: str, version: int) -> None:
        self.newest[package] = version


class GrantOutlivesDelete(Registry):
    """Y6, 8 calls: signup u, signup v, createToken u, createPackage (1, p), deletePackage (1, p),
    createToken v, createPackage (2, p), publish (1, p, 1): a deleted package's cache of
    authorized tokens is kept, so when someone else makes a package under the name, the old
    owner's token still publishes to it (403 in the contract). The delete itself authorizes the
    token (the cache is only read for a package that exists); the name must be made again by
    another user (the old owner making it is an owner anyway), who needs a token of their own."""

    def _forget_package(self, package: str) -> None:
        pass


class DownloadsOutliveDelete(Registry):
    """Y7, 9 calls: signup u, createToken u, createPackage (1, p), publish (1, p, 1), download (p,
    1), yank (1, p, 1), deletePackage (1, p), createPackage (1, p), packageInfo p: the download
    table is not told when a package is deleted, so a package made again under the name starts
    with the old one's downloads. A download needs a version published, a deletion needs every
    version yanked, and the count shows in a read of the new package (a download of it would need
    a version of its own: two calls more)."""

    def _drop_downloads(self, package: str) -> None:
        pass


class YanksPerVersion(Registry):
    """Y8, 9 calls: signup u, createToken u, createPackage (1, p), publish (1, p, 1), publish (1, p,
    2), yank (1, p, 1), unyank (1, p, 1), yank (1, p, 2), yank (1, p, 1): the yank limit is read
    off the version's own count of yanks, not the package's, so a third yank of the package is let
    through (429 in the contract) where no version has been yanked twice. It needs two yanks done
    and a third, on a version not yanked at the time: with one version the third yank is its own
    third too (refused in both), so two versions, and an unyank between."""

    def _may_yank(self, package: str, release: dict[str, Any]) -> bool:
        return bool(release["yanks"] < YANKS)
