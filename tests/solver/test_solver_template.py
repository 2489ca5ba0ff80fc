"""The step template (``solver.template``): a step encoded once and copied onto other states by
substitution is the very term the direct encoding gives (Z3 shares equal terms, so ``eq`` is
identity of the whole formula), on every bundled and held-out contract and on drawn ones."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies as S

import envfactory
from envfactory.contracts.errors import SolverError
from envfactory.contracts.model import Contract
from envfactory.solver.template import Template
from envfactory.solver.transition import Transition

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = sorted([*ROOT.glob("examples/*/*.yaml"), *ROOT.glob("tests/fuzz/impls/*.yaml")])


def _copies_agree(contract: Contract, slots: int) -> int:
    """Assert that every operation's copied step and the copied invariants are the direct
    encoding's terms, on two states other than the template's; the operations compared."""
    tr = Transition(contract)
    template = Template(tr, slots, "T")
    pre, post = tr.fresh_state("s1", slots), tr.fresh_state("s2", slots)
    compared = 0
    for name, op in contract.operations.items():
        io = tr.step_vars(op, f"t1.{name}")
        try:
            direct = tr.step(op, pre, post, io)
        except SolverError:
            with pytest.raises(SolverError):
                template.step(op, pre, post, io)
            continue
        copied = template.step(op, pre, post, io)
        assert copied.eq(direct), name
        assert not copied.eq(template.step(op, post, pre, io))  # the states are not ignored
        compared += 1
    assert template.invariants(post).eq(tr.invariants(post))
    return compared


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.stem)
def test_a_copied_step_is_the_direct_encoding(path: Path) -> None:
    assert _copies_agree(envfactory.load(path), 3) > 0


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(text=S.small_contracts())
def test_a_copied_step_is_the_direct_encoding_on_drawn_contracts(
    text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("drawn") / "c.yaml"
    path.write_text(text, "utf-8")
    assert _copies_agree(envfactory.load(path), 2) > 0
