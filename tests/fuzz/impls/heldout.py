"""What the held-out sets' tests check of a set itself (not of the fuzzer): the correct
implementation answers each bug's hand-written trace as the contract says, and gives the fuzzer
no finding in a fixed number of examples (seed 0: the same run every time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import envfactory
from envfactory.contracts.errors import Location
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target
from envfactory.trajectory import parse_trajectory
from envfactory.verification import verify

IMPLS = Path(__file__).resolve().parent


def planted(module: Any, base: type) -> set[str]:
    """The names of the planted-bug classes of ``module``: the subclasses of its correct one."""
    return {
        name
        for name, cls in vars(module).items()
        if isinstance(cls, type) and issubclass(cls, base) and cls is not base
    }


def verdicts(name: str, correct: str, trace: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The verdicts of ``verify`` on the correct implementation's answers to ``trace``."""
    contract = envfactory.load(IMPLS / f"{name}.yaml")
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{correct}", contract)
    steps = []
    try:
        target.reset()
        for tool, kwargs in trace:
            response = target.call(tool, kwargs)
            steps.append(
                {"tool": tool, "input": kwargs, "output": response.output, "status": response.status}
            )
    finally:
        target.close()
    trajectory = parse_trajectory({"id": name, "steps": steps}, Location(name))
    return [r.verdict for r in verify(contract, [trajectory], allow_rejected=True)]


def findings(name: str, factory: str, examples: int) -> tuple[Any, ...]:
    """The fuzzer's findings against ``factory`` in ``examples`` test cases, seed 0."""
    contract = envfactory.load(IMPLS / f"{name}.yaml")
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{factory}", contract)
    try:
        return fuzz(contract, target, seed=0, max_examples=examples).findings
    finally:
        target.close()
