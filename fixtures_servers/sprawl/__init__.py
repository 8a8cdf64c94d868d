"""Sprawl fixture: one server with 64 tools (a SaaS admin API) to measure what tool definitions cost and to
host "find the right tool among many" tasks."""

from fixtures_servers.sprawl.server import DEFAULT_SIZE, DESCRIPTION, RESOURCES, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "RESOURCES", "build"]
