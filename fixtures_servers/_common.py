"""Helpers shared by the fixtures: paging like a real API, and cheap copies of flat records."""

from __future__ import annotations

import random
from datetime import date, timedelta

from fastmcp.exceptions import ToolError

MAX_PAGE = 100
EPOCH = date(2025, 1, 1)


def copies(records) -> list[dict]:
    """Records are flat dicts of plain values, so a shallow copy is a full one (and 20x cheaper)."""
    return [dict(r) for r in records]


def page(items: list[dict], limit: int, offset: int, max_page: int = MAX_PAGE) -> tuple[list[dict], int | None]:
    """One page of items and the offset of the next (None at the end); bad paging arguments are errors."""
    if not 1 <= limit <= max_page:
        raise ToolError(f"limit must be between 1 and {max_page}, got {limit}")
    if offset < 0:
        raise ToolError(f"offset must be >= 0, got {offset}")
    chunk = items[offset:offset + limit]
    return copies(chunk), (offset + limit if offset + limit < len(items) else None)


def find(records: list[dict], key: str, value: str, what: str, example: str) -> dict:
    for record in records:
        if record[key] == value:
            return record
    raise ToolError(f"{what} '{value}' not found (ids look like {example})")


def day(rng: random.Random, span_days: int, start: date = EPOCH) -> date:
    return start + timedelta(days=rng.randrange(0, span_days))
