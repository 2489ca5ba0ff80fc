"""Cases against a held-out set's implementation built by hand (the chat server's above all),
shared by the fuzz tests that follow a case step by step (refills, values from elsewhere, keys
inside list items)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import envfactory
from envfactory.contracts.model import Contract
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.runner import Session
from envfactory.fuzz.targets import open_target

IMPLS = Path(__file__).resolve().parent / "impls"
CHAT = envfactory.load(IMPLS / "chat.yaml")


def impl_case(
    set_name: str, contract: Contract, cls: str, calls: Sequence[tuple[str, dict[str, Any]]]
) -> Case:
    """An adversarial case against ``cls`` of a held-out set's implementation
    (``impls/<set_name>_impl.py``), outside a run's rounds, that has sent ``calls``; its session
    knows its readers, counts and places."""
    target = open_target(f"python:{IMPLS / f'{set_name}_impl.py'}:{cls}", contract)
    session = Session(contract, target, mode="adversarial", time_budget=None)
    plans(session)
    case = Case(session, replay=True)
    for name, value in calls:
        case.send(contract.operations[name], value)
    return case


def chat_case(cls: str, calls: Sequence[tuple[str, dict[str, Any]]]) -> Case:
    """An adversarial case against the chat server ``cls`` (a class of ``chat_impl.py``)."""
    return impl_case("chat", CHAT, cls, calls)
