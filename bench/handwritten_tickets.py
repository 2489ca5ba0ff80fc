"""A hand-written Python checker of the bundled tickets contract (examples/tickets/tickets.yaml),
every clause written out: what ``envfactory verify`` is measured against in bench_verify.py
(issue 17 item 6). It reads JSON Lines, checks each step in the verifier's order (tool, input
schema, requires, effects, output schema, ensures, invariants) and answers per trajectory
``(id, verdict, step, kind)``, or ``None`` for a trajectory outside what it handles (holes, an
``initial`` state, an error status, a missing output its ensures read); tests/verify/
test_verify_handwritten.py checks it agrees with envfactory on generated and mutated files.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

PRIORITIES = frozenset({"low", "normal", "high", "urgent"})
STATUSES = frozenset({"open", "in_progress", "resolved", "closed"})
TICKET_FIELDS = frozenset({"id", "title", "priority", "status", "assignee"})
ID_ONLY = frozenset({"id"})
ASSIGN_FIELDS = frozenset({"id", "assignee"})
CREATE_FIELDS = frozenset({"title", "priority"})

Verdict = tuple[str, str, int | None, str | None]


class Unsupported(Exception):
    """Something this checker does not handle (the test skips such trajectories)."""


def _holes(value: Any) -> bool:
    if isinstance(value, dict):
        return "$var" in value or any(_holes(v) for v in value.values())
    if isinstance(value, list):
        return any(_holes(v) for v in value)
    return False


def _is_int(value: Any) -> bool:
    return type(value) is int


def _valid_input(tool: str, value: Any) -> bool:
    if type(value) is not dict:
        return False
    if tool == "create_ticket":
        if not value.keys() <= CREATE_FIELDS or len(value) != 2:
            return False
        title = value["title"]
        return type(title) is str and 1 <= len(title) <= 120 and value["priority"] in PRIORITIES
    if tool == "assign":
        if value.keys() != ASSIGN_FIELDS:
            return False
        assignee = value["assignee"]
        return _is_int(value["id"]) and type(assignee) is str and len(assignee) >= 1
    if tool == "list_open":
        return not value
    return value.keys() == ID_ONLY and _is_int(value["id"])


def _valid_ticket(out: Any) -> bool:
    return (
        type(out) is dict
        and out.keys() == TICKET_FIELDS
        and _is_int(out["id"])
        and type(out["title"]) is str
        and out["priority"] in PRIORITIES
        and out["status"] in STATUSES
        and (out["assignee"] is None or type(out["assignee"]) is str)
    )


# the status a ticket must have for each transition, and the one it gets
MOVES = {
    "start": ("open", "in_progress"),
    "resolve": ("in_progress", "resolved"),
    "close": ("resolved", "closed"),
}


def check(traj: dict[str, Any]) -> Verdict | None:
    """The verdict on one trajectory (a decoded line), or None when it is outside this checker."""
    ident = traj.get("id", "")
    if "initial" in traj:
        return None
    tickets: dict[int, list[Any]] = {}  # id -> [status, assignee]
    next_id = 1
    not_closed = 0
    for index, step in enumerate(traj["steps"]):
        tool = step["tool"]
        value = step.get("input")
        status = step.get("status")
        if (status is not None and status >= 400) or _holes(value) or _holes(step.get("output")):
            return None
        if tool not in ("create_ticket", "assign", "start", "resolve", "close", "list_open"):
            return (ident, "invalid", index, "unknown_tool")
        if not _valid_input(tool, value):
            return (ident, "invalid", index, "input_schema")
        if tool == "create_ticket":
            if "output" not in step:
                return None
            tickets[next_id] = ["open", None]
            next_id += 1
            not_closed += 1
            out = step["output"]
            if not _valid_ticket(out):
                return (ident, "invalid", index, "output_schema")
            if out["id"] != next_id - 1 or out["status"] != "open":
                return (ident, "invalid", index, "postcondition")
            continue  # invariants: the new key is next_id - 1 < next_id; its status is open
        if tool == "list_open":
            if "output" not in step:
                return None
            out = step["output"]
            if type(out) is not dict or "count" not in out or not _is_int(out["count"]):
                return (ident, "invalid", index, "output_schema")
            if out["count"] != not_closed:
                return (ident, "invalid", index, "postcondition")
            continue
        ticket = tickets.get(value["id"])
        if ticket is None:
            return (ident, "invalid", index, "precondition")
        if tool == "assign":
            if ticket[0] == "closed":
                return (ident, "invalid", index, "precondition")
            ticket[1] = value["assignee"]
        else:
            before, after = MOVES[tool]
            if ticket[0] != before or (tool == "start" and ticket[1] is None):
                return (ident, "invalid", index, "precondition")
            ticket[0] = after
            if after == "closed":
                not_closed -= 1
        # invariant re-check at the written key: in progress needs an assignee (the key < next_id
        # invariant holds: keys are only ever made from next_id before it grows)
        if ticket[0] == "in_progress" and ticket[1] is None:
            return (ident, "invalid", index, "invariant")
    return (ident, "valid", None, None)


def check_file(path: str) -> Iterator[Verdict | None]:
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield check(orjson.loads(line))


def main(argv: list[str]) -> None:
    """``python bench/handwritten_tickets.py FILE``: check a file, print the verdict counts (as a
    whole process, the way bench_verify.py runs it against ``envfactory verify``)."""
    counts: dict[str, int] = {}
    for verdict in check_file(argv[0]):
        key = "unsupported" if verdict is None else verdict[1]
        counts[key] = counts.get(key, 0) + 1
    print(counts)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
