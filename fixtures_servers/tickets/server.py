"""The tickets server. `get_ticket_history` is flaky on purpose (a task family tests recovery): the first
call for each ticket fails with a transient upstream error, a retry succeeds — deterministically."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, page

DESCRIPTION = "An issue tracker: create, update, comment on and close tickets (one flaky tool)"
DEFAULT_SIZE = 40
STATUSES = ("open", "in_progress", "closed")
PRIORITIES = ("low", "medium", "high", "urgent")
ASSIGNEES = ("ana", "ben", "chloe", "dev", "eli")
TOPICS = ("Login fails with SSO", "Invoice total wrong", "Export to CSV times out", "Webhook retries flood",
          "Password reset email missing", "Dashboard slow to load", "API returns 500 on search",
          "Mobile app crashes on upload", "Refund not processed", "Duplicate charges on renewal")
CLOCK = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
TICKET = IdForm("ticket", "T-", 4, "search_tickets finds tickets by title, list_tickets by status, priority, "
                "assignee or customer")


@functools.lru_cache(maxsize=16)
def generate(seed: int, size: int) -> tuple[dict, ...]:
    rng = random.Random(seed * 104729 + 11)
    tickets = []
    for i in range(1, size + 1):
        tickets.append({
            "id": f"T-{1000 + i}", "title": rng.choice(TOPICS), "status": rng.choice(STATUSES),
            "priority": rng.choices(PRIORITIES, weights=(3, 4, 2, 1))[0], "assignee": rng.choice(ASSIGNEES),
            "customer_id": f"C-{rng.randrange(1, 51):04d}", "resolution": "",
            "created_at": (CLOCK - timedelta(days=rng.randrange(1, 200))).date().isoformat(),
        })
    return tuple(tickets)


@dataclass
class TicketsState:
    tickets: list[dict]
    comments: list[dict] = field(default_factory=list)
    history_attempts: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> dict:
        return {"tickets": copies(self.tickets), "comments": copies(self.comments)}

    def ticket(self, ticket_id: str) -> dict:
        return find(self.tickets, "id", ticket_id, TICKET)


def _check(value: str | None, allowed: tuple[str, ...], name: str) -> None:
    if value is not None and value not in allowed:
        raise ToolError(f"{name} must be one of {', '.join(allowed)}, got '{value}'")


def list_tickets(ctx: Context, status: str | None = None, priority: str | None = None, assignee: str | None = None,
                 customer_id: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """Tickets filtered by status (open/in_progress/closed), priority (low/medium/high/urgent), assignee or
    customer_id. Paged: returns {tickets, total, next_offset}; next_offset is null on the last page."""
    _check(status, STATUSES, "status")
    _check(priority, PRIORITIES, "priority")
    hits = [t for t in state_of(ctx).tickets
            if (status is None or t["status"] == status) and (priority is None or t["priority"] == priority)
            and (assignee is None or t["assignee"] == assignee) and (customer_id is None or t["customer_id"] == customer_id)]
    chunk, next_offset = page(hits, limit, offset)
    return {"tickets": chunk, "total": len(hits), "next_offset": next_offset}


def get_ticket(ticket_id: str, ctx: Context) -> dict:
    """One ticket by its id, with its comments."""
    state = state_of(ctx)
    ticket = dict(state.ticket(ticket_id))
    ticket["comments"] = [dict(c) for c in state.comments if c["ticket_id"] == ticket_id]
    return ticket


def search_tickets(query: str, ctx: Context, limit: int = 10) -> list[dict]:
    """Tickets whose title contains `query` (case-insensitive): id, title, status, priority."""
    needle = query.strip().lower()
    if not needle:
        raise ToolError("query must not be empty")
    hits = [t for t in state_of(ctx).tickets if needle in t["title"].lower()]
    return [{k: t[k] for k in ("id", "title", "status", "priority")} for t in hits[:limit]]


def create_ticket(title: str, priority: str, ctx: Context, customer_id: str | None = None,
                  assignee: str | None = None) -> dict:
    """Open a new ticket. priority is low/medium/high/urgent. Returns the ticket with its new id."""
    state = state_of(ctx)
    _check(priority, PRIORITIES, "priority")
    _check(assignee, ASSIGNEES, "assignee")
    if not title.strip():
        raise ToolError("title must not be empty")
    ticket = {"id": f"T-{1000 + len(state.tickets) + 1}", "title": title, "status": "open", "priority": priority,
              "assignee": assignee or "", "customer_id": customer_id or "", "resolution": "",
              "created_at": CLOCK.date().isoformat()}
    state.tickets.append(ticket)
    return dict(ticket)


def update_ticket(ticket_id: str, ctx: Context, status: str | None = None, priority: str | None = None,
                  assignee: str | None = None) -> dict:
    """Change a ticket's status (open/in_progress; use close_ticket to close), priority or assignee."""
    ticket = state_of(ctx).ticket(ticket_id)
    if status == "closed":
        raise ToolError("use close_ticket to close a ticket (it needs a resolution)")
    _check(status, STATUSES, "status")
    _check(priority, PRIORITIES, "priority")
    _check(assignee, ASSIGNEES, "assignee")
    for key, value in (("status", status), ("priority", priority), ("assignee", assignee)):
        if value is not None:
            ticket[key] = value
    return dict(ticket)


def add_comment(ticket_id: str, body: str, ctx: Context) -> dict:
    """Add a comment to a ticket."""
    state = state_of(ctx)
    state.ticket(ticket_id)
    comment = {"id": f"CM-{len(state.comments) + 1:04d}", "ticket_id": ticket_id, "body": body}
    state.comments.append(comment)
    return dict(comment)


def close_ticket(ticket_id: str, resolution: str, ctx: Context) -> dict:
    """Close a ticket with a resolution text."""
    ticket = state_of(ctx).ticket(ticket_id)
    if ticket["status"] == "closed":
        raise ToolError(f"ticket '{ticket_id}' is already closed")
    ticket.update(status="closed", resolution=resolution)
    return dict(ticket)


def get_ticket_history(ticket_id: str, ctx: Context) -> list[dict]:
    """The status changes of a ticket, oldest first. May fail transiently (503); retrying helps."""
    state = state_of(ctx)
    ticket = state.ticket(ticket_id)
    attempts = state.history_attempts.get(ticket_id, 0) + 1
    state.history_attempts[ticket_id] = attempts
    if attempts == 1:
        raise ToolError("503 Service Unavailable: history backend timed out, please retry")
    rng = random.Random(ticket_id)
    changes, status = [], "open"
    for step in ("in_progress", ticket["status"]):
        if step != status:
            changes.append({"from": status, "to": step, "by": rng.choice(ASSIGNEES)})
            status = step
    return changes


TOOLS = make_tools(list_tickets, get_ticket, search_tickets, create_ticket, update_ticket, add_comment, close_ticket,
                   get_ticket_history)


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh tracker with `size` tickets, the same for the same seed."""
    return fixture_server("tickets", "An issue tracker for customer support tickets.", TOOLS,
                          TicketsState(copies(generate(seed, size))))
