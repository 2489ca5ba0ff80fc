"""The punch-card contract (``impls/punch.yaml``) and a session on it, shared by the tests of
effect conditions and of relayed routes."""

from __future__ import annotations

import sys
from pathlib import Path

import envfactory
from envfactory.fuzz.runner import Session
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
sys.path.insert(0, str(IMPLS))  # the implementations import their shared checks from there
PUNCH = envfactory.load(IMPLS / "punch.yaml")
PAST_CAP = "punch: condition 1 part 2 fails"
"""The punch past the cap: the card full again after its one free coffee (nine calls)."""


def punch_session(cls: str) -> Session:
    """A valid-mode session against ``punch_impl.py``'s class ``cls``, bounded by nothing."""
    target = open_target(f"python:{IMPLS / 'punch_impl.py'}:{cls}", PUNCH)
    return Session(PUNCH, target, mode="valid", time_budget=None)
