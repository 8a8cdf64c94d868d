"""The sprawl server: 16 resources of a SaaS admin API x 4 operations (list, get, create, set status) = 64
tools. Each tool is generated from the resource table below with real typed parameters and works on a
small seeded state; the generation is source text compiled once per process."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, page

DESCRIPTION = "A SaaS admin API with 64 tools (users, billing, webhooks, feature flags, ...)"
DEFAULT_SIZE = 12


@dataclass(frozen=True)
class Resource:
    singular: str
    plural: str
    prefix: str
    what: str
    statuses: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def id_form(self) -> IdForm:
        return IdForm(self.singular.replace("_", " "), f"{self.prefix}-", 3,
                      f"list_{self.plural} lists them, optionally by status or exact name")


RESOURCES = (
    Resource("user", "users", "U", "a user account of the workspace", ("active", "suspended", "invited"),
             ("ana.costa", "ben.okafor", "chloe.ito", "dev.larsen", "eli.moreau", "farah.haddad", "goran.petrov")),
    Resource("team", "teams", "TM", "a team grouping users", ("active", "archived"),
             ("platform", "growth", "support", "billing", "mobile", "data")),
    Resource("project", "projects", "PR", "a project owned by a team", ("active", "paused", "archived"),
             ("apollo", "borealis", "cascade", "delta", "ember", "fjord")),
    Resource("invoice", "invoices", "INV", "an invoice sent to a customer", ("draft", "sent", "paid", "void"),
             ("2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06")),
    Resource("subscription", "subscriptions", "SUB", "a customer's plan subscription",
             ("trialing", "active", "past_due", "canceled"), ("acme", "globex", "initech", "hooli", "umbrella")),
    Resource("webhook", "webhooks", "WH", "an outgoing webhook endpoint", ("enabled", "disabled", "failing"),
             ("orders-sync", "crm-push", "slack-alerts", "billing-events", "audit-export")),
    Resource("api_key", "api_keys", "KEY", "an API key for programmatic access", ("active", "revoked"),
             ("ci-deploy", "reporting", "mobile-app", "partner-x", "backup-job")),
    Resource("feature_flag", "feature_flags", "FF", "a feature flag toggled per workspace", ("on", "off", "rollout"),
             ("dark-mode", "new-checkout", "ai-summaries", "bulk-export", "beta-dashboard", "sso-enforced")),
    Resource("audit_event", "audit_events", "AUD", "an entry of the audit log", ("recorded", "flagged"),
             ("login", "role-change", "key-created", "export", "settings-update")),
    Resource("coupon", "coupons", "CPN", "a discount coupon", ("active", "expired", "disabled"),
             ("SPRING15", "WELCOME10", "PARTNER20", "BLACKFRIDAY", "LOYAL5")),
    Resource("plan", "plans", "PLN", "a pricing plan", ("public", "legacy", "hidden"),
             ("free", "starter", "pro", "business", "enterprise")),
    Resource("payment", "payments", "PAY", "a card or bank payment", ("succeeded", "pending", "failed"),
             ("card-visa", "card-amex", "sepa", "ach", "wire")),
    Resource("refund", "refunds", "REF", "a refund of a payment", ("requested", "approved", "rejected", "paid"),
             ("duplicate", "fraud", "requested-by-customer", "service-outage")),
    Resource("role", "roles", "ROL", "a permission role", ("active", "deprecated"),
             ("owner", "admin", "billing-admin", "member", "viewer", "auditor")),
    Resource("integration", "integrations", "INT", "a connected third-party integration",
             ("connected", "disconnected", "error"), ("slack", "github", "salesforce", "zendesk", "jira", "stripe")),
    Resource("environment", "environments", "ENV", "a deployment environment", ("healthy", "degraded", "down"),
             ("production", "staging", "preview", "dev", "qa")),
)
BY_NAME = {r.singular: r for r in RESOURCES}
IDS = tuple(r.id_form for r in RESOURCES)


@functools.lru_cache(maxsize=16)
def generate(seed: int, size: int) -> tuple[tuple[str, tuple[dict, ...]], ...]:
    rng = random.Random(seed * 65537 + 9)
    data = []
    for resource in RESOURCES:
        records = []
        for i in range(1, size + 1):
            base = resource.names[(i - 1) % len(resource.names)]
            name = base if i <= len(resource.names) else f"{base}-{i}"
            records.append({"id": f"{resource.prefix}-{i:03d}", "name": name, "status": rng.choice(resource.statuses),
                            "created_at": f"2026-0{rng.randrange(1, 6)}-{rng.randrange(1, 28):02d}"})
        data.append((resource.singular, tuple(records)))
    return tuple(data)


@dataclass
class SprawlState:
    records: dict[str, list[dict]]

    def snapshot(self) -> dict:
        return {BY_NAME[k].plural: copies(v) for k, v in self.records.items()}


def _check_status(resource: Resource, status: str | None) -> None:
    if status is not None and status not in resource.statuses:
        raise ToolError(f"status must be one of {', '.join(resource.statuses)}, got '{status}'")


def _list(ctx: Context, singular: str, status: str | None, name: str | None, limit: int, offset: int) -> dict:
    resource = BY_NAME[singular]
    _check_status(resource, status)
    hits = [r for r in state_of(ctx).records[singular]
            if (status is None or r["status"] == status) and (name is None or r["name"] == name)]
    chunk, next_offset = page(hits, limit, offset)
    return {resource.plural: chunk, "total": len(hits), "next_offset": next_offset}


def _get(ctx: Context, singular: str, record_id: str) -> dict:
    resource = BY_NAME[singular]
    return dict(find(state_of(ctx).records[singular], "id", record_id, resource.id_form, IDS))


def _create(ctx: Context, singular: str, name: str) -> dict:
    resource = BY_NAME[singular]
    records = state_of(ctx).records[singular]
    if not name.strip():
        raise ToolError("name must not be empty")
    if any(r["name"] == name for r in records):
        raise ToolError(f"a {singular.replace('_', ' ')} named '{name}' already exists")
    record = {"id": f"{resource.prefix}-{len(records) + 1:03d}", "name": name, "status": resource.statuses[0],
              "created_at": "2026-06-01"}
    records.append(record)
    return dict(record)


def _set_status(ctx: Context, singular: str, record_id: str, status: str) -> dict:
    resource = BY_NAME[singular]
    if status is None:
        raise ToolError("status is required")
    _check_status(resource, status)
    record = find(state_of(ctx).records[singular], "id", record_id, resource.id_form, IDS)
    record["status"] = status
    return dict(record)


def _tool_sources(resource: Resource) -> str:
    s, p, what = resource.singular, resource.plural, resource.what
    statuses = "/".join(resource.statuses)
    return f'''
def list_{p}(ctx: Context, status: str | None = None, name: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """List {p} ({what}), optionally by status ({statuses}) or exact name. Paged: {{{p}, total, next_offset}}."""
    return _list(ctx, "{s}", status, name, limit, offset)


def get_{s}({s}_id: str, ctx: Context) -> dict:
    """Fetch one {s.replace("_", " ")} by its id."""
    return _get(ctx, "{s}", {s}_id)


def create_{s}(name: str, ctx: Context) -> dict:
    """Create {what} with the given name; it starts as '{resource.statuses[0]}'."""
    return _create(ctx, "{s}", name)


def set_{s}_status({s}_id: str, status: str, ctx: Context) -> dict:
    """Set the status of a {s.replace("_", " ")} ({statuses})."""
    return _set_status(ctx, "{s}", {s}_id, status)
'''


def _generated_tools():
    namespace = {"__builtins__": __builtins__, "Context": Context, "_list": _list, "_get": _get, "_create": _create,
                 "_set_status": _set_status}
    functions = []
    for resource in RESOURCES:
        before = set(namespace)
        exec(compile(_tool_sources(resource), f"<sprawl:{resource.plural}>", "exec"), namespace)
        functions += [namespace[name] for name in namespace if name not in before]
    return functions


TOOLS = make_tools(*_generated_tools())


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh admin API with `size` records per resource, the same for the same seed."""
    state = SprawlState({singular: copies(records) for singular, records in generate(seed, size)})
    return fixture_server("sprawl", "A SaaS admin API: users, billing, webhooks, flags and more.", TOOLS, state)
