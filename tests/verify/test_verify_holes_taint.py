"""A step that fails whatever the holes are, told without Z3 (issue 17: ``statemachine.taint``).

The concrete run of one completion tracks what the holes decide; when it fails on a check that
read none of it, every completion fails there the same way. Brute force over every completion is
the oracle, and Z3's decider must report the very same verdict, step, kind, message, clause and
location; anything the run cannot vouch for (the failing check reads a hole's value, a key the
holes chose, an output the trajectory leaves open) still goes to Z3."""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import strategies as S
from bench_verify_holes import broken, cases
from test_verify_completion import BREAKS, _count_solver, _holed

import envfactory
from envfactory import verification
from envfactory.contracts.errors import Location
from envfactory.contracts.model import Contract
from envfactory.contracts.semantics import Machine
from envfactory.solver import feasibility as F
from envfactory.statemachine.taint import Replayed, prove_failure, replay
from envfactory.trajectory import Trajectory, fill_holes, parse_trajectory
from envfactory.verification import Verifier

ROOT = Path(__file__).resolve().parents[2]
_TMP = tempfile.TemporaryDirectory(prefix="envfactory-taint-")  # removed when the process ends
_DIR = Path(_TMP.name)


@pytest.fixture(scope="module")
def tickets() -> Contract:
    return envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")


def load_text(text: str) -> Contract:
    path = _DIR / f"c{abs(hash(text))}.yaml"
    path.write_text(text, encoding="utf-8")
    return envfactory.load(path)


def created(tid: int, title: str) -> dict[str, Any]:
    """A recorded ``create_ticket`` call of the tickets contract."""
    ticket = {"title": title, "priority": "low"}
    output = {"id": tid, **ticket, "status": "open", "assignee": None}
    return {"tool": "create_ticket", "input": ticket, "output": output}


def traj_of(steps: list[dict[str, Any]]) -> Trajectory:
    return parse_trajectory(json.loads(json.dumps({"id": "t", "steps": steps})), Location("<test>"))


def completions(traj: Trajectory) -> list[Trajectory]:
    """Every completion of the holes over the small contracts' domains (outputs left as they are)."""
    names = list(traj.holes())
    domain = {n: (["idle", "busy", "other"] if n.endswith("s") else [0, 1, 2, 3]) for n in names}
    out = []
    for values in itertools.product(*(domain[n] for n in names)):
        holes = dict(zip(names, values, strict=True))
        steps = tuple(
            attrs.evolve(s, input=fill_holes(s.input, holes), output=fill_holes(s.output, holes))
            for s in traj.steps
        )
        out.append(attrs.evolve(traj, steps=steps))
    return out


def shown(found: Replayed, traj: Trajectory) -> tuple[Any, ...]:
    failure = found.failure
    assert failure is not None and found.step is not None
    loc = failure.location
    return (
        "invalid",
        found.step,
        failure.kind,
        failure.message,
        traj.steps[found.step].tool,
        failure.clause_text,
        str(loc) if loc is not None else None,
    )


def decided(contract: Contract, traj: Trajectory, allow_rejected: bool = False) -> tuple[Any, ...]:
    v = F.decide(contract, traj, timeout=20.0, allow_rejected=allow_rejected)
    return (v.verdict, v.step, v.kind, v.message, v.operation, v.clause, v.location)


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """A result as two runs must agree on it: an ``infeasible`` one without its core and the
    message that lists it (which minimal core Z3 finds depends on what the process asked it
    before; which step, and that it is infeasible, does not)."""
    if result["kind"] == "infeasible":
        return {**result, "core": None, "message": None, "clause": None, "location": None}
    return result


def z3_only(contract: Contract, traj: Trajectory, allow_rejected: bool = False) -> dict[str, Any]:
    """The verifier's result when no candidate completion is tried (Z3 decides everything)."""
    saved = verification.GUESSED_STEPS
    verification.GUESSED_STEPS = 0
    try:
        return Verifier(contract, allow_rejected=allow_rejected, timeout=20.0).check(traj).to_json()
    finally:
        verification.GUESSED_STEPS = saved


TAIL = st.sampled_from(
    [
        *({"tool": "drop", "input": {"k": k}} for k in range(3)),
        *({"tool": "add", "input": {"n": n}} for n in (1, 3)),
        *({"tool": "put", "input": {"k": k, "v": 3}} for k in range(3)),
        *({"tool": "flip", "input": {"m": m}} for m in ("idle", "busy")),
        *({"tool": "peek", "input": {}, "output": {"total": t}} for t in (0, 2, 9)),
        {"tool": "peek", "input": {}, "output": {"total": {"$var": "h0"}}},
    ]
)
"""Steps put after the drawn ones: each fails in some states, so that many drawn trajectories
fail after their holes, where the run may or may not vouch for the failure (one has a hole in
its recorded output)."""


@given(
    text=S.small_contracts(),
    raw=S.trajectories(max_steps=6, max_holes=3),
    tail=st.lists(TAIL, min_size=1, max_size=3),
    refusals=st.lists(st.sampled_from([None, 404, 409, 503]), min_size=3, max_size=3),
    allow=st.booleans(),
)
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_a_failure_no_hole_decides_holds_for_every_completion_and_is_z3s_verdict(
    text: str, raw: dict[str, Any], tail: list[dict[str, Any]], refusals: list[int | None], allow: bool
) -> None:
    """Holes in keys (``put``, ``drop``), in values compared later (``x``, ``items[k].v``, the
    sums of ``peek``), in values made by a condition (``active``), in a recorded output, outputs
    left open, and calls recorded as refused (404, 409) or failed (503), with and without
    ``--allow-rejected``."""
    contract = load_text(text)
    steps = raw["steps"] + [
        {**step, "status": status} if status is not None else step
        for step, status in zip(tail, refusals, strict=False)
    ]
    traj = parse_trajectory(json.loads(json.dumps({**raw, "steps": steps})), Location("<test>"))
    assume(traj.has_holes)
    machine = Machine(contract)
    runs = []
    proofs = []
    for completed in completions(traj):
        runs.append(replay(machine, completed, allow))
        proof = prove_failure(machine, completed, traj.steps, allow)
        if proof is not None:
            proofs.append((proof, completed))
    if not proofs:
        return
    first = shown(*proofs[0])
    assert all(shown(p, c) == first for p, c in proofs)  # whichever completion it ran
    step = first[1]
    for run in runs:  # brute force: every completion fails by that step, and at it the same way
        assert run.step is not None and run.step <= step, (run, first)
        if run.step == step:
            assert (run.failure.kind, run.failure.message) == first[2:4]  # type: ignore[union-attr]
    assert decided(contract, traj, allow) == first
    result = Verifier(contract, allow_rejected=allow, timeout=20.0).check(traj).to_json()
    assert result == z3_only(contract, traj, allow)
    if step >= min(i for i, s in enumerate(traj.steps) if s.has_holes):  # else the concrete run's
        assert (result["verdict"], result["step"], result["kind"], result["message"]) == first[:4]


def test_the_bench_s_infeasible_trajectories_are_decided_without_z3_as_z3_decides_them(
    tickets: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three holes (ids of tickets started or closed, assignees, titles), then a close of a
    ticket that does not exist: the holes write fields, never the key set it reads."""
    work = [broken(traj) for traj, _ in cases(12, 29)]
    expected = [z3_only(tickets, traj) for traj in work]
    asked = _count_solver(monkeypatch)
    verifier = Verifier(tickets, timeout=20.0)
    got = [verifier.check(traj).to_json() for traj in work]
    assert not asked
    assert got == expected
    assert {(r["verdict"], r["kind"], r["clause"]) for r in got} == {
        ("invalid", "precondition", "input.id in tickets")
    }


def test_a_failing_check_that_reads_what_a_hole_wrote_goes_to_z3(
    tickets: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only one of tickets 1 and 2 gets an assignee (the hole says which), and both start: the
    second start reads an assignee a hole chose, so no completion's run vouches; Z3 finds the
    conflict."""
    traj = traj_of(
        [
            created(1, "a"),
            created(2, "b"),
            {"tool": "assign", "input": {"id": {"$var": "h"}, "assignee": "jen"}},
            {"tool": "start", "input": {"id": 1}},
            {"tool": "start", "input": {"id": 2}},
        ]
    )
    machine = Machine(tickets)
    for h in (1, 2):
        steps = tuple(attrs.evolve(s, input=fill_holes(s.input, {"h": h})) for s in traj.steps)
        completed = attrs.evolve(traj, steps=steps)
        assert replay(machine, completed, False).step in (3, 4)
        assert prove_failure(machine, completed, traj.steps, False) is None
    asked = _count_solver(monkeypatch)
    result = Verifier(tickets, timeout=20.0).check(traj)
    assert asked == ["t"]
    assert (result.verdict, result.step, result.kind) == ("invalid", 4, "infeasible")


def test_an_open_output_before_the_failing_step_goes_to_z3(tickets: Contract) -> None:
    """``list_open``'s ensures read its output; left open, it is an unknown the run has no value
    for, so the run does not vouch even for a later check that reads no hole."""
    steps: list[dict[str, Any]] = [
        created(1, "a"),
        {"tool": "assign", "input": {"id": 1, "assignee": {"$var": "who"}}},
        {"tool": "list_open", "input": {}},
        {"tool": "close", "input": {"id": 7}},
    ]
    traj = traj_of(steps)
    completed = traj_of(
        [{**s, "input": {**s["input"], "assignee": "jen"}} if s["tool"] == "assign" else s for s in steps]
    )
    machine = Machine(tickets)
    assert prove_failure(machine, completed, traj.steps, False) is None
    recorded = traj_of([{**s, "output": {"count": 1}} if s["tool"] == "list_open" else s for s in steps])
    filled = traj_of(
        [
            {**s, "output": {"count": 1}}
            if s["tool"] == "list_open"
            else {**s, "input": {**s["input"], "assignee": "jen"}}
            if s["tool"] == "assign"
            else s
            for s in steps
        ]
    )
    proof = prove_failure(machine, filled, recorded.steps, False)  # recorded: the run vouches
    assert proof is not None and shown(proof, filled)[1:3] == (3, "precondition")
    assert decided(tickets, recorded) == shown(proof, filled)
    assert comparable(Verifier(tickets, timeout=20.0).check(traj).to_json()) == comparable(
        z3_only(tickets, traj)
    )


def small(**clauses: Any) -> Contract:
    """``strategies.CONTRACT_TEMPLATE`` with the given clauses (true, or 0, where not given)."""
    fields = {"x0": 0, "add_req": "true", "put_req": "true", "on_cut": 0, "flip_req": "true"}
    return load_text(
        S.CONTRACT_TEMPLATE.format(**{**fields, "peek_ens": "x", "invariant": "true", **clauses})
    )


@pytest.mark.parametrize(
    ("clauses", "steps", "failing"),
    [
        (  # a record written whole with a hole's value, summed later
            {"peek_ens": "sum(items[k].v for k in items)"},
            [
                {"tool": "put", "input": {"k": 0, "v": {"$var": "h0"}}},
                {"tool": "peek", "output": {"total": 2}},
            ],
            {"h0": 0},
        ),
        (  # a record's value compared by an invariant after a later, hole-free step
            {"invariant": "all(items[k].v <= x + 1 for k in items)"},
            [{"tool": "put", "input": {"k": 0, "v": {"$var": "h0"}}}, {"tool": "add", "input": {"n": 0}}],
            {"h0": 3},
        ),
        (  # a key a hole chose, then a membership test of another key
            {},
            [{"tool": "put", "input": {"k": {"$var": "h0"}, "v": 1}}, {"tool": "drop", "input": {"k": 2}}],
            {"h0": 0},
        ),
        (  # a scalar a hole added to, compared later
            {},
            [{"tool": "add", "input": {"n": {"$var": "h0"}}}, {"tool": "peek", "output": {"total": 2}}],
            {"h0": 1},
        ),
        (  # a value a hole decided through a condition, read by the next step's requires
            {"put_req": "len(items) < 1 or items[0].active"},
            [
                {"tool": "put", "input": {"k": 0, "v": {"$var": "h0"}}},
                {"tool": "put", "input": {"k": 1, "v": 0}},
            ],
            {"h0": 0},
        ),
    ],
)
def test_a_failure_that_reads_what_a_hole_decided_is_never_vouched_for(
    clauses: dict[str, Any], steps: list[dict[str, Any]], failing: dict[str, Any]
) -> None:
    """Each trajectory fails with the values ``failing`` and passes with others: the run of the
    failing completion must not vouch for its failure, and the verifier finds it feasible."""
    contract = small(**clauses)
    traj = traj_of([{"input": {}, **s} for s in steps])
    machine = Machine(contract)
    passing = [c for c in completions(traj) if replay(machine, c, False).failure is None]
    assert passing
    completed = traj_of(
        [
            {"input": {}, **s}
            for s in json.loads(json.dumps(steps).replace('{"$var": "h0"}', json.dumps(failing["h0"])))
        ]
    )
    assert replay(machine, completed, False).failure is not None
    assert prove_failure(machine, completed, traj.steps, False) is None
    assert Verifier(contract, timeout=20.0).check(traj).verdict == "feasible"


@pytest.mark.parametrize(
    ("refused", "vouched"),
    [
        ({"tool": "close", "input": {"id": 10**6}, "status": 404}, True),  # no hole decides the 404
        ({"tool": "close", "input": {"id": 1}, "status": 409}, False),  # a hole decides ticket 1's status
    ],
)
def test_a_refusal_counts_only_when_no_hole_decides_it(
    tickets: Contract, refused: dict[str, Any], vouched: bool
) -> None:
    """Under ``--allow-rejected``, a call recorded as refused passes when a false requires names
    its status; the run vouches for a later failure only when no hole decided that refusal."""
    steps = [
        created(1, "a"),
        {"tool": "assign", "input": {"id": 1, "assignee": "jen"}},
        {"tool": "start", "input": {"id": {"$var": "h"}}},
        refused,
        {"tool": "close", "input": {"id": 7}},
    ]
    traj = traj_of(steps)
    filled = traj_of([{**s, "input": {"id": 1}} if s["tool"] == "start" else s for s in steps])
    machine = Machine(tickets)
    assert replay(machine, filled, True).step == 4
    proof = prove_failure(machine, filled, traj.steps, True)
    assert (proof is not None) is vouched
    if proof is not None:
        assert decided(tickets, traj, True) == shown(proof, filled)
    result = Verifier(tickets, allow_rejected=True, timeout=20.0).check(traj).to_json()
    assert comparable(result) == comparable(z3_only(tickets, traj, True))
    assert (result["verdict"], result["step"]) == ("invalid", 4)


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_the_bundled_contracts_holed_and_broken_get_z3s_result_with_or_without_the_search(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench_verify's trajectories of three contracts with three holes and a step that fails
    unless a hole happens to make it pass, put anywhere after the first hole: the verifier's
    result is the one it gets with Z3 alone, field for field (verdict, step, kind, message,
    clause, location, core). A completion's run decides some of each (the break step's output is
    left open, an unknown too, but its requires fail first); not those of petstore whose holes
    fall in the id of a pet added (a key the break's ``petId in pets`` reads)."""
    import random

    contract = envfactory.load(ROOT / "examples" / name / f"{name}.yaml")
    rng = random.Random(23)
    searched = Verifier(contract, timeout=30.0)
    vouched = []
    monkeypatch.setattr(
        verification,
        "prove_failure",
        lambda *args, **kwargs: vouched.append(prove_failure(*args, **kwargs)) or vouched[-1],
    )
    for index in range(10):
        traj, steps, chosen = _holed(name, rng, index, 3)
        steps.insert(rng.randint(chosen[0] + 1, len(steps)), BREAKS[name])
        holed = attrs.evolve(traj, steps=tuple(steps))
        result = searched.check(holed).to_json()
        alone = z3_only(contract, holed)
        if result["verdict"] == "feasible":
            result["witness"] = alone["witness"] = result["message"] = alone["message"] = None
        assert comparable(result) == comparable(alone), holed.id
    assert any(v is not None for v in vouched)


BACKUP = """\
envfactory: "1"
info: {title: Backup, version: "1"}
state:
  items: {collection: {key: {type: integer}, value: {type: integer}}}
  backup: {collection: {key: {type: integer}, value: {type: integer}}}
operations:
  put:
    input: {type: object, properties: {k: {type: integer}}, required: [k]}
    effects: ["items[input.k] = 1"]
  save:
    input: {type: object}
    effects: ["backup = items"]
  need:
    input: {type: object, properties: {k: {type: integer}}, required: [k]}
    requires: ["input.k in backup"]
"""


@pytest.mark.parametrize(("key", "vouched"), [({"$var": "h"}, False), (0, True)])
def test_a_collection_written_whole_carries_what_a_hole_decided_in_its_keys(key: Any, vouched: bool) -> None:
    """``backup = items`` after a hole chose a key of ``items``: ``backup``'s keys are the
    hole's too, so a later ``2 in backup`` that fails for one value (0) is not vouched for
    (another, 2, passes); with that key known, it is, whatever the other hole."""
    contract = load_text(BACKUP)
    steps = [
        {"tool": "put", "input": {"k": key}},
        {"tool": "put", "input": {"k": {"$var": "g"}}},
        {"tool": "save"},
        {"tool": "put", "input": {"k": {"$var": "g"}}},
        {"tool": "need", "input": {"k": 2}},
    ]
    if vouched:
        del steps[1]  # the second put's hole would choose backup's keys too
    traj = traj_of([{"input": {}, **s} for s in steps])
    machine = Machine(contract)
    failing = [c for c in completions(traj) if replay(machine, c, False).step == len(steps) - 1]
    assert failing
    assert all((prove_failure(machine, c, traj.steps, False) is not None) is vouched for c in failing)
    assert Verifier(contract, timeout=20.0).check(traj).verdict == ("invalid" if vouched else "feasible")


def test_an_open_output_the_search_completed_is_an_unknown_the_run_goes_past(
    tickets: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``list_open``'s output left open after a hole (its ensures read it): the search completes
    it (``_fastpath.complete_output``), and the run, counting it unknown as a whole, goes past it
    to vouch for a later failure that reads neither it nor the hole; Z3 alone agrees. (Without
    the completed output, the run stops at that step: ``test_an_open_output_before...``.)"""
    steps: list[dict[str, Any]] = [
        created(1, "a"),
        created(2, "b"),
        {"tool": "assign", "input": {"id": 2, "assignee": "jen"}},  # a value for the search to try
        {"tool": "assign", "input": {"id": 1, "assignee": {"$var": "who"}}},
        {"tool": "list_open", "input": {}},
        {"tool": "close", "input": {"id": 7}},
    ]
    traj = traj_of(steps)
    asked = _count_solver(monkeypatch)
    result = Verifier(tickets, timeout=20.0).check(traj).to_json()
    assert not asked
    assert (result["verdict"], result["step"], result["kind"]) == ("invalid", 5, "precondition")
    assert result == z3_only(tickets, traj)
