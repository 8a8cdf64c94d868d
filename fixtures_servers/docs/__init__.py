"""Docs fixture: documents with long bodies (meeting transcripts of 10,000+ tokens), search and fetch."""

from fixtures_servers.docs.server import DEFAULT_SIZE, DESCRIPTION, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "build"]
