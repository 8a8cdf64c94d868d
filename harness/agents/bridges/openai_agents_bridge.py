"""An OpenAI Agents SDK `Agent` as an arm, built as the SDK's documentation builds one for a model of another
provider: `OpenAIChatCompletionsModel` over an `AsyncOpenAI` client at the run's endpoint (Chat Completions: the
endpoint serves no Responses API), the run's servers through its MCP server support (`MCPServerStreamableHttp` with
the run's key as a bearer header), the task's system instructions as its `instructions`, the run's turn limit as
`max_turns`, and tracing off for the run (`RunConfig(tracing_disabled=True)`: its traces would be exported to
OpenAI's servers, and the run's transcript records the run). Everything else is the SDK's: a reply without a tool
call is its final output. A later user turn of a conversation continues it as the SDK documents: its input is a list
of messages, the earlier turns' (user messages and answers, text only: their tool calls are not replayed, their
effects are on the run's servers) then this turn's."""

from __future__ import annotations

from typing import Any

from harness.agents.agent_task import AgentTask

AGENT_NAME = "Assistant"  # the SDK requires a name; its own examples use this one


async def openai_agents_agent(task: AgentTask) -> Any:
    """One run of an Agents SDK agent; its answer is the run's final output."""
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from agents.mcp import MCPServerStreamableHttp
    from openai import AsyncOpenAI

    model = OpenAIChatCompletionsModel(model=task.model,
                                       openai_client=AsyncOpenAI(base_url=task.base_url, api_key=task.api_key))
    params = {"url": task.mcp_url, "headers": {"Authorization": f"Bearer {task.api_key}"}}
    async with MCPServerStreamableHttp(params=params) as servers:
        agent = Agent(name=AGENT_NAME, instructions=task.system_instructions or None, model=model,
                      mcp_servers=[servers])
        given = [*task.history, {"role": "user", "content": task.prompt}] if task.history else task.prompt
        result = await Runner.run(agent, given, max_turns=task.max_turns,
                                  run_config=RunConfig(tracing_disabled=True))
    return result.final_output
