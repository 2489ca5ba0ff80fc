"""The solver's constants are named apart: a record field called ``key`` or ``present`` is not
the slot's own key or presence bit (both were ``<slot>.key``, one Z3 constant, so the planner
took every membership's ``key`` field to equal its number and called a reachable state
unreachable, "an inductive invariant")."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.solver.bmc import plan
from envfactory.solver.induction import prove

CONTRACT = """\
envfactory: "1"
info: {title: memberships, version: "1"}
state:
  next_member: {type: integer, initial: 1}
  members:
    collection:
      key: {type: integer}
      value:
        type: object
        properties: {user: {type: string}, key: {type: integer}, present: {type: boolean}}
        required: [user, key, present]
operations:
  join:
    input:
      type: object
      properties: {user: {type: string, minLength: 1, maxLength: 3}}
      required: [user]
      additionalProperties: false
    effects:
      - 'members[next_member] = {"user": input.user, "key": 1, "present": false}'
      - next_member = next_member + 1
"""


def test_a_record_field_named_key_or_present_is_its_own_unknown(tmp_path: Path) -> None:
    path = tmp_path / "memberships.yaml"
    path.write_text(CONTRACT, "utf-8")
    contract = envfactory.load(path)
    found = plan(contract, "next_member == 3", timeout=120)
    assert found.status == "found" and found.trajectory is not None
    assert [s.tool for s in found.trajectory.steps] == ["join", "join"]
    # the second membership's number is 2 and its key field 1: not one and the same unknown
    assert prove(contract, "all(members[m].key == m for m in members)", timeout=120).status == "violated"
