"""Inventory fixture: thousands of stock rows behind filters and paging, and no aggregate endpoints, so
totals require reading every row (through an LM's context, or in code)."""

from fixtures_servers.inventory.server import DEFAULT_SIZE, DESCRIPTION, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "build"]
