"""The CRM fixture server: read customers and orders, page through them, write notes and statuses."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, page
from fixtures_servers.crm.data import generate

DESCRIPTION = "Customers, their orders, and notes an agent can write"
DEFAULT_SIZE = 50
STATUSES = ("active", "churned", "paused")
CLOCK_START = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
CUSTOMER = IdForm("customer", "C-", 4, "search_customers finds a customer by name, email or company")
ORDER = IdForm("order", "O-", 5, "get_order(order_id) fetches it", holds="with the customer_id of who placed it")
NOTE = IdForm("note", "N-", 4, "list_notes(customer_id) lists a customer's notes")
IDS = (CUSTOMER, ORDER, NOTE)


@dataclass
class CrmState:
    customers: list[dict]
    orders: list[dict]
    notes: list[dict] = field(default_factory=list)

    def snapshot(self) -> dict:
        return {"customers": copies(self.customers), "orders": copies(self.orders), "notes": copies(self.notes)}

    def customer(self, customer_id: str) -> dict:
        return find(self.customers, "id", customer_id, CUSTOMER, IDS)


def search_customers(query: str, ctx: Context, limit: int = 10) -> list[dict]:
    """Find customers whose id, name, email or company contains `query` (case-insensitive): id, name, email,
    company (get_customer has the full record)."""
    needle = query.strip().lower()
    if not needle:
        raise ToolError("query must not be empty")
    hits = [c for c in state_of(ctx).customers
            if needle in c["id"].lower() or needle in c["name"].lower() or needle in c["email"]
            or needle in c["company"].lower()]
    return [{k: c[k] for k in ("id", "name", "email", "company")} for c in hits[:limit]]


def get_customer(customer_id: str, ctx: Context) -> dict:
    """Fetch one customer by its id (search_customers finds the id from a name): name, email, company, country,
    tier, status, created_at."""
    return dict(state_of(ctx).customer(customer_id))


def list_customers(ctx: Context, status: str | None = None, country: str | None = None, tier: str | None = None,
                   limit: int = 20, offset: int = 0) -> dict:
    """List customers, optionally filtered by status (active/churned/paused), country code or tier
    (free/pro/enterprise). Paged: returns {customers, total, next_offset}; next_offset is null at the end."""
    hits = [c for c in state_of(ctx).customers
            if (status is None or c["status"] == status) and (country is None or c["country"] == country)
            and (tier is None or c["tier"] == tier)]
    chunk, next_offset = page(hits, limit, offset)
    return {"customers": chunk, "total": len(hits), "next_offset": next_offset}


def list_orders(ctx: Context, customer_id: str | None = None, status: str | None = None,
                limit: int = 20, offset: int = 0) -> dict:
    """List orders, optionally for one customer and/or one status (shipped/pending/cancelled/refunded).
    Each order has id, customer_id, status, product, quantity, total (USD), ordered_at.
    Paged: returns {orders, total, next_offset}; next_offset is null at the end."""
    state = state_of(ctx)
    if customer_id is not None:
        state.customer(customer_id)
    hits = [o for o in state.orders
            if (customer_id is None or o["customer_id"] == customer_id) and (status is None or o["status"] == status)]
    chunk, next_offset = page(hits, limit, offset)
    return {"orders": chunk, "total": len(hits), "next_offset": next_offset}


def get_order(order_id: str, ctx: Context) -> dict:
    """Fetch one order by its id: customer_id, status, product, quantity, total (USD), ordered_at."""
    return dict(find(state_of(ctx).orders, "id", order_id, ORDER, IDS))


def add_note(customer_id: str, body: str, ctx: Context) -> dict:
    """Attach a note to a customer. Returns the note with its id."""
    state = state_of(ctx)
    state.customer(customer_id)
    if not body.strip():
        raise ToolError("note body must not be empty")
    note = {"id": f"N-{len(state.notes) + 1:04d}", "customer_id": customer_id, "body": body,
            "created_at": (CLOCK_START + timedelta(minutes=len(state.notes))).isoformat()}
    state.notes.append(note)
    return dict(note)


def list_notes(customer_id: str, ctx: Context) -> list[dict]:
    """All notes attached to a customer, oldest first."""
    state = state_of(ctx)
    state.customer(customer_id)
    return [dict(n) for n in state.notes if n["customer_id"] == customer_id]


def update_customer_status(customer_id: str, status: str, ctx: Context) -> dict:
    """Set a customer's status to active, churned or paused. Returns the updated customer."""
    customer = state_of(ctx).customer(customer_id)
    if status not in STATUSES:
        raise ToolError(f"status must be one of {', '.join(STATUSES)}, got '{status}'")
    customer["status"] = status
    return dict(customer)


TOOLS = make_tools(search_customers, get_customer, list_customers, list_orders, get_order, add_note, list_notes,
                   update_customer_status)


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh CRM with `size` customers (about 3 orders each), the same for the same seed."""
    customers, orders = generate(seed, size)
    return fixture_server("crm", "A CRM: customers, their orders, and notes about customers.", TOOLS,
                          CrmState(customers=copies(customers), orders=copies(orders)))
