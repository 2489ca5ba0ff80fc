"""Faults: what can go wrong between an agent and the API it calls, as exceptions and payloads.

A time-out, a dropped connection or a 5xx never reaches the environment (its state does not
move), so retrying is always safe; a malformed response is a call that took effect but whose
body came back garbled (truncated JSON where an object was expected), so the agent must check
what it reads. an agent that recovers retries or works around it, an agent that does not crashes,
gives up, or carries on as if the call had worked. ``choose`` takes the decision from the fuzz
run's draws: most calls go through, and no call is faulted more than ``MAX_IN_A_ROW`` times in a
row, so that a retrying agent can always get through.
"""

from __future__ import annotations

from typing import Any

from envfactory.fuzz.draws import Source

KINDS = ("timeout", "dropped", "server_error", "malformed")
MAX_IN_A_ROW = 2
MAX_PER_EPISODE = 4
MALFORMED = '{"status": "ok", "result": '
"""The body of a malformed response: truncated JSON, where the agent expects an object."""


class ToolError(Exception):
    """An error response to a tool call: ``status`` (HTTP-like; 0 when no answer came) and text.

    Agents catch this one class for every failed call: a forbidden call, a time-out, a dropped
    connection, a server error.
    """

    def __init__(self, status: int, message: str, output: Any = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.output = output


class ToolTimeout(ToolError):
    """The call timed out (status 504); it did not take effect."""


class ConnectionDropped(ToolError):
    """The connection dropped before an answer came (status 0); the call did not take effect."""


class ServerError(ToolError):
    """The server answered 503; the call did not take effect."""


def choose(src: Source, *, in_a_row: int, so_far: int) -> str | None:
    """The fault for the next call, or None; shrinks towards no fault."""
    roll = src.integer(0, 9)
    if in_a_row >= MAX_IN_A_ROW or so_far >= MAX_PER_EPISODE or roll < 7:
        return None
    return KINDS[roll - 7] if roll < 9 else KINDS[2 + src.index(2)]


def raise_fault(kind: str, tool: str) -> Any:
    """Act out fault ``kind`` on a call of ``tool``: raise its error, or return a malformed body."""
    if kind == "timeout":
        raise ToolTimeout(504, f"{tool}: timed out")
    if kind == "dropped":
        raise ConnectionDropped(0, f"{tool}: connection dropped")
    if kind == "server_error":
        raise ServerError(503, f"{tool}: service unavailable")
    return MALFORMED


STATUS = {"timeout": 504, "dropped": 0, "server_error": 503, "malformed": 200}
