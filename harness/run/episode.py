"""One episode: a task run once by an agent against fresh servers, scored by the task's scorer.

`harness run` (each row), `harness optimize` (each metric call) and `harness validate` (each reference) all run
episodes through this one function, so what a row records, what an optimizer is scored on and what validation
checks cannot drift apart: the same servers, limits, error kinds and scoring. The episode builds the run's one
context (harness.agents.context.SampleContext) and hands it to the agent; everything the run does is recorded in its
transcript as it happens, so whatever ends it (an answer, a limit, a timeout, a crash, an interrupt) the episode
returns what it did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import dspy

from harness.agents.base import Agent, AgentResult
from harness.agents.context import AnswerCheck, SampleContext
from harness.agents.conversation import ScriptedUser, UserSimulator
from harness.agents.failures import decision_error
from harness.agents.scaffold import Scaffold
from harness.agents.sessions import SessionSlot, carried_text, shared_servers_slot
from harness.errors import UserError, describe_exception
from harness.limits import Limits
from harness.mcp.held_tools import offer_turn_tools
from harness.mcp.servers import ServerSession, ServerStartError, open_servers
from harness.tasks.judging import JudgeError
from harness.tasks.scorers import ProbeOutcome, Score, ScoreContext, Scorer, build_scorer
from harness.tasks.task import Task
from harness.trace.errors import RunError
from harness.trace.transcript import Transcript

LMFactory = Callable[[], Awaitable[dspy.LM]]
# The agent's LM for a run, given the run's context (a model that replays references replays them on its servers).
AgentLMFactory = Callable[[SampleContext], Awaitable[dspy.LM]]
INTERRUPTED = "the run was interrupted (Ctrl-C or a stop signal) before it ended"


@dataclass(frozen=True)
class Episode:
    """What one episode leaves: its transcript, every event of the run in the order it happened whatever ended it
    (its answer and error are its `end` event, its score its `score` event), and what a transcript does not hold:
    what the scorer judged (`judged`: the end state of the servers, the probes' results, the conversation, the
    task text the agent was given; a reference trace reads it), the external servers' log files, and per server
    started per run its placeholders' values in this run (`{"RUN_DIR": ...}`; a reference trace replays on them)."""

    transcript: Transcript
    judged: ScoreContext
    server_logs: dict[str, str] = field(default_factory=dict)
    run_values: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def answer(self) -> str:
        end = self.transcript.end
        return end.answer if end is not None else ""

    @property
    def error(self) -> RunError | None:
        end = self.transcript.end
        return end.error if end is not None else None

    @property
    def score(self) -> Score:
        verdict = self.transcript.verdict
        return Score(verdict.value, verdict.passed, verdict.reason) if verdict is not None else Score(0.0, False, "")


def judge_of(lm: dspy.LM, temperature: float | None = None) -> Callable[[str, str], str]:
    """A scorer's judge: one LM call (system, user) -> the reply's text (the LM records it with the role "judge"),
    at the LM's own temperature (0) unless `temperature` is given (`judge-check --judge-temperature`)."""
    sampling = {} if temperature is None else {"temperature": temperature}

    def judge(system: str, user: str) -> str:
        outputs = lm(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}], **sampling)
        first = outputs[0] if outputs else ""
        return str(first.get("text") or "") if isinstance(first, dict) else str(first or "")
    return judge


async def _run_agent(agent: Agent, ctx: SampleContext) -> AgentResult:
    if ctx.lm is None:
        return await agent.run(ctx)
    # a per-run trace and no global history: dspy would otherwise keep every call forever
    with dspy.context(lm=ctx.lm, adapter=dspy.ChatAdapter(), disable_history=True, trace=[]):
        return await agent.run(ctx)


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


def _stop_clock_during_setup(transcript: Transcript, timer: asyncio.Timeout, clock: Callable[[], float]) -> None:
    """While the run waits for one-time start-up, its time limit does not run (the time it had left is kept)."""
    left: list[float] = []

    def pause() -> None:
        deadline = timer.when()
        left.append((deadline - clock()) if deadline is not None else float("inf"))
        timer.reschedule(None)

    def resume() -> None:
        remaining = left.pop() if left else float("inf")
        timer.reschedule(None if remaining == float("inf") else clock() + remaining)

    transcript.pause_clock, transcript.resume_clock = pause, resume


async def episode(task: Task, make_agent: Callable[[], Agent], *, scaffold: Scaffold, limits: Limits = Limits(),
                  transcript: Transcript | None = None, lm_factory: AgentLMFactory | None = None,
                  user_lm_factory: LMFactory | None = None, judge_lm_factory: LMFactory | None = None,
                  slot: SessionSlot | None = None, log_dir: Path | None = None,
                  tokens_so_far: Callable[[], int] | None = None, judge_model: str = "") -> Episode:
    """Run `task` once on fresh servers with the agent `make_agent` gives, under `limits` (the whole run, the
    servers' start within it, each tool call), and score it; everything is recorded into `transcript` (a new one if
    None). `scaffold` is the run's (its id guard is applied to the session here; the agent applies the rest). With
    `lm_factory` the run gets that LM, a per-run dspy trace and no global history; without it the caller's dspy
    settings apply (an optimizer traces its student's calls there). A task with a user (Task.user) is a
    conversation when `user_lm_factory` gives the user's LM (harness.agents.conversation): the user opens it, and
    the agent gets that opening in its task text; without one (a reference traced for validation) the task runs as
    one instruction. `judge_lm_factory` gives the scorer a judge (ScoreContext.judge; `judge_model` names it, for
    its verdict cache); a scorer that gets no verdict it can read fails the run as `judge_error`. `slot`: the task's place in
    its session. After the agent ends, and before the servers close, the scorer's probes run on the run's own
    session. How the run ended is its transcript's `end` event (the answer, or the error: the agent's own, a
    timeout, `server_error` for a server that did not come up, `internal`), then the verdict its `score` event: the
    row reads both. Never raises for the run's own failures; a UserError (bad input, a permanent setup problem)
    propagates, and an interrupt (cancellation) during the agent's run propagates once its `interrupted` end is
    recorded."""
    transcript = transcript if transcript is not None else Transcript()
    result: AgentResult | None = None
    error: RunError | None = None
    opened: list[ServerSession] = []
    end_state: dict[str, Any] = {}
    probes: dict[str, ProbeOutcome] = {}
    scorer = build_scorer(task.scorer)
    user: UserSimulator | ScriptedUser | None = None
    given = task
    clock = asyncio.get_running_loop().time
    started = clock()
    shared = shared_servers_slot(slot)  # a session sharing server state: start from where its previous task left them
    try:
        async with open_servers(task.servers, tool_timeout_s=limits.tool_timeout_s, log_dir=log_dir,
                                start_timeout_s=min(limits.server_start_timeout_s, limits.timeout_s),
                                max_tool_result_mb=limits.max_tool_result_mb, tool_latency_s=limits.tool_latency_s,
                                states=shared.place.before.server_states if shared else None,
                                transcript=transcript) as session:
            opened.append(session)
            if task.user is not None and task.user.turns:  # a benchmark's fixed user turns: no user model
                user = ScriptedUser(task.user, transcript, on_turn=partial(offer_turn_tools, session))
            elif task.user is not None and user_lm_factory is not None:
                user = UserSimulator(task.user, await user_lm_factory())
            if scaffold.id_guard:  # what the task's session handed it and an id the user said count as seen
                session.guard_ids("\n".join(part for part in (task.prompt, carried_text(slot)) if part))
                if user is not None and session.seen is not None:
                    user.listeners.append(session.seen.see)
            agent = make_agent()
            ctx = SampleContext(task=task, session=session, scaffold=scaffold, limits=limits, transcript=transcript,
                                user=user, check_answer=answer_check(task, scorer, session, tokens_so_far), slot=slot)
            if lm_factory is not None:
                ctx = replace(ctx, lm=await lm_factory(ctx))
            try:  # the run's time limit, not counting one-time start-up it waits for (its setup events)
                async with asyncio.timeout(limits.timeout_s - (clock() - started) + transcript.cold_start_s) as timer:
                    _stop_clock_during_setup(transcript, timer, clock)
                    if user is not None:
                        given = replace(task, prompt=user.task_text(task.prompt, await user.open()))
                        ctx = replace(ctx, task=given)
                    result = await _run_agent(agent, ctx)
            except TimeoutError:
                error = RunError("timeout", f"run exceeded {limits.timeout_s:g} s")
            except asyncio.CancelledError:
                transcript.end_in_flight()
                transcript.begin_step(None)
                transcript.ended("", RunError("interrupted", INTERRUPTED))
                raise
            except Exception as exc:  # the user's opening failed: an LM error of the user model
                if (failed := decision_error(exc)) is None:
                    raise
                error = replace(failed, message=f"user model: {failed.message}")
            finally:  # what was still running when the agent ended (a timeout, a crash): kept, cut short
                transcript.end_in_flight()
            transcript.pause_clock = transcript.resume_clock = None
            transcript.begin_step(None)  # what follows is the episode's, not a step's
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
    transcript.begin_step(None)
    if result is not None and result.error is not None:
        error = result.error
    answer = result.answer if result else ""
    session = opened[0] if opened else None
    context = ScoreContext(answer=answer, expected=task.expected, end_state=end_state, tool_calls=transcript.tool_calls,
                           probes=probes, turns=len(transcript.steps),
                           tokens=tokens_so_far() if tokens_so_far else 0, error_type=error.type if error else "",
                           conversation=user.conversation() if user is not None else (),
                           user_turn_steps=tuple(user.turn_steps) if isinstance(user, ScriptedUser) else (),
                           judge=judge_of(await judge_lm_factory()) if judge_lm_factory else None,
                           judge_model=judge_model, question=given.prompt)
    try:
        score = scorer.evaluate(context)
    except JudgeError as exc:
        score = Score(0.0, False, str(exc))
        error = error or RunError("judge_error", str(exc))
    transcript.ended(answer, error)
    transcript.score(score.passed, score.value, score.reason)
    return Episode(transcript, context, server_logs=dict(session.stderr_logs) if session else {},
                   run_values=dict(session.run_values) if session else {})
