"""The trajectory format's shape as msgspec types: the fast way in for plain lines.

``msgspec`` decodes a JSON Lines line straight into these structs and checks its shape on the way
(field names, required fields, types, status range) in C, an order of magnitude faster than
checking the decoded dicts in Python. It is only the fast path: ``decode`` answers None for any
line these types refuse, and the caller parses that line the thorough way, which says precisely
what is wrong. The types are therefore strict where the format is strict and refuse whatever the
thorough path would have to look at more closely (an integral float status, for instance), so the
two paths can never disagree on a line that both accept. Kept in step with ``TRAJECTORY_FIELDS``
and ``STEP_FIELDS`` in ``envfactory.trajectory._shape`` (a test checks it).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

Status = Annotated[int, msgspec.Meta(ge=100, le=599)]
Tool = Annotated[str, msgspec.Meta(min_length=1)]


class WireStep(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One step as written; ``output`` is ``UNSET`` where the line has none (unknown output)."""

    tool: Tool
    input: Any
    output: Any = msgspec.UNSET
    status: Status | None = None
    meta: dict[str, Any] | None = None


class WireTrajectory(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One trajectory as written."""

    steps: list[WireStep]
    id: str | None = None
    contract: str | None = None
    seed: int | None = None
    initial: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


_DECODER = msgspec.json.Decoder(WireTrajectory)
UNSET = msgspec.UNSET


def decode(data: bytes) -> WireTrajectory | None:
    """The line's trajectory, or None where its shape (or its JSON) needs the thorough path."""
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None


FIELDS = (tuple(WireTrajectory.__struct_fields__), tuple(WireStep.__struct_fields__))
"""The field names these types accept, for the test that keeps them in step with the format."""

__all__ = ["FIELDS", "UNSET", "WireStep", "WireTrajectory", "decode"]
