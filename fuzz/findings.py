"""Findings: what a fuzz run reports, and how each one becomes a trajectory file.

A finding is one way a target (or an agent) broke the contract, with the minimal call sequence
that shows it. Findings are deduplicated by ``(operation, kind)``; for each key the shortest
sequence seen (Hypothesis shrinks towards it) is kept. ``FindingError`` carries a finding out of
a test case; each key gets its own exception subclass so that Hypothesis tells the bugs apart
and shrinks every one of them, not only the first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import attrs
import orjson

from envfactory.trajectory import Step, Trajectory, to_json

KINDS: dict[str, str] = {
    "valid_rejected": "a valid call was rejected",
    "divergence": "the target's state diverged from the model (a valid call got another clause's error)",
    "forbidden_accepted": "a forbidden call was accepted",
    "wrong_status": "a forbidden call was rejected with the wrong status",
    "crash": "the target crashed (an exception, a 5xx, or no answer)",
    "hang": "a call did not return within the per-call time limit (an isolated python: target)",
    "resource": "a call ran out of the memory limit (an isolated python: target)",
    "output_schema": "an output outside its schema",
    "postcondition": "an output that breaks an ensures clause",
    "invariant": "a state, as the responses show it, that breaks an invariant",
    "agent_crash": "the agent raised an exception",
    "agent_violation": "the agent made a call that breaks the contract",
    "goal_not_reached": "the agent returned without reaching its goal",
    "no_progress": "the agent made more calls than the step limit",
}
"""Every finding kind, with the sentence a summary shows for it."""


Key = tuple[str, str, str]
"""What makes findings distinct: (operation, kind, cause)."""

CAUSE = re.compile(r"(?P<type>[A-Za-z_][\w.]*): .*\(at (?P<where>[^()]*) in [^()]*\)$", re.S)


def crash_cause(error: str | None, status: int | None) -> str:
    """A crash's cause from the target's answer: the exception type and raising line that
    ``targets.describe_exception`` wrote, else the status (a 5xx, no answer)."""
    match = CAUSE.match((error or "").removeprefix("crash: "))
    if match is not None:
        return f"{match['type']} at {match['where']}"
    return f"status {status}"


def _weight(value: Any) -> int:
    """How big an input is, as JSON (integers past 64 bits, which orjson refuses, included)."""
    try:
        return len(orjson.dumps(value, default=repr))
    except TypeError:
        return len(json.dumps(value, default=repr))


@attrs.frozen(slots=True)
class Finding:
    """One distinct way the target broke the contract, with the call sequence that shows it."""

    kind: str
    operation: str
    message: str
    steps: tuple[Step, ...]
    expected: str
    status: int | None = None
    clause: str | None = None
    location: str | None = None
    cause: str = ""
    """For a crash, the exception's type and where it was raised (``OverflowError at
    math_api.py:88``), so that one reported ``ValueError`` does not hide another crash in the same
    operation; empty for the other kinds."""

    @property
    def key(self) -> Key:
        return (self.operation, self.kind, self.cause)

    @property
    def size(self) -> tuple[int, int]:
        """Shorter sequences first, then smaller inputs: what "minimal" means here."""
        weight = sum(_weight(s.input) for s in self.steps)
        return (len(self.steps), weight)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "operation": self.operation,
            "message": self.message,
            "expected": self.expected,
            "status": self.status,
            "clause": self.clause,
            "location": self.location,
            "cause": self.cause or None,
            "steps": len(self.steps),
            # the calls themselves, as a trajectory file writes them: a report read by a program
            # needs the trace as much as a person does
            "trace": to_json(Trajectory(id=self.operation, steps=self.steps))["steps"],
        }

    def trajectory(
        self, *, id: str, contract: str | None, seed: int | None, command: str | None
    ) -> Trajectory:
        meta: dict[str, Any] = {
            "finding": self.kind,
            "operation": self.operation,
            "message": self.message,
            "expected": self.expected,
        }
        if self.clause is not None:
            meta["clause"] = self.clause
        if self.location is not None:
            meta["location"] = self.location
        if self.cause:
            meta["cause"] = self.cause
        if command is not None:
            meta["reproduce"] = command
        return Trajectory(id=id, steps=self.steps, contract=contract, seed=seed, meta=meta)


class FindingError(AssertionError):
    """Raised inside a test case to end it with a finding (Hypothesis then shrinks it)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(f"{finding.kind} in {finding.operation}: {finding.message}")
        self.finding = finding


_ERROR_TYPES: dict[Key, type[FindingError]] = {}


def error_for(finding: Finding) -> FindingError:
    """A ``FindingError`` of a class of its own per finding key (Hypothesis tells distinct bugs
    apart by the exception's type and where it was raised, so each key is shrunk on its own)."""
    cls = _ERROR_TYPES.get(finding.key)
    if cls is None:
        slug = re.sub(r"\W", "_", f"{finding.operation}_{finding.kind}")
        cls = type(f"Finding_{slug}", (FindingError,), {"__module__": __name__})
        _ERROR_TYPES[finding.key] = cls
    return cls(finding)


class Findings:
    """The distinct findings of a run, each the smallest sequence seen for its key."""

    def __init__(self) -> None:
        self.by_key: dict[Key, Finding] = {}
        self.order: list[Key] = []
        self.first_seen: dict[Key, float] = {}

    def add(self, finding: Finding, elapsed: float = 0.0) -> None:
        old = self.by_key.get(finding.key)
        if old is None:
            self.order.append(finding.key)
            self.first_seen[finding.key] = elapsed
            self.by_key[finding.key] = finding
        elif finding.size < old.size:
            self.by_key[finding.key] = finding

    def discard(self, key: Key) -> None:
        if self.by_key.pop(key, None) is not None:
            self.order.remove(key)
            del self.first_seen[key]

    def __len__(self) -> int:
        return len(self.by_key)

    def __iter__(self) -> Any:
        return iter(self.all())

    def all(self) -> list[Finding]:
        return [self.by_key[k] for k in self.order]


def trajectories(
    findings: Iterable[Finding], *, contract: str | None, seed: int | None, command: str | None
) -> list[Trajectory]:
    """One trajectory per finding, ids ``finding-1``, ``finding-2``..."""
    return [
        f.trajectory(id=f"finding-{i}-{f.operation}-{f.kind}", contract=contract, seed=seed, command=command)
        for i, f in enumerate(findings, 1)
    ]
