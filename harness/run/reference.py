"""A task's reference solution: traced through the real sandbox against fresh servers, with the same bridged tools
an agent gets (`run_reference`, an episode of the reference agent), and replayed in each arm as the
`scripted:reference` model (`reference_policies`: each arm's own replay, harness.agents.replay). Used by the runner,
`harness validate` and tests; it names no arm and no arm's protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from harness.agents.arm import RegisteredReplay
from harness.agents.arms import get_arm
from harness.agents.context import SampleContext
from harness.agents.replay import DIVERGED, TRACE_FAILED, ReferenceAgent, ReferenceTrace
from harness.agents.scaffold import GUIDED, Scaffold
from harness.agents.sessions import SessionSlot
from harness.agents.turn_reference import TurnReferenceAgent, has_turn_references, turn_traces, turns_policy
from harness.errors import UserError
from harness.limits import Limits
from harness.models.scripted import Policy, ReferencePolicies
from harness.run.episode import episode
from harness.sandbox import SandboxPool
from harness.tasks.task import Task

__all__ = ["DIVERGED", "TRACE_FAILED", "ReferenceTrace", "check_replayable", "reference_policies", "reference_policy",
           "run_reference"]

ReferenceRunner = Callable[[Task], Awaitable[ReferenceTrace]]


def check_replayable(tasks: Iterable[Task], arms: Iterable[str] = ()) -> None:
    """`scripted:reference` replays reference solutions, so a task without one cannot run with it, nor an arm that
    has no replay: one line naming the task(s) or the arm, before any run."""
    missing = [task.id for task in tasks if task.reference is None]
    if missing:
        more = f" and {len(missing) - 1} other task(s)" if len(missing) > 1 else ""
        raise UserError(f"scripted:reference cannot replay task '{missing[0]}'{more}: no reference solution; run "
                        "them with a real model, or pick tasks that have one with --tasks")
    for arm in arms:
        replay = get_arm(arm).replay
        if replay is None:
            raise UserError(f"scripted:reference cannot replay references in arm '{arm}': it declares no replay; run "
                            "it with a real model")
        if isinstance(replay, RegisteredReplay):  # its protocol registered, or one line naming it (and the known)
            replay.check()


async def run_reference(task: Task, pool: SandboxPool, scaffold: Scaffold = GUIDED, limits: Limits = Limits(),
                        slot: SessionSlot | None = None) -> ReferenceTrace:
    """The reference run as an episode (the same servers, limits and error handling as an agent's run), under the
    scaffold's id guard (by default on: a reference looks its ids up, as a task asks of an agent). A run that
    replays it passes its own limits, so a slow tool costs the trace no more than it may cost the run. A
    conversation task's reference runs without the id guard: it stands for a conversation whose user told the agent
    ids the guard cannot know of (a benchmark's expected actions list the writes, not every lookup before them)."""
    if task.user is not None:
        scaffold = replace(scaffold, id_guard=False)
    per_turn = has_turn_references(task)
    agent = TurnReferenceAgent(pool) if per_turn else ReferenceAgent(pool)
    done = await episode(task, lambda: agent, scaffold=scaffold, limits=limits, slot=slot)
    # a trace is not scored by a judge (none is given it): its judge_error says nothing about the reference
    failed = done.error if done.error is not None and done.error.type != "judge_error" else None
    code = done.transcript.code_runs[0] if done.transcript.code_runs else None
    calls = done.transcript.tool_calls
    trace = ReferenceTrace(
        answer=done.answer, stdout=code.stdout if code else "",
        tool_calls=tuple((c.tool, c.arguments) for c in calls), end_state=done.judged.end_state,
        error=(code.error if code else None) or (failed.message if failed else None), context=done.judged,
        failed_calls=tuple(c.is_error for c in calls),
        call_batches=tuple(c.batch for c in calls), call_servers=tuple(c.server for c in calls),
        run_values=done.run_values,
    )
    if per_turn:
        trace = replace(trace, turns=turn_traces(trace, done.transcript.code_runs, calls))
    return trace


def reference_policy(trace: ReferenceTrace, task: Task, arm: str, parallel: bool = False,
                     ctx: SampleContext | None = None) -> Policy:
    """The arm's replay of `trace` (its `replay` in the arm registry), on this run's servers (`ctx`: the run's
    context; None: the trace as it is)."""
    replay = get_arm(arm).replay
    if replay is None:
        raise UserError(f"arm '{arm}' has no reference replay")
    if trace.turns:  # a reference per user turn: each turn's trace replayed in its turn
        return turns_policy(trace.turns, task, replay, parallel, ctx)
    return replay(trace, task, parallel, ctx)


def reference_policies(trace_of: ReferenceRunner, scaffold: Scaffold | None = None) -> ReferencePolicies:
    """The `scripted:reference` policy for each (task, arm, run): each task's reference is traced once (per reference
    text) and replayed through the arm's own replay on the run's servers; under `scaffold`, whose
    `parallel_tool_calls` lets an arm that runs several calls of a reply (`Arm.parallel_calls`) get a concurrent
    batch as one reply."""
    traces: dict[tuple[str, str | None], ReferenceTrace] = {}

    async def policy_for(task: Task, arm: str, sample: Any = None) -> Policy:
        check_replayable([task])
        key = (task.id, task.reference)
        if key not in traces:  # traced once, by the first run that needs it: start-up that run waited for
            with sample.transcript.setting_up("reference traced") if isinstance(sample, SampleContext) else nullcontext():
                traces[key] = await trace_of(task)
        parallel = scaffold is not None and scaffold.parallel_tool_calls and get_arm(arm).parallel_calls
        return reference_policy(traces[key], task, arm, parallel, sample if isinstance(sample, SampleContext) else None)

    return policy_for
