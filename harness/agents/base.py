"""What every arm shares: the Agent protocol and the AgentResult every run produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from harness.mcp.servers import ServerSession
from harness.tasks.task import Task
from harness.trace.errors import RunError
from harness.trace.steps import TrajectoryStep


@dataclass(frozen=True)
class AgentResult:
    """The outcome of one agent run: its typed steps, as the trajectory stores them; the LM calls and tool calls
    are logged (each with its step) by the engine and the run's session."""

    answer: str
    steps: tuple[TrajectoryStep, ...]
    error: RunError | None = None
    policy_violations: int = 0
    sandbox_time_s: float = 0.0
    repeated_actions: int = 0  # turns whose action and outcome were identical to an earlier turn's
    answer_attempts: int = 0  # answers taken (not refused by a rule): each rejected one, and the accepted one
    # Texts the agent put into its prompts, so token counts can be split by where they came from.
    tool_definition_texts: tuple[str, ...] = ()
    observation_texts: tuple[str, ...] = field(default=(), repr=False)
    # The tool modules its code opened, distinct (codemode-files); None for an arm without tool files.
    tool_files_read: int | None = None

    @property
    def turns(self) -> int:
        return len(self.steps)


class Agent(Protocol):
    """An arm: runs one task against one run's servers with the LM set in dspy's context."""

    name: str

    async def run(self, task: Task, session: ServerSession) -> AgentResult: ...
