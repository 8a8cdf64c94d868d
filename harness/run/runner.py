"""Running a suite: every task x arm x epoch against fresh servers, one RunRecord per run, flushed as each
run finishes. A run that fails (exception, timeout, unparseable output) is a recorded row, never a crash."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import harness.adapters  # noqa: F401  registers the published benchmarks, for a resumed run and a Ray worker
from harness.agents.arms import ARMS, build_agent, check_arms
from harness.agents.base import Agent
from harness.agents.sessions import SessionPlace, SessionSlot, SessionState, session_scope
from harness.errors import UserError
from harness.mcp.registry import check_servers
from harness.models import check_model, resolve_model
from harness.models.cache import cache_scope
from harness.models.cost import pricing_for
from harness.models.engine import ModelProvider, recording_lm_calls
from harness.models.families import family_of
from harness.run.config import RunConfig
from harness.run.episode import episode
from harness.run.manifest import check_unchanged_tasks, git_sha, new_run_id, write_manifest
from harness.run.records import ResultStore, RunRecord, sample_id
from harness.run.reference import ReferenceTrace, check_replayable, reference_policies, run_reference
from harness.run.repeats import InternalErrorWatch
from harness.run.row import RunContext, agent_calls, run_row, run_tokens
from harness.run.sessions import (
    SessionReferences,
    SessionStates,
    chain_key,
    check_shared_servers,
    place,
    session_chains,
)
from harness.sandbox import SandboxPool
from harness.tasks.suite import check_scorers
from harness.tasks.task import Task
from harness.trace.errors import RunError
from harness.trace.trajectory import Trajectory


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


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    records: tuple[RunRecord, ...]


def engine_calls(config: RunConfig) -> int:
    """How many calls the agent's model may decode at once: one per run, or two when the suite has conversations
    and the user is the same model (one engine for both speakers). The embedded engine keeps each call's context in
    its own sequence, so with a sequence per speaker each turn evaluates only what is new since that speaker's last
    turn instead of evaluating again the context the other speaker displaced (docs/experiments.md)."""
    speakers = 2 if config.user == config.model and any(t.user is not None for t in config.suite.tasks) else 1
    return config.max_concurrency * speakers


def new_pool(size: int) -> SandboxPool:
    return SandboxPool(size=size)


class Runner:
    """Owns what runs share (model provider, sandbox pool) and turns samples into records."""

    def __init__(self, config: RunConfig, provider: ModelProvider | None = None, pool: SandboxPool | None = None,
                 user_provider: ModelProvider | None = None, judge_provider: ModelProvider | None = None):
        self.config = config
        # a model that replays references replays them as this run's sandbox traces them
        # a session's references are traced in its order, each from the state the one before left
        traced = SessionReferences(config.suite, config.rules, self._run_reference)
        replays = reference_policies(traced, config.rules) if family_of(config.model).replays_references else None
        self.provider = provider or resolve_model(config.model, api_base=config.api_base, cache=config.cache,
                                                  reference_policies=replays, concurrency=engine_calls(config))
        self._user_provider = user_provider  # None: built from config.user on first use
        self._judge_provider = judge_provider  # None: built from config.judge_model on first use (if named)
        self._owns_pool = pool is None
        needs_sandbox = any(ARMS[a].needs_sandbox for a in config.arms if a in ARMS)
        self.pool = pool if pool is not None else (new_pool(config.max_concurrency) if needs_sandbox else None)
        self._agents: dict[str, Agent] = {}

    def agent(self, arm: str) -> Agent:
        """One agent per arm for the whole run (agents cache what is costly to build)."""
        if arm not in self._agents:
            self._agents[arm] = build_agent(arm, self.pool, self.config.rules, self.config.program_state)
        return self._agents[arm]

    def user_provider(self) -> ModelProvider:
        """The provider of the user model (conversation tasks): the agent's own when it is the same model (one
        engine, so the embedded model is loaded once), else built on first use."""
        config = self.config
        if self._user_provider is None and config.user == config.model:
            return self.provider
        if self._user_provider is None:
            self._user_provider = resolve_model(config.user, api_base=config.api_base, cache=config.cache,
                                                concurrency=config.max_concurrency)
        return self._user_provider

    def judge_provider(self) -> ModelProvider | None:
        """The provider of the judge model (`--judge-model`), or None when none is named."""
        if self._judge_provider is None and self.config.judge_model:
            self._judge_provider = (self.provider if self.config.judge_model == self.config.model else
                                    resolve_model(self.config.judge_model, api_base=self.config.api_base,
                                                  cache=self.config.cache))
        return self._judge_provider

    async def _run_reference(self, task: Task) -> ReferenceTrace:
        """A reference traced in the sandbox (for a model that replays references), under the run's own limits:
        the pool is made on first use when no arm of the run needed one."""
        config = self.config
        if self.pool is None:
            self.pool = new_pool(config.max_concurrency)
        return await run_reference(task, self.pool, config.rules, timeout_s=config.timeout_s,
                                   tool_timeout_s=config.tool_timeout_s,
                                   server_start_timeout_s=config.server_start_timeout_s,
                                   max_tool_result_mb=config.max_tool_result_mb)

    async def run_sample(self, sample: Sample, run_id: str, store: ResultStore) -> SampleResult:
        task, arm, config = sample.task, sample.arm, self.config
        slot = SessionSlot(sample.place) if sample.place else None
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        pricing, limits = pricing_for(config.model), config.limits
        check = limits.checker(pricing) if limits.active else None
        with recording_lm_calls(check) as log, cache_scope(f"epoch={sample.epoch}"), session_scope(slot):
            done = await episode(task, lambda: self.agent(arm), scaffold=config.rules, timeout_s=config.timeout_s,
                                 tool_timeout_s=config.tool_timeout_s,
                                 server_start_timeout_s=config.server_start_timeout_s,
                                 max_tool_result_mb=config.max_tool_result_mb,
                                 tool_latency_s=config.tool_latency_s,
                                 lm_factory=lambda: self.provider.lm_for(task, arm),
                                 user_lm_factory=(lambda: self.user_provider().lm_for(task, "user"))
                                 if task.user is not None else None,
                                 judge_lm_factory=(lambda: judge.lm_for(task, "judge"))
                                 if (judge := self.judge_provider()) is not None else None,
                                 log_dir=store.trajectory_path.with_name(f"{run_id}.server-logs"),
                                 tokens_so_far=lambda: run_tokens(agent_calls(log.calls), self.provider.token_source))
        latency = time.perf_counter() - t0
        error = done.error
        reached = limits.exceeded(pricing, log.calls) if limits.active else None  # the user's calls count too
        if reached is not None:  # the engine ended the run at this call; the agent saw it as a failed LM call
            error = RunError(reached.error_type, reached.message)
        sid = sample_id(task.id, arm, config.model, sample.epoch)
        record, trajectory = run_row(done, log.calls, error, RunContext(
            run_id=run_id, suite=config.suite.name, task=task, arm=arm, model=config.model, epoch=sample.epoch,
            scaffold=config.rules, program_hash=config.program_hash, max_tool_result_mb=config.max_tool_result_mb,
            tool_latency_s=config.tool_latency_s,
            tools_in_sandbox=ARMS[arm].needs_sandbox, token_source=self.provider.token_source, pricing=pricing,
            started_at=started_at, latency_s=latency, trajectory_ref=store.trajectory_ref(sid), git_sha=git_sha(),
            user_model=config.user if task.user is not None else "",
            user_token_source=self.user_provider().token_source if task.user is not None else "",
            judge_model=config.judge_model, judge_token_source=judge.token_source if judge is not None else "",
            session=slot))
        return SampleResult(record, trajectory, slot.state_after if slot else None)

    def chains(self) -> list[tuple[str | None, list[Sample]]]:
        """The samples as chains run one sample after another: a session's tasks in its order, per arm and epoch
        (with the session's id), and every task outside a session alone (None)."""
        tasks = self.config.suite.select(list(self.config.task_ids) or None)
        return [(session, [Sample(task, arm, epoch) for task in members])
                for epoch in range(self.config.epochs) for session, members in session_chains(self.config.suite, tasks)
                for arm in self.config.arms]

    def _todo(self, store: ResultStore,
              states: SessionStates) -> list[tuple[str | None, list[Sample], SessionState, int]]:
        """Each chain's samples still to run, the session state the first of them starts from and its position: a
        session
        chain goes on from its first task without a row, from the state its predecessor left (on file), or from
        its start if that state is not on file."""
        todo = []
        for session, samples in self.chains():
            done = [sample_id(s.task.id, s.arm, self.config.model, s.epoch) in store.done for s in samples]
            if all(done):
                continue
            first = done.index(False)
            before = (states.before(chain_key(session, samples[0].arm, samples[0].epoch), first) if session
                      else SessionState())
            if before is None:
                first, before = 0, SessionState()
            todo.append((session, samples[first:], before, first))
        return todo

    async def run(self, on_record: Callable[[RunRecord], None] | None = None,
                  on_start: Callable[[int, int], None] | None = None) -> RunSummary:
        config = self.config
        run_id = config.run_id or new_run_id()
        store = ResultStore(config.out_dir, config.suite.name, run_id)
        check_unchanged_tasks(config.suite, store.records, run_id)
        write_manifest(config, run_id)
        states = SessionStates(store.path.with_name(f"{run_id}.sessions.jsonl"))
        chains = self._todo(store, states)
        todo = [sample for _, samples, _, _ in chains for sample in samples]
        if on_start:
            on_start(len(todo), len(store.records))
        limit = asyncio.Semaphore(config.max_concurrency)
        model_works = False  # some run of this session got past its LM calls
        servers_work: set[str] = set()  # servers some run of this session started
        watch = InternalErrorWatch({arm: sum(s.arm == arm for s in todo) for arm in config.arms})
        resume = f"harness run --resume {run_id} --out {config.out_dir}"

        async def chain(session: str | None, samples: list[Sample], state: SessionState, first: int) -> None:
            for position, sample in enumerate(samples, start=first):
                if session is not None:
                    sample = replace(sample, place=place(config.suite, session, position, state, config.rules))
                state = await one(sample) or state

        async def one(sample: Sample) -> SessionState | None:
            nonlocal model_works
            async with limit:
                finished = await self.run_sample(sample, run_id, store)
                record, trajectory = finished.record, finished.trajectory
                if sample.place is not None and finished.after is not None:  # before the row: see run.sessions
                    states.record(chain_key(sample.place.session, sample.arm, sample.epoch), sample.place.position,
                                  finished.after)
                error = trajectory.error
                if error and error.permanent and not model_works:
                    raise UserError(f"model {config.model}: every LM call fails ({error.message}); stopped "
                                    "before the rest of the suite: check the model string, --api-base and credentials")
                if error and error.type == "server_error" and error.server not in servers_work:
                    raise UserError(f"{error.message}; stopped before the rest of the suite: fix the server "
                                    f"(its mcp_servers.json entry; `harness servers --check` tries it), then `{resume}`")
                model_works = model_works or record.error_type != "lm_error"
                if record.error_type != "server_error":
                    servers_work.update(ref.name for ref in sample.task.servers)
                for kept, kept_trajectory in watch.admit(record, trajectory, resume):
                    store.add(kept, kept_trajectory)
                    if on_record:
                        on_record(kept)
                return finished.after

        runs = [asyncio.ensure_future(chain(*planned)) for planned in chains]
        try:
            if self.pool is not None and todo:
                await self.pool.start(min(config.max_concurrency, len(todo)))
            await asyncio.gather(*runs)
        except BaseException:
            for run in runs:  # one failed for good (or Ctrl-C): the others stop, what finished is kept
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
            raise
        finally:
            store.flush()  # also on Ctrl-C and errors: every finished run is in the file
            if self.pool is not None and self._owns_pool:
                await self.pool.close()
        return RunSummary(run_id, store.path, tuple(store.records))


def check_tool_latency(latency_s: float, tool_timeout_s: float) -> None:
    """The added latency is part of each call's round trip, so it counts against the tool timeout: a latency
    that reaches the timeout would fail every call, and is refused before any run."""
    if latency_s < 0:
        raise UserError(f"--tool-latency must be at least 0 seconds (got {latency_s:g})")
    if latency_s >= tool_timeout_s:
        raise UserError(f"--tool-latency {latency_s:g} s is not below --tool-timeout {tool_timeout_s:g} s: the delay "
                        "counts inside each call's timeout, so every tool call would time out; raise --tool-timeout")


def prepare(config: RunConfig) -> None:
    """Checks that need no model or sandbox: arms, servers, scorers, task ids, epochs."""
    check_arms(config.arms)
    check_model(config.model)
    if any(t.user is not None for t in config.suite.select(list(config.task_ids) or None)):
        check_model(config.user, api_base=config.api_base)
    if config.judge_model:
        check_model(config.judge_model, api_base=config.api_base)
    check_servers(config.suite)
    check_scorers(config.suite)
    check_shared_servers(config.suite)
    tasks = config.suite.select(list(config.task_ids) or None)
    if family_of(config.model).replays_references:
        check_replayable(tasks)
    if config.epochs < 1:
        raise UserError("--epochs must be at least 1")
    if config.max_concurrency < 1:
        raise UserError("--max-concurrency must be at least 1")
    for option, seconds in (("--timeout", config.timeout_s), ("--tool-timeout", config.tool_timeout_s),
                            ("--server-start-timeout", config.server_start_timeout_s)):
        if seconds <= 0:
            raise UserError(f"{option} must be more than 0 seconds")
    check_tool_latency(config.tool_latency_s, config.tool_timeout_s)
    config.limits.check_pricing(pricing_for(config.model))
