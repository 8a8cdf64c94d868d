"""Catalogue fixture: N tools over eight domain servers (`cat_people`, `cat_sales`, ...), generated from a seed
and a size, to draw tokens, latency and success against the number of tools (the `catalogue` suite)."""

from fixtures_servers.catalogue.server import (
    DEFAULT_SIZE,
    DESCRIPTION,
    MAX_SIZE,
    MIN_SIZE,
    SERVERS,
    build,
    catalogue,
    check_size,
)

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "MAX_SIZE", "MIN_SIZE", "SERVERS", "build", "catalogue", "check_size"]
