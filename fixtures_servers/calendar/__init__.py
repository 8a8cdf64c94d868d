"""Calendar fixture: people, their events, free/busy lookups and event creation with conflict checks."""

from fixtures_servers.calendar.server import DEFAULT_SIZE, DESCRIPTION, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "build"]
