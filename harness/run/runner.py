"""Running a suite: every task x arm x epoch against fresh servers, one RunRecord per run, flushed as each
run finishes. A run that fails (exception, timeout, unparseable output) is a recorded row, never a crash."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import harness.adapters  # noqa: F401  registers the published benchmarks, for a resumed run and a Ray worker
from harness.agents.arms import ARMS, DEFAULT_ARMS, build_agent, check_arms
from harness.agents.base import Agent, AgentError, AgentResult
from harness.agents.programs import load_program
from harness.agents.scaffold import Scaffold, default_scaffold, firing_counts, scaffold_from_dict
from harness.defaults import (
    DEFAULT_MAX_TOOL_RESULT_MB,
    DEFAULT_SERVER_START_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOOL_TIMEOUT_S,
)
from harness.env import checkout_root
from harness.errors import UserError
from harness.files import atomic_write_text
from harness.mcp.registry import check_servers
from harness.models import check_model, resolve_model
from harness.models.cache import cache_scope
from harness.models.cost import RunLimits, pricing_for, run_cost
from harness.models.engine import LMCall, ModelProvider, recording_lm_calls
from harness.models.tokens import TIKTOKEN_SOURCE, count_tokens, count_tokens_cached, split_prompt
from harness.run.episode import episode
from harness.run.records import SCHEMA_VERSION, ResultStore, RunRecord, encode_expected, sample_id
from harness.run.reference import ReferenceTrace, check_replayable, reference_policies, run_reference
from harness.run.repeats import InternalErrorWatch
from harness.sandbox import SandboxPool
from harness.tasks.registry import load_suite
from harness.tasks.suite import check_scorers
from harness.tasks.task import Suite, Task
from harness.tasks.trajectory import LMCallRecord, RunError, Trajectory
from harness.version import __version__


@dataclass(frozen=True)
class RunConfig:
    suite: Suite
    model: str
    arms: tuple[str, ...] = DEFAULT_ARMS
    epochs: int = 1
    task_ids: tuple[str, ...] = ()
    out_dir: Path = Path("results")
    run_id: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_concurrency: int = 1
    api_base: str | None = None
    cache: bool = True
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    program_path: str = ""
    program_hash: str = ""
    program_state: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    scaffold: Scaffold | None = None  # None: the model's default (harness.agents.scaffold.default_scaffold)
    max_tool_result_mb: float | None = DEFAULT_MAX_TOOL_RESULT_MB  # a larger tool result is a tool error; None: none
    # not in the manifest: it changes no measurement, and a resumed run may need a longer one
    server_start_timeout_s: float = DEFAULT_SERVER_START_TIMEOUT_S

    @property
    def limits(self) -> RunLimits:
        return RunLimits(self.max_tokens_per_run, self.max_cost_per_run)

    @property
    def rules(self) -> Scaffold:
        """The scaffold the run is under: the one given, or the model's default."""
        return self.scaffold or default_scaffold(self.model)


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


MANIFEST_FIELDS = ("model", "arms", "epochs", "task_ids", "timeout_s", "max_concurrency", "api_base", "cache",
                   "tool_timeout_s", "program_path", "program_hash")
# absent from older manifests: no limit (as those runs had)
OPTIONAL_MANIFEST_FIELDS = ("max_tokens_per_run", "max_cost_per_run", "max_tool_result_mb")


def manifest_path(out_dir: Path, suite: str, run_id: str) -> Path:
    return out_dir / suite / f"{run_id}.run.json"


def write_manifest(config: RunConfig, run_id: str) -> Path:
    """What `--resume RUN_ID` needs to finish the run the same way: the suite (its file, or ADAPTER:PATH for a
    benchmark) and every option."""
    path = manifest_path(config.out_dir, config.suite.name, run_id)
    data = {"run_id": run_id, "suite": config.suite.name, "suite_path": config.suite.load_spec,
            **{name: getattr(config, name) for name in MANIFEST_FIELDS + OPTIONAL_MANIFEST_FIELDS},
            "scaffold": asdict(config.rules)}
    atomic_write_text(path, json.dumps(data, indent=1))
    return path


def resume_config(run_id: str, out_dir: Path) -> RunConfig:
    """The configuration of an earlier run, from its manifest, to finish it."""
    found = sorted(out_dir.glob(f"*/{run_id}.run.json"))
    if not found:
        raise UserError(f"no run '{run_id}' under {out_dir}/ (expected {out_dir}/<suite>/{run_id}.run.json)")
    try:
        data = json.loads(found[0].read_text())
        options = {name: data[name] for name in MANIFEST_FIELDS}
        options.update({name: data.get(name) for name in OPTIONAL_MANIFEST_FIELDS})
    except (json.JSONDecodeError, KeyError) as exc:
        raise UserError(f"{found[0]}: not a readable run manifest ({exc})") from None
    options["arms"], options["task_ids"] = tuple(options["arms"]), tuple(options["task_ids"])
    program_state = None
    if options["program_path"]:
        program_state = load_program(Path(options["program_path"])).state
    # a manifest written before scaffolds were recorded: the model's default, as the run's rows will say
    scaffold = scaffold_from_dict(data["scaffold"]) if "scaffold" in data else None
    return RunConfig(suite=load_suite(data["suite_path"]), out_dir=out_dir, run_id=run_id,
                     program_state=program_state, scaffold=scaffold, **options)


def check_unchanged_tasks(suite: Suite, records: list[RunRecord], run_id: str) -> None:
    """Resuming must not mix two versions of a task in one run: refuse if a task was edited since its rows were
    recorded (rows written before task hashes existed cannot tell, and are trusted)."""
    current = {t.id: t.content_hash for t in suite.tasks}
    changed = sorted({r.task_id for r in records if r.task_hash and r.task_id in current
                      and r.task_hash != current[r.task_id]})
    if changed:
        raise UserError(f"run {run_id}: task(s) {', '.join(changed)} changed in {suite.path} since the run recorded "
                        f"them; finish it with the old suite file or start a new run")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


@functools.cache
def git_sha() -> str:
    """The checkout's commit; an installed wheel has none (asking git there would name whatever repository
    the venv happens to sit in)."""
    root = checkout_root()
    if root is None:
        return ""
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


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
        self.provider = provider or resolve_model(config.model, api_base=config.api_base, cache=config.cache,
                                                  reference_policies=reference_policies(self._run_reference))
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
    if config.model == "scripted:reference":
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
