"""One episode: a task run once by an agent against fresh servers, scored by the task's scorer.

`harness run` (each row), `harness optimize` (each metric call) and `harness validate` (each reference) all run
episodes through this one function, so what a row records, what an optimizer is scored on and what validation
checks cannot drift apart: the same servers, time limits, error kinds and scoring.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from harness.agents.base import Agent, AgentError, AgentResult
from harness.agents.scaffold import Scaffold
from harness.errors import UserError, describe_exception
from harness.mcp.servers import ServerSession, ToolCall, open_servers
from harness.tasks.scorers import Score, build_scorer
from harness.tasks.task import Task

LMFactory = Callable[[], Awaitable[dspy.LM]]


@dataclass(frozen=True)
class Episode:
    """What one episode produced. `error` is what ended it early (the agent's own, a timeout, or an internal
    failure such as a server that would not start); `calls` and `server_logs` are the session's."""

    answer: str
    score: Score
    result: AgentResult | None
    error: AgentError | None
    end_state: dict[str, Any] = field(hash=False, compare=False)
    calls: tuple[ToolCall, ...] = ()
    server_logs: dict[str, str] = field(default_factory=dict, hash=False, compare=False)


async def _run_agent(agent: Agent, task: Task, session: ServerSession, lm: dspy.LM | None) -> AgentResult:
    if lm is None:
        return await agent.run(task, session)
    # a per-run trace and no global history: dspy would otherwise keep every call forever
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(), disable_history=True, trace=[]):
        return await agent.run(task, session)


async def episode(task: Task, make_agent: Callable[[], Agent], *, scaffold: Scaffold, timeout_s: float,
                  tool_timeout_s: float, lm_factory: LMFactory | None = None, log_dir: Path | None = None) -> Episode:
    """Run `task` once on fresh servers with the agent `make_agent` gives, and score it. `scaffold` is the run's
    (its id guard is applied to the session here; the agent applies the rest). `timeout_s` bounds the
    agent's run. With `lm_factory` the run gets that LM, a per-run dspy trace and no global history; without
    it the caller's dspy settings apply (an optimizer traces its student's calls there). Never raises for the
    run's own failures (they are the episode's `error`); a UserError (bad input, a permanent setup problem)
    propagates."""
    result: AgentResult | None = None
    error: AgentError | None = None
    opened: list[ServerSession] = []
    end_state: dict[str, Any] = {}
    try:
        async with open_servers(task.servers, tool_timeout_s=tool_timeout_s, log_dir=log_dir) as session:
            opened.append(session)
            if scaffold.id_guard:
                session.guard_ids(task.prompt)
            agent = make_agent()
            lm = await lm_factory() if lm_factory else None
            try:
                result = await asyncio.wait_for(_run_agent(agent, task, session, lm), timeout_s)
            except TimeoutError:
                error = AgentError("timeout", f"run exceeded {timeout_s:g} s")
            end_state = session.end_state()
    except UserError:
        raise
    except Exception as exc:  # a bug or a broken server: the episode failed, the suite goes on
        error = AgentError("internal", describe_exception(exc))
    if result is not None and result.error is not None:
        error = result.error
    answer = result.answer if result else ""
    score = build_scorer(task.scorer).score(answer, task.expected, end_state)
    session = opened[0] if opened else None
    return Episode(answer=answer, score=score, result=result, error=error, end_state=end_state,
                   calls=tuple(session.calls) if session else (),
                   server_logs=dict(session.stderr_logs) if session else {})
