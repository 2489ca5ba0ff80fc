"""Shrinking a finding's call sequence further, by replaying it with steps left out.

Hypothesis shrinks the choices that produced a failure; when a step's choices depend on the
state (which keys are live), dropping an early step can shift the meaning of later choices and
the shrinker stops short of the shortest sequence. This pass works on the concrete calls instead:
it replays the sequence against a fresh target with one step (then each remaining step) left
out, and keeps the shorter sequence whenever the same finding (operation and kind) shows up.
A replay costs one call per step, so a 20-step finding costs at most a few hundred calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from envfactory.fuzz.findings import Finding, FindingError

if TYPE_CHECKING:
    from envfactory.fuzz.runner import Session

MAX_ROUNDS = 8


def replay(session: Session, calls: list[tuple[str, object]], key: tuple[str, str]) -> Finding | None:
    """Run ``calls`` against a fresh target; the finding with ``key`` if the sequence shows it."""
    from envfactory.fuzz.machine import Case

    case = Case(session, replay=True)
    for tool, value in calls:
        op = session.contract.operations[tool]
        try:
            case.send(op, value)
        except FindingError as err:
            return err.finding if err.finding.key == key else None
    return None


def minimize(session: Session, finding: Finding) -> Finding:
    """The shortest sequence (by one-step deletions, to a fixed point) that shows ``finding``."""
    best = finding
    for _ in range(MAX_ROUNDS):
        improved = False
        index = len(best.steps) - 2  # the last step is the failing call: keep it
        while index >= 0:
            calls = [(s.tool, s.input) for i, s in enumerate(best.steps) if i != index]
            found = replay(session, calls, best.key)
            if found is not None and len(found.steps) < len(best.steps):
                best = found
                improved = True
                index = min(index, len(best.steps) - 1) - 1
            else:
                index -= 1
        if not improved:
            break
    return best
