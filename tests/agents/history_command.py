"""A command agent (run as `cmd:python history_command.py`) for conversation tasks: it reads its task on stdin and
answers with what it was handed of the conversation (JSON: its turn, the history on its stdin and in HARNESS_HISTORY),
and calls the run's `get_customer` tool once per turn (no model), so each turn's call can be placed in its turn."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport


async def main() -> None:
    task = json.loads(sys.stdin.read())
    transport = StreamableHttpTransport(task["mcp_url"],
                                        headers={"Authorization": f"Bearer {os.environ['HARNESS_API_KEY']}"})
    async with Client(transport) as mcp:
        await mcp.call_tool("get_customer", {"customer_id": "C-0007"}, raise_on_error=False)
    history = task["history"]
    print(json.dumps({"turn": len(history) // 2 + 1, "stdin": history,
                      "environment": json.loads(os.environ["HARNESS_HISTORY"])}))


asyncio.run(main())
