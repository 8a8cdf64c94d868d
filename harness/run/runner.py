"""Running a suite: every task x arm x epoch against fresh servers, one RunRecord per run, flushed as each
run finishes. A run that fails (exception, timeout, unparseable output) is a recorded row, never a crash."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.agents.arms import ARMS, build_agent, check_arms
from harness.agents.base import Agent, AgentError, AgentResult
from harness.agents.scaffold import firing_counts
from harness.errors import UserError
from harness.mcp.servers import check_servers
from harness.models import check_model, resolve_model
from harness.models.cache import cache_scope
from harness.models.cost import pricing_for, run_cost
from harness.models.engine import LMCall, ModelProvider, recording_lm_calls
from harness.models.families import family_of
from harness.models.tokens import TIKTOKEN_SOURCE, count_tokens, count_tokens_cached, split_prompt
from harness.run.config import RunConfig
from harness.run.episode import episode
from harness.run.manifest import check_unchanged_tasks, git_sha, new_run_id, write_manifest
from harness.run.records import SCHEMA_VERSION, ResultStore, RunRecord, encode_expected, sample_id
from harness.run.reference import ReferenceTrace, check_replayable, reference_policies, run_reference
from harness.run.repeats import InternalErrorWatch
from harness.sandbox import SandboxPool
from harness.tasks.suite import check_scorers
from harness.tasks.task import Task
from harness.tasks.trajectory import LMCallRecord, RunError, Trajectory
from harness.version import __version__


@dataclass(frozen=True)
class Sample:
    task: Task
    arm: str
    epoch: int


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    records: tuple[RunRecord, ...]


def new_pool(size: int) -> SandboxPool:
    return SandboxPool(size=size)


@dataclass(frozen=True)
class TokenTotals:
    prompt: int
    completion: int
    source: str
    tiktoken_prompt: int
    tiktoken_completion: int
    tool_definitions: int
    tool_results: int
    task: int
    reused: int


def token_totals(calls: list[LMCall], result: AgentResult | None, provider_source: str) -> TokenTotals:
    """Provider-reported tokens where given (else counted), plus the model-independent split."""
    prompt = completion = tik_prompt = tik_completion = definitions = results = task = reused = 0
    sources = set()
    for call in calls:
        text = "\n".join(str(m.get("content") or "") for m in call.messages)
        split = split_prompt(text, result.tool_definition_texts if result else (),
                             result.observation_texts if result else ())
        tools = count_tokens_cached(json.dumps(call.tools)) if call.tools else 0  # native tool definitions
        output_tokens = count_tokens(call.output + (json.dumps(call.tool_calls) if call.tool_calls else ""))
        tik_prompt += split.total + tools
        tik_completion += output_tokens
        definitions, results, task = definitions + split.tool_definitions + tools, results + split.tool_results, task + split.task
        reused += call.reused_prompt_tokens
        if call.prompt_tokens is not None and call.completion_tokens is not None:
            prompt, completion = prompt + call.prompt_tokens, completion + call.completion_tokens
            sources.add(provider_source)
        else:
            prompt, completion = prompt + split.total + tools, completion + output_tokens
            sources.add(TIKTOKEN_SOURCE)
    return TokenTotals(prompt, completion, "+".join(sorted(sources)) or provider_source, tik_prompt,
                       tik_completion, definitions, results, task, reused)


def run_tokens(calls: list[LMCall], provider_source: str) -> int:
    """The run's tokens so far (prompt + completion), as its row will count them: what a scorer sees."""
    totals = token_totals(calls, None, provider_source)
    return totals.prompt + totals.completion


class Runner:
    """Owns what runs share (model provider, sandbox pool) and turns samples into records."""

    def __init__(self, config: RunConfig, provider: ModelProvider | None = None, pool: SandboxPool | None = None):
        self.config = config
        # a model that replays references replays them as this run's sandbox traces them
        replays = reference_policies(self._run_reference) if family_of(config.model).replays_references else None
        self.provider = provider or resolve_model(config.model, api_base=config.api_base, cache=config.cache,
                                                  reference_policies=replays)
        self._owns_pool = pool is None
        needs_sandbox = any(ARMS[a].needs_sandbox for a in config.arms if a in ARMS)
        self.pool = pool if pool is not None else (new_pool(config.max_concurrency) if needs_sandbox else None)
        self._agents: dict[str, Agent] = {}

    def agent(self, arm: str) -> Agent:
        """One agent per arm for the whole run (agents cache what is costly to build)."""
        if arm not in self._agents:
            self._agents[arm] = build_agent(arm, self.pool, self.config.rules, self.config.program_state)
        return self._agents[arm]

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

    async def run_sample(self, sample: Sample, run_id: str, store: ResultStore) -> tuple[RunRecord, Trajectory]:
        task, arm, config, scaffold = sample.task, sample.arm, self.config, self.config.rules
        sid = sample_id(task.id, arm, config.model, sample.epoch)
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        pricing, limits = pricing_for(config.model), config.limits
        check = limits.checker(pricing) if limits.active else None
        with recording_lm_calls(check) as log, cache_scope(f"epoch={sample.epoch}"):
            done = await episode(task, lambda: self.agent(arm), scaffold=scaffold, timeout_s=config.timeout_s,
                                 tool_timeout_s=config.tool_timeout_s,
                                 server_start_timeout_s=config.server_start_timeout_s,
                                 max_tool_result_mb=config.max_tool_result_mb,
                                 lm_factory=lambda: self.provider.lm_for(task, arm),
                                 log_dir=store.trajectory_path.with_name(f"{run_id}.server-logs"),
                                 tokens_so_far=lambda: run_tokens(log.calls, self.provider.token_source))
        latency = time.perf_counter() - t0
        result, error, answer, score = done.result, done.error, done.answer, done.score
        reached = limits.exceeded(pricing, log.calls) if limits.active else None
        if reached is not None:  # the engine ended the run at this call; the agent saw it as a failed LM call
            error = AgentError(reached.error_type, reached.message)
        calls = done.calls
        tool_time = sum(c.duration_s for c in calls)
        lm_time = sum(c.latency_s for c in log.calls)
        in_sandbox = tool_time if ARMS[arm].needs_sandbox else 0.0
        sandbox_time = max(0.0, (result.sandbox_time_s if result else 0.0) - in_sandbox)
        tokens = token_totals(log.calls, result, self.provider.token_source)
        fired = firing_counts(s.rules for s in (result.steps if result else ()))
        record = RunRecord(
            schema_version=SCHEMA_VERSION, run_id=run_id, sample_id=sid, suite=config.suite.name, task_id=task.id,
            task_hash=task.content_hash,
            category=task.category, arm=arm, model=config.model, epoch=sample.epoch,
            program_hash=config.program_hash, scaffold=scaffold.name, scaffold_hash=scaffold.hash,
            data_size=task.data_size, success=score.passed, score=score.value,
            score_reason=score.reason, answer=answer, expected=encode_expected(task.expected),
            error_type=error.type if error else "", error_message=error.message if error else "",
            prompt_tokens=tokens.prompt, completion_tokens=tokens.completion,
            total_tokens=tokens.prompt + tokens.completion, token_source=tokens.source,
            cost_usd=run_cost(pricing, log.calls), cost_source=pricing.source,
            tiktoken_prompt_tokens=tokens.tiktoken_prompt, tiktoken_completion_tokens=tokens.tiktoken_completion,
            context_tool_definition_tokens=tokens.tool_definitions, context_tool_result_tokens=tokens.tool_results,
            context_task_tokens=tokens.task, reused_prompt_tokens=tokens.reused, llm_calls=len(log.calls),
            cached_llm_calls=sum(c.cached for c in log.calls), lm_retries=sum(c.retries for c in log.calls),
            tool_calls=len(calls), tool_errors=sum(c.is_error for c in calls),
            max_tool_result_mb=config.max_tool_result_mb,
            turns=result.turns if result else 0, repeated_actions=result.repeated_actions if result else 0,
            policy_violations=result.policy_violations if result else 0, **fired,
            latency_s=latency, lm_time_s=lm_time, tool_time_s=tool_time, sandbox_time_s=sandbox_time,
            overhead_s=max(0.0, latency - lm_time - tool_time - sandbox_time), started_at=started_at,
            harness_version=__version__, git_sha=git_sha(), trajectory_ref=store.trajectory_ref(sid),
        )
        trajectory = Trajectory(
            task_id=task.id, arm=arm, model=config.model, epoch=sample.epoch, prompt=task.prompt, answer=answer,
            expected=task.expected, score_reason=score.reason,
            error=RunError(error.type, error.message, error.permanent, error.server) if error else None,
            steps=done.steps,
            lm_calls=tuple(LMCallRecord(messages=c.messages, output=c.output, prompt_tokens=c.prompt_tokens,
                                        completion_tokens=c.completion_tokens,
                                        reused_prompt_tokens=c.reused_prompt_tokens, reuse_source=c.reuse_source,
                                        latency_s=c.latency_s,
                                        cached=c.cached, grammar=c.grammar, tool_calls=list(c.tool_calls))
                           for c in log.calls),
            tool_calls=calls, probes=done.probes, server_logs=done.server_logs)  # server_logs: external stderr
        return record, trajectory

    def samples(self) -> list[Sample]:
        tasks = self.config.suite.select(list(self.config.task_ids) or None)
        return [Sample(task, arm, epoch) for epoch in range(self.config.epochs) for task in tasks
                for arm in self.config.arms]

    async def run(self, on_record: Callable[[RunRecord], None] | None = None,
                  on_start: Callable[[int, int], None] | None = None) -> RunSummary:
        config = self.config
        run_id = config.run_id or new_run_id()
        store = ResultStore(config.out_dir, config.suite.name, run_id)
        check_unchanged_tasks(config.suite, store.records, run_id)
        write_manifest(config, run_id)
        todo = [s for s in self.samples()
                if sample_id(s.task.id, s.arm, config.model, s.epoch) not in store.done]
        if on_start:
            on_start(len(todo), len(store.records))
        limit = asyncio.Semaphore(config.max_concurrency)
        model_works = False  # some run of this session got past its LM calls
        servers_work: set[str] = set()  # servers some run of this session started
        watch = InternalErrorWatch({arm: sum(s.arm == arm for s in todo) for arm in config.arms})
        resume = f"harness run --resume {run_id} --out {config.out_dir}"

        async def one(sample: Sample) -> None:
            nonlocal model_works
            async with limit:
                record, trajectory = await self.run_sample(sample, run_id, store)
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

        runs = [asyncio.ensure_future(one(s)) for s in todo]
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


def prepare(config: RunConfig) -> None:
    """Checks that need no model or sandbox: arms, servers, scorers, task ids, epochs."""
    check_arms(config.arms)
    check_model(config.model)
    check_servers(config.suite)
    check_scorers(config.suite)
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
    config.limits.check_pricing(pricing_for(config.model))
