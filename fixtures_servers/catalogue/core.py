"""The eight tools the catalogue's tasks need, written by hand over the records of `data`: directory lookups, account
and invoice queries, and a ticket tool that writes. Every catalogue size has them; the rest of a catalogue is
distractors (`operations`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastmcp.exceptions import ToolError

from fixtures_servers._common import IdForm, find
from fixtures_servers.catalogue import data
from fixtures_servers.catalogue.generic import paged
from fixtures_servers.catalogue.operations import ToolDef

EMPLOYEE = IdForm("employee", "E-", 4, "find_employees finds one by name")
ACCOUNT = IdForm("account", "AC-", 4, "find_accounts finds one by name", "its owner_id and billing_contact")
TICKET = IdForm("ticket", "HD-", 4, "search_tickets finds them by account, status or assignee")
IDS = (EMPLOYEE, ACCOUNT, TICKET)


def _obj(properties: dict[str, Any], required: tuple[str, ...] = (), description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if description:
        schema["description"] = description
    return schema


def _s(description: str = "", **extra: Any) -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {}), **extra}


def _paging(default: int, most: int) -> dict[str, Any]:
    return {"limit": {"type": "integer", "description": f"Results per page (1-{most}).", "default": default,
                      "minimum": 1, "maximum": most},
            "cursor": _s("next_cursor of the previous page; omit for the first page.")}


def _rows(state, collection: str) -> list[dict]:
    return state.collection(collection)


# ---- handlers: (state of the server, arguments) -> result ----

def find_employees(state, args: dict) -> dict:
    query = (args.get("query") or "").lower()
    hits = [{k: e[k] for k in ("id", "name", "email", "title", "department", "location")}
            for e in _rows(state, "employees")
            if query in e["name"].lower() and args.get("department") in (None, e["department"])
            and args.get("location") in (None, e["location"])]
    return paged(hits, "employees", args.get("limit", 20), args.get("cursor"), 50)


def get_employee(state, args: dict) -> dict:
    employees = _rows(state, "employees")
    record = dict(find(employees, "id", args["employee_id"], EMPLOYEE, IDS))
    include = args.get("include") or []
    if "manager" in include and record["manager_id"]:
        manager = find(employees, "id", record["manager_id"], EMPLOYEE)
        record["manager"] = {k: manager[k] for k in ("id", "name", "email")}
    if "direct_reports" in include:
        record["direct_reports"] = [e["id"] for e in employees if e["manager_id"] == record["id"]]
    return record


def find_accounts(state, args: dict) -> dict:
    query, where = (args.get("query") or "").lower(), args.get("filter") or {}
    hits = [{k: a[k] for k in ("id", "name", "region", "tier")} for a in _rows(state, "accounts")
            if query in a["name"].lower() and all(a.get(k) == v for k, v in where.items())]
    return paged(hits, "accounts", args.get("limit", 10), args.get("cursor"), 50)


def get_account(state, args: dict) -> dict:
    record = find(_rows(state, "accounts"), "id", args["account_id"], ACCOUNT, IDS)
    return {**record, "billing_contact": dict(record["billing_contact"])}


def list_invoices(state, args: dict) -> dict:
    issued = args.get("issued") or {}
    hits = [i for i in _rows(state, "invoices")
            if args.get("account_id") in (None, i["account_id"]) and args.get("status") in (None, i["status"])
            and issued.get("from", "") <= i["issued_on"] and i["issued_on"] <= issued.get("to", "9999")]
    return paged(hits, "invoices", args.get("limit", 25), args.get("cursor"), 100)


def search_tickets(state, args: dict) -> dict:
    query, where = (args.get("query") or "").lower(), args.get("filter") or {}
    hits = [{k: t[k] for k in ("id", "subject", "account_id", "assignee_id", "priority", "status", "tags")}
            for t in _rows(state, "tickets")
            if query in t["subject"].lower() and all(t.get(k) == v for k, v in where.items())]
    return paged(hits, "tickets", args.get("limit", 25), args.get("cursor"), 100)


def get_ticket(state, args: dict) -> dict:
    record = dict(find(_rows(state, "tickets"), "id", args["ticket_id"], TICKET, IDS))
    record["tags"] = list(record["tags"])
    comments = record.pop("comments")
    if args.get("include_comments"):
        record["comments"] = [dict(c) for c in comments]
    return record


def update_ticket(state, args: dict) -> dict:
    ticket = find(_rows(state, "tickets"), "id", args["ticket_id"], TICKET, IDS)
    changes, comment = dict(args.get("changes") or {}), args.get("comment")
    if not changes and not comment:
        raise ToolError("nothing to update: give changes, a comment, or both")
    assignee = changes.get("assignee_id")
    if assignee is not None and assignee not in {e["id"] for e in data.generate(state.seed)["employees"]}:
        raise ToolError(f"assignee_id '{assignee}' is not an employee id (find_employees finds one by name)")
    for key, value in changes.items():
        ticket[key] = sorted(set(value)) if key == "tags" else value
    if comment:
        ticket["comments"].append({"body": comment["body"], "public": bool(comment.get("public", False))})
    return {k: (list(v) if isinstance(v, list) else v) for k, v in ticket.items() if k != "comments"}


# ---- what tools/list shows ----

_DEPARTMENT = {"type": "string", "enum": list(data.DEPARTMENTS)}
_TICKET_FILTER = _obj({"status": {"type": "string", "enum": list(data.TICKET_STATUSES)},
                       "priority": {"type": "string", "enum": list(data.PRIORITIES)},
                       "account_id": _s("Only tickets of this account (AC-....)."),
                       "assignee_id": _s("Only tickets assigned to this employee (E-....).")},
                      description="Exact-match filters, combined with AND.")

CORE: tuple[tuple[ToolDef, Callable[[Any, dict], dict]], ...] = (
    (ToolDef("find_employees", "cat_people", "Search the employee directory by name, department or office. Returns "
             "summaries (id, name, email, title, department, location); use get_employee for the full record with "
             "the manager.", _obj({"query": _s("Part of the person's name, case-insensitive."),
                                   "department": _DEPARTMENT,
                                   "location": {"type": "string", "enum": list(data.LOCATIONS)}, **_paging(20, 50)}),
             "employee", "core", True), find_employees),
    (ToolDef("get_employee", "cat_people", "Get an employee's full directory record, including manager_id. "
             "Optionally embed the manager's contact details or the ids of direct reports.",
             _obj({"employee_id": _s("Employee id, 'E-' then 4 digits."),
                   "include": {"type": "array", "items": {"type": "string", "enum": ["manager", "direct_reports"]},
                               "description": "Related records to embed."}}, ("employee_id",)),
             "employee", "core", True), get_employee),
    (ToolDef("find_accounts", "cat_sales", "Find customer accounts by name or by region, tier and industry. Paged: "
             "follow next_cursor until it is null to see every match.",
             _obj({"query": _s("Part of the account name."),
                   "filter": _obj({"region": {"type": "string", "enum": list(data.REGIONS)},
                                   "tier": {"type": "string", "enum": list(data.TIERS)},
                                   "industry": _s()}, description="Exact-match filters."), **_paging(10, 50)}),
             "account", "core", True), find_accounts),
    (ToolDef("get_account", "cat_sales", "Get one customer account: its region, tier, industry, the employee who "
             "owns it (owner_id) and its billing contact.", _obj({"account_id": _s("Account id ('AC-' then 4 "
                                                                                    "digits).")}, ("account_id",)),
             "account", "core", True), get_account),
    (ToolDef("list_invoices", "cat_billing", "List invoices, optionally of one account, in one status, or issued "
             "in a date range. Amounts are in the invoice's currency. Paged with cursor/next_cursor.",
             _obj({"account_id": _s("Only this account's invoices."),
                   "status": {"type": "string", "enum": list(data.INVOICE_STATUSES)},
                   "issued": _obj({"from": _s("First day, YYYY-MM-DD.", format="date"),
                                   "to": _s("Last day, YYYY-MM-DD.", format="date")}, description="Issue date range."),
                   **_paging(25, 100)}), "invoice", "core", True), list_invoices),
    (ToolDef("search_tickets", "cat_helpdesk", "Search support tickets by words in the subject and by status, "
             "priority, account or assignee. Returns summaries with tags; paged.",
             _obj({"query": _s("Words of the subject."), "filter": _TICKET_FILTER, **_paging(25, 100)}),
             "ticket", "core", True), search_tickets),
    (ToolDef("get_ticket", "cat_helpdesk", "Get a support ticket: subject, account, requester, assignee, priority, "
             "status and tags.", _obj({"ticket_id": _s("Ticket id, 'HD-' then 4 digits."),
                                       "include_comments": {"type": "boolean", "default": False}}, ("ticket_id",)),
             "ticket", "core", True), get_ticket),
    (ToolDef("update_ticket", "cat_helpdesk", "Change a ticket's priority, status, assignee or tags, and optionally "
             "add a comment. Tags given replace the ticket's tags. Returns the updated ticket.",
             _obj({"ticket_id": _s("Ticket id."),
                   "changes": _obj({"priority": {"type": "string", "enum": list(data.PRIORITIES)},
                                    "status": {"type": "string", "enum": list(data.TICKET_STATUSES)},
                                    "assignee_id": _s("Employee id of the new assignee."),
                                    "tags": {"type": "array", "items": {"type": "string"}}},
                                   description="Only the fields to change."),
                   "comment": _obj({"body": _s(minLength=1), "public": {"type": "boolean", "default": False}},
                                   ("body",), "A comment to add with the change.")}, ("ticket_id",)),
             "ticket", "core", False), update_ticket),
)
CORE_COLLECTIONS = {"cat_people": "employees", "cat_sales": "accounts", "cat_billing": "invoices",
                    "cat_helpdesk": "tickets"}
