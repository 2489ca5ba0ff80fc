"""Published OpenAPI documents, used as they are: they load, ``check`` lists every operation with
its inferred clauses, and hand-written trajectories against each verify as their ``meta.expect`` says.

The documents in ``corpus/`` are unchanged copies of ``../shared/corpus/openapi/`` so that the suite
runs from a clean clone; each trajectory states its expected verdict for a closed world
(``--closed-world``: nothing exists at the start) and an open one (the server already holds data).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import envfactory
from envfactory.cli import main
from envfactory.trajectory import Trajectory, read_trajectories
from envfactory.verification import Result, verify

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
TRAJECTORIES = HERE / "trajectories"
DOCUMENTS = sorted(CORPUS.glob("*.yaml"))
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def published_operations(path: Path) -> list[tuple[str, str, str]]:
    """(name, method, path) of every operation, read with plain PyYAML (independently of envfactory)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    result = []
    for route, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                result.append((op.get("operationId") or f"{method.upper()} {route}", method.upper(), route))
    return result


def run_check(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    with pytest.raises(SystemExit) as code:
        main(["check", str(path), "--format", "json", *extra])
    out = capsys.readouterr().out
    assert code.value.code == 0, out
    result: dict[str, Any] = json.loads(out)
    return result


def test_the_corpus_is_there() -> None:
    assert [p.name for p in DOCUMENTS] == [
        "link-example.yaml",
        "petstore-expanded.yaml",
        "swagger-petstore-v3.yaml",
    ]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.stem)
def test_check_lists_every_operation_with_inferred_clauses(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_check(path, capsys)
    published = published_operations(path)
    assert [op["name"] for op in report["operations"]] == [name for name, _, _ in published]
    assert report["contract"]["kind"] == "openapi" and report["contract"]["open_world"] is True
    for (name, method, route), op in zip(published, report["operations"], strict=True):
        assert op["http"]["method"] == method and op["http"]["path"] == route
        params = re.findall(r"\{([^}]+)\}", route)
        inferred = [c for c in op["requires"] if c["inferred"]]
        if params:
            # a call below a path parameter needs that instance: one inferred 404 clause naming it
            assert len(inferred) == 1, name
            assert inferred[0]["error"]["status"] == 404
            assert all(f"input.{p}" in inferred[0]["check"] for p in params if p.isidentifier())
            assert inferred[0]["location"].startswith(str(path))
        elif method in ("PUT", "PATCH") and "404" in op.get("errors", {}):
            # an update of the collection with the key in the body, which can answer 404
            assert len(inferred) <= 1 and all(c["error"]["status"] == 404 for c in inferred), name
        else:
            assert not inferred, name
        if method == "DELETE" and params:
            assert [e["inferred"] for e in op["effects"]] == [True]
            assert op["effects"][0]["effect"].startswith("del ")
    for name, var in report["state"].items():
        assert var["inferred"] and var["collection"] and var["initial"] == "unknown", name


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.stem)
def test_closed_world_makes_the_start_state_known(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run_check(path, capsys, "--closed-world")
    assert report["contract"]["open_world"] is False
    assert all(var["initial"] == {} for var in report["state"].values())


def cases() -> list[Any]:
    result = []
    for file in sorted(TRAJECTORIES.glob("*.jsonl")):
        for item in read_trajectories(file):
            assert isinstance(item, Trajectory), item
            result.append(pytest.param(file.stem, item, id=f"{file.stem}:{item.id}"))
    return result


CASES = cases()


def check_expectation(result: Result, expect: dict[str, Any]) -> None:
    verdicts = expect["verdict"] if isinstance(expect["verdict"], list) else [expect["verdict"]]
    assert result.verdict in verdicts, result.to_json()
    if "step" in expect:
        assert result.step == expect["step"], result.to_json()
    if "kind" in expect:
        assert result.kind == expect["kind"], result.to_json()
    if result.verdict == "invalid" and result.kind in ("precondition", "postcondition"):
        assert result.clause and result.location and "(inferred)" in result.message
    if "assumes" in expect:
        assert result.witness is not None, result.to_json()
        assert expect["assumes"] in json.dumps(result.witness["assumptions"]), result.to_json()


def test_every_trajectory_states_its_expectations() -> None:
    assert len(CASES) >= 20
    for param in CASES:
        _, traj = param.values
        assert traj.meta is not None and {"closed", "open"} <= set(traj.meta["expect"])


@pytest.mark.parametrize(("stem", "traj"), CASES)
def test_trajectories_in_a_closed_world(stem: str, traj: Trajectory) -> None:
    contract = envfactory.load(CORPUS / f"{stem}.yaml", closed_world=True)
    (result,) = verify(contract, [traj])
    assert traj.meta is not None
    check_expectation(result, traj.meta["expect"]["closed"])


HAS_SOLVER = importlib.util.find_spec("envfactory.solver.feasibility") is not None


@pytest.mark.skipif(not HAS_SOLVER, reason="open-world verification needs envfactory.solver.feasibility")
@pytest.mark.parametrize(("stem", "traj"), CASES)
def test_trajectories_in_an_open_world(stem: str, traj: Trajectory) -> None:
    contract = envfactory.load(CORPUS / f"{stem}.yaml")
    (result,) = verify(contract, [traj], timeout=10.0)
    assert traj.meta is not None
    check_expectation(result, traj.meta["expect"]["open"])


@pytest.mark.skipif(not HAS_SOLVER, reason="open-world verification needs envfactory.solver.feasibility")
def test_verify_command_on_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """The command line gives the same verdicts, and exit 1 because some trajectories are invalid."""
    stem = "swagger-petstore-v3"
    with pytest.raises(SystemExit) as code:
        main(
            ["verify", str(CORPUS / f"{stem}.yaml"), str(TRAJECTORIES / f"{stem}.jsonl"), "--format", "json"]
        )
    assert code.value.code == 1
    results = {r["id"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    for param in CASES:
        file, traj = param.values
        if file == stem:
            assert traj.meta is not None
            expect = traj.meta["expect"]["open"]
            verdicts = expect["verdict"] if isinstance(expect["verdict"], list) else [expect["verdict"]]
            assert results[traj.id]["verdict"] in verdicts
            assert results[traj.id]["step"] == expect.get("step")
