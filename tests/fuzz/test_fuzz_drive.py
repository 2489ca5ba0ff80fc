"""The twenty-fifth held-out set (``impls/drive*``): eight planted bugs 7 to 9 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (folders and files numbered by
the service, each in a folder or at its owner's root, nested three folders deep with files below
the deepest, under names unique among the live items of one place; shares of an item with other
registered people as a viewer or an editor, an optional role, that reach everything inside a
shared folder however deep, and who reaches what worked out ahead, on each share and move; files
keeping their last three versions, the oldest dropped and its units freed from its owner's quota;
a trash of three items per owner, a restore into the folder an item was in, or at the root when
that folder is in the trash too, under a name free where it lands; moves never too deep, counting
a folder's trashed subfolders; download links numbered by the service with an optional number of
downloads, a download refused while the file is in the trash not counting).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct service answers that trace as the contract says, the planted one
does not), and the correct service gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over tuples of (correct, planted)
states, every call (refused calls and reads included) asked at every state, states told apart by
everything each implementation holds, on a small domain: people u, v and w registered (u also
with a quota of two); folders a and b made by u or v at the root or in items 1 to 4; files a and
b of one or two units uploaded by u or v at the root or into items 1 to 4; a version of one unit
of files 1 to 4 uploaded by u or v, and versions 1 and 2 restored by u; items 1 to 4 renamed a or
b by u or v, moved by u to the root or into items 1 to 4, deleted, restored and purged by u or v,
shared by u with v or w (the role unsaid, or editor), unshared from v, and read by u or v; links
to files 1 to 4 made by u or v (the limit unsaid, or two), links 1 and 2 downloaded, link 1
revoked by u or v; both accounts read. Over every operation (190 calls at each state) the search
found nothing within 6 calls for any bug (some 16,900 states within 5, every bug tracked). The
deeper searches left out what cannot make a trace shorter. For ``SpreadStopsThreeDown`` and
``MoveRefreshesItemOnly`` (who reaches an item through the folders it is in, read by a call of
someone it is shared with), people u and v, folders a and b and files c made by u or v at the
root or in items 1 to 5, items 1 to 5 shared with v as an editor and unshared, moved by u to the
root or into items 1 to 5, deleted and restored by u, renamed and read by v: both found at 8,
nothing within 7 (some 169,000 states within 7). For ``DropFreesUploader`` (the units a dropped
version frees), people u and v (u also with a quota of three), folder a of u's, files b and c of
one or two units uploaded by u or v at the root or into folder 1, versions of one or two units of
files 1 to 3 uploaded by u or v, versions 1 to 3 restored by u or v, items 1 to 3 shared with v
as an editor, deleted, restored, purged and read by u, both accounts read: found at 9, nothing
within 8 (some 302,000 states within 8). For ``RestoreToRootKeepsTrashSlot`` (an owner's count of
items in the trash, which only the owner fills and empties), u alone, folders a and files b and c
made at the root or in items 1 to 5, items 1 to 5 deleted, restored, purged and moved to the root
or into items 1 to 5: found at 9, nothing within 8 (some 48,000 states within 8). For
``RefusedDownloadCounts`` (a link's downloads), people u and v, folder a of u's, files b and c
uploaded by u or v at the root or into folder 1, items 1 to 3 shared with v as an editor, links to
files 1 to 3 made by u or v (the limit unsaid, or two), links 1 to 3 downloaded, links 1 and 2
revoked by u or v, items 1 to 3 deleted, restored, purged and moved to the root or into folder 1,
versions uploaded by u: found at 8, nothing within 7 (some 33,500 states within 7). For
``ViewerKeptOnUpgrade`` (the people an item is shared with), people u, v, w and z, a file a at the
root and in folder 2, folder b, items 1 to 3 shared with v, w or z (the role unsaid, viewer or
editor) and unshared, renamed and read by v, deleted and restored by u: found at 9, nothing within
8 (some 5,200 states within 8). For ``RestoreNameCheckedInOldFolder`` and ``HeightIgnoresTrash``
(names where a restored item lands, and how deep a moved folder goes), u alone, folders and files
a and b made at the root or in items 1 to 5, items 1 to 5 deleted, restored, purged, renamed a or
b, and moved to the root or into items 1 to 5: both found at 7 (some 7,500 states within 6). The
planted service's answers were checked against the contract on each trace the searches found and
on the ones below: the correct one's are valid, the planted one's break it outright. The traces
below show one at each length; those of ``SpreadStopsThreeDown``, ``RefusedDownloadCounts`` and
``ViewerKeptOnUpgrade`` are the ones the searches found, up to names, the others were written by
hand, the searches showing nothing shorter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import drive_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def register(user: str, **options: Any) -> Call:
    return ("register", {"user": user, **options})


def folder(by: str, parent: int, name: str) -> Call:
    return ("createFolder", {"by": by, "parent": parent, "name": name})


def upload(by: str, parent: int, name: str, size: int = 1) -> Call:
    return ("upload", {"by": by, "parent": parent, "name": name, "size": size})


def version(by: str, file: int, size: int = 1) -> Call:
    return ("uploadVersion", {"by": by, "file": file, "size": size})


def share(item: int, to: str, **options: Any) -> Call:
    return ("share", {"by": "u", "item": item, "to": to, **options})


def on(op: str, item: int, by: str = "u") -> Call:
    return (op, {"by": by, "item": item})


def download(link: int = 1) -> Call:
    return ("download", {"link": link})


TRACES: dict[str, list[Call]] = {
    # Folder 1 shared with v after file 4 is made four levels inside it: v renames the file.
    "SpreadStopsThreeDown": [
        register("u"),
        register("v"),
        folder("u", 0, "a"),
        folder("u", 1, "b"),
        folder("u", 2, "c"),
        upload("u", 3, "x"),
        share(1, "v", role="editor"),
        ("rename", {"by": "v", "item": 4, "name": "y"}),
    ],
    # Folder 2 (holding folder 3) moved into folder 1, shared with v: v uploads into folder 3.
    "MoveRefreshesItemOnly": [
        register("u"),
        register("v"),
        folder("u", 0, "a"),
        share(1, "v", role="editor"),
        folder("u", 0, "b"),
        folder("u", 2, "c"),
        ("move", {"by": "u", "item": 2, "parent": 1}),
        upload("v", 3, "x"),
    ],
    # v's version 1 of u's file 2 dropped: u has three units used, room for one more.
    "DropFreesUploader": [
        register("u"),
        register("v"),
        folder("u", 0, "a"),
        share(1, "v", role="editor"),
        upload("v", 1, "x"),
        version("u", 2),
        version("u", 2),
        version("u", 2),
        ("account", {"user": "u"}),
    ],
    # File 2 restored at the root (folder 1 in the trash): two in the trash, room for a third.
    "RestoreToRootKeepsTrashSlot": [
        register("u"),
        folder("u", 0, "a"),
        upload("u", 1, "x"),
        on("delete", 2),
        on("delete", 1),
        on("restore", 2),
        on("delete", 2),
        upload("u", 0, "y"),
        on("delete", 3),
    ],
    # The link, good for two, used once: the download refused while file 1 was trashed is not one.
    "RefusedDownloadCounts": [
        register("u"),
        upload("u", 0, "x"),
        ("createLink", {"by": "u", "file": 1, "limit": 2}),
        download(),
        on("delete", 1),
        download(),
        on("restore", 1),
        download(),
    ],
    # v a viewer, then an editor, w a viewer: file 1 is shared with two, room for z.
    "ViewerKeptOnUpgrade": [
        register("u"),
        register("v"),
        register("w"),
        register("z"),
        upload("u", 0, "x"),
        share(1, "v"),
        share(1, "v", role="editor"),
        share(1, "w"),
        share(1, "z"),
    ],
    # File 2 comes back at the root (folder 1 in the trash), where file 3 has its name: refused.
    "RestoreNameCheckedInOldFolder": [
        register("u"),
        folder("u", 0, "a"),
        upload("u", 1, "x"),
        on("delete", 2),
        on("delete", 1),
        upload("u", 0, "x"),
        on("restore", 2),
    ],
    # Folder 1 with folder 2 in the trash, into folder 4 (two deep): folder 2 would be four deep.
    "HeightIgnoresTrash": [
        register("u"),
        folder("u", 0, "a"),
        folder("u", 1, "b"),
        on("delete", 2),
        folder("u", 0, "c"),
        folder("u", 3, "d"),
        ("move", {"by": "u", "item": 1, "parent": 4}),
    ],
}
MINIMAL = {
    "SpreadStopsThreeDown": 8,
    "MoveRefreshesItemOnly": 8,
    "DropFreesUploader": 9,
    "RestoreToRootKeepsTrashSlot": 9,
    "RefusedDownloadCounts": 8,
    "ViewerKeptOnUpgrade": 9,
    "RestoreNameCheckedInOldFolder": 7,
    "HeightIgnoresTrash": 7,
}


class TestDrive(HeldOutSet):
    name, module, correct = "drive", drive_impl, "Drive"
    traces, minimal = TRACES, MINIMAL
