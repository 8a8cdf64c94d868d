"""A stdio MCP server that dies (hard exit) on its second tool call: for fault-injection tests."""

import os

from fastmcp import FastMCP

server = FastMCP("dying")
calls = {"n": 0}


@server.tool
def ping() -> str:
    """Answers pong, once."""
    calls["n"] += 1
    if calls["n"] >= 2:
        os._exit(1)
    return "pong"


if __name__ == "__main__":
    server.run(transport="stdio", show_banner=False)
