"""Records to and from the flat JSON objects a trajectory line holds: a record's own fields by name, and for a
record with `detail`, every other key kept there (so nothing a line or an arm records is lost)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

# A field with this metadata stays in memory only: the trajectory line does not store it.
NOT_STORED = {"stored": False}


def from_flat(cls: type, content: dict[str, Any]) -> Any:
    """A record of `cls` from a flat object; raises TypeError when a required field is missing."""
    names = {f.name for f in fields(cls)}
    known = names - {"detail"}
    values = {name: content[name] for name in known if name in content}
    for name in _tuple_fields(cls) & set(values):
        values[name] = tuple(values[name] or ())
    if "detail" not in names:
        return cls(**values)
    return cls(**values, detail={k: v for k, v in content.items() if k not in known and k != "kind"})


def to_flat(value: Any) -> dict[str, Any]:
    """A record as a flat JSON object: its stored fields (tuples as lists), then its `detail`."""
    out = {f.name: getattr(value, f.name) for f in fields(value)
           if f.name != "detail" and f.metadata.get("stored", True)}
    out = {name: list(v) if isinstance(v, tuple) else v for name, v in out.items()}
    return {**out, **getattr(value, "detail", {})}


def _tuple_fields(cls: type) -> set[str]:
    """The fields declared as tuples (a JSON line holds them as lists)."""
    return {f.name for f in fields(cls) if str(f.type).startswith("tuple")}
