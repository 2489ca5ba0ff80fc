"""``envfactory check``: one JSON document or a readable report; exit 0 when the contract loads, 2 when not."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from envfactory.cli import main
from envfactory.contracts import Contract, Finding

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PETSTORE = ROOT / "tests" / "realworld" / "corpus" / "petstore-expanded.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as code:
        main(["check", *args])
    captured = capsys.readouterr()
    return int(code.value.code or 0), captured.out, captured.err


@pytest.mark.parametrize("name", ["bank", "petstore", "tickets"])
def test_native_examples_check_clean_as_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, str(EXAMPLES / name / f"{name}.yaml"), "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert set(report) >= {"contract", "operations", "findings", "state", "invariants", "goals"}
    assert report["contract"]["kind"] == "native"
    for op in report["operations"]:
        assert {"name", "location", "requires", "effects", "ensures", "input"} <= set(op)
        for clause in op["requires"] + op["ensures"]:
            assert clause["inferred"] is False and clause["location"].startswith(str(EXAMPLES))
    for finding in report["findings"]:
        assert {"kind", "severity", "message", "location", "operation"} <= set(finding)


def test_openapi_text_report_marks_inferred_clauses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(PETSTORE))
    assert code == 0
    assert "open world" in out
    assert "requires input.id in pets -> 404 (inferred)" in out
    assert "effect   del pets[input.id] (inferred)" in out
    assert "find pet by id [GET /pets/{id}]" in out


def test_tool_list_with_state_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps([{"type": "function", "function": {"name": "inc", "parameters": {"type": "object"}}}]),
        encoding="utf-8",
    )
    extra = tmp_path / "state.yaml"
    extra.write_text(
        "state:\n  n: {type: integer, initial: 0}\noperations:\n  inc:\n    effects: [n = n + 1]\ninvariants: [n >= 0]\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, str(tools), "--with", str(extra), "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["contract"]["kind"] == "tools"
    assert report["state"]["n"]["initial"] == 0
    (op,) = report["operations"]
    assert op["effects"] == [{"effect": "n = n + 1", "location": f"{extra}:5:15", "inferred": False}]
    assert report["invariants"][0]["location"].startswith(str(extra))


def test_lint_findings_are_listed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        'envfactory: "1"\nstate:\n  unused: {type: integer, initial: 0}\noperations:\n'
        "  noop:\n    input: {type: object}\n    requires: [1 > 2]\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, str(path), "--format", "json")
    assert code == 0
    kinds = {f["kind"]: f for f in json.loads(out)["findings"]}
    assert kinds["unused_state"]["location"] == f"{path}:3:11"
    assert kinds["unsatisfiable_precondition"]["operation"] == "noop"
    code, out, _ = run(capsys, str(path))
    assert "warning: state variable 'unused' is never read nor written [unused_state]" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: [1]\n",
            "operationId",
        ),
        ("swagger: '2.0'\n", "Swagger 2.0"),
        ("- 1\n- 2\n", "a tool must be an object"),
        ("key: [unclosed\n", "not valid YAML"),
    ],
)
def test_unloadable_contract_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and str(path) in err
    assert "Traceback" not in err


def test_missing_file_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml" in err


def test_reachability_findings_join_the_list(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def reachability_findings(contract: Contract) -> list[Any]:
        seen.append(contract.title)
        return [Finding("never_enabled", "warning", "deletePet is never enabled", None, "deletePet")]

    module = types.ModuleType("envfactory.solver.reachability")
    module.reachability_findings = reachability_findings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "envfactory.solver.reachability", module)
    code, out, _ = run(capsys, str(PETSTORE), "--format", "json", "--closed-world")
    assert code == 0 and seen == ["Swagger Petstore"]
    findings = json.loads(out)["findings"]
    assert {
        "kind": "never_enabled",
        "severity": "warning",
        "message": "deletePet is never enabled",
        "location": None,
        "operation": "deletePet",
    } in findings


def test_collections_nothing_fills_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    link = ROOT / "tests" / "realworld" / "corpus" / "link-example.yaml"
    _, out, _ = run(capsys, str(link), "--format", "json")
    unfilled = [f for f in json.loads(out)["findings"] if f["kind"] == "unfilled_collection"]
    assert {f["severity"] for f in unfilled} == {"info"} and len(unfilled) == 4
    assert any("'getUserByName'" in f["message"] and f["location"] == f"{link}:8:7" for f in unfilled)
    _, out, _ = run(capsys, str(link), "--format", "json", "--closed-world")
    unfilled = [f for f in json.loads(out)["findings"] if f["kind"] == "unfilled_collection"]
    assert {f["severity"] for f in unfilled} == {"warning"} and len(unfilled) == 4
    _, out, _ = run(capsys, str(PETSTORE), "--format", "json", "--closed-world")
    assert not [f for f in json.loads(out)["findings"] if f["kind"] == "unfilled_collection"]


# -- record fields are checked at load time ----------------------------------------------------------


def _bank_with(tmp_path: Path, old: str, new: str) -> Path:
    text = (EXAMPLES / "bank" / "bank.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "bank.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "column"),
    [
        # the typo: an ensures reads a field the record schema does not declare
        (
            '"output.balance == accounts[input.account].balance"',
            '"output.balance == accounts[input.account].balanse"',
            27,
        ),
        # the same typo in a requires, and in an effect's target
        ("check: accounts[input.account].balance == 0", "check: accounts[input.account].balanse == 0", 16),
        ("accounts[input.account].frozen = true", "accounts[input.account].frozn = true", 9),
    ],
)
def test_a_field_the_record_does_not_declare_is_exit_2_with_a_suggestion(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str, column: int
) -> None:
    path = _bank_with(tmp_path, old, new)
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(lines, 1) if new in text)
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert "did you mean 'balance'?" in err or "did you mean 'frozen'?" in err
    assert err.startswith(f"envfactory: error: {path}:{line}:") and len(err.strip().splitlines()) == 1
    assert f":{line}:{column}:" in err


def test_undeclared_fields_need_an_explicit_opt_in(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _bank_with(
        tmp_path,
        "required: [owner, balance, frozen]",
        "required: [owner, balance, frozen]\n        additionalProperties: true",
    )
    text = path.read_text(encoding="utf-8").replace(
        '"output.balance == accounts[input.account].balance"',
        '"output.balance == accounts[input.account].balance or accounts[input.account].note != null"',
        1,
    )
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, str(path))
    assert code == 0, err


def test_an_ensures_no_response_meets_is_blamed_not_the_requires(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "counter.yaml"
    path.write_text(
        """\
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  n: {type: integer, initial: 0}
operations:
  bump:
    input: {type: object, properties: {}}
    effects: [n = n + 1]
  read:
    input: {type: object, properties: {}}
    output: {type: object, properties: {value: {type: integer, minimum: 0}}, required: [value]}
    ensures: [output.value < 0]
""",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, str(path), "--format", "json")
    assert code == 0
    (finding,) = json.loads(out)["findings"]
    assert finding["kind"] == "ensures_never_met" and finding["operation"] == "read"
    assert "output.value < 0" in finding["message"] and finding["location"].endswith("counter.yaml:12:15")
