"""What a generated (distractor) tool does when called: a small, working record store per resource, seeded on first
use, so a wrong pick reads plausible records or changes state instead of failing in a way that gives it away."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from fastmcp.exceptions import ToolError

from fixtures_servers._common import IdForm, find, page
from fixtures_servers.catalogue.domains import Field, Resource

_NAMES = ("alpha", "harbor", "summit", "orchid", "granite", "meadow", "cobalt", "ember")


def _value(f: Field, rng: random.Random) -> Any:
    if f.kind == "enum":
        return rng.choice(f.choices)
    if f.kind == "date":
        return f"2026-0{rng.randrange(1, 7)}-{rng.randrange(1, 28):02d}"
    return {"int": lambda: rng.randrange(1, 500), "number": lambda: round(rng.uniform(10, 5000), 2),
            "bool": lambda: rng.random() < 0.5}.get(f.kind, lambda: f"{f.name}-{rng.randrange(100, 999)}")()


def seed_records(resource: Resource, seed: int) -> list[dict]:
    """Four records of a generated resource, the same for the same seed."""
    rng = random.Random(f"{seed}:{resource.singular}:records")
    records = []
    for i in range(4):
        record = {"id": f"{resource.id_prefix}-{1001 + i}", "name": f"{rng.choice(_NAMES)}-{resource.singular}-{i + 1}",
                  "status": rng.choice(resource.statuses), "owner_id": f"E-{rng.randrange(1009, 1049)}",
                  "created_at": f"2026-0{rng.randrange(1, 7)}-{rng.randrange(1, 28):02d}", "tags": [],
                  "archived": False}
        record.update({f.name: _value(f, rng) for f in resource.fields})
        records.append(record)
    return records


def _form(r: Resource) -> IdForm:
    return IdForm(r.label, f"{r.id_prefix}-", 4, f"list or search the {r.plural.replace('_', ' ')} to find one")


def _matches(record: dict, where: dict) -> bool:
    return all(record.get(k) == v for k, v in where.items() if k in ("status", "owner_id")) and \
        set(where.get("tags") or ()) <= set(record.get("tags") or ()) and \
        where.get("created_after", "") <= record.get("created_at", "") < where.get("created_before", "9999")


def paged(items: list[dict], key: str, limit: int, cursor: str | None, most: int = 100) -> dict:
    """One page of `items` under `key`, with the total and the cursor of the next page (None at the end)."""
    if cursor is not None and not str(cursor).isdigit():
        raise ToolError(f"cursor '{cursor}' is not a cursor this tool returned (pass next_cursor as it came)")
    chunk, next_offset = page(items, limit, int(cursor or 0), most)
    return {key: chunk, "total": len(items), "next_cursor": None if next_offset is None else str(next_offset)}


def run_operation(records: list[dict], r: Resource, op: str, args: dict) -> dict:
    """Operation `op` of resource `r` on its records (changed in place for the writing operations)."""
    key = f"{r.singular}_id"
    if op in ("list", "search"):
        words = (args.get("query") or "").lower()
        hits = [x for x in records if _matches(x, args.get("filter") or {}) and words in x.get("name", "").lower()
                and (op == "search" or args.get("include_archived") or not x.get("archived"))]
        return paged(hits, r.plural, args.get("limit", 25), args.get("cursor"))
    if op == "create":
        record = {"id": f"{r.id_prefix}-{1001 + len(records)}", "status": r.statuses[0], "tags": [], "archived": False,
                  **{k: v for k, v in args.items() if k != "metadata"}}
        records.append(record)
        return dict(record)
    if op == "export":
        hits = [x for x in records if _matches(x, args.get("filter") or {})]
        return {"job_id": f"EXP-{len(hits):04d}{len(r.plural):02d}", "status": "queued", "rows": len(hits),
                "format": args["format"]}
    if op == "stats":
        group = {"status": "status", "owner": "owner_id", "month": "created_at"}[args["group_by"]]
        counts = Counter(str(x.get(group, ""))[:7] if group == "created_at" else x.get(group) for x in records)
        return {"group_by": args["group_by"], "counts": dict(sorted(counts.items(), key=str))}
    if op == "bulk_update":
        targets = [find(records, "id", value, _form(r)) for value in args[f"{r.singular}_ids"]]
        if not args.get("dry_run"):
            for target in targets:
                target.update(args["changes"])
        return {"matched": len(targets), "changed": 0 if args.get("dry_run") else len(targets)}
    record = find(records, "id", args[key], _form(r))
    if op == "update":
        record.update(args["changes"])
    elif op in ("archive", "delete"):
        record["archived"] = True
    elif op == "restore":
        record["archived"] = False
    elif op == "assign":
        record["owner_id"] = args["assignee_id"]
    elif op == "add_comment":
        record.setdefault("comments", []).append({"body": args["body"], "visibility": args.get("visibility",
                                                                                             "internal")})
        return {"id": record["id"], "comments": len(record["comments"])}
    elif op == "duplicate":
        copy = {**record, "id": f"{r.id_prefix}-{1001 + len(records)}", "name": args["new_name"]}
        records.append(copy)
        return dict(copy)
    elif op == "history":
        return {"entries": [{"action": "created", "at": record.get("created_at", "2026-01-01"),
                             "by": record.get("owner_id", "E-1001")}], "next_cursor": None}
    return {k: v for k, v in record.items() if k != "comments"}


def check_arguments(schema: dict, args: Any, where: str = "") -> None:
    """The checks a real server's validation makes: required and unknown parameters, types of objects and arrays,
    enum values; each failure is one ToolError naming the parameter."""
    if schema.get("type") == "object":
        if not isinstance(args, dict):
            raise ToolError(f"{where or 'arguments'} must be an object")
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if args.get(name) is None:
                raise ToolError(f"missing required parameter '{where}{name}'")
        for name, value in args.items():
            if name not in properties and not isinstance(schema.get("additionalProperties"), dict):
                raise ToolError(f"unknown parameter '{where}{name}' (known: {', '.join(properties)})")
            if name in properties and value is not None:
                check_arguments(properties[name], value, f"{where}{name}.")
    elif schema.get("type") == "array" and not isinstance(args, list):
        raise ToolError(f"'{where.rstrip('.')}' must be a list")
    elif schema.get("type") == "array":
        for item in args:
            check_arguments(schema.get("items", {}), item, where)
    elif "enum" in schema and args not in schema["enum"]:
        raise ToolError(f"'{where.rstrip('.')}' must be one of {', '.join(schema['enum'])}, got {args!r}")
