"""A stdio MCP server with the faults a run must not be held by: a tool slower than any test's tool timeout, and
one that writes a log line on the real stdout, as a server not built on the MCP SDK 2 (which diverts a tool's
stdout to stderr) does. It writes its pid to the file named by its first argument."""

import os
import sys
import time
from pathlib import Path

from fastmcp import FastMCP

server = FastMCP("faulty")
WIRE = os.dup(1)  # the protocol's stdout, kept before the SDK diverts fd 1 while the server runs


@server.tool
def slow(seconds: float) -> str:
    """Take `seconds` to answer (a thread the server cannot interrupt)."""
    time.sleep(seconds)
    return "done"


@server.tool
def noisy() -> str:
    """Write a log line on stdout before answering."""
    os.write(WIRE, b"noisy: working on it\n")
    return "done"


@server.tool
def quiet() -> str:
    """Answer, writing nothing else."""
    return "done"


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(str(os.getpid()))
    server.run(transport="stdio", show_banner=False)
