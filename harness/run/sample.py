"""One sample (a task x an arm x the model x an epoch) run once: its transcript and recorder, its episode, and the row
and trajectory computed from what it recorded. The runner schedules samples; this is everything one of them does,
whatever ends it (an answer, a limit, a timeout, a crash, an interrupt: an interrupted run's row is written too, and
a resumed run runs it again)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness.agents.arms import get_arm
from harness.agents.base import Agent
from harness.agents.context import SampleContext
from harness.agents.scaffold import OWN, Scaffold
from harness.agents.sessions import SessionPlace, SessionSlot, SessionState
from harness.models.cost import RunLimits, pricing_for
from harness.models.engine import CallRecorder, ModelProvider
from harness.run.config import RunConfig
from harness.run.episode import INTERRUPTED, episode
from harness.run.manifest import git_sha
from harness.run.records import RunRecord, sample_id
from harness.run.row import agent_calls, run_context, run_row, run_tokens
from harness.tasks.task import Task
from harness.trace.errors import RunError
from harness.trace.trajectory import TRAJECTORY_VERSION, Trajectory
from harness.trace.transcript import Transcript
from harness.trace.transcript_file import TranscriptWriter
from harness.version import __version__


@dataclass(frozen=True)
class Sample:
    """One run to make; `place`: where it stands in its session (None: not in one), set when its chain gets to it."""

    task: Task
    arm: str
    epoch: int
    place: SessionPlace | None = None


@dataclass(frozen=True)
class SampleResult:
    """A finished sample: its row, its trajectory, and the session state it left (None: not in a session)."""

    record: RunRecord
    trajectory: Trajectory
    after: SessionState | None = None


class Store(Protocol):
    """What a sample needs of the run's result store: where external servers' logs go, how a row names its
    trajectory, and a way to keep a row (an interrupted run's, written before the interrupt goes on)."""

    trajectory_path: Path

    def trajectory_ref(self, sample: str) -> str: ...

    def open_transcript(self, sample: str, start: dict[str, Any]) -> TranscriptWriter: ...


@dataclass(frozen=True)
class Models:
    """The run's model roles: the agent's, and the simulated user's and the judge's (None: not needed or named)."""

    agent: ModelProvider
    user: ModelProvider | None = None
    judge: ModelProvider | None = None


async def run_sample(config: RunConfig, sample: Sample, run_id: str, store: Store, agent: Callable[[], Agent],
                     models: Models, on_interrupt: Callable[[SampleResult], None] | None = None) -> SampleResult:
    """Run `sample` once and return its row and trajectory. Every LM call of every role is recorded in the run's
    transcript by the LM it is handed, every tool call by the run's session, and written to the run's transcript
    file as it happens; the row is computed from it. An interrupt (cancellation) hands the run's row to
    `on_interrupt`, then goes on."""
    task, arm = sample.task, sample.arm
    slot = SessionSlot(sample.place) if sample.place else None
    limits, pricing = config.limits, pricing_for(config.model)
    spending = RunLimits(limits.max_tokens_per_run, limits.max_cost_per_run)
    scaffold = config.rules if get_arm(arm).scaffold_applies else OWN  # an agent from outside: none of its rules
    started_at, t0 = datetime.now(UTC), time.perf_counter()
    start = run_start(config, sample, run_id, scaffold, models, started_at)
    sink = store.open_transcript(sample_id(task.id, arm, config.model, sample.epoch), start)
    transcript = Transcript(sink)
    recorder = CallRecorder(transcript, check=spending.checker(pricing) if spending.active else None,
                            cache_scope=f"epoch={sample.epoch}", context_window=limits.context_window,
                            cache_run=run_id)
    user, judge = models.user if task.user is not None else None, models.judge

    async def agent_lm(ctx: SampleContext) -> Any:
        return await models.agent.lm_for(task, arm, recorder, ctx)

    async def role_lm(provider: ModelProvider, role: Any) -> Any:
        return await provider.lm_for(task, role, recorder.as_role(role))

    def finished(server_logs: dict[str, str], prompt: str) -> SampleResult:
        sid = sample_id(task.id, arm, config.model, sample.epoch)
        record, trajectory = run_row(transcript, run_context(start, task, time.perf_counter() - t0,
                                                             store.trajectory_ref(sid), slot, server_logs, prompt))
        return SampleResult(record, trajectory, slot.state_after if slot else None)

    try:
        done = await episode(
            task, agent, scaffold=scaffold, limits=limits, transcript=transcript, lm_factory=agent_lm,
            user_lm_factory=(lambda: role_lm(user, "user")) if user is not None else None,
            judge_lm_factory=(lambda: role_lm(judge, "judge")) if judge is not None else None, slot=slot,
            log_dir=store.trajectory_path.with_name(f"{run_id}.server-logs"),
            tokens_so_far=lambda: run_tokens(agent_calls(transcript.lm_calls), models.agent.token_source),
            judge_model=config.judge_model)
    except asyncio.CancelledError:  # how it ended and its verdict, as every run's, are events of its transcript
        if transcript.end is None:  # interrupted outside the agent's run (starting servers, scoring)
            transcript.begin_step(None)
            transcript.ended("", RunError("interrupted", INTERRUPTED))
        transcript.score(False, 0.0, INTERRUPTED)
        sink.close()  # before the end line the interrupted run's row appends
        if on_interrupt is not None:
            on_interrupt(finished({}, task.prompt))
        raise
    finally:
        sink.close()  # its end line is appended once the run's row is kept (ResultStore.add)
    return finished(done.server_logs, done.judged.question)  # the row: a projection of the transcript


def run_start(config: RunConfig, sample: Sample, run_id: str, scaffold: Scaffold, models: Models,
              started_at: datetime) -> dict[str, Any]:
    """A run's start line in its transcript file: which run it is, and everything it runs under (limits, scaffold
    and its hash, pricing, the models of each role and where their token counts come from), so the file alone
    says what the run was and its row can be computed from it (harness.run.rebuild)."""
    task = sample.task
    user = models.user if task.user is not None else None
    return {"run_id": run_id, "suite": config.suite.name, "task_id": task.id, "task_hash": task.content_hash,
            "token_source": models.agent.token_source, "git_sha": git_sha(),
            "user_model": config.user if user is not None else "", "user_token_source": user.token_source if user else "",
            "judge_model": config.judge_model,
            "judge_token_source": models.judge.token_source if models.judge else "",
            "arm": sample.arm, "model": config.model, "epoch": sample.epoch, "prompt": task.prompt,
            "session": sample.place.session if sample.place else None,
            "session_position": sample.place.position if sample.place else None,
            "limits": config.limits.as_dict(), "scaffold": asdict(scaffold), "scaffold_hash": scaffold.hash,
            "program_hash": config.program_hash, "pricing": asdict(pricing_for(config.model)),
            "judge_pricing": asdict(pricing_for(config.judge_model)) if config.judge_model else None,
            "cache_mode": config.cache, "started_at": started_at.isoformat(),
            "harness_version": __version__, "trajectory_version": TRAJECTORY_VERSION}
