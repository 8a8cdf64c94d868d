"""An arm's agent run on one task outside the runner, handed its context the way an episode hands it: what the
agent tests share. The run's counts are read from its transcript as a row reads them (harness.run.row)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dspy

from harness.agents.base import Agent, AgentResult
from harness.agents.context import SampleContext
from harness.agents.scaffold import GUIDED, Scaffold
from harness.limits import Limits
from harness.mcp.servers import ServerSession
from harness.models.engine import CallRecorder, make_lm
from harness.run.row import observation_texts, sandbox_time_s
from harness.tasks.task import Task
from harness.trace.calls import LMCall
from harness.trace.steps import TrajectoryStep
from harness.trace.transcript import Transcript


@dataclass(frozen=True)
class AgentRun:
    """How the agent's run ended, and what its transcript recorded."""

    result: AgentResult
    transcript: Transcript

    @property
    def answer(self) -> str:
        return self.result.answer

    @property
    def error(self):
        return self.result.error

    @property
    def steps(self) -> tuple[TrajectoryStep, ...]:
        return self.transcript.steps

    @property
    def turns(self) -> int:
        return len(self.steps)

    @property
    def observation_texts(self) -> tuple[str, ...]:
        return observation_texts(self.steps)

    @property
    def tool_definition_texts(self) -> tuple[str, ...]:
        return self.transcript.tool_definition_texts

    @property
    def answer_attempts(self) -> int:
        return len(self.transcript.answers)

    @property
    def repeated_actions(self) -> int:
        return sum(1 for s in self.steps if s.repeat_of is not None)

    @property
    def policy_violations(self) -> int:
        return sum(1 for r in self.transcript.code_runs if r.error_kind == "policy")

    @property
    def sandbox_time_s(self) -> float:
        return sandbox_time_s(self.transcript)

    @property
    def tool_files_read(self) -> int | None:
        return self.transcript.info("tool_files_read")

    @property
    def lm_calls(self) -> tuple[LMCall, ...]:
        return self.transcript.lm_calls


def context_for(task: Task, session: ServerSession, scaffold: Scaffold = GUIDED, **options: Any) -> SampleContext:
    """The context an episode would hand a run of `task` on `session` (its transcript: the session's)."""
    return SampleContext(task=task, session=session, scaffold=scaffold, limits=options.pop("limits", Limits()),
                         transcript=session.transcript, **options)


async def run_agent(agent: Agent, task: Task, session: ServerSession, engine: Any, scaffold: Scaffold = GUIDED,
                    **options: Any) -> tuple[AgentRun, Transcript]:
    """Run `agent` on `task` with a model answering through `engine` (a scripted one), its LM calls recorded in the
    session's transcript as a run's are; returns the run and that transcript."""
    ctx = context_for(task, session, scaffold, **options)
    lm = make_lm("scripted", engine, recorder=CallRecorder(ctx.transcript))
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        result = await agent.run(ctx)
    return AgentRun(result, ctx.transcript), ctx.transcript
