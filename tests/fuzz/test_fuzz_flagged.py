"""Records with a flag the quantifier does not read: a field a quantifier of the requires compares
with its records takes what a record with a boolean flag set holds (``steering.Flagged``).

The drive's move counts a folder's subfolders in the trash too when it asks how deep the folder
goes; its planted ``HeightIgnoresTrash`` leaves them out, and shows only on a move of a folder
whose subfolder is trashed, which a live key drawn at random seldom names.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import envfactory
from envfactory.fuzz.findings import FindingError
from envfactory.fuzz.machine import plans
from envfactory.fuzz.steering import flagged

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_cases import IMPLS, impl_case
from fuzz_sources import Fixed

DRIVE = envfactory.load(IMPLS / "drive.yaml")

# u's folder 1 with folder 2 inside, trashed; folder 4 inside folder 3
NESTED: list[tuple[str, dict[str, Any]]] = [
    ("register", {"user": "u"}),
    ("createFolder", {"by": "u", "parent": 0, "name": "a"}),
    ("createFolder", {"by": "u", "parent": 1, "name": "b"}),
    ("delete", {"by": "u", "item": 2}),
    ("createFolder", {"by": "u", "parent": 0, "name": "c"}),
    ("createFolder", {"by": "u", "parent": 3, "name": "d"}),
]


def test_the_fields_a_quantifier_compares_with_flagged_records_are_read_off_the_requires() -> None:
    """The move's depth clause ranges over the items, comparing their folder (and their folder's
    folder) with ``input.item``, and reads no ``trashed``; the chat's counts range over records
    with no boolean field at all."""
    specs = flagged(DRIVE.operations["move"], DRIVE)
    assert {(s.field, s.collection, s.flags) for s in specs} == {("item", "items", ("trashed",))}
    assert len(specs) == 2  # a subfolder, and a subfolder's subfolder
    chat = envfactory.load(IMPLS / "chat.yaml")
    assert all(flagged(op, chat) == () for op in chat.operations.values())


def test_a_folder_whose_subfolder_is_trashed_is_drawn_and_shows_the_planted_bug() -> None:
    """Folder 1 holds the trashed folder 2: it is the one candidate. Moved into folder 4 (two
    deep), the trashed folder would come back four deep: the correct drive refuses (400), the
    planted one lets it through, at the bug's minimal seven calls."""
    case = impl_case("drive", DRIVE, "Drive", NESTED)
    value = {"by": "u", "item": 4, "parent": 4}
    found = {
        v for spec in flagged(DRIVE.operations["move"], DRIVE) for v in spec.candidates(case.state, value)
    }
    assert found == {1, 0}  # folder 2's folder, and that folder's folder (the root: no item)
    plan = next(p for p in plans(case.session) if p.name == "move")
    case._flagged(plan, value, Fixed(0, {3: 2, 1: 0}))  # the flagged draw, then its one live item
    assert value["item"] == 1
    case.send(DRIVE.operations["move"], value)
    assert case.steps[-1].status == 400

    case = impl_case("drive", DRIVE, "HeightIgnoresTrash", NESTED)
    with pytest.raises(FindingError) as found:
        case.send(DRIVE.operations["move"], value)
    assert len(found.value.finding.steps) == 7


def test_no_flagged_record_draws_nothing() -> None:
    """Before the delete no record is flagged: the field keeps its draw and no choice is made."""
    case = impl_case("drive", DRIVE, "Drive", NESTED[:3])
    plan = next(p for p in plans(case.session) if p.name == "move")
    value = {"by": "u", "item": 2, "parent": 0}
    case._flagged(plan, value, Fixed(0, {}))
    assert value["item"] == 2
