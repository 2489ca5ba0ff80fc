"""A deleted record made again and changed as before (``machine.Case.live_again``): what an
implementation keeps of a resource outside its record shows only on the record's second life."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.contracts.model import Contract
from envfactory.fuzz import machine
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.runner import Session, fuzz
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Fixed, Seeded

TEAMS = """
envfactory: "1"
info: {title: Teams, version: "1"}
schemas:
  Name: {type: string, minLength: 1, maxLength: 8}
state:
  next: {type: integer, initial: 1}
  teams:
    collection:
      key: {type: string}
      value: {type: object, properties: {owner: {$ref: "#/schemas/Name"}}, required: [owner]}
  members:
    collection:
      key: {type: integer}
      value:
        type: object
        properties: {team: {$ref: "#/schemas/Name"}, user: {$ref: "#/schemas/Name"}, apikey: {type: integer}}
        required: [team, user, apikey]
operations:
  createTeam:
    input:
      type: object
      properties: {team: {$ref: "#/schemas/Name"}, owner: {$ref: "#/schemas/Name"}}
      required: [team, owner]
      additionalProperties: false
    requires: [{check: 'not (input.team in teams)', error: {status: 409, message: taken}}]
    effects: ['teams[input.team] = {"owner": input.owner}']
  join:
    input:
      type: object
      properties: {team: {$ref: "#/schemas/Name"}, actor: {$ref: "#/schemas/Name"}, user: {$ref: "#/schemas/Name"}}
      required: [team, actor, user]
      additionalProperties: false
    requires:
      - {check: 'input.team in teams', error: {status: 404, message: no such team}}
      - {check: 'teams[input.team].owner == input.actor', error: {status: 403, message: the owner adds}}
      - check: 'not any(members[m].team == input.team and members[m].user == input.user for m in members)'
        error: {status: 409, message: already a member}
    effects:
      - 'members[next] = {"team": input.team, "user": input.user, "apikey": 1}'
      - next = next + 1
    output: {type: object, properties: {member: {type: integer}}, required: [member], additionalProperties: false}
    ensures: [output.member == next - 1]
  rotate:
    input:
      type: object
      properties: {member: {type: integer}, key: {type: integer, minimum: 1, maximum: 9}}
      required: [member, key]
      additionalProperties: false
    requires:
      - {check: 'input.member in members', error: {status: 404, message: no such membership}}
      - {check: 'members[input.member].apikey == input.key', error: {status: 401, message: not the current key}}
      - {check: 'members[input.member].apikey < 4', error: {status: 429, message: three rotations}}
    effects: ['members[input.member].apikey = members[input.member].apikey + 1']
    output: {type: object, properties: {key: {type: integer}}, required: [key], additionalProperties: false}
    ensures: ['output.key == members[input.member].apikey']
  leave:
    input: {type: object, properties: {member: {type: integer}}, required: [member], additionalProperties: false}
    requires: [{check: 'input.member in members', error: {status: 404, message: no such membership}}]
    effects: ['del members[input.member]']
"""

IMPL = '''
class Refused(Exception):
    def __init__(self, status):
        super().__init__(f"status {status}")
        self.status = status


def need(condition, status):
    if not condition:
        raise Refused(status)


class Teams:
    """Rotations are counted per team and user, and the count is dropped when the member leaves."""

    def __init__(self):
        self.teams, self.members, self.next, self.rotations = {}, {}, 1, {}

    def createTeam(self, team, owner):
        need(all(type(v) is str and 1 <= len(v) <= 8 for v in (team, owner)), 422)
        need(team not in self.teams, 409)
        self.teams[team] = owner

    def join(self, team, actor, user):
        need(all(type(v) is str and 1 <= len(v) <= 8 for v in (team, actor, user)), 422)
        need(team in self.teams, 404)
        need(self.teams[team] == actor, 403)
        need(all((m["team"], m["user"]) != (team, user) for m in self.members.values()), 409)
        self.members[self.next] = {"team": team, "user": user, "apikey": 1}
        self.next += 1
        return {"member": self.next - 1}

    def rotate(self, member, key):
        need(type(member) is int and type(key) is int and 1 <= key <= 9, 422)
        need(member in self.members, 404)
        record = self.members[member]
        need(record["apikey"] == key, 401)
        who = (record["team"], record["user"])
        need(self.rotations.get(who, 0) < 3, 429)
        self.rotations[who] = self.rotations.get(who, 0) + 1
        record["apikey"] += 1
        return {"key": record["apikey"]}

    def leave(self, member):
        need(type(member) is int, 422)
        need(member in self.members, 404)
        self._forget(self.members.pop(member))

    def _forget(self, record):
        self.rotations.pop((record["team"], record["user"]), None)


class Rejoin(Teams):
    """8 calls: a team, a join, three rotations, leave, join again, rotate: the count outlived
    the member."""

    def _forget(self, record):
        pass
'''


@pytest.fixture(scope="module")
def teams(tmp_path_factory: pytest.TempPathFactory) -> tuple[Contract, Path]:
    folder = Path(tmp_path_factory.mktemp("teams"))
    (folder / "teams.yaml").write_text(TEAMS, encoding="utf-8")
    (folder / "teams_impl.py").write_text(IMPL, encoding="utf-8")
    return envfactory.load(folder / "teams.yaml"), folder / "teams_impl.py"


def test_a_deleted_record_is_made_again_and_changed_as_before_under_its_new_key(
    teams: tuple[Contract, Path],
) -> None:
    """The membership (number 1) is made again by the call that made it (number 2 now), and its
    rotations are sent again naming number 2, with the keys they showed then."""
    contract, _ = teams
    session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
    case = Case(session)
    ops = contract.operations
    for name, value in [
        ("createTeam", {"team": "ann", "owner": "bob"}),
        ("join", {"team": "ann", "actor": "bob", "user": "bob"}),
        ("join", {"team": "ann", "actor": "bob", "user": "cy"}),
        ("rotate", {"member": 1, "key": 1}),
        ("rotate", {"member": 2, "key": 1}),
        ("rotate", {"member": 1, "key": 2}),
        ("leave", {"member": 1}),
    ]:
        case.send(ops[name], value)
    assert case.relive == ("members", 1)
    case.live_again(plans(session), "members", 1)
    assert [(s.tool, s.input, s.status) for s in case.steps[7:]] == [
        ("join", {"team": "ann", "actor": "bob", "user": "bob"}, 200),
        ("rotate", {"member": 3, "key": 1}, 200),
        ("rotate", {"member": 3, "key": 2}, 200),
    ]


def test_a_record_made_and_deleted_without_a_change_has_no_life_to_live_again(
    teams: tuple[Contract, Path],
) -> None:
    contract, _ = teams
    session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
    case = Case(session)
    case.send(contract.operations["createTeam"], {"team": "ann", "owner": "bob"})
    case.send(contract.operations["join"], {"team": "ann", "actor": "bob", "user": "bob"})
    case.send(contract.operations["leave"], {"member": 1})
    assert case.relive is None


def test_a_case_lives_a_deleted_record_again_about_once_in_relive_odds(teams: tuple[Contract, Path]) -> None:
    contract, _ = teams
    runs = 200
    again = 0
    for seed in range(runs):
        session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
        case = Case(session)
        case.send(contract.operations["createTeam"], {"team": "ann", "owner": "bob"})
        case.send(contract.operations["join"], {"team": "ann", "actor": "bob", "user": "bob"})
        case.send(contract.operations["rotate"], {"member": 1, "key": 1})
        case.send(contract.operations["leave"], {"member": 1})
        case.started = True
        case.step(plans(session), Seeded(seed))
        again += [s.tool for s in case.steps[4:]] == ["join", "rotate"] and case.steps[5].input == {
            "member": 2,
            "key": 1,
        }
    assert runs / machine.RELIVE_ODDS * 0.7 < again < runs / machine.RELIVE_ODDS * 1.3


def test_a_count_that_outlives_its_member_is_found_and_shrunk_to_eight_calls(
    teams: tuple[Contract, Path],
) -> None:
    contract, impl = teams
    target = open_target(f"python:{impl}:Rejoin", contract)
    summary = fuzz(contract, target, seed=1, max_examples=300, multiple=False)
    (finding,) = summary.findings
    assert (finding.operation, finding.status) == ("rotate", 429)
    tools = ["createTeam", "join", "rotate", "rotate", "rotate", "leave", "join", "rotate"]
    assert [s.tool for s in finding.steps] == tools
    assert finding.steps[1].input == finding.steps[6].input  # the same user joins the same team


def test_the_correct_teams_have_no_finding(teams: tuple[Contract, Path]) -> None:
    contract, impl = teams
    target = open_target(f"python:{impl}:Teams", contract)
    assert fuzz(contract, target, seed=0, max_examples=150).findings == ()


DISKS = """
envfactory: "1"
info: {title: Disks, version: "1"}
state:
  disks:
    collection:
      key: {type: string}
      value: {type: object, properties: {snaps: {type: integer}}, required: [snaps]}
operations:
  create:
    input: {type: object, properties: {disk: {type: string, minLength: 1}}, required: [disk], additionalProperties: false}
    requires: [{check: 'not (input.disk in disks)', error: {status: 409, message: exists}}]
    effects: ['disks[input.disk] = {"snaps": 0}']
  snapshot:
    input: {type: object, properties: {disk: {type: string}}, required: [disk], additionalProperties: false}
    requires:
      - {check: 'input.disk in disks', error: {status: 404, message: no such disk}}
      - {check: 'sum(disks[d].snaps for d in disks) < 3', error: {status: 507, message: three snapshots in all}}
    effects: ['disks[input.disk].snaps = disks[input.disk].snaps + 1']
"""


def test_a_twin_lives_a_live_record_s_life_again_under_a_fresh_key(tmp_path: Path) -> None:
    (tmp_path / "disks.yaml").write_text(DISKS, encoding="utf-8")
    disks = envfactory.load(tmp_path / "disks.yaml")
    session = Session(disks, open_target("sim", disks), mode="valid", time_budget=None)
    case = Case(session)
    case.send(disks.operations["create"], {"disk": "a"})
    case.send(disks.operations["snapshot"], {"disk": "a"})
    case.send(disks.operations["create"], {"disk": "b"})  # made, never changed: no life to live
    assert case.twin(plans(session), Seeded(0))
    (create, snapshot) = case.steps[3:]
    assert create.tool == "create" and create.input["disk"] not in ("a", "b") and create.status == 200
    assert (snapshot.tool, snapshot.input, snapshot.status) == ("snapshot", create.input, 200)
    assert case.state["disks"][create.input["disk"]] == {"snaps": 1}


REGISTRAR = Path(__file__).resolve().parent / "impls" / "registrar.yaml"
COURSE_LIFE = [
    ("addCourse", {"code": "a", "seats": 1}),
    ("addStudent", {"name": "s"}),
    ("enroll", {"student": "s", "course": "a"}),
    ("drop", {"id": 1}),
    ("enroll", {"student": "s", "course": "a"}),
    ("drop", {"id": 2}),
    ("removeCourse", {"code": "a"}),
]


def _course_case() -> tuple[Session, Case]:
    contract = envfactory.load(REGISTRAR)
    session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
    case = Case(session)
    for name, value in COURSE_LIFE:
        case.send(contract.operations[name], value)
    return session, case


def test_a_life_lived_again_names_the_ids_its_own_calls_return_now() -> None:
    """A course's drops name the enrollments its enrolls made: made again, the course is
    enrolled in twice more and each drop names the enrollment made this time (3, then 4), so
    the new course has a history of two drops as the old one had."""
    session, case = _course_case()
    assert case.relive == ("courses", "a")
    case.live_again(plans(session), "courses", "a")
    assert [(s.tool, s.input, s.status) for s in case.steps[len(COURSE_LIFE) :]] == [
        ("addCourse", {"code": "a", "seats": 1}, 200),
        ("enroll", {"student": "s", "course": "a"}, 200),
        ("drop", {"id": 3}, 200),
        ("enroll", {"student": "s", "course": "a"}, 200),
        ("drop", {"id": 4}, 200),
    ]


def test_a_record_made_again_under_its_own_key_with_other_values_is_read_back_at_once() -> None:
    """One time in ``REDRAW_ODDS`` the course comes back with other seats, and the next call
    reads it (``courseInfo``), where a course that kept the old record's seats shows it; the
    enrollments of its old life are not sent again."""
    session, case = _course_case()
    source = Fixed(0, {machine.REDRAW_ODDS: machine.REDRAW_ODDS - 1}, once=True)
    case.live_again(plans(session), "courses", "a", src=source)
    made, read = case.steps[len(COURSE_LIFE) :]
    assert made.tool == "addCourse" and made.input["code"] == "a" and made.input["seats"] != 1
    assert (read.tool, read.input, read.status) == ("courseInfo", {"code": "a"}, 200)
    assert read.output["seats"] == made.input["seats"]


def test_a_membership_made_again_is_the_same_user_s_even_when_values_would_be_drawn_anew(
    teams: tuple[Contract, Path],
) -> None:
    """A key the target assigns leaves nothing to keep: drawn anew, the membership would be
    another user's, so it is made again as it was."""
    contract, _ = teams
    session = Session(contract, open_target("sim", contract), mode="valid", time_budget=None)
    case = Case(session)
    for name, value in [
        ("createTeam", {"team": "ann", "owner": "bob"}),
        ("join", {"team": "ann", "actor": "bob", "user": "bob"}),
        ("rotate", {"member": 1, "key": 1}),
        ("leave", {"member": 1}),
    ]:
        case.send(contract.operations[name], value)
    source = Fixed(0, {machine.REDRAW_ODDS: machine.REDRAW_ODDS - 1}, once=True)
    case.live_again(plans(session), "members", 1, src=source)
    assert [(s.tool, s.input) for s in case.steps[4:]] == [
        ("join", {"team": "ann", "actor": "bob", "user": "bob"}),
        ("rotate", {"member": 2, "key": 1}),
    ]
