"""The trajectory format's shape as msgspec types: the fast way in for plain lines.

``msgspec`` decodes a JSON Lines line straight into these structs and checks its shape on the way
(field names, required fields, types, status range) in C, an order of magnitude faster than
checking the decoded dicts in Python. It is only the fast path: ``decode`` answers None for any
line these types refuse, and the caller parses that line the thorough way, which says precisely
what is wrong. The types are therefore strict where the format is strict and refuse whatever the
thorough path would have to look at more closely (an integral float status, for instance), so the
two paths can never disagree on a line that both accept. Kept in step with ``TRAJECTORY_FIELDS``
and ``STEP_FIELDS`` in ``envfactory.trajectory._shape`` (a test checks it).

The decoded structs are the model's steps as they are (``DecodedSteps``): a ``WireStep`` reads
like a ``Step`` (``tool``, ``input``, ``status``, ``meta``, ``has_output``), so the verifier checks
them without building a ``Step`` per call; a ``Step`` is made only for a reader that indexes or
iterates the trajectory's steps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, overload

import msgspec

from envfactory.trajectory._model import Step

Status = Annotated[int, msgspec.Meta(ge=100, le=599)]
Tool = Annotated[str, msgspec.Meta(min_length=1)]


class WireStep(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One step as written; ``output`` is ``UNSET`` where the line has none (unknown output)."""

    tool: Tool
    input: Any
    output: Any = msgspec.UNSET
    status: Status | None = None
    meta: dict[str, Any] | None = None

    @property
    def has_output(self) -> bool:
        return self.output is not msgspec.UNSET

    def model(self) -> Step:
        """The ``Step`` this struct stands for (a missing output is ``None``, ``has_output`` False)."""
        if self.output is msgspec.UNSET:
            return Step(self.tool, self.input, None, self.status, False, self.meta)
        return Step(self.tool, self.input, self.output, self.status, True, self.meta)


class WireTrajectory(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One trajectory as written."""

    steps: list[WireStep]
    id: str | None = None
    contract: str | None = None
    seed: int | None = None
    initial: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


class DecodedSteps(Sequence[Step]):
    """A trajectory's steps as the fast decoder left them: ``wire`` holds the structs, and the
    ``Step`` models are made on the first access that needs them (indexing, iterating, equality),
    once. ``may_hold_holes`` is False: the fast decoder only reads lines without a hole (the
    verifier skips its own search for holes). Equal to the tuple of its steps; pickles as one."""

    __slots__ = ("_models", "wire")
    may_hold_holes = False

    def __init__(self, wire: list[WireStep]) -> None:
        self.wire = wire
        self._models: tuple[Step, ...] | None = None

    def models(self) -> tuple[Step, ...]:
        models = self._models
        if models is None:
            models = self._models = tuple(s.model() for s in self.wire)
        return models

    def __len__(self) -> int:
        return len(self.wire)

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Step, ...]: ...

    def __getitem__(self, index: int | slice) -> Step | tuple[Step, ...]:
        return self.models()[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(self.models())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DecodedSteps):
            other = other.models()
        return isinstance(other, tuple) and self.models() == other

    def __hash__(self) -> int:
        return hash(self.models())

    def __repr__(self) -> str:
        return repr(self.models())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.models(),))


_DECODER = msgspec.json.Decoder(WireTrajectory)
UNSET = msgspec.UNSET


_STEP_DECODER = msgspec.json.Decoder(WireStep)


def decode_step(data: bytes) -> Step | None:
    """One step's text (an item of a streamed ``steps`` list) as a ``Step``, or None where it
    needs the thorough path, as ``decode``."""
    try:
        return _STEP_DECODER.decode(data).model()
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None


DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
"""What ``_DECODER.decode`` raises for a line that needs the thorough path."""
decode_strict = _DECODER.decode
"""``decode`` that raises ``DECODE_ERRORS`` instead of answering None: for a reader's hot loop."""


def decode(data: bytes) -> WireTrajectory | None:
    """The line's trajectory, or None where its shape (or its JSON) needs the thorough path."""
    try:
        return _DECODER.decode(data)
    except DECODE_ERRORS:
        return None


FIELDS = (tuple(WireTrajectory.__struct_fields__), tuple(WireStep.__struct_fields__))
"""The field names these types accept, for the test that keeps them in step with the format."""

__all__ = [
    "DECODE_ERRORS",
    "FIELDS",
    "UNSET",
    "DecodedSteps",
    "WireStep",
    "WireTrajectory",
    "decode",
    "decode_step",
    "decode_strict",
]
