"""Naming the abstract strings of a model: where Z3's string theory names none (an ``unknown`` that
a loaded machine or the process's earlier queries can bring about), texts are drawn from the
patterns instead, the same every time, so a plan does not turn undecided on an account "s0"."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory.solver.schema as S
from envfactory.cli import main
from envfactory.solver.schema import literal_fits

BANK = Path(__file__).resolve().parents[2] / "examples" / "bank" / "bank.yaml"
ACCOUNT = {"type": "string", "pattern": "^[A-Z]{2}[0-9]{2,6}$"}


def test_drawn_texts_fit_every_schema_are_distinct_and_repeatable() -> None:
    groups = {0: [ACCOUNT], 1: [{"type": "string"}], 2: [{"minLength": 3, "maxLength": 5}], 3: [ACCOUNT]}
    texts = S._drawn_texts(groups)
    assert sorted(texts) == [0, 1, 2, 3]
    assert len(set(texts.values())) == 4
    assert all(literal_fits(texts[i], schema) for i, schemas in groups.items() for schema in schemas)
    assert S._drawn_texts(groups) == texts


def test_a_plan_still_names_its_accounts_when_z3_names_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(S, "ATOM_UNITS", 1)  # every string solve is cut at once: unknown
    out = tmp_path / "plan.jsonl"
    with pytest.raises(SystemExit) as code:
        main(["plan", str(BANK), "--goal", "two_accounts", "-o", str(out)])
    said = capsys.readouterr()
    assert code.value.code == 0, said.err
    assert "plan of 2 steps" in said.out + said.err
