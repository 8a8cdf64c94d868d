"""Running a suite: every task x arm x epoch against fresh servers, one RunRecord per run, flushed as each
run finishes. A run that fails (exception, timeout, unparseable output) is a recorded row, never a crash."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import harness.adapters  # noqa: F401  registers the published benchmarks, for a resumed run and a Ray worker
from harness.agents.arms import ARMS, build_agent
from harness.agents.base import Agent
from harness.agents.sessions import SessionSlot, SessionState
from harness.errors import UserError
from harness.models import resolve_model
from harness.models.engine import ModelProvider
from harness.models.families import family_of
from harness.run.config import RunConfig
from harness.run.manifest import check_unchanged_tasks, new_run_id, order_key, recorded_order, write_manifest
from harness.run.prepare import engine_calls, new_pool, prepare
from harness.run.records import ResultStore, RunRecord, sample_id
from harness.run.reference import ReferenceTrace, reference_policies, run_reference
from harness.run.repeats import InternalErrorWatch
from harness.run.sample import Models, Sample, SampleResult, Store, run_sample
from harness.run.sessions import SessionReferences, SessionStates, chain_key, place, session_chains
from harness.sandbox import SandboxPool
from harness.tasks.task import Task

__all__ = ["RunConfig", "RunSummary", "Runner", "Sample", "SampleResult", "engine_calls", "new_pool", "prepare"]


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    records: tuple[RunRecord, ...]


class Runner:
    """Owns what runs share (model provider, sandbox pool) and turns samples into records."""

    def __init__(self, config: RunConfig, provider: ModelProvider | None = None, pool: SandboxPool | None = None,
                 user_provider: ModelProvider | None = None, judge_provider: ModelProvider | None = None,
                 flush_events: bool = True):
        self.config = config
        self.flush_events = flush_events  # each event flushed to its run's file as it happens (False: to measure)
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

    async def _run_reference(self, task: Task, slot: SessionSlot | None = None) -> ReferenceTrace:
        """A reference traced in the sandbox (for a model that replays references), under the run's own limits
        but its added tool latency (a trace is not a measurement): the pool is made on first use when no arm of
        the run needed one."""
        config = self.config
        if self.pool is None:
            self.pool = new_pool(config.max_concurrency)
        return await run_reference(task, self.pool, config.rules, replace(config.limits, tool_latency_s=0.0), slot)

    async def run_sample(self, sample: Sample, run_id: str, store: Store,
                         on_interrupt: Callable[[SampleResult], None] | None = None) -> SampleResult:
        """One sample's row and trajectory (harness.run.sample)."""
        user = self.user_provider() if sample.task.user is not None else None
        models = Models(self.provider, user, self.judge_provider())
        return await run_sample(self.config, sample, run_id, store, lambda: self.agent(sample.arm), models,
                                on_interrupt)

    def chains(self, order: list[str] | None = None) -> list[tuple[str | None, list[Sample]]]:
        """The samples as chains run one sample after another: a session's tasks in its order, per arm and epoch
        (with the session's id), and every task outside a session alone (None). Chains start interleaved: epoch by
        epoch, task by task, every arm of a task x epoch next to the others (manifest.SCHEDULE); with `order` (a
        resumed run's recorded order) in that order instead, chains it does not list last."""
        tasks = self.config.suite.select(list(self.config.task_ids) or None)
        chains = [(session, [Sample(task, arm, epoch) for task in members])
                  for epoch in range(self.config.epochs) for session, members in session_chains(self.config.suite, tasks)
                  for arm in self.config.arms]
        if order:
            position = {key: n for n, key in enumerate(order)}
            first = [position.get(order_key(s[0].task.id, s[0].arm, s[0].epoch), len(order)) for _, s in chains]
            chains = [chain for _, chain in sorted(zip(first, chains), key=lambda pair: pair[0])]
        return chains

    def _todo(self, store: ResultStore, states: SessionStates,
              order: list[tuple[str | None, list[Sample]]]) -> list[tuple[str | None, list[Sample], SessionState, int]]:
        """Each chain's samples still to run, the session state the first of them starts from and its position: a
        session
        chain (in `order`, the run's chains) goes on from its first task without a row, from the state its predecessor left (on file), or from
        its start if that state is not on file."""
        todo = []
        for session, samples in order:
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
        store = ResultStore(config.out_dir, config.suite.name, run_id, flush_events=self.flush_events)
        check_unchanged_tasks(config.suite, store.records, run_id)
        order = self.chains(recorded_order(config.out_dir, config.suite.name, run_id))
        write_manifest(config, run_id, [order_key(s.task.id, s.arm, s.epoch) for _, samples in order for s in samples])
        states = SessionStates(store.path.with_name(f"{run_id}.sessions.jsonl"))
        chains = self._todo(store, states, order)
        todo = [sample for _, samples, _, _ in chains for sample in samples]
        if on_start:  # what is done: a row that will not run again (an interrupted run's row is replaced)
            on_start(len(todo), len(store.done))
        limit = asyncio.Semaphore(config.max_concurrency)
        model_works = False  # some run of this session got past its LM calls
        servers_work: set[str] = set()  # servers some run of this session started
        watch = InternalErrorWatch({arm: sum(s.arm == arm for s in todo) for arm in config.arms})
        resume = f"harness run --resume {run_id} --out {config.out_dir}"
        stopping = {"keep": True}  # an interrupt keeps the rows of the runs it stopped; a stop for good does not

        def interrupted(result: SampleResult) -> None:
            if stopping["keep"]:
                store.add(result.record, result.trajectory)

        async def chain(session: str | None, samples: list[Sample], state: SessionState, first: int) -> None:
            for position, sample in enumerate(samples, start=first):
                if session is not None:
                    sample = replace(sample, place=place(config.suite, session, position, state, config.rules))
                state = await one(sample) or state

        async def one(sample: Sample) -> SessionState | None:
            nonlocal model_works
            async with limit:
                finished = await self.run_sample(sample, run_id, store, interrupted)
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
        except BaseException as exc:
            stopping["keep"] = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
            for run in runs:  # one failed for good (or Ctrl-C): the others stop, what finished is kept
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
            raise
        finally:
            store.flush()  # also on Ctrl-C and errors: every finished run is in the file
            if self.pool is not None and self._owns_pool:
                await self.pool.close()
        return RunSummary(run_id, store.path, tuple(store.records))
