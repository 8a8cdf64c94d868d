"""smolagents' two agents as arms, built as smolagents' documentation builds them: the run's servers through its own
MCP support (`MCPClient` over streamable HTTP, the run's key as a bearer header), the run's model through its
OpenAI-compatible model class (`OpenAIServerModel` with `api_base`), and `CodeAgent` or `ToolCallingAgent` with its
own prompts and defaults, handed the task's prompt, the task's system instructions (its `instructions`) and the
run's turn limit (`max_steps`). CodeAgent runs the code it writes on the host, in smolagents' own local Python
executor (its documented default), not in the harness's sandbox. A later user turn of a conversation continues it
as smolagents does (`run(task, reset=False)` on an agent whose memory holds the earlier turns): each earlier user
message a task step and each answer a final step of the agent's (text only: the tool calls and code of those turns
are not replayed, their effects are on the run's servers).

Two choices are the bridge's: `structured_output=True` (the MCP tools return the structured content their servers
declare, the default smolagents announces for its next releases and warns about until then), and smolagents' console
log turned off (it prints every step's panels to stdout; the run's transcript records them instead), with its MCP
adapter's warnings (one per tool error, whose text it tries to read as JSON: the transcript records the error)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from harness.agents.agent_task import AgentTask

if TYPE_CHECKING:  # the framework is imported when its arm runs
    from smolagents.memory import MemoryStep

SmolAgentKind = Literal["code", "tools"]


def run_smolagent(task: AgentTask, kind: SmolAgentKind) -> Any:
    """One run of smolagents' `CodeAgent` (`code`) or `ToolCallingAgent` (`tools`); blocking (smolagents is
    synchronous, and its MCP client runs its own event loop in a thread), so the harness runs it in a worker thread.
    Its answer is what its `final_answer` gives."""
    from harness.agents.bridges import mcp_sdk1

    mcp_sdk1.provide()
    from smolagents import CodeAgent, MCPClient, OpenAIServerModel, ToolCallingAgent
    from smolagents.monitoring import LogLevel

    logging.getLogger("mcpadapt").setLevel(logging.ERROR)
    model = OpenAIServerModel(model_id=task.model, api_base=task.base_url, api_key=task.api_key)
    server = {"url": task.mcp_url, "transport": "streamable-http",
              "headers": {"Authorization": f"Bearer {task.api_key}"}}
    with MCPClient(server, structured_output=True) as tools:
        agent_class = CodeAgent if kind == "code" else ToolCallingAgent
        agent = agent_class(tools=tools, model=model, max_steps=task.max_turns,
                            instructions=task.system_instructions or None, verbosity_level=LogLevel.OFF)
        agent.memory.steps.extend(earlier_turns(task))
        return agent.run(task.prompt, reset=not task.history)


def earlier_turns(task: AgentTask) -> list[MemoryStep]:
    """The conversation before this turn as smolagents' memory steps: a user message is a `TaskStep`, an answer an
    `ActionStep` whose output was the final answer (shown to the model as its own message)."""
    from smolagents.memory import ActionStep, TaskStep
    from smolagents.monitoring import Timing

    return [TaskStep(task=m["content"]) if m["role"] == "user" else
            ActionStep(step_number=n, timing=Timing(start_time=0.0, end_time=0.0), model_output=m["content"],
                       action_output=m["content"], is_final_answer=True)
            for n, m in enumerate(task.history, start=1)]


def code_agent(task: AgentTask) -> Any:
    """smolagents' CodeAgent: Python in `<code>` blocks, run by its local executor, calling the MCP tools as
    functions; it answers with `final_answer(...)` in its code."""
    return run_smolagent(task, "code")


def tool_calling_agent(task: AgentTask) -> Any:
    """smolagents' ToolCallingAgent: native tool calls of the MCP tools; it answers by calling its `final_answer`
    tool."""
    return run_smolagent(task, "tools")
