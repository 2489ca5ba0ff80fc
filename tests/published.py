"""The real-world corpus's documents, each loaded once per test process: Stripe's 417 operations
take seconds to load, and four modules serve, fuzz or check it. A contract is immutable, so the
tests that share one cannot change what another sees."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import envfactory

CORPUS = Path(__file__).resolve().parent / "realworld" / "corpus"


@cache
def loaded(path: Path) -> envfactory.Contract:
    """The contract of ``path`` (a document of the corpus, or any other), loaded once."""
    return envfactory.load(path)
