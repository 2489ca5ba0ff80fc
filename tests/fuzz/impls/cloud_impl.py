"""Cloud projects (``cloud.yaml``), correct, and one class per planted bug, 8 to 11 calls deep.

A sixteenth held-out set, written without looking at the fuzzer's code. Its shapes: memberships
of a user in a project, numbered by the cloud (the calls on one use the number it answered), with
roles that the owner changes while the members act; one project per owner, so that anything
between two projects needs a member added to one of them; an API key that a member rotates by
showing the current one, three times per membership, and a membership removed and made again; a
VM lifecycle (provisioning, running, stopped, started again, deleted and made again under the
same name) with a vCPU quota held only by provisioning and running VMs, checked again at a
restart; snapshots stored per project over its VMs, three at most, that go with a VM moved to
another project; a move between two distinct projects that may start the VM there at once (an
optional input field); a project deleted once emptied and made again. The minimal length is in
each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: an index of the memberships
by project and user, a count of rotations by project and user (beside each membership's key), the
role each member was added with, each VM's snapshot count (a table by VM name, beside the VMs,
made at its first snapshot), the quota a VM was created under, and each project's count of VMs.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

QUOTA = 4  # a project's vCPUs without `quota`
VCPUS = 1  # a VM's without `vcpus`
ROTATIONS = 3  # per membership
STORAGE = 3  # snapshots a project stores
ROLES = ("admin", "viewer")
MANAGERS = ("owner", "admin")


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


class Cloud:
    def __init__(self) -> None:
        self.projects: dict[str, dict[str, Any]] = {}
        self.members: dict[int, dict[str, Any]] = {}
        self.index: dict[tuple[str, str], int] = {}  # (project, user) -> membership number
        self.next_member = 1
        self.rotations: dict[tuple[str, str], int] = {}  # by project and user
        self.vms: dict[str, dict[str, Any]] = {}
        self.snaps: dict[str, int] = {}
        self.count: dict[str, int] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _project(self, project: str) -> dict[str, Any]:
        need(project in self.projects, 404)
        return self.projects[project]

    def _vm(self, vm: str) -> dict[str, Any]:
        need(vm in self.vms, 404)
        return self.vms[vm]

    def _membership(self, member: Any) -> dict[str, Any]:
        need(member in self.members, 404)
        return self.members[member]

    def _member(self, project: str, user: str) -> dict[str, Any] | None:
        number = self.index.get((project, user))
        return None if number is None else self.members[number]

    def _role(self, project: str, user: str) -> str | None:
        member = self._member(project, user)
        return None if member is None else str(member["role"])

    def _join(self, project: str, user: str, role: str) -> int:
        number = self.next_member
        self.next_member += 1
        self.members[number] = {"project": project, "user": user, "role": role, "key": 1, "added_as": role}
        self.index[(project, user)] = number
        return number

    def _manages(self, project: str, user: str) -> bool:
        return self._role(project, user) in MANAGERS

    def _storage(self, project: str) -> int:
        return sum(self.snaps.get(v, 0) for v, r in self.vms.items() if r["project"] == project)

    # -- projects --------------------------------------------------------------------------------

    def createProject(self, project: Any, owner: Any, quota: Any = ABSENT) -> dict[str, Any]:
        need(_name(project) and _name(owner), 422)
        limit = option(quota, 4, 8, QUOTA)
        need(project not in self.projects, 409)
        need(all(r["owner"] != owner for r in self.projects.values()), 429)
        self.projects[project] = {"owner": owner, "quota": limit, "held": 0}
        self.count[project] = 0
        return {"quota": limit, "member": self._join(project, owner, "owner")}

    def deleteProject(self, project: Any, actor: Any) -> None:
        need(_name(project) and _name(actor), 422)
        record = self._project(project)
        need(record["owner"] == actor, 403)
        need(self.count[project] == 0, 409)
        need(sum(p == project for p, _ in self.index) == 1, 423)
        self._close(project)

    def _close(self, project: str) -> None:
        """A deleted project takes its owner's membership (and its rotations) with it."""
        del self.projects[project]
        del self.count[project]
        for key in [k for k in self.index if k[0] == project]:
            del self.members[self.index.pop(key)]
            self.rotations.pop(key, None)

    # -- members ---------------------------------------------------------------------------------

    def addMember(self, project: Any, actor: Any, user: Any, role: Any = ABSENT) -> dict[str, Any]:
        need(_name(project) and _name(actor) and _name(user), 422)
        need(role is ABSENT or role in ROLES, 422)
        given = "viewer" if role is ABSENT else role
        self._project(project)
        mine = self._role(project, actor)
        need(mine == "owner" or (mine == "admin" and given == "viewer"), 403)
        need((project, user) not in self.index, 409)
        return {"member": self._join(project, user, given)}

    def setRole(self, member: Any, actor: Any, role: Any) -> None:
        need(is_int(member) and _name(actor) and role in ROLES, 422)
        record = self._membership(member)
        need(self.projects[record["project"]]["owner"] == actor, 403)
        need(record["role"] != "owner", 409)
        record["role"] = role

    def removeMember(self, member: Any, actor: Any) -> None:
        need(is_int(member) and _name(actor), 422)
        record = self._membership(member)
        need(record["role"] != "owner", 409)
        mine, theirs = self._role(record["project"], actor), record["role"]
        need(actor == record["user"] or mine == "owner" or (mine == "admin" and theirs == "viewer"), 403)
        self._leave(member)

    def _leave(self, member: int) -> None:
        """A member removed (or leaving) takes their key and its rotations with them."""
        record = self.members.pop(member)
        key = (record["project"], record["user"])
        del self.index[key]
        self.rotations.pop(key, None)

    def rotateKey(self, member: Any, key: Any) -> dict[str, Any]:
        need(is_int(member) and is_int(key) and 1 <= key <= 9, 422)
        record = self._membership(member)
        need(record["key"] == key, 401)
        who = (record["project"], record["user"])
        need(self.rotations.get(who, 0) < ROTATIONS, 429)
        record["key"] += 1
        self.rotations[who] = self.rotations.get(who, 0) + 1
        return {"key": record["key"]}

    # -- VMs -------------------------------------------------------------------------------------

    def createVm(self, project: Any, actor: Any, vm: Any, vcpus: Any = ABSENT) -> dict[str, Any]:
        need(_name(project) and _name(actor) and _name(vm), 422)
        size = option(vcpus, 1, 2, VCPUS)
        record = self._project(project)
        need(self._manages(project, actor), 403)
        need(vm not in self.vms, 409)
        need(record["held"] + size <= record["quota"], 429)
        self.vms[vm] = {"project": project, "vcpus": size, "status": "provisioning", "quota": record["quota"]}
        record["held"] += size
        self.count[project] += 1
        return {"vcpus": record["held"]}

    def _managed_vm(self, vm: Any, actor: Any) -> dict[str, Any]:
        need(_name(vm) and _name(actor), 422)
        record = self._vm(vm)
        need(self._manages(record["project"], actor), 403)
        return record

    def startVm(self, vm: Any, actor: Any) -> None:
        record = self._managed_vm(vm, actor)
        need(record["status"] != "running", 409)
        if record["status"] == "stopped":
            project = self.projects[record["project"]]
            need(project["held"] + record["vcpus"] <= self._limit(record), 429)
            project["held"] += record["vcpus"]
        record["status"] = "running"

    def _limit(self, record: dict[str, Any]) -> int:
        """The quota a restart must fit: its project's."""
        return int(self.projects[record["project"]]["quota"])

    def stopVm(self, vm: Any, actor: Any) -> None:
        record = self._managed_vm(vm, actor)
        need(record["status"] == "running", 409)
        record["status"] = "stopped"
        self.projects[record["project"]]["held"] -= record["vcpus"]

    def deleteVm(self, vm: Any, actor: Any) -> None:
        record = self._managed_vm(vm, actor)
        need(record["status"] != "running", 409)
        if record["status"] == "provisioning":
            self.projects[record["project"]]["held"] -= record["vcpus"]
        self.count[record["project"]] -= 1
        self._forget(vm)

    def _forget(self, vm: str) -> None:
        """A deleted VM goes with its snapshots."""
        del self.vms[vm]
        self.snaps.pop(vm, None)

    def snapshotVm(self, vm: Any, actor: Any) -> dict[str, Any]:
        record = self._managed_vm(vm, actor)
        need(record["status"] == "stopped", 409)
        need(self._room_for_snapshot(vm, record), 413)
        self.snaps[vm] = self.snaps.get(vm, 0) + 1
        return {"snapshots": self.snaps[vm]}

    def _room_for_snapshot(self, vm: str, record: dict[str, Any]) -> bool:
        """The project stores three snapshots at most, over all its VMs."""
        return self._storage(record["project"]) < STORAGE

    def moveVm(self, vm: Any, actor: Any, target: Any, start: Any = ABSENT) -> dict[str, Any]:
        need(_name(vm) and _name(actor) and _name(target), 422)
        need(start is ABSENT or type(start) is bool, 422)
        go = start is True
        record = self._vm(vm)
        need(target in self.projects, 404)
        source = record["project"]
        need(target != source, 409)
        need(record["status"] == "stopped", 423)
        need(self._manages(source, actor) and self._may_receive(target, actor), 403)
        need(self._fits_storage(target, self.snaps.get(vm, 0)), 413)
        receiving = self.projects[target]
        if go:
            need(receiving["held"] + record["vcpus"] <= receiving["quota"], 429)
        record["project"] = target
        self._moved(source, target)
        if go:
            self._start_moved(record, receiving)
        return {"status": record["status"]}

    def _may_receive(self, target: str, actor: str) -> bool:
        """Whoever moves a VM in must manage the target, in the role they hold now."""
        return self._manages(target, actor)

    def _fits_storage(self, target: str, snapshots: int) -> bool:
        return self._storage(target) + snapshots <= STORAGE

    def _moved(self, source: str, target: str) -> None:
        self.count[source] -= 1
        self.count[target] += 1

    def _start_moved(self, record: dict[str, Any], receiving: dict[str, Any]) -> None:
        """A VM started where it is moved to holds its vCPUs there."""
        record["status"] = "running"
        receiving["held"] += record["vcpus"]

    # -- reads -----------------------------------------------------------------------------------

    def projectInfo(self, project: Any, actor: Any) -> dict[str, Any]:
        need(_name(project) and _name(actor), 422)
        record = self._project(project)
        need((project, actor) in self.index, 403)
        return {
            "owner": record["owner"],
            "quota": record["quota"],
            "vcpus": record["held"],
            "members": sum(p == project for p, _ in self.index),
            "vms": self.count[project],
        }

    def vmInfo(self, vm: Any, actor: Any) -> dict[str, Any]:
        need(_name(vm) and _name(actor), 422)
        record = self._vm(vm)
        need((record["project"], actor) in self.index, 403)
        return {"project": record["project"], "vcpus": record["vcpus"], "status": record["status"]}


class SourceStillCounted(Cloud):
    """C1, 8 calls: createProject (p, o), createProject (q, u), addMember (q, u adds o as admin),
    createVm (p, o, a), startVm a, stopVm a, moveVm (a to q), deleteProject (p, o): a VM moved
    away is counted in its new project but not taken off its old one's count, so the old project,
    empty now, is refused deletion (409) and reads one VM. A move needs a stopped VM (created,
    started, stopped) and two projects, which have two owners (one project per owner), so the
    mover is added to the other one; then the old project deleted or read. The target's count is
    right."""

    def _moved(self, source: str, target: str) -> None:
        self.count[target] += 1


class FullStorageMove(Cloud):
    """C2, 10 calls: createProject (p, o), createProject (q, u), addMember (q, o admin), createVm
    (p, o, a), startVm a, stopVm a, snapshotVm a three times, moveVm (a to q): a move is let in
    only while the target's snapshots and the VM's stay under three, not at three, so a VM with
    three snapshots is refused (413) by an empty project that has room for exactly them. The three
    snapshots are all on the moved VM (snapshots elsewhere in the target would need a second
    stopped VM there, three calls more), on top of the eight calls of a move."""

    def _fits_storage(self, target: str, snapshots: int) -> bool:
        return self._storage(target) + snapshots < STORAGE


class RecreatedVmSnapshots(Cloud):
    """C3, 10 calls: createProject (p, o), createVm (p, o, a), startVm a, stopVm a, snapshotVm a,
    deleteVm a, createVm (p, o, a), startVm a, stopVm a, snapshotVm a: a deleted VM's snapshot
    count stays in the table by VM name, so a VM made again under that name starts with the old
    one's snapshots: its first snapshot answers two, not one (and they count against the project's
    storage). The count shows only at a snapshot (no read answers it): one taken of the first VM,
    which must be stopped (created, started, stopped), the VM deleted and made again, and stopped
    again for the second snapshot."""

    def _forget(self, vm: str) -> None:
        del self.vms[vm]


class RestartOldQuota(Cloud):
    """C4, 10 calls: createProject (p, o, quota 8), createProject (q, u), addMember (q, o admin),
    createVm (p, o, a, 2 vCPUs), startVm a, stopVm a, moveVm (a to q), createVm (q, u, b, 2),
    createVm (q, u, c, 1), startVm a: a restart is checked against the quota of the project the VM
    was created in, not the one it is in now, so after a move from a project of eight to one of
    four the restart that makes five is let through. It needs a VM moved between projects of
    different quotas (the optional quota given), and the restart over one quota but not the
    other: a VM has two vCPUs at most and a quota is four at least, so the project it restarts in
    holds three or more already, two other VMs."""

    def _limit(self, record: dict[str, Any]) -> int:
        return int(record["quota"])


class RoleAsAdded(Cloud):
    """C5, 8 calls: createProject (p, o), createProject (q, u), addMember (q, u adds o, as a
    viewer: membership 3), setRole (3, admin), createVm (p, o, a), startVm a, stopVm a, moveVm (a
    to q): who may move a VM into a project is judged by the role they were added to it with, not
    the one they hold now, so a viewer made admin is refused (403), and an admin made viewer let
    in. Every other check reads the role held now. A move checks the VM is stopped before it asks
    who moves it, so it needs its seven calls (the mover added to the other project: one project
    per owner), and the role changed between the add and the move."""

    def _may_receive(self, target: str, actor: str) -> bool:
        member = self._member(target, actor)
        return member is not None and member["added_as"] in MANAGERS


class RejoinKeepsRotations(Cloud):
    """C6, 8 calls: createProject (p, o), addMember (p, o adds u: membership 2), rotateKey (2, key
    1), rotateKey (2, 2), rotateKey (2, 3), removeMember (2, u leaves), addMember (p, o adds u:
    membership 3), rotateKey (3, 1): the count of rotations kept by project and user is not
    dropped when the member leaves, so back in the project, with a new membership and key number
    1, they are refused (429) a rotation they have not used. The count shows only at the limit:
    three rotations in all, before and after, and one more, around a removal and an add. A
    project deleted drops its owner's count right."""

    def _leave(self, member: int) -> None:
        record = self.members.pop(member)
        del self.index[(record["project"], record["user"])]


class MoveStartUnbilled(Cloud):
    """C7, 8 calls: createProject (p, o), createProject (q, u), addMember (q, o admin), createVm
    (p, o, a), startVm a, stopVm a, moveVm (a to q, start), projectInfo (q, u): a VM started where
    it is moved to runs there but its vCPUs are not held by the project, whose ``vcpus`` read one
    short (and its quota lets in a VM too many). Only the optional ``start`` takes that path; the
    move answers the status right, so it shows at a later read (or a create in the target)."""

    def _start_moved(self, record: dict[str, Any], receiving: dict[str, Any]) -> None:
        record["status"] = "running"


class StoragePerVm(Cloud):
    """C8, 11 calls: createProject (p, o), createVm (p, o, a), startVm a, stopVm a, createVm (p, o,
    b), startVm b, stopVm b, snapshotVm a twice, snapshotVm b twice: the storage limit is counted
    over the VM's own snapshots, not the project's, so a fourth snapshot in the project is let
    through when it is another VM's. It needs two stopped VMs in one project (three calls each)
    and three snapshots over them before the fourth."""

    def _room_for_snapshot(self, vm: str, record: dict[str, Any]) -> bool:
        return self.snaps.get(vm, 0) < STORAGE
