"""A Pydantic AI `Agent` as an arm, built as Pydantic AI's documentation builds one: the run's model through its
OpenAI provider pointed at the run's endpoint (`OpenAIChatModel` with `OpenAIProvider(base_url=..., api_key=...)`,
its documented way to an OpenAI-compatible server), the run's servers as its MCP toolset (`MCPToolset` on the MCP
URL with the run's key as a bearer header), the task's system instructions as its `instructions`, and the run's turn
limit as its usage limit (`request_limit`). Everything else is Pydantic AI's: its tool retries, its text output (a
reply without a tool call is the answer). A later user turn of a conversation continues it as Pydantic AI documents:
the earlier turns as its `message_history` (each user message a `ModelRequest`, each answer a `ModelResponse` of
text; the tool calls of those turns are not replayed, their effects are on the run's servers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.agents.agent_task import AgentTask

if TYPE_CHECKING:  # the framework is imported when its arm runs
    from pydantic_ai.messages import ModelMessage


async def pydantic_ai_agent(task: AgentTask) -> str:
    """One run of a Pydantic AI agent with a text output; its answer is the run's output."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    model = OpenAIChatModel(task.model, provider=OpenAIProvider(base_url=task.base_url, api_key=task.api_key))
    servers = MCPToolset(task.mcp_url, headers={"Authorization": f"Bearer {task.api_key}"})
    agent = Agent(model, instructions=task.system_instructions or None, toolsets=[servers])
    result = await agent.run(task.prompt, message_history=message_history(task) or None,
                             usage_limits=UsageLimits(request_limit=task.max_turns))
    return result.output


def message_history(task: AgentTask) -> list[ModelMessage]:
    """The conversation before this turn as Pydantic AI's messages (text only)."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart

    return [ModelRequest.user_text_prompt(m["content"]) if m["role"] == "user"
            else ModelResponse(parts=[TextPart(m["content"])]) for m in task.history]
