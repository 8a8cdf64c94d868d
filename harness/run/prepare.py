"""What a run checks and builds before its first sample: the checks that need no model or sandbox (arms, model,
servers, scorers, limits: what can never work stops here, before any row), how many calls its model may decode at
once, and its sandbox pool."""

from __future__ import annotations

from harness.agents.arms import check_arms
from harness.errors import UserError
from harness.mcp.registry import check_servers
from harness.models import check_model
from harness.models.cost import RunLimits, pricing_for
from harness.models.families import family_of
from harness.run.config import RunConfig
from harness.run.reference import check_replayable
from harness.run.sessions import check_shared_servers
from harness.sandbox import SandboxPool
from harness.tasks.scorers import build_scorer
from harness.tasks.suite import check_scorers
from harness.tasks.task import Task


def engine_calls(config: RunConfig) -> int:
    """How many calls the agent's model may decode at once: one per run, or two when the suite has conversations
    and the user is the same model (one engine for both speakers). The embedded engine keeps each call's context in
    its own sequence, so with a sequence per speaker each turn evaluates only what is new since that speaker's last
    turn instead of evaluating again the context the other speaker displaced (docs/experiments.md)."""
    speakers = 2 if config.user == config.model and any(t.user is not None for t in config.suite.tasks) else 1
    return config.max_concurrency * speakers


def new_pool(size: int) -> SandboxPool:
    return SandboxPool(size=size)


def check_judged(tasks: tuple[Task, ...]) -> None:
    """A task whose scorer asks a judge (rubric, claims) cannot be scored without `--judge-model`: stop first."""
    judged = [t.id for t in tasks if build_scorer(t.scorer).needs_judge()]
    if judged:
        more = f" and {len(judged) - 1} more" if len(judged) > 1 else ""
        raise UserError(f"task '{judged[0]}'{more}: its scorer asks a judge model; name one with --judge-model "
                        "MODEL (e.g. local for the embedded model, scripted:judge for tests)")


def prepare(config: RunConfig) -> None:
    """Checks that need no model or sandbox: arms, servers, scorers, task ids, epochs, limits."""
    check_arms(config.arms)
    check_model(config.model)
    tasks = config.suite.select(list(config.task_ids) or None)
    if any(t.user is not None for t in tasks):
        check_model(config.user, api_base=config.api_base)
    if config.judge_model:
        check_model(config.judge_model, api_base=config.api_base)
    else:
        check_judged(tasks)
    check_servers(config.suite)
    check_scorers(config.suite)
    check_shared_servers(config.suite)
    if family_of(config.model).replays_references:
        check_replayable(tasks, config.arms)
    if config.epochs < 1:
        raise UserError("--epochs must be at least 1")
    if config.max_concurrency < 1:
        raise UserError("--max-concurrency must be at least 1")
    limits = config.limits
    limits.check()
    RunLimits(limits.max_tokens_per_run, limits.max_cost_per_run).check_pricing(pricing_for(config.model))
