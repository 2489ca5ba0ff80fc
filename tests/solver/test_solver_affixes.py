"""Prefix and suffix tests on strings read abstractly (``solver.affixes``): a contract that tests
branch names with ``startswith``/``endswith`` against literals plans in identities, not in Z3's
string theory, and its plans replay: the texts chosen have the prefixes and suffixes the model
gave their identities, no two listed prefixes that cannot hold together hold together, and a
string too short for a prefix never has it."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory
from envfactory.solver.bmc import plan
from envfactory.solver.transition import Transition

BRANCHES = """\
envfactory: "1"
info: {title: Branches, version: "1"}
state:
  next: {type: integer, initial: 1}
  owner: {type: [string, "null"], initial: null}
  branches:
    collection:
      key: {type: integer}
      value:
        type: object
        properties: {name: {type: string}, merged: {type: boolean}}
        required: [name, merged]
operations:
  claim:
    input: {type: object, properties: {who: {type: string, maxLength: 4}}, required: [who]}
    requires: [{check: "owner == null", error: {status: 409, message: claimed}}]
    effects: [owner = input.who]
  push:
    input: {type: object, properties: {name: {type: string, maxLength: 12}}, required: [name]}
    requires:
      - {check: "owner != null", error: {status: 401, message: nobody}}
    effects:
      - 'branches[next] = {"name": input.name, "merged": false}'
      - next = next + 1
  merge:
    input: {type: object, properties: {n: {type: integer}}, required: [n]}
    requires:
      - {check: "input.n in branches", error: {status: 404, message: no such branch}}
      - check: not branches[input.n].name.endswith("-wip")
        error: {status: 409, message: work in progress}
      - check: not branches[input.n].name.startswith("release/") or owner.startswith("adm")
        error: {status: 403, message: release branches are merged by admins}
    effects: ["branches[input.n].merged = true"]
"""


@pytest.fixture(scope="module")
def branches(tmp_path_factory: pytest.TempPathFactory) -> envfactory.Contract:
    path = tmp_path_factory.mktemp("affixes") / "branches.yaml"
    path.write_text(BRANCHES)
    return envfactory.load(path)


def _names(found: object) -> list[str]:
    trajectory = found.trajectory  # type: ignore[attr-defined]
    return [s.input["name"] for s in trajectory.steps if s.tool == "push"]


def test_prefix_and_suffix_tests_keep_strings_abstract(branches: envfactory.Contract) -> None:
    assert Transition(branches).atoms is not None  # identities, not Z3 strings
    assert Transition(branches).encoder.affixes.listed == {
        "startswith": ["release/", "adm"],
        "endswith": ["-wip"],
    }


def test_a_plan_needing_a_prefix_replays_with_a_text_that_has_it(branches: envfactory.Contract) -> None:
    goal = 'any(branches[b].merged and branches[b].name.startswith("release/") for b in branches)'
    found = plan(branches, goal, max_depth=4)
    assert found.status == "found", found.reason
    assert [s.tool for s in found.trajectory.steps] == ["claim", "push", "merge"]  # type: ignore[union-attr]
    assert _names(found)[0].startswith("release/")
    owner = found.trajectory.steps[0].input["who"]  # type: ignore[union-attr]
    assert owner.startswith("adm") and len(owner) <= 4


def test_a_prefix_and_a_suffix_hold_together_on_one_text(branches: envfactory.Contract) -> None:
    goal = (
        'any(branches[b].name.startswith("release/") and branches[b].name.endswith("-wip") for b in branches)'
    )
    found = plan(branches, goal, max_depth=3)
    assert found.status == "found", found.reason
    (name,) = _names(found)
    assert name.startswith("release/") and name.endswith("-wip")


@pytest.mark.parametrize(
    ("goal", "status"),
    [
        # a shorter prefix of a listed one, without it: a text such as "relx"
        (
            'any(branches[b].name.startswith("rel") and not branches[b].name.startswith("release/") for b in branches)',
            "found",
        ),
        # a listed prefix without its own prefix: no text has it
        (
            'any(branches[b].name.startswith("release/") and not branches[b].name.startswith("rel") for b in branches)',
            "none",
        ),
        # two prefixes neither of which extends the other: no text has both
        (
            'any(branches[b].name.startswith("release/") and branches[b].name.startswith("hotfix/") for b in branches)',
            "none",
        ),
        # a four-character owner is too short for an eight-character prefix
        ('owner != null and owner.startswith("release/")', "none"),
    ],
)
def test_classes_admit_exactly_the_texts_some_string_has(
    branches: envfactory.Contract, goal: str, status: str
) -> None:
    found = plan(branches, goal, max_depth=3)
    assert found.status == status, found.reason
    if status == "found":
        (name,) = _names(found)
        assert name.startswith("rel") and not name.startswith("release/")


def test_the_review_board_stays_in_identities(tmp_path: Path) -> None:
    """The eighth held-out set (``tests/fuzz/impls/reviews.yaml``): a literal chosen by an ite
    (``"draft" if ... else "open"``) and two affix tests used to force Z3 strings on the whole
    board, where this three-call plan took 30 s of solving (an approval, eight calls, now plans
    in seconds: ``envfactory plan``)."""
    board = envfactory.load(Path(__file__).resolve().parents[1] / "fuzz" / "impls" / "reviews.yaml")
    assert Transition(board).atoms is not None
    found = plan(board, 'any(pulls[p].status == "draft" for p in pulls)', max_depth=3)
    assert found.status == "found", found.reason
    assert [s.tool for s in found.trajectory.steps] == ["signup", "login", "openPull"]  # type: ignore[union-attr]
    assert found.trajectory.steps[-1].input.get("draft") is True  # type: ignore[union-attr]
