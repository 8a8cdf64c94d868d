"""One episode: a task run once by an agent against fresh servers, scored by the task's scorer.

`harness run` (each row), `harness optimize` (each metric call) and `harness validate` (each reference) all run
episodes through this one function, so what a row records, what an optimizer is scored on and what validation
checks cannot drift apart: the same servers, time limits, error kinds and scoring.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import dspy

from harness.agents.base import Agent, AgentResult
from harness.agents.conversation import UserSimulator, conversation_prompt, conversing
from harness.agents.feedback import AnswerCheck, checking_answers
from harness.agents.loop import decision_error
from harness.agents.scaffold import Scaffold
from harness.agents.sessions import carried_text, shared_servers_slot
from harness.defaults import (
    DEFAULT_MAX_TOOL_RESULT_MB,
    DEFAULT_SERVER_START_TIMEOUT_S,
    DEFAULT_TOOL_LATENCY_S,
)
from harness.errors import UserError, describe_exception
from harness.mcp.servers import ServerSession, ServerStartError, open_servers
from harness.tasks.scorers import ProbeOutcome, Score, ScoreContext, Scorer, build_scorer
from harness.tasks.task import Task
from harness.trace.calls import ProbeCall, ToolCallRecord
from harness.trace.cursor import acting_as, stepping
from harness.trace.errors import RunError
from harness.trace.steps import TrajectoryStep

LMFactory = Callable[[], Awaitable[dspy.LM]]


@dataclass(frozen=True)
class Episode:
    """What one episode produced. `error` is what ended it early (the agent's own, a timeout, a server that
    did not start, or an internal failure); `calls` (the agent's, each stamped with its step as it was made), `probes`
    (the scorer's, after the run) and `server_logs` are the session's."""

    answer: str
    score: Score
    result: AgentResult | None
    error: RunError | None
    end_state: dict[str, Any] = field(hash=False, compare=False)
    calls: tuple[ToolCallRecord, ...] = ()
    server_logs: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    steps: tuple[TrajectoryStep, ...] = ()
    probes: tuple[ProbeCall, ...] = ()
    context: ScoreContext | None = field(default=None, hash=False, compare=False)  # what the scorer judged
    prompt: str = ""  # the task text the agent was given (a conversation's holds the user's opening)
    user_turns: int | None = None  # the simulated user's messages (None: no user in this run)


def judge_of(lm: dspy.LM) -> Callable[[str, str], str]:
    """A scorer's judge: one LM call (system, user) -> the reply's text, recorded with the role "judge"."""
    def judge(system: str, user: str) -> str:
        with acting_as("judge"):
            outputs = lm(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        first = outputs[0] if outputs else ""
        return str(first.get("text") or "") if isinstance(first, dict) else str(first or "")
    return judge


async def _run_agent(agent: Agent, task: Task, session: ServerSession, lm: dspy.LM | None) -> AgentResult:
    if lm is None:
        return await agent.run(task, session)
    # a per-run trace and no global history: dspy would otherwise keep every call forever
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(), disable_history=True, trace=[]):
        return await agent.run(task, session)


def answer_check(task: Task, scorer: Scorer, session: ServerSession,
                 tokens_so_far: Callable[[], int] | None) -> AnswerCheck:
    """The task's scorer as the run's in-run answer check (scaffold rule `answer_feedback`): it judges the answer
    on what has happened so far, the tool calls made, the fixtures' end state now and its probes run now (read-only
    calls, recorded as the final ones are), the turns so far and the tokens so far; the run has no error yet."""
    async def check(answer: str, turns: int) -> bool:
        probes = await session.run_probes(scorer.probes())
        context = ScoreContext(answer=answer, expected=task.expected, end_state=session.end_state(),
                               tool_calls=tuple(session.calls), probes=probes, turns=turns,
                               tokens=tokens_so_far() if tokens_so_far else 0, error_type="")
        return scorer.evaluate(context).passed

    return check


async def episode(task: Task, make_agent: Callable[[], Agent], *, scaffold: Scaffold, timeout_s: float,
                  tool_timeout_s: float, lm_factory: LMFactory | None = None, log_dir: Path | None = None,
                  tokens_so_far: Callable[[], int] | None = None,
                  server_start_timeout_s: float = DEFAULT_SERVER_START_TIMEOUT_S,
                  max_tool_result_mb: float | None = DEFAULT_MAX_TOOL_RESULT_MB,
                  tool_latency_s: float = DEFAULT_TOOL_LATENCY_S,
                  user_lm_factory: LMFactory | None = None, judge_lm_factory: LMFactory | None = None) -> Episode:
    """Run `task` once on fresh servers with the agent `make_agent` gives, and score it. `scaffold` is the run's
    (its id guard is applied to the session here; the agent applies the rest). `timeout_s` bounds the whole run:
    opening the servers (itself bounded by `server_start_timeout_s`) and the agent's run after it; each tool call
    is bounded by `tool_timeout_s` and `max_tool_result_mb` (None: no size limit) and waits `tool_latency_s` first
    (the scorer's probes do not). With
    `lm_factory` the run gets that LM, a per-run dspy trace and no global history; without it the caller's dspy
    settings apply (an optimizer traces its student's calls there). After the agent ends, and before the servers
    close, the scorer's probes run on the run's own session. `tokens_so_far` gives the scorer the run's token
    count. A task with a user (Task.user) is a conversation when `user_lm_factory` gives the user's LM
    (harness.agents.conversation): the user opens it, and the agent gets that opening in its task text; without
    one (a reference traced for validation) the task runs as one instruction. `judge_lm_factory` gives the scorer a
    judge model (ScoreContext.judge; its calls are recorded with the role "judge"). Never raises for the run's own failures (they are the episode's `error`; a server that did not come
    up is `server_error`); a UserError (bad input, a permanent setup problem) propagates."""
    result: AgentResult | None = None
    error: RunError | None = None
    opened: list[ServerSession] = []
    end_state: dict[str, Any] = {}
    probes: dict[str, ProbeOutcome] = {}
    scorer = build_scorer(task.scorer)
    user: UserSimulator | None = None
    given = task
    clock = asyncio.get_running_loop().time
    started = clock()
    shared = shared_servers_slot()  # a session sharing server state: start from where its previous task left them
    with stepping():  # every LM call and tool call of the run is stamped with the step that made it
        try:
            async with open_servers(task.servers, tool_timeout_s=tool_timeout_s, log_dir=log_dir,
                                    start_timeout_s=min(server_start_timeout_s, timeout_s),
                                    max_tool_result_mb=max_tool_result_mb, tool_latency_s=tool_latency_s,
                                    states=shared.place.before.server_states if shared else None) as session:
                opened.append(session)
                left_s = timeout_s - (clock() - started)
                if task.user is not None and user_lm_factory is not None:
                    user = UserSimulator(task.user, await user_lm_factory())
                if scaffold.id_guard:  # what the task's session handed it and an id the user said count as seen
                    session.guard_ids("\n".join(part for part in (task.prompt, carried_text()) if part))
                    if user is not None and session.seen is not None:
                        user.listeners.append(session.seen.see)
                agent = make_agent()
                lm = await lm_factory() if lm_factory else None
                try:
                    if user is not None:
                        opening = await asyncio.wait_for(user.open(), left_s)
                        given = replace(task, prompt=conversation_prompt(task.prompt, opening))
                    with (checking_answers(answer_check(task, scorer, session, tokens_so_far)),
                          conversing(user) if user is not None else contextlib.nullcontext()):
                        result = await asyncio.wait_for(_run_agent(agent, given, session, lm),
                                                        timeout_s - (clock() - started))
                except TimeoutError:
                    error = RunError("timeout", f"run exceeded {timeout_s:g} s")
                except Exception as exc:  # the user's opening failed: an LM error of the user model
                    if (failed := decision_error(exc)) is None:
                        raise
                    error = replace(failed, message=f"user model: {failed.message}")
                end_state = session.end_state()
                if shared is not None:
                    shared.servers_after = session.dump_states()
                probes = await session.run_probes(scorer.probes())
        except UserError:
            raise
        except ServerStartError as exc:
            error = RunError("server_error", str(exc), server=exc.server)
        except Exception as exc:  # a bug or a broken server: the episode failed, the suite goes on
            error = RunError("internal", describe_exception(exc))
    if result is not None and result.error is not None:
        error = result.error
    answer = result.answer if result else ""
    session = opened[0] if opened else None
    steps = result.steps if result else ()
    calls = tuple(session.calls) if session else ()
    context = ScoreContext(answer=answer, expected=task.expected, end_state=end_state, tool_calls=calls,
                           probes=probes, turns=result.turns if result else 0,
                           tokens=tokens_so_far() if tokens_so_far else 0, error_type=error.type if error else "",
                           conversation=user.conversation() if user is not None else (),
                           judge=judge_of(await judge_lm_factory()) if judge_lm_factory else None)
    return Episode(answer=answer, score=scorer.evaluate(context), result=result, error=error, end_state=end_state,
                   calls=calls, server_logs=dict(session.stderr_logs) if session else {}, steps=steps,
                   probes=tuple(session.probes) if session else (), context=context, prompt=given.prompt,
                   user_turns=user.turns if user is not None else None)
