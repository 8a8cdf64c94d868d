"""What every arm shares: the Agent protocol and the AgentResult every run produces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from harness.agents.context import SampleContext
from harness.trace.errors import RunError


@dataclass(frozen=True)
class AgentResult:
    """How an agent's run ended: its answer, or the error that ended it without one. Everything it did on the way
    (steps, LM calls, tool calls, code) is in the run's transcript, recorded as it happened."""

    answer: str
    error: RunError | None = None


class Agent(Protocol):
    """An arm: runs one sample with what its context hands it (the task, the run's servers, the LM set in dspy's
    context, the scaffold, the limits), recording into the context's transcript."""

    name: str

    async def run(self, ctx: SampleContext) -> AgentResult: ...
