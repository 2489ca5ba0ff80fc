"""A Python implementation of examples/tickets, correct, plus a copy whose listing hides items."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need

PRIORITIES = ("low", "normal", "high", "urgent")


class Tickets:
    def __init__(self) -> None:
        self.next_id = 1
        self.tickets: dict[int, dict[str, Any]] = {}

    def create_ticket(self, title: Any, priority: Any) -> dict[str, Any]:
        need(is_str(title) and 1 <= len(title) <= 120 and is_str(priority) and priority in PRIORITIES, 422)
        ticket = {
            "id": self.next_id,
            "title": title,
            "priority": priority,
            "status": "open",
            "assignee": None,
        }
        self.tickets[self.next_id] = ticket
        self.next_id += 1
        return dict(ticket)

    def _ticket(self, id: Any) -> dict[str, Any]:
        need(is_int(id), 422)
        need(id in self.tickets, 404, "no such ticket")
        return self.tickets[id]

    def assign(self, id: Any, assignee: Any) -> None:
        need(is_int(id) and is_str(assignee) and len(assignee) >= 1, 422)
        ticket = self._ticket(id)
        need(ticket["status"] != "closed", 409, "ticket is closed")
        ticket["assignee"] = assignee

    def start(self, id: Any) -> None:
        ticket = self._ticket(id)
        need(ticket["status"] == "open" and ticket["assignee"] is not None, 409)
        ticket["status"] = "in_progress"

    def resolve(self, id: Any) -> None:
        ticket = self._ticket(id)
        need(ticket["status"] == "in_progress", 409)
        ticket["status"] = "resolved"

    def close(self, id: Any) -> None:
        ticket = self._ticket(id)
        need(ticket["status"] == "resolved", 409)
        ticket["status"] = "closed"

    def list_open(self) -> dict[str, int]:
        return {"count": sum(1 for t in self.tickets.values() if t["status"] != "closed")}


class HidingTickets(Tickets):
    """Planted bug: the open-ticket count leaves out tickets in progress."""

    def list_open(self) -> dict[str, int]:
        return {"count": sum(1 for t in self.tickets.values() if t["status"] in ("open", "resolved"))}
