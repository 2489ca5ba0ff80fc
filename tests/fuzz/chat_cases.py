"""The chat server's contract, and cases against one of its implementations built by hand,
shared by the fuzz tests that follow a case step by step (refills, values from elsewhere)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import envfactory
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.runner import Session
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
CHAT = envfactory.load(IMPLS / "chat.yaml")


def chat_case(cls: str, calls: Sequence[tuple[str, dict[str, Any]]]) -> Case:
    """An adversarial case against the chat server ``cls`` (a class of ``chat_impl.py``), outside a
    run's rounds, that has sent ``calls``; its session knows its readers, counts and places."""
    target = open_target(f"python:{IMPLS / 'chat_impl.py'}:{cls}", CHAT)
    session = Session(CHAT, target, mode="adversarial", time_budget=None)
    plans(session)
    case = Case(session, replay=True)
    for name, value in calls:
        case.send(CHAT.operations[name], value)
    return case
