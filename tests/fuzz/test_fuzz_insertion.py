"""A replayed route or corpus entry with a call of the case's own in the middle
(``machine.Case.insertion``): the state one call away from a reached one, not at its end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import envfactory
from envfactory.contracts.model import Contract
from envfactory.fuzz.machine import INSERT_ODDS, Case, plans
from envfactory.fuzz.reach import Route
from envfactory.fuzz.runner import Session
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Seeded

ROLES = """
envfactory: "1"
info: {title: Roles, version: "1"}
state:
  users:
    collection:
      key: {type: string}
      value: {type: object, properties: {role: {type: string, enum: [admin, viewer]}}, required: [role]}
operations:
  join:
    input:
      type: object
      properties: {user: {type: string}, role: {type: string, enum: [admin, viewer]}}
      required: [user, role]
      additionalProperties: false
    requires: [{check: 'not (input.user in users)', error: {status: 409, message: a member}}]
    effects: ['users[input.user] = {"role": input.role}']
  demote:
    input: {type: object, properties: {user: {type: string}}, required: [user], additionalProperties: false}
    requires: [{check: 'input.user in users', error: {status: 404, message: no such user}}]
    effects: ['users[input.user].role = "viewer"']
  act:
    input: {type: object, properties: {user: {type: string}}, required: [user], additionalProperties: false}
    requires:
      - {check: 'input.user in users', error: {status: 404, message: no such user}}
      - {check: 'users[input.user].role == "admin"', error: {status: 403, message: admins only}}
"""
ROUTE = Route(("join", "act"), ({"user": "u", "role": "admin"}, {"user": "u"}), goal=("act", None))
CASES = 200


@pytest.fixture(scope="module")
def roles(tmp_path_factory: pytest.TempPathFactory) -> Contract:
    path = Path(tmp_path_factory.mktemp("roles")) / "roles.yaml"
    path.write_text(ROLES, encoding="utf-8")
    return envfactory.load(path)


def _followed(roles: Contract, mode: str) -> list[list[tuple[str, object, int | None]]]:
    runs = []
    for seed in range(CASES):
        session = Session(roles, open_target("sim", roles), mode=mode, time_budget=None)
        case = Case(session)
        case.follow(plans(session), ROUTE, Seeded(seed))
        runs.append([(step.tool, step.input, step.status) for step in case.steps])
    return runs


def test_a_call_inserted_into_a_route_turns_the_call_after_it_into_a_probe(roles: Contract) -> None:
    """An admin demoted between the join and the act: the act the route planned as accepted is
    refused now, and sent all the same (an implementation that judges the role a user joined
    with lets it in)."""
    runs = _followed(roles, "adversarial")
    assert all(run[0][0] == "join" for run in runs)  # never before the first call
    inserted = [run for run in runs if len(run) == 3]
    assert all(len(run) in (2, 3) for run in runs)
    # one route in INSERT_ODDS, give or take what 200 draws vary by
    assert CASES / INSERT_ODDS / 2 < len(inserted) < CASES / INSERT_ODDS * 2
    turned = [
        run
        for run in inserted
        if run[:2] == [("join", {"user": "u", "role": "admin"}, 200), ("demote", {"user": "u"}, 200)]
    ]
    assert turned and all(run[2] == ("act", {"user": "u"}, 403) for run in turned)


def test_in_valid_mode_a_call_an_insertion_turned_is_not_sent(roles: Contract) -> None:
    runs = _followed(roles, "valid")
    assert any(run[1][0] == "demote" for run in runs if len(run) > 1)
    assert all(status == 200 for run in runs for _, _, status in run)


@pytest.mark.parametrize("last", ["u", "w"])
def test_an_inserted_change_is_drawn_to_turn_the_last_call_of_the_replay(roles: Contract, last: str) -> None:
    """Two admins joined, then the acts of u (and w): a demotion inserted after the joins is drawn
    for the user of the last act (a draw names u or w, the newest more often), whenever one of its
    draws does, and that act is sent refused after the others; a demotion of u before u's act
    and w's would cut the replay short of w's."""
    acts = [("act", {"user": "u"})] if last == "u" else [("act", {"user": "u"}), ("act", {"user": "w"})]
    entry = [("join", {"user": "u", "role": "admin"}), ("join", {"user": "w", "role": "admin"}), *acts]
    demoted: list[list[tuple[str, object, int | None]]] = []
    for seed in range(CASES // 4):
        session = Session(roles, open_target("sim", roles), mode="adversarial", time_budget=None)
        case = Case(session)
        case.resume(plans(session), entry, 2, Seeded(seed))
        run = [(step.tool, step.input, step.status) for step in case.steps]
        assert run[:2] == [(name, value, 200) for name, value in entry[:2]]
        if run[2][0] == "demote":
            demoted.append(run[2:])
    assert len(demoted) > CASES // 16  # one insertion in two is a change of what a later call reads
    turned = [run for run in demoted if run[0] == ("demote", {"user": last}, 200)]
    *others, (name, value) = acts
    assert all(run[1:] == [(n, v, 200) for n, v in others] + [(name, value, 403)] for run in turned)
    assert len(turned) >= 0.8 * len(demoted)
