"""A shared file drive (``drive.yaml``), correct, and one class per planted bug, 7 to 9 calls deep.

A twenty-fifth held-out set, written without looking at the fuzzer's code. Its shapes: people
registered under a free name with an optional quota in units; folders and files numbered by the
service, each in a folder or at its owner's root (folder 0), so parent references and nesting
three folders deep, under names unique among the live items of one place; files whose sizes count
against the quota of the owner of the folder they are in, each keeping its last three versions
(an upload or a restore of an old one drops the oldest at three, and must fit the quota once it
is freed); shares of an item with up to three other registered people (two distinct live keys),
as a viewer or an editor (an optional role), reaching everything inside a shared folder however
deep; moves by the owner, never into the item itself or a folder inside it nor too deep, where a
folder's trashed subfolders count; a trash of three items at most per owner, restored into the
folder an item was in when that is still live and at the root otherwise, purged for good one item
at a time; download links numbered by the service with an optional number of downloads, refused
once revoked, used up, or while the file is gone (not counted then). The minimal length is in
each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each user's units used and
items in the trash (beside the items), each folder's items (beside their parent references), each
item's viewers and editors as two sets, and who reaches each item and in which role, through its
own shares and its folders' (kept up to date on every share, unshare, move and restore, where the
contract walks up the folders); a link keeps the downloads it has left, not those made.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

QUOTA = 4  # units, without `quota`
DEPTH = 3  # folders nest this deep at most
KEEP = 3  # versions a file keeps
SHARES = 3  # people an item is shared with at most
TRASH = 3  # items in an owner's trash at most
LIMIT = 3  # downloads a link is good for, without `limit`
ROLES = ("viewer", "editor")


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _number(value: Any, low: int, high: int) -> bool:
    return is_int(value) and low <= value <= high


def _folder_ref(value: Any) -> bool:
    return is_int(value) and value >= 0


class Drive:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, int]] = {}  # quota, used, trash
        self.items: dict[int, dict[str, Any]] = {}
        # owner, kind, name, parent, trashed, versions (number, size, by), next, viewers, editors,
        # reach (who reaches it: user -> role)
        self.children: dict[int, set[int]] = {}  # a folder's items, trashed ones too
        self.next_item = 1
        self.links: dict[int, dict[str, Any]] = {}  # file, by, left, revoked
        self.next_link = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _live(self, number: Any, kind: str | None = None) -> dict[str, Any]:
        """A live item (of the kind, when told), or 404."""
        record = self.items.get(number) if is_int(number) else None
        need(record is not None and not record["trashed"] and kind in (None, record["kind"]), 404)
        assert record is not None
        return record

    def _any(self, number: Any) -> dict[str, Any]:
        need(is_int(number) and number in self.items, 404)
        return self.items[number]

    def _may_edit(self, record: dict[str, Any], by: str) -> bool:
        return record["owner"] == by or record["reach"].get(by) == "editor"

    def _may_see(self, record: dict[str, Any], by: str) -> bool:
        return record["owner"] == by or by in record["reach"]

    def _place_of(self, parent: int, by: str) -> tuple[str, set[int]]:
        """The owner of a place (a folder, or the root of the one who asks) and its items."""
        if parent == 0:
            return by, {n for n, r in self.items.items() if r["parent"] == 0 and r["owner"] == by}
        return self.items[parent]["owner"], self.children[parent]

    def _taken(self, place: set[int], name: str, skip: int = 0) -> bool:
        """Whether a live item of the place other than ``skip`` has the name."""
        return any(
            n != skip and not self.items[n]["trashed"] and self.items[n]["name"] == name for n in place
        )

    def _depth(self, folder: int) -> int:
        depth = 0
        while folder:
            depth += 1
            folder = self.items[folder]["parent"]
        return depth

    def _height(self, folder: int) -> int:
        """Levels of folders from this one down, its trashed subfolders included."""
        below = [self._height(n) for n in self.children[folder] if self.items[n]["kind"] == "folder"]
        return 1 + max(below, default=0)

    def _used(self, user: str) -> int:
        return self.users[user]["used"]

    # -- who reaches what ------------------------------------------------------------------------

    def _refresh(self, number: int) -> None:
        """Who reaches the item: whoever reaches its folder, and its own shares (editor wins)."""
        record = self.items[number]
        parent = record["parent"]
        reach: dict[str, str] = dict(self.items[parent]["reach"]) if parent else {}
        for user in record["viewers"]:
            reach.setdefault(user, "viewer")
        for user in record["editors"]:
            reach[user] = "editor"
        record["reach"] = reach

    def _spread(self, number: int) -> None:
        """The item's reach, and everything inside it, however deep."""
        self._refresh(number)
        for child in self.children.get(number, ()):
            self._spread(child)

    def _place(self, number: int, parent: int) -> None:
        """The item into another folder (or the root): the folders' items and its reach."""
        record = self.items[number]
        if record["parent"]:
            self.children[record["parent"]].discard(number)
        if parent:
            self.children[parent].add(number)
        record["parent"] = parent
        self._spread(number)

    # -- people ----------------------------------------------------------------------------------

    def register(self, user: Any, quota: Any = ABSENT) -> None:
        need(_name(user), 422)
        most = option(quota, 1, 6, QUOTA)
        need(user not in self.users, 409)
        self.users[user] = {"quota": most, "used": 0, "trash": 0}

    def account(self, user: Any) -> dict[str, Any]:
        need(_name(user), 422)
        need(user in self.users, 404)
        return {"quota": self.users[user]["quota"], "used": self._used(user)}

    # -- folders and files -----------------------------------------------------------------------

    def _into(self, by: str, parent: int) -> tuple[str, set[int]]:
        """The checks of something new in a place: the one who asks, the folder, the right."""
        need(by in self.users, 404)
        if parent:
            folder = self._live(parent, "folder")
            need(self._may_edit(folder, by), 403)
        return self._place_of(parent, by)

    def _new(self, owner: str, kind: str, name: str, parent: int, versions: list[Any]) -> int:
        number = self.next_item
        self.next_item += 1
        self.items[number] = {
            "owner": owner,
            "kind": kind,
            "name": name,
            "parent": parent,
            "trashed": False,
            "versions": versions,
            "next": len(versions) + 1,
            "viewers": set(),
            "editors": set(),
            "reach": {},
        }
        if kind == "folder":
            self.children[number] = set()
        if parent:
            self.children[parent].add(number)
        self._refresh(number)
        return number

    def createFolder(self, by: Any, parent: Any, name: Any) -> dict[str, Any]:
        need(_name(by) and _folder_ref(parent) and _name(name), 422)
        owner, place = self._into(by, parent)
        need(parent == 0 or self._depth(parent) < DEPTH, 400)
        need(not self._taken(place, name), 409)
        return {"folder": self._new(owner, "folder", name, parent, [])}

    def upload(self, by: Any, parent: Any, name: Any, size: Any) -> dict[str, Any]:
        need(_name(by) and _folder_ref(parent) and _name(name) and _number(size, 1, 3), 422)
        owner, place = self._into(by, parent)
        need(not self._taken(place, name), 409)
        need(self._used(owner) + size <= self.users[owner]["quota"], 413)
        self.users[owner]["used"] += size
        return {"file": self._new(owner, "file", name, parent, [{"number": 1, "size": size, "by": by}])}

    # -- versions --------------------------------------------------------------------------------

    def _push(self, record: dict[str, Any], size: int, by: str) -> int:
        """A new newest version, within the owner's quota once the oldest is dropped at three."""
        owner = self.users[record["owner"]]
        full = len(record["versions"]) == KEEP
        dropped = record["versions"][0]["size"] if full else 0
        need(owner["used"] - dropped + size <= owner["quota"], 413)
        if full:
            self._drop(record)
        number = record["next"]
        record["next"] += 1
        record["versions"].append({"number": number, "size": size, "by": by})
        owner["used"] += size
        return number

    def _drop(self, record: dict[str, Any]) -> None:
        """The oldest version out, its units freed."""
        oldest = record["versions"].pop(0)
        self.users[record["owner"]]["used"] -= oldest["size"]

    def uploadVersion(self, by: Any, file: Any, size: Any) -> dict[str, Any]:
        need(_name(by) and is_int(file) and _number(size, 1, 3), 422)
        record = self._live(file, "file")
        need(self._may_edit(record, by), 403)
        return {"version": self._push(record, size, by)}

    def restoreVersion(self, by: Any, file: Any, version: Any) -> dict[str, Any]:
        need(_name(by) and is_int(file) and is_int(version), 422)
        record = self._live(file, "file")
        need(self._may_edit(record, by), 403)
        kept = [v["size"] for v in record["versions"] if v["number"] == version]
        need(bool(kept), 404)
        return {"version": self._push(record, kept[0], by)}

    # -- names and places ------------------------------------------------------------------------

    def rename(self, by: Any, item: Any, name: Any) -> None:
        need(_name(by) and is_int(item) and _name(name), 422)
        record = self._live(item)
        need(self._may_edit(record, by), 403)
        _, place = self._place_of(record["parent"], record["owner"])
        need(not self._taken(place, name, item), 409)
        record["name"] = name

    def move(self, by: Any, item: Any, parent: Any) -> None:
        need(_name(by) and is_int(item) and _folder_ref(parent), 422)
        record = self._live(item)
        need(record["owner"] == by, 403)
        if parent:
            need(self._live(parent, "folder")["owner"] == by, 403)
            need(not self._inside(parent, item), 409)
            if record["kind"] == "folder":
                need(self._depth(parent) + self._height(item) <= DEPTH, 400)
        _, place = self._place_of(parent, by)
        need(not self._taken(place, record["name"], item), 409)
        self._place(item, parent)

    def _inside(self, folder: int, item: int) -> bool:
        """Whether the folder is the item or inside it."""
        while folder:
            if folder == item:
                return True
            folder = self.items[folder]["parent"]
        return False

    # -- the trash -------------------------------------------------------------------------------

    def delete(self, by: Any, item: Any) -> None:
        need(_name(by) and is_int(item), 422)
        record = self._live(item)
        need(record["owner"] == by, 403)
        inside = self.children.get(item, set())
        need(all(self.items[n]["trashed"] for n in inside), 409)
        need(self.users[by]["trash"] < TRASH, 429)
        record["trashed"] = True
        self.users[by]["trash"] += 1

    def _home(self, record: dict[str, Any]) -> int:
        """Where a trashed item comes back: its folder while live, the root otherwise."""
        parent: int = record["parent"]
        return parent if parent and not self.items[parent]["trashed"] else 0

    def restore(self, by: Any, item: Any) -> None:
        need(_name(by) and is_int(item), 422)
        record = self._any(item)
        need(record["owner"] == by, 403)
        need(record["trashed"], 409)
        home = self._home(record)
        need(not self._clash(record, item, home), 409)
        record["trashed"] = False
        self._back(item, home)

    def _clash(self, record: dict[str, Any], item: int, home: int) -> bool:
        """Whether a live item where it comes back has its name."""
        _, place = self._place_of(home, record["owner"])
        return self._taken(place, record["name"], item)

    def _back(self, item: int, home: int) -> None:
        """Out of the trash, into its home (another one when its folder is gone)."""
        record = self.items[item]
        if home != record["parent"]:
            self._place(item, home)
        self.users[record["owner"]]["trash"] -= 1

    def purge(self, by: Any, item: Any) -> None:
        need(_name(by) and is_int(item), 422)
        record = self._any(item)
        need(record["owner"] == by, 403)
        need(record["trashed"], 409)
        need(not self.children.get(item), 409)
        owner = self.users[by]
        owner["used"] -= sum(v["size"] for v in record["versions"])
        owner["trash"] -= 1
        if record["parent"]:
            self.children[record["parent"]].discard(item)
        self.children.pop(item, None)
        del self.items[item]

    # -- shares ----------------------------------------------------------------------------------

    def share(self, by: Any, item: Any, to: Any, role: Any = ABSENT) -> None:
        need(_name(by) and is_int(item) and _name(to), 422)
        need(role is ABSENT or role in ROLES, 422)
        record = self._live(item)
        need(record["owner"] == by, 403)
        need(to in self.users, 404)
        need(to != by, 409)
        known = to in record["viewers"] or to in record["editors"]
        need(known or len(record["viewers"]) + len(record["editors"]) < SHARES, 429)
        self._grant(record, to, "viewer" if role is ABSENT else role)
        self._spread(item)

    def _grant(self, record: dict[str, Any], to: str, role: str) -> None:
        """The person in the role's set, and out of the other one."""
        record["viewers"].discard(to)
        record["editors"].discard(to)
        record["editors" if role == "editor" else "viewers"].add(to)

    def unshare(self, by: Any, item: Any, to: Any) -> None:
        need(_name(by) and is_int(item) and _name(to), 422)
        record = self._live(item)
        need(record["owner"] == by, 403)
        need(to in record["viewers"] or to in record["editors"], 404)
        record["viewers"].discard(to)
        record["editors"].discard(to)
        self._spread(item)

    # -- links -----------------------------------------------------------------------------------

    def createLink(self, by: Any, file: Any, limit: Any = ABSENT) -> dict[str, Any]:
        need(_name(by) and is_int(file), 422)
        most = option(limit, 2, 4, LIMIT)
        record = self._live(file, "file")
        need(self._may_edit(record, by), 403)
        number = self.next_link
        self.next_link += 1
        self.links[number] = {"file": file, "by": by, "left": most, "revoked": False}
        return {"link": number}

    def _link(self, link: Any) -> dict[str, Any]:
        need(is_int(link), 422)
        need(link in self.links, 404)
        return self.links[link]

    def _there(self, file: int) -> bool:
        """Whether a link's file is still there: not purged, not in the trash."""
        return file in self.items and not self.items[file]["trashed"]

    def download(self, link: Any) -> dict[str, Any]:
        record = self._link(link)
        need(not record["revoked"], 410)
        need(self._there(record["file"]), 404)
        need(record["left"] > 0, 429)
        record["left"] -= 1
        newest = self.items[record["file"]]["versions"][-1]
        return {"file": record["file"], "version": newest["number"], "size": newest["size"]}

    def revokeLink(self, by: Any, link: Any) -> None:
        need(_name(by), 422)
        record = self._link(link)
        file = self.items.get(record["file"])
        need(by == record["by"] or (file is not None and file["owner"] == by), 403)
        need(not record["revoked"], 409)
        record["revoked"] = True

    # -- reads -----------------------------------------------------------------------------------

    def info(self, by: Any, item: Any) -> dict[str, Any]:
        need(_name(by) and is_int(item), 422)
        record = self._any(item)
        need(self._may_see(record, by), 403)
        return {
            "owner": record["owner"],
            "kind": record["kind"],
            "name": record["name"],
            "parent": record["parent"],
            "trashed": record["trashed"],
            "versions": [{"number": v["number"], "size": v["size"]} for v in record["versions"]],
        }


class SpreadStopsThreeDown(Drive):
    """B1, 8 calls: register u, register v, createFolder (u, root, a), createFolder (u, 1, b),
    createFolder (u, 2, c), upload (u, 3, x), share (u, 1, v, editor), rename (v, 4): a share is
    spread three levels down, as deep as folders go, and not to the files in a folder three deep,
    so v, an editor of folder 1, may not rename file 4 four levels inside it (refused, 403). It
    needs two people, three nested folders and a file in the deepest (only a folder at the root
    has anything four levels down, and only its share or unshare spreads from there: it moves
    nowhere deeper), the share after the file is made (something made takes its folder's reach
    then), and a call by the editor."""

    def _spread(self, number: int, level: int = 0) -> None:
        self._refresh(number)
        if level < DEPTH - 1:
            for child in self.children.get(number, ()):
                self._spread(child, level + 1)


class MoveRefreshesItemOnly(Drive):
    """B2, 8 calls: register u, register v, createFolder (u, root, a), share (u, 1, v, editor),
    createFolder (u, root, b), createFolder (u, 2, c), move (u, 2, 1), upload (v, 3, x): a move
    works out who reaches the item moved but not what is inside it, so v, an editor of folder 1,
    does not reach folder 3 (inside folder 2, now inside 1) and may not upload into it (refused,
    403). It needs two people, a folder with something inside (two folders) moved into a shared
    folder (or out of one), the share, and a call by the editor on what is inside."""

    def _place(self, number: int, parent: int) -> None:
        record = self.items[number]
        if record["parent"]:
            self.children[record["parent"]].discard(number)
        if parent:
            self.children[parent].add(number)
        record["parent"] = parent
        self._refresh(number)


class DropFreesUploader(Drive):
    """B3, 9 calls: register u, register v, createFolder (u, root, a), share (u, 1, v, editor),
    upload (v, 1, x, 1), uploadVersion (u, 2, 1) three times, account u: a dropped version's units
    are freed from whoever uploaded it, not from the file's owner, so when v's version 1 of u's
    file 2 is dropped u reads four units used where three are (and v below nothing). It needs two
    people, a version by one of them of a file of the other's (uploaded into a folder shared with
    them, or a version of a file shared with them after the owner's first), three versions more
    to drop it, and a read of the units (or a call that needs them)."""

    def _drop(self, record: dict[str, Any]) -> None:
        oldest = record["versions"].pop(0)
        self.users[oldest["by"]]["used"] -= oldest["size"]


class RestoreToRootKeepsTrashSlot(Drive):
    """B4, 9 calls: register u, createFolder (u, root, a), upload (u, 1, x), delete 2, delete 1,
    restore 2, delete 2, upload (u, root, y), delete 3: an item restored at the root (its folder
    in the trash) keeps its place in the trash, so with two items there u's third delete is
    refused as over three (429). It needs an item in a folder, both deleted (the item first: a
    folder goes with nothing live inside), the restore, and the trash filled again up to the
    slot kept: two deletes more, one of them of another item (made, or a third in the trash from
    the start)."""

    def _back(self, item: int, home: int) -> None:
        record = self.items[item]
        if home != record["parent"]:
            self._place(item, home)
            return
        self.users[record["owner"]]["trash"] -= 1


class RefusedDownloadCounts(Drive):
    """B5, 8 calls: register u, upload (u, root, x), createLink (u, 1, limit 2), download 1, delete
    1, download 1, restore 1, download 1: a download is taken off the link before the file is
    looked at, so one refused while the file is in the trash counts, and the link, good for two
    and used once, is used up after the restore (refused, 429). It needs a file, a link good for
    two (the fewest; three unless told), a download, the file trashed, a download refused then,
    the restore, and a download."""

    def download(self, link: Any) -> dict[str, Any]:
        record = self._link(link)
        need(not record["revoked"], 410)
        left = record["left"]
        record["left"] = max(left - 1, 0)
        need(self._there(record["file"]), 404)
        need(left > 0, 429)
        newest = self.items[record["file"]]["versions"][-1]
        return {"file": record["file"], "version": newest["number"], "size": newest["size"]}


class ViewerKeptOnUpgrade(Drive):
    """B6, 9 calls: register u, v, w and z, upload (u, root, x), share (u, 1, v), share (u, 1, v,
    editor), share (u, 1, w), share (u, 1, z): a viewer made an editor stays among the viewers
    too, so file 1, shared with two people, counts three and a share with a third is refused
    (429). It needs four people, a file, a share as a viewer (no role said) and again as an
    editor with the same person, and two shares more to reach three."""

    def _grant(self, record: dict[str, Any], to: str, role: str) -> None:
        if role == "editor":
            record["editors"].add(to)
        else:
            record["editors"].discard(to)
            record["viewers"].add(to)


class RestoreNameCheckedInOldFolder(Drive):
    """B7, 7 calls: register u, createFolder (u, root, a), upload (u, 1, x), delete 2, delete 1,
    upload (u, root, x), restore 2: a restore looks for the name in the folder the item was in,
    not where it comes back, so file 2, back at the root (its folder in the trash), takes the
    name of file 3 there (refused, 409). It needs an item in a folder, both deleted (the item
    first), another item at the root under its name, and the restore."""

    def _clash(self, record: dict[str, Any], item: int, home: int) -> bool:
        _, place = self._place_of(record["parent"], record["owner"])
        return self._taken(place, record["name"], item)


class HeightIgnoresTrash(Drive):
    """B8, 7 calls: register u, createFolder (u, root, a), createFolder (u, 1, b), delete 2,
    createFolder (u, root, c), createFolder (u, 3, d), move (u, 1, 4): a folder's height is
    counted without its trashed subfolders, so folder 1 goes into folder 4, two deep, where its
    trashed folder 2 would come back four deep (refused, 400). It needs a folder with a subfolder
    in the trash (two folders and a delete), and a folder two deep to move it into (two more)."""

    def _height(self, folder: int) -> int:
        below = [
            self._height(n)
            for n in self.children[folder]
            if self.items[n]["kind"] == "folder" and not self.items[n]["trashed"]
        ]
        return 1 + max(below, default=0)
