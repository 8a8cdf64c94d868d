"""The generated tools: fifteen operations a resource of `domains` can have, each a name, a description and an input
schema shaped like real servers' (nested filter and sort objects, enums, optional parameters with defaults, arrays),
with wording varied per tool from the catalogue's seed so that descriptions are not all alike in length or text."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from fixtures_servers.catalogue.domains import Field, Resource

OPERATIONS = ("list", "get", "create", "update", "delete", "search", "archive", "export", "bulk_update", "assign",
              "add_comment", "history", "stats", "restore", "duplicate")
READ_ONLY = frozenset({"list", "get", "search", "export", "history", "stats"})


@dataclass(frozen=True)
class ToolDef:
    """One tool of the catalogue: what `tools/list` shows, and which resource and operation it works on."""

    name: str
    server: str
    description: str
    schema: dict[str, Any] = field(hash=False, compare=False)
    resource: str
    operation: str  # one of OPERATIONS, or "core" for the hand-written tools the tasks use
    read_only: bool


def tool_name(resource: Resource, operation: str) -> str:
    s, p = resource.singular, resource.plural
    return {"list": f"list_{p}", "get": f"get_{s}", "create": f"create_{s}", "update": f"update_{s}",
            "delete": f"delete_{s}", "search": f"search_{p}", "archive": f"archive_{s}", "export": f"export_{p}",
            "bulk_update": f"bulk_update_{p}", "assign": f"assign_{s}", "add_comment": f"add_{s}_comment",
            "history": f"list_{s}_history", "stats": f"get_{s}_stats", "restore": f"restore_{s}",
            "duplicate": f"duplicate_{s}"}[operation]


# ---- schema pieces ----

def _prop(kind: str, description: str = "", **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, **extra}
    if description:
        schema["description"] = description
    return schema


def _enum(values: tuple[str, ...], description: str = "", **extra: Any) -> dict[str, Any]:
    return _prop("string", description, enum=list(values), **extra)


def _date(description: str) -> dict[str, Any]:
    return _prop("string", description, format="date")


def field_schema(f: Field, rng: random.Random) -> dict[str, Any]:
    words = f.name.replace("_", " ")
    text = rng.choice((f"The {words}.", f"{words.capitalize()} of the record.", ""))
    if f.kind == "enum":
        return _enum(f.choices, text)
    if f.kind == "date":
        return _date(text or f"{words.capitalize()} (YYYY-MM-DD).")
    kinds = {"str": "string", "int": "integer", "number": "number", "bool": "boolean"}
    return _prop(kinds[f.kind], text)


def _id_param(r: Resource, rng: random.Random) -> dict[str, Any]:
    return _prop("string", rng.choice((f"The {r.label} id, e.g. as returned by list_{r.plural}.",
                                       f"ID of the {r.label}.", f"Unique identifier of the {r.label} to act on.")))


def _paging(rng: random.Random) -> dict[str, Any]:
    return {"limit": _prop("integer", rng.choice(("Maximum number of results to return (1-100).",
                                                  "Page size; at most 100.", "")), default=25, minimum=1, maximum=100),
            "cursor": _prop("string", rng.choice(("Opaque cursor from the previous page's next_cursor.",
                                                  "Pagination cursor; omit for the first page.")))}


def _filter(r: Resource, rng: random.Random) -> dict[str, Any]:
    props = {"status": _enum(r.statuses, f"Only {r.plural} in this status."),
             "created_after": _date("Only records created on or after this date (YYYY-MM-DD)."),
             "created_before": _date("Only records created before this date (YYYY-MM-DD).")}
    if rng.random() < 0.6:
        props["owner_id"] = _prop("string", "Only records owned by this employee id.")
    if rng.random() < 0.5:
        props["tags"] = _prop("array", "Records carrying all of these tags.", items={"type": "string"})
    return _prop("object", rng.choice(("Filters combined with AND.", "Narrow the results.", "")), properties=props,
                 additionalProperties=False)


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def input_schema(r: Resource, op: str, rng: random.Random) -> dict[str, Any]:
    """The input schema of operation `op` on resource `r`."""
    key = f"{r.singular}_id"
    fields = {f.name: field_schema(f, rng) for f in r.fields}
    if op == "list":
        sort = _prop("object", "Sort order.", properties={
            "field": _enum(("created_at", "updated_at", "name"), default="created_at"),
            "direction": _enum(("asc", "desc"), default="desc")})
        return _schema({"filter": _filter(r, rng), "sort": sort, "include_archived": _prop(
            "boolean", f"Include archived {r.plural}.", default=False), **_paging(rng)})
    if op == "get":
        include = _prop("array", "Related data to embed in the response.",
                        items=_enum(("comments", "attachments", "audit", "related")))
        return _schema({key: _id_param(r, rng), "include": include}, (key,))
    if op == "create":
        return _schema({"name": _prop("string", f"Display name of the {r.label}.", minLength=1),
                        "description": _prop("string", "Free text, markdown allowed."),
                        **fields, "owner_id": _prop("string", "Employee id of the owner; defaults to the caller."),
                        "tags": _prop("array", items={"type": "string"}),
                        "metadata": _prop("object", "Custom key/value pairs (string values).",
                                          additionalProperties={"type": "string"})}, ("name",))
    if op == "update":
        changes = _prop("object", "Only the fields to change.", properties={
            "name": _prop("string"), "status": _enum(r.statuses), **fields,
            "tags": _prop("array", items={"type": "string"})}, additionalProperties=False)
        return _schema({key: _id_param(r, rng), "changes": changes, "notify": _prop(
            "boolean", "Notify watchers of the change.", default=True), "reason": _prop(
            "string", "Why the change was made (kept in the history).")}, (key, "changes"))
    if op == "delete":
        return _schema({key: _id_param(r, rng), "hard": _prop("boolean", "Delete permanently instead of moving to "
                                                              "the trash (cannot be undone).", default=False),
                        "reason": _prop("string")}, (key,))
    if op == "search":
        return _schema({"query": _prop("string", "Words to match, at least 2 characters.", minLength=2),
                        "fields": _prop("array", "Fields to search in; all by default.",
                                        items=_enum(("name", "description", "notes"))),
                        "filter": _filter(r, rng), **_paging(rng)}, ("query",))
    if op in ("archive", "restore"):
        return _schema({key: _id_param(r, rng), "note": _prop("string", "A note kept with the change.")}, (key,))
    if op == "export":
        destination = _prop("object", "Where to deliver the file; a download link by default.", properties={
            "kind": _enum(("download", "email", "s3")), "address": _prop(
                "string", "E-mail address or s3:// URL for kinds email and s3.")}, required=["kind"])
        return _schema({"format": _enum(("csv", "json", "xlsx"), "File format."), "filter": _filter(r, rng),
                        "columns": _prop("array", "Columns to include, in order; all by default.",
                                         items={"type": "string"}), "destination": destination}, ("format",))
    if op == "bulk_update":
        changes = _prop("object", properties={"status": _enum(r.statuses), "owner_id": _prop("string"),
                                              "tags": _prop("array", items={"type": "string"})})
        return _schema({f"{r.singular}_ids": _prop("array", f"Up to 100 {r.label} ids.", items={"type": "string"},
                                                    maxItems=100), "changes": changes, "dry_run": _prop(
            "boolean", "Report what would change without changing it.", default=False)}, (f"{r.singular}_ids", "changes"))
    if op == "assign":
        return _schema({key: _id_param(r, rng), "assignee_id": _prop("string", "Employee id to assign."),
                        "role": _enum(("owner", "reviewer", "watcher"), default="owner"),
                        "notify": _prop("boolean", default=True)}, (key, "assignee_id"))
    if op == "add_comment":
        return _schema({key: _id_param(r, rng), "body": _prop("string", "Comment text (markdown).", minLength=1),
                        "visibility": _enum(("internal", "public"), "Who can read the comment.", default="internal"),
                        "mentions": _prop("array", "Employee ids to notify.", items={"type": "string"})}, (key, "body"))
    if op == "history":
        return _schema({key: _id_param(r, rng), "since": _date("Only changes on or after this date."),
                        "actions": _prop("array", items=_enum(("created", "updated", "status_changed", "commented",
                                                               "deleted"))), **_paging(rng)}, (key,))
    if op == "stats":
        period = _prop("object", "Date range; the last 30 days by default.",
                       properties={"start": _date("First day."), "end": _date("Last day.")})
        return _schema({"group_by": _enum(("status", "owner", "month"), "How to group the counts."),
                        "period": period, "filter": _filter(r, rng)}, ("group_by",))
    if op == "duplicate":
        return _schema({key: _id_param(r, rng), "new_name": _prop("string", "Name of the copy."),
                        "copy_comments": _prop("boolean", default=False)}, (key, "new_name"))
    raise ValueError(op)


# ---- descriptions ----

_LEADS = {
    "list": ("List {plural} ({what}).", "Returns a page of {plural}, newest first.", "List the {plural} of the "
             "workspace that match optional filters."),
    "get": ("Get one {label} by id.", "Fetch the full record of a {label} ({what}).", "Retrieve a single {label}."),
    "create": ("Create a new {label}.", "Create {what}.", "Add a {label} to the workspace."),
    "update": ("Update fields of an existing {label}.", "Change a {label}: only the fields given in changes are "
               "written.", "Edit a {label}."),
    "delete": ("Delete a {label}.", "Move a {label} to the trash, or delete it permanently with hard=true."),
    "search": ("Full-text search over {plural}.", "Search {plural} ({what}) by words in their name, description "
               "and notes."),
    "archive": ("Archive a {label} so it no longer shows in lists.", "Archive a {label}; archived records are "
                "read-only."),
    "export": ("Export {plural} to a file.", "Start an export of {plural} as CSV, JSON or XLSX."),
    "bulk_update": ("Apply the same change to many {plural} at once.", "Update up to 100 {plural} in one call."),
    "assign": ("Assign a {label} to an employee.", "Set who owns, reviews or watches a {label}."),
    "add_comment": ("Add a comment to a {label}.", "Post an internal or public comment on a {label}."),
    "history": ("List the change history of a {label}.", "Show the audit trail of a {label}: who changed what "
                "and when."),
    "stats": ("Count {plural} grouped by status, owner or month.", "Aggregate statistics about {plural}."),
    "restore": ("Restore an archived or deleted {label}.", "Undo the archiving or soft deletion of a {label}."),
    "duplicate": ("Create a copy of a {label} under a new name.", "Duplicate a {label} with its fields and tags."),
}
_NOTES = {
    "list": ("Use filter to narrow by status, owner, tags or creation date.", "Results are paged: pass the "
             "returned next_cursor as cursor to get the next page, until it is null.", "Archived {plural} are left "
             "out unless include_archived is true."),
    "search": ("Matching is case-insensitive and ranks exact name matches first.", "Use list_{plural} instead "
               "when you only need to filter by status."),
    "create": ("The new {label} starts in status '{first}'.", "Returns the created record with its id.",
               "Tags that do not exist yet are created."),
    "update": ("Status changes are recorded in the history with the given reason.", "Watchers are notified "
               "unless notify is false."),
    "delete": ("Requires the admin role for hard deletes.", "Soft-deleted {plural} can be restored for 30 days."),
    "export": ("Large exports run in the background; the response holds a job id and, when ready, a link.",
               "Columns default to every field of the record."),
    "bulk_update": ("Use dry_run to preview.", "The call is atomic: if one id is unknown nothing changes."),
    "stats": ("Counts only: use list_{plural} to get the records themselves.",),
    "history": ("Entries are newest first.",),
}
_GENERIC = ("Requires the {domain_word} scope.", "Rate limited to 60 calls per minute per user.",
            "Dates are ISO 8601 (YYYY-MM-DD) in UTC.", "Ids look like '{prefix}-' followed by four digits.")


def describe(r: Resource, op: str, rng: random.Random) -> str:
    """A description of one to four sentences: a lead sentence, then notes chosen for this tool."""
    values = {"plural": r.plural.replace("_", " "), "label": r.label, "what": r.what, "first": r.statuses[0],
              "prefix": r.id_prefix, "domain_word": r.domain.removeprefix("cat_") + ":write"
              if op not in READ_ONLY else r.domain.removeprefix("cat_") + ":read"}
    sentences = [rng.choice(_LEADS[op])]
    notes = list(_NOTES.get(op, ()))
    rng.shuffle(notes)
    sentences += notes[:rng.randrange(0, len(notes) + 1)]
    if rng.random() < 0.35:
        sentences.append(rng.choice(_GENERIC))
    return " ".join(s.format(**values) for s in sentences)


def generated_tool(r: Resource, op: str, seed: int) -> ToolDef:
    name = tool_name(r, op)
    rng = random.Random(f"{seed}:{name}")
    return ToolDef(name=name, server=r.domain, description=describe(r, op, rng), schema=input_schema(r, op, rng),
                   resource=r.singular, operation=op, read_only=op in READ_ONLY)
