"""Helpers shared by the fixtures: paging like a real API, "not found" errors that say what an id looks like and
which tool finds one, and cheap copies of flat records."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
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


@dataclass(frozen=True)
class IdForm:
    """How one kind of id looks and which tool finds one: what a "not found" error tells the caller. An error
    that only says "not found" leaves a model guessing the next id; one that names the id's shape and a tool
    that finds it gets it to look the id up. No docstring or error shows a real-looking id, which models copy."""

    what: str  # "customer"
    prefix: str  # "C-"
    digits: int  # 4
    finder: str  # "search_customers finds one by name"
    holds: str = ""  # what else a record of this kind carries that callers look for ("its customer_id")

    def matches(self, value: str) -> bool:
        return re.fullmatch(re.escape(self.prefix) + rf"\d{{{self.digits}}}", value) is not None

    def shape(self) -> str:
        return f"'{self.prefix}' then {self.digits} digits"


def not_found(form: IdForm, value: str, others: tuple[IdForm, ...] = ()) -> ToolError:
    """The error for an unknown id: what such ids look like and how to find one, or, if the value is an id of
    another kind this server knows, that kind and the tool that fetches it."""
    other = next((o for o in others if o is not form and o.matches(value)), None)
    if other is not None:
        holds = f" ({other.holds})" if other.holds else ""
        return ToolError(f"'{value}' is {_article(other.what)} {other.what} id, not {_article(form.what)} "
                         f"{form.what} id: {other.finder}{holds}")
    return ToolError(f"no {form.what} has the id '{value}' ({form.what} ids are {form.shape()}; {form.finder})")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeio" else "a"  # "a user", "an order"


def find(records: list[dict], key: str, value: str, form: IdForm, others: tuple[IdForm, ...] = ()) -> dict:
    for record in records:
        if record[key] == value:
            return record
    raise not_found(form, value, others)


def day(rng: random.Random, span_days: int, start: date = EPOCH) -> date:
    return start + timedelta(days=rng.randrange(0, span_days))
