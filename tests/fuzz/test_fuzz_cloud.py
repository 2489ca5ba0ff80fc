"""The sixteenth held-out set (``impls/cloud*``): eight planted bugs 8 to 11 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (memberships numbered by the
cloud, with roles the owner changes while the members act; one project per owner, so that anything
between two projects needs a member added to one of them; an API key rotated by showing the current
one, up to a limit per membership, around a membership removed and made again; a VM lifecycle with
a restart that must fit the quota again and a VM deleted and made again under its name; snapshots
stored per project over its VMs and carried by a VM moved between two distinct projects; an
optional field that starts a moved VM at once).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct cloud answers that trace as the contract says, the planted one
does not), and the correct cloud gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, names taken as
interchangeable (each made in a fixed order, and one name not made yet asked as well) and
membership numbers renumbered in order, on a small domain: users o and u; projects p and q, made
with the default quota or 8; VMs a, b and c, of the default vCPUs or 2; members added with the
default role, as admins or as viewers; every membership number given (and the next one) set to
either role, removed by either user and rotated with keys 1 to 4; moves to either project, with and
without ``start``. It found nothing shorter than each stated length, and the traces below show a
difference at it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import cloud_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def project(name: str = "p", owner: str = "o", quota: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"project": name, "owner": owner}
    return ("createProject", kwargs if quota is None else {**kwargs, "quota": quota})


def member(user: str, name: str = "p", actor: str = "o", role: str | None = None) -> Call:
    kwargs: dict[str, Any] = {"project": name, "actor": actor, "user": user}
    return ("addMember", kwargs if role is None else {**kwargs, "role": role})


def vm(name: str = "a", where: str = "p", actor: str = "o", vcpus: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"project": where, "actor": actor, "vm": name}
    return ("createVm", kwargs if vcpus is None else {**kwargs, "vcpus": vcpus})


def on(op: str, name: str = "a", actor: str = "o") -> Call:
    return (op, {"vm": name, "actor": actor})


def move(name: str = "a", target: str = "q", actor: str = "o", start: bool | None = None) -> Call:
    kwargs: dict[str, Any] = {"vm": name, "actor": actor, "target": target}
    return ("moveVm", kwargs if start is None else {**kwargs, "start": start})


def rotate(key: int, membership: int) -> Call:
    return ("rotateKey", {"member": membership, "key": key})


# Two projects with two owners (one project per owner), o an admin of u's project q too, and a
# stopped VM a in o's project p: a move away from here is one call.
STOPPED: list[Call] = [project("p", "o"), vm("a"), on("startVm"), on("stopVm")]
TWO: list[Call] = [project("p", "o"), project("q", "u"), member("o", "q", "u", "admin")]
READY: list[Call] = [*TWO, vm("a"), on("startVm"), on("stopVm")]

TRACES: dict[str, list[Call]] = {
    # The move, then the old project (empty now) deleted: 409 from the planted one.
    "SourceStillCounted": [*READY, move(), ("deleteProject", {"project": "p", "actor": "o"})],
    # Three snapshots of a, then a moved into an empty q: exactly three there.
    "FullStorageMove": [*READY, *[on("snapshotVm")] * 3, move()],
    # A snapshot of a, a deleted and made again, stopped again, a first snapshot: one, not two.
    "RecreatedVmSnapshots": [
        *STOPPED,
        on("snapshotVm"),
        on("deleteVm"),
        vm("a"),
        on("startVm"),
        on("stopVm"),
        on("snapshotVm"),
    ],
    # a (2 vCPUs) made in p (quota 8), moved to q (quota 4) holding three already: a restart
    # there makes five.
    "RestartOldQuota": [
        project("p", "o", quota=8),
        project("q", "u"),
        member("o", "q", "u", "admin"),
        vm("a", vcpus=2),
        on("startVm"),
        on("stopVm"),
        move(),
        vm("b", "q", "u", vcpus=2),
        vm("c", "q", "u"),
        on("startVm"),
    ],
    # o added to q as a viewer (membership 3), made admin, then moves a in.
    "RoleAsAdded": [
        project("p", "o"),
        project("q", "u"),
        member("o", "q", "u"),
        ("setRole", {"member": 3, "actor": "u", "role": "admin"}),
        vm("a"),
        on("startVm"),
        on("stopVm"),
        move(),
    ],
    # u (membership 2) rotates three times, leaves, is added again (membership 3) and rotates
    # key 1.
    "RejoinKeepsRotations": [
        project("p", "o"),
        member("u"),
        rotate(1, 2),
        rotate(2, 2),
        rotate(3, 2),
        ("removeMember", {"member": 2, "actor": "u"}),
        member("u"),
        rotate(1, 3),
    ],
    # a moved to q and started there at once, then q read: it holds a's vCPU.
    "MoveStartUnbilled": [*READY, move(start=True), ("projectInfo", {"project": "q", "actor": "u"})],
    # Two stopped VMs in p, two snapshots of each: the fourth is one over the project's three.
    "StoragePerVm": [
        *STOPPED,
        vm("b"),
        on("startVm", "b"),
        on("stopVm", "b"),
        on("snapshotVm"),
        on("snapshotVm"),
        on("snapshotVm", "b"),
        on("snapshotVm", "b"),
    ],
}
MINIMAL = {
    "SourceStillCounted": 8,
    "FullStorageMove": 10,
    "RecreatedVmSnapshots": 10,
    "RestartOldQuota": 10,
    "RoleAsAdded": 8,
    "RejoinKeepsRotations": 8,
    "MoveStartUnbilled": 8,
    "StoragePerVm": 11,
}


class TestCloud(HeldOutSet):
    name, module, correct = "cloud", cloud_impl, "Cloud"
    traces, minimal = TRACES, MINIMAL
    examples = 40  # its cases are slow (many calls each): the bench fuzzes it for whole budgets
