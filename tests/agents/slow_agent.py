"""A team's tool loop (tests.agents.team_agent, imported at the top so the agent's zygote holds it warm) that waits
before it calls a tool, so that a short run timeout cuts it short with the tool call in flight."""

from __future__ import annotations

import asyncio
import os
import time

from tests.agents.faulty_agents import _note
from tests.agents.team_agent import tool_loop


def slow_tool(task) -> str:
    _note(os.getpid())
    time.sleep(4.0)
    return asyncio.run(tool_loop(task))
