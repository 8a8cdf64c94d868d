"""What the endpoint tests share: a run served on a scripted model (its context and its endpoints), and an agent from
outside the package as a team would write one: a small loop on the `openai` client and fastmcp's MCP client that
knows nothing of the harness but the endpoints."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import openai
from fastmcp import Client

from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.endpoints import Endpoints, serving
from harness.mcp.servers import open_servers
from harness.models.engine import CallRecorder, make_lm
from harness.models.scripted import Policy, ScriptedEngine
from harness.tasks.suite import load_suite
from harness.tasks.task import Task
from harness.trace.calls import LMCall
from harness.trace.errors import RunError
from tests.agent_runs import context_for

SMOKE = {task.id: task for task in load_suite("smoke").tasks}


@asynccontextmanager
async def served(policy: Policy | None, task: Task = SMOKE["customer-country"],
                 check: Callable[[Sequence[LMCall]], None] | None = None, engine: Any = None,
                 **options: Any) -> AsyncIterator[tuple[SampleContext, Endpoints]]:
    """A run of `task` on fresh servers whose model answers by `policy` (or is `engine`), its LM calls recorded as a
    run's under the spending `check`, served on the endpoints."""
    async with open_servers(task.servers) as session:
        ctx = context_for(task, session, **options)
        engine = engine if engine is not None else ScriptedEngine(policy)
        lm = make_lm("scripted:endpoints", engine, recorder=CallRecorder(ctx.transcript, check=check))
        ctx = replace(ctx, lm=lm)
        async with serving(ctx) as endpoints:
            yield ctx, endpoints


def openai_tools(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """MCP tools as OpenAI function tools (what every tool-calling framework does with an MCP server's list)."""
    return [{"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                              "parameters": tool.input_schema}} for tool in tools]


def chat_client(endpoints: Endpoints) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=endpoints.base_url, api_key=endpoints.api_key)


async def openai_loop(endpoints: Endpoints, prompt: str, max_turns: int = 10) -> AgentResult:
    """The tool-calling loop everyone writes: ask the model with the MCP server's tools, run the calls it asks for,
    hand back their results, until it answers."""
    client = chat_client(endpoints)
    async with Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
        tools = openai_tools(await mcp.list_tools())
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        for _ in range(max_turns):
            response = await client.chat.completions.create(model=endpoints.model, messages=messages, tools=tools)
            reply = response.choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                return AgentResult(reply.content or "")
            for call in reply.tool_calls:
                result = await mcp.call_tool(call.function.name, json.loads(call.function.arguments),
                                             raise_on_error=False)
                text = "\n".join(getattr(part, "text", "") for part in result.content)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": f"Error: {text}" if result.is_error else text})
    return AgentResult("", RunError("max_turns", f"no answer in {max_turns} turns"))


class OpenAILoopAgent:
    """The loop as an arm's agent: the run's endpoints, then the loop on them."""

    name = "openai-loop"

    async def run(self, ctx: SampleContext) -> AgentResult:
        async with serving(ctx) as endpoints:
            return await openai_loop(endpoints, ctx.task.prompt)
