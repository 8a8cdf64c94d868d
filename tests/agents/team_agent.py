"""A team's own agent, written as a team writes one around the OpenAI client and an MCP client (no harness code but
the task it is handed): the test of any agent as an arm. It offers the MCP server's tools to the model, runs the
calls the model asks for, and answers with the first reply that asks for none."""

from __future__ import annotations

import json

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from openai import AsyncOpenAI, OpenAI


async def tool_loop(task) -> str:
    """The async way (the Python API awaits it)."""
    return await answer_with_tools(task, [{"role": "user", "content": task.prompt}])


async def answer_with_tools(task, messages: list[dict]) -> str:
    """The model's reply to `messages` once it asks for no more tool calls, each call it asks for run on the MCP
    server."""
    model = AsyncOpenAI(base_url=task.base_url, api_key=task.api_key)
    transport = StreamableHttpTransport(task.mcp_url, headers={"Authorization": f"Bearer {task.api_key}"})
    async with Client(transport) as mcp:
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.inputSchema}} for t in await mcp.list_tools()]
        for _ in range(task.max_turns):
            reply = (await model.chat.completions.create(model=task.model, messages=messages, tools=tools)).choices[0]
            message = reply.message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = await mcp.call_tool(call.function.name, json.loads(call.function.arguments or "{}"),
                                             raise_on_error=False)
                text = "\n".join(part.text for part in result.content if hasattr(part, "text"))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return ""


def country_of_first_customer(task) -> str:
    """A blocking agent (run in a thread): one model call, no tools; its answer is whatever the model says."""
    client = OpenAI(base_url=task.base_url, api_key=task.api_key)
    reply = client.chat.completions.create(model=task.model, messages=[{"role": "user", "content": task.prompt}])
    return reply.choices[0].message.content or ""


def broken(task) -> str:
    raise RuntimeError("the team's agent has a bug")
