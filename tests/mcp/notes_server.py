"""A stdio MCP server that keeps notes in a file (its first argument), like servers that keep state on disk,
and says hello on stderr: for the per-run state and stderr-log tests of external servers."""

import sys
from pathlib import Path

from fastmcp import FastMCP

server = FastMCP("notes")
STATE = Path(sys.argv[1])


@server.tool
def add_note(text: str) -> str:
    """Keep a note."""
    with STATE.open("a") as handle:
        handle.write(text + "\n")
    return "ok"


@server.tool
def list_notes() -> list[str]:
    """Every note kept so far."""
    return STATE.read_text().splitlines() if STATE.exists() else []


@server.tool
def state_file() -> str:
    """Where the notes are kept."""
    return str(STATE)


if __name__ == "__main__":
    print("notes server: hello on stderr", file=sys.stderr, flush=True)
    server.run(transport="stdio", show_banner=False)
