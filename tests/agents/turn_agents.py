"""Agents from outside for conversation tasks, written as a team writes one: each turn's messages are the history it
is handed and the turn's prompt, then the team's tool loop over the run's endpoints (tests.agents.team_agent);
`seen` keeps every task an agent run in the harness's process was handed (--agent-isolation in-process)."""

from __future__ import annotations

from tests.agents.team_agent import answer_with_tools

seen: list = []  # the AgentTask of each call, in order (in-process runs only: a forked process has its own)


async def conversing(task) -> str:
    """The earlier turns, then this turn's message; the model's tool calls run until it replies without one."""
    seen.append(task)
    return await answer_with_tools(task, [*task.history, {"role": "user", "content": task.prompt}])


async def fails_in_second_turn(task) -> str:
    """Answers its first turn as `conversing` does, and raises in the next."""
    if task.history:
        raise RuntimeError("lost the thread in turn 2")
    return await conversing(task)
