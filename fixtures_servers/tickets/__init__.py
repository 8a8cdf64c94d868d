"""Tickets fixture: an issue tracker to create, update, comment on and close tickets."""

from fixtures_servers.tickets.server import DEFAULT_SIZE, DESCRIPTION, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "build"]
