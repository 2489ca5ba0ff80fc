"""The trajectory models: ``Trajectory``, ``Step`` and ``Hole``, plain frozen values.

They live apart from the readers and writers so that those can build them without importing
``envfactory.trajectory``, which re-exports all of it as the published module (no import cycle).
Imports nothing from envfactory beyond ``envfactory.contracts.errors``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from envfactory.contracts.errors import Location

IN_MEMORY = Location("<memory>")


@attrs.frozen(slots=True)
class Hole:
    """An unknown value in a trajectory, written ``{"$var": name}``; equal names are equal values."""

    name: str

    def __repr__(self) -> str:
        return f"Hole({self.name!r})"


@attrs.frozen(slots=True)
class Step:
    """One tool call: its input, and its output and status where they were recorded.

    ``has_output`` tells a recorded ``null`` output (``output=None, has_output=True``) from an
    unknown one. Holes inside ``input`` and ``output`` are ``Hole`` instances.
    """

    tool: str
    input: Any
    output: Any = None
    status: int | None = None
    has_output: bool = False
    meta: Mapping[str, Any] | None = None

    @property
    def has_holes(self) -> bool:
        """True when the input, or the recorded output, holds an unknown value."""
        if _any_hole(self.input):
            return True
        return self.has_output and _any_hole(self.output)


@attrs.frozen(slots=True)
class Trajectory:
    """A recorded sequence of tool calls, with the contract, seed and initial state it assumes.

    ``source`` is where it was read (file and line); ``id`` defaults to ``"<file-stem>:<line>"``.
    """

    id: str
    steps: tuple[Step, ...]
    contract: str | None = None
    seed: int | None = None
    initial: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    source: Location = attrs.field(factory=lambda: IN_MEMORY)

    @property
    def has_holes(self) -> bool:
        """True when any step or the initial state holds an unknown value."""
        return any(step.has_holes for step in self.steps) or _any_hole(self.initial)

    def holes(self) -> tuple[str, ...]:
        """The distinct hole names, in order of first appearance (initial state first)."""
        seen: dict[str, None] = {}
        for hole in iter_holes(self.initial):
            seen.setdefault(hole.name)
        for step in self.steps:
            for hole in iter_holes(step.input):
                seen.setdefault(hole.name)
            if step.has_output:
                for hole in iter_holes(step.output):
                    seen.setdefault(hole.name)
        return tuple(seen)


BROKEN_ARGUMENTS = "invalid_arguments"
"""The step ``meta`` key that marks arguments an importer could not decode (the reason is its
value): the agent's finding, which ``verify`` reports as ``input_schema`` at that step."""


def is_native_record(data: Any) -> bool:
    """Whether one decoded record is a trajectory in the native format (it has ``steps``), not a
    log another format wrote (an MCP JSON-RPC message, a BFCL entry): what ``auto`` decides from a
    file's first record, without loading the importers."""
    return (
        isinstance(data, dict)
        and data.get("jsonrpc") != "2.0"
        and "ground_truth" not in data
        and isinstance(data.get("steps"), list)
    )


def iter_holes(value: Any) -> Iterator[Hole]:
    """Every ``Hole`` inside a value, depth first, in document order (repeats included)."""
    if isinstance(value, Hole):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_holes(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_holes(item)


def _any_hole(value: Any) -> bool:
    return next(iter_holes(value), None) is not None


# The published home of the models: what ``type()``, ``help()`` and pickles name, so that they
# survive a move of this private module (``envfactory.trajectory`` re-exports all three).
for _model_class in (Hole, Step, Trajectory):
    _model_class.__module__ = "envfactory.trajectory"


def fill_holes(value: Any, values: Mapping[str, Any]) -> Any:
    """``value`` with each ``Hole`` named in ``values`` replaced by its value (others kept)."""
    if isinstance(value, Hole):
        return values.get(value.name, value)
    if isinstance(value, dict):
        return {k: fill_holes(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [fill_holes(v, values) for v in value]
    return value


def completion_message(holes: Mapping[str, Any], outputs: int = 0, assumptions: Sequence[str] = ()) -> str:
    """How ``verify`` states a feasible trajectory's completion: each hole's value (JSON, cut at
    60 characters), how many unknown outputs were filled, and what it assumes of the state."""
    parts = [f"{name} = {short_json(value)}" for name, value in holes.items()]
    if outputs:
        parts.append(f"{outputs} unknown output{'' if outputs == 1 else 's'} filled")
    parts.extend(assumptions)
    return "a completion exists" + (": " + ", ".join(parts) if parts else "")


def short_json(value: Any) -> str:
    """A value as JSON for a one-line message, cut at 60 characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."
