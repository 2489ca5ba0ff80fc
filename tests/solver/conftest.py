"""The solver suite's contracts with lists: the lending library and the tally."""

from __future__ import annotations

from pathlib import Path

import pytest

import envfactory

CONTRACTS = Path(__file__).parent / "contracts"


@pytest.fixture(scope="session")
def library() -> envfactory.Contract:
    return envfactory.load(CONTRACTS / "library.yaml")


@pytest.fixture(scope="session")
def tally() -> envfactory.Contract:
    return envfactory.load(CONTRACTS / "tally.yaml")
