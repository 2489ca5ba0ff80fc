"""The model walked through a sequence of calls (``oracle.walk``): what the shrinker, the reach
planner's stepping stones and an inserted change's lookahead all ask of one."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.contracts.semantics import Machine
from envfactory.contracts.state import initial_state
from envfactory.fuzz import oracle

TESTS = Path(__file__).resolve().parent.parent


def test_a_walk_moves_on_where_accepted_stays_where_refused_and_ends_where_it_cannot_follow() -> None:
    """A read of a pet that does not exist is refused and leaves the state; a pet created gets
    its id from the target's answer, which the model alone cannot know: the walk ends there,
    with no state after it, and the calls behind it are not judged."""
    contract = envfactory.load(TESTS / "simulator" / "pets_openapi.yaml")
    machine = Machine(contract)
    start = initial_state(contract)
    judged: list[str] = []

    def counted(state: object, op: object, value: object) -> oracle.Expectation:
        judged.append(op.name)  # type: ignore[attr-defined]
        return oracle.judge(machine, state, op, value)  # type: ignore[arg-type]

    calls = [("listPets", {}), ("getPet", {"petId": 7}), ("createPet", {"name": "a"}), ("listPets", {})]
    walked = list(oracle.walk(machine, contract.operations, start, calls, counted))
    assert [expect.accepted for _, expect, _ in walked] == [True, False, True]
    assert judged == ["listPets", "getPet", "createPet"]
    (s0, _, a0), (s1, refused, a1), (s2, _, a2) = walked
    assert s0 == a0 == s1 == a1 == s2 == start
    assert refused.kind == "precondition" and refused.status == 404
    assert a2 is None
