"""A field changed, then used (``machine.Case.unused``): the operations whose requires or effects
read a field a call just changed are the ones where an implementation that still judges by the
old value (a role as it was when the member was added) answers otherwise than the contract."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import envfactory
from envfactory.fuzz import machine
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.runner import Session
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Fixed, Seeded

REGISTRAR = Path(__file__).resolve().parent / "impls" / "registrar.yaml"


CONTRACT = envfactory.load(REGISTRAR)


def _session() -> Session:
    return Session(CONTRACT, open_target("sim", CONTRACT), mode="adversarial", time_budget=None)


def test_the_users_of_a_field_are_read_off_requires_and_effects() -> None:
    """``enroll`` tests ``students[input.student].frozen`` (and names the student), ``swap``
    tests the frozen flag of the student its enrollment names (it takes no student key); the
    read ``studentInfo`` only answers it (its ensures are the reads' business, ``unread``)."""
    session = _session()
    plans(session)
    frozen = {(plan.name, key) for plan, key in session.users["students"]["frozen"]}
    assert {("enroll", "student"), ("swap", None), ("freeze", "name"), ("unfreeze", "name")} <= frozen
    assert "studentInfo" not in {name for name, _ in frozen}
    taken = {plan.name for plan, _ in session.users["courses"]["taken"]}
    assert {"enroll", "swap", "drop", "removeCourse"} <= taken


def test_a_changed_field_is_used_next_on_the_record_it_changed() -> None:
    """A student frozen: one step in ``USE_ODDS`` after it calls an operation that reads the flag,
    naming that student where the operation takes a student (an enroll of ``s``, refused 423 as
    the contract says); a call that changes no field leaves nothing to use."""
    session = _session()
    ops = session.contract.operations
    ours = plans(session)
    case = Case(session)
    for name, value in [
        ("addCourse", {"code": "a", "seats": 2}),
        ("addStudent", {"name": "s"}),
        ("addStudent", {"name": "t"}),
        ("freeze", {"name": "s"}),
    ]:
        case.send(ops[name], value)
    users = {(plan.name, field, key) for plan, field, key in case.unused}
    assert ("enroll", "student", "s") in users and ("swap", None, None) in users
    case.started = True
    case.unread = ()  # a read back of the frozen student comes first where there is one
    sent = len(case.steps)
    case.step(ours, Fixed(0, {machine.USE_ODDS: machine.USE_ODDS - 1}))
    (used,) = case.steps[sent:]
    assert (used.tool, used.input.get("name", used.input.get("student"))) in {
        ("enroll", "s"),
        ("freeze", "s"),
        ("unfreeze", "s"),
    } or used.tool == "swap"
    case.send(ops["studentInfo"], {"name": "t"})
    assert case.unused == ()


def test_about_one_step_in_use_odds_uses_the_field_just_changed() -> None:
    runs = 300
    used = 0
    session = _session()  # one session, a case of its own per seed: a case starts afresh
    ops = session.contract.operations
    ours = plans(session)
    for seed in range(runs):
        case = Case(session, replay=True)  # outside a run's rounds (no corpus, no stop)
        case.send(ops["addCourse"], {"code": "a", "seats": 2})
        case.send(ops["addStudent"], {"name": "s"})
        case.send(ops["freeze"], {"name": "s"})
        case.started = True
        case.unread = ()
        case.step(ours, Seeded(seed))
        step = case.steps[3]
        used += step.tool in ("enroll", "unfreeze", "freeze") and "s" in step.input.values()
    # a step drawn at random names s with one of these too, about one time in four (80 of the
    # 300 with no use after a change); one step in three uses the flag just changed
    assert runs / machine.USE_ODDS * 1.1 < used < runs / machine.USE_ODDS * 1.6


def test_the_writers_of_a_field_are_read_off_effects() -> None:
    """``freeze`` and ``unfreeze`` write a student's flag; ``addStudent`` puts a whole record,
    which makes a student and changes none."""
    session = _session()
    plans(session)
    assert {plan.name for plan in session.writers["students"]["frozen"]} == {"freeze", "unfreeze"}
    assert "addStudent" not in {
        plan.name for fields in session.writers.values() for f in fields.values() for plan in f
    }


def _read_by(session: Session, name: str) -> set[tuple[str, str]]:
    return {
        (collection, field)
        for collection, fields in session.users.items()
        for field, using in fields.items()
        if any(plan.name == name for plan, _ in using)
    }


def _changed(before: Any, after: Any, fields: set[tuple[str, str]]) -> bool:
    return any(
        (before.get(c) or {})[key].get(f) != record.get(f)
        for c, f in fields
        for key, record in (after.get(c) or {}).items()
        if key in (before.get(c) or {})
    )


def test_a_call_inserted_into_a_replay_changes_what_a_later_call_reads() -> None:
    """The call an insertion puts before a replay's ``enroll`` changes a field that enroll reads
    (a student's flag, a course's count) one time in two or more, on a record that exists
    (``freeze`` of the student not frozen, ``unfreeze`` of the one frozen): where it is any
    enabled call, about a third do (an enroll itself; the rest add a course or read)."""
    session = _session()
    ops = session.contract.operations
    ours = plans(session)
    read = _read_by(session, "enroll")
    share = {}
    for later in (["enroll"], []):
        changed = 0
        for seed in range(200):
            case = Case(session, replay=True)
            case.send(ops["addCourse"], {"code": "a", "seats": 2})
            case.send(ops["addStudent"], {"name": "s"})
            case.send(ops["addStudent"], {"name": "t"})
            case.send(ops["freeze"], {"name": "t"})
            before = case.state
            case.insert(ours, Seeded(seed), [(name, None) for name in later])
            changed += _changed(before, case.state, read)
        share[bool(later)] = changed / 200
    assert share[True] >= 0.5 and share[True] > 1.5 * share[False], share
