"""The calendar server: events in June 2026 between 09:00 and 17:00 for a small team."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, not_found

DESCRIPTION = "People, events, free/busy and event creation with conflict checks"
DEFAULT_SIZE = 60
PEOPLE = (("P-01", "Ana Costa"), ("P-02", "Ben Okafor"), ("P-03", "Chloe Ito"), ("P-04", "Dev Larsen"),
          ("P-05", "Eli Moreau"), ("P-06", "Farah Haddad"))
TITLES = ("Standup", "Design review", "Customer call", "1:1", "Planning", "Retro", "Incident review", "Demo")
FIRST_DAY = date(2026, 6, 1)
PERSON = IdForm("person", "P-", 2, "list_people lists everyone with their ids")
EVENT = IdForm("event", "E-", 3, "list_events lists the events between two dates")
IDS = (PERSON, EVENT)


def _parse(value: str, name: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ToolError(f"{name} must be an ISO date-time like 2026-06-03T14:00, got '{value}'") from None


@functools.lru_cache(maxsize=16)
def generate(seed: int, size: int) -> tuple[dict, ...]:
    rng = random.Random(seed * 31337 + 5)
    events = []
    for i in range(1, size + 1):
        start = datetime.combine(FIRST_DAY + timedelta(days=rng.randrange(0, 20)), datetime.min.time()) + \
            timedelta(hours=rng.randrange(9, 16))
        people = sorted(rng.sample([p for p, _ in PEOPLE], rng.randrange(1, 4)))
        events.append({"id": f"E-{i:03d}", "title": rng.choice(TITLES), "start": start.isoformat(timespec="minutes"),
                       "end": (start + timedelta(minutes=rng.choice((30, 60)))).isoformat(timespec="minutes"),
                       "attendees": ",".join(people)})
    events.sort(key=lambda e: (e["start"], e["id"]))
    return tuple(events)


@dataclass
class CalendarState:
    events: list[dict]

    def snapshot(self) -> dict:
        return {"events": copies(self.events)}


def _person(person_id: str) -> str:
    for pid, name in PEOPLE:
        if pid == person_id:
            return name
    raise not_found(PERSON, person_id, IDS)


def list_people() -> list[dict]:
    """Everyone in the calendar: id, name and email."""
    return [{"id": pid, "name": name, "email": f"{name.split()[0].lower()}@example.com"} for pid, name in PEOPLE]


def list_events(start_date: str, end_date: str, ctx: Context, attendee: str | None = None) -> list[dict]:
    """Events starting on dates from start_date to end_date inclusive (YYYY-MM-DD), optionally only those
    with a given attendee id. Attendees are comma-separated person ids."""
    first, last = _parse(start_date, "start_date").date(), _parse(end_date, "end_date").date()
    if attendee is not None:
        _person(attendee)
    return [dict(e) for e in state_of(ctx).events
            if first <= datetime.fromisoformat(e["start"]).date() <= last
            and (attendee is None or attendee in e["attendees"].split(","))]


def get_event(event_id: str, ctx: Context) -> dict:
    """One event by its id."""
    return dict(find(state_of(ctx).events, "id", event_id, EVENT, IDS))


def free_busy(person_id: str, day: str, ctx: Context) -> dict:
    """A person's busy intervals on a day (YYYY-MM-DD) within working hours 09:00-17:00."""
    _person(person_id)
    target = _parse(day, "day").date()
    busy = sorted((e["start"][11:], e["end"][11:]) for e in state_of(ctx).events
                  if datetime.fromisoformat(e["start"]).date() == target and person_id in e["attendees"].split(","))
    return {"person_id": person_id, "day": target.isoformat(), "busy": [{"start": s, "end": e} for s, e in busy]}


def create_event(title: str, start: str, end: str, attendees: list[str], ctx: Context) -> dict:
    """Create an event (ISO date-times, attendee person ids). Fails if any attendee is busy then."""
    state = state_of(ctx)
    begin, finish = _parse(start, "start"), _parse(end, "end")
    if finish <= begin:
        raise ToolError("end must be after start")
    for person in attendees:
        _person(person)
        for event in state.events:
            if person in event["attendees"].split(",") and begin < datetime.fromisoformat(event["end"]) \
                    and datetime.fromisoformat(event["start"]) < finish:
                raise ToolError(f"conflict: {person} is busy in {event['id']} ({event['start']} to {event['end']})")
    event = {"id": f"E-{len(state.events) + 1:03d}", "title": title, "start": begin.isoformat(timespec="minutes"),
             "end": finish.isoformat(timespec="minutes"), "attendees": ",".join(sorted(attendees))}
    state.events.append(event)
    return dict(event)


def cancel_event(event_id: str, ctx: Context) -> dict:
    """Cancel (delete) an event; returns what was removed."""
    state = state_of(ctx)
    event = find(state.events, "id", event_id, EVENT, IDS)
    state.events.remove(event)
    return dict(event)


TOOLS = make_tools(list_people, list_events, get_event, free_busy, create_event, cancel_event)


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh calendar with `size` events in June 2026, the same for the same seed."""
    return fixture_server("calendar", "A team calendar.", TOOLS, CalendarState(copies(generate(seed, size))))
