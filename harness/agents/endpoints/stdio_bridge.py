"""`python -m harness.agents.endpoints.stdio_bridge URL`: a stdio MCP server forwarding every request to a run's MCP
endpoint at URL (fastmcp's proxy over a streamable-HTTP client), for an agent that only starts stdio servers. The
run's key comes from HARNESS_API_KEY in the environment, never from the command line, which `ps` shows to every user
of the machine; nothing but MCP is written on stdout (no banner, no update check)."""

from __future__ import annotations

import asyncio
import os
import sys

from harness.agents.endpoints import KEY_VARIABLE

USAGE = "usage: python -m harness.agents.endpoints.stdio_bridge URL   (the run's key in $HARNESS_API_KEY)"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].startswith(("http://", "https://")):
        print(USAGE, file=sys.stderr)
        return 2
    key = os.environ.get(KEY_VARIABLE, "")
    if not key:
        print(f"the stdio bridge needs the run's key in ${KEY_VARIABLE}", file=sys.stderr)
        return 2
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    asyncio.run(bridge(argv[0], key))
    return 0


async def bridge(url: str, key: str) -> None:
    """Serve stdio until the client closes it, over ONE session with the run's endpoint, connected first: a proxy
    handed a client that is not connected yet opens a new session (three more requests) for every request."""
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport
    from fastmcp.server import create_proxy

    async with Client(StreamableHttpTransport(url, auth=key)) as client:
        await create_proxy(client, name="harness").run_async(transport="stdio", show_banner=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
