"""A run's row and trajectory, computed from its transcript (every event it recorded as it happened, whatever ended
it): tokens (the provider's, else counted here, and the model-independent split), the time split, the scaffold's
firing counts and the error that ended it, counted the same way in every arm. The runner schedules runs and writes
what this returns; it assembles nothing itself."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from harness.agents.arms import get_arm
from harness.agents.scaffold import Scaffold, firing_counts, scaffold_from_dict
from harness.agents.sessions import SessionSlot
from harness.limits import Limits
from harness.mcp.registry import callers_text, tool_callers
from harness.models.cost import Pricing, RunLimits, run_cost
from harness.models.tokens import TIKTOKEN_SOURCE, count_tokens, count_tokens_cached, split_prompt
from harness.run.records import SCHEMA_VERSION, RunRecord, encode_expected, sample_id
from harness.tasks.judging import judge_prompt_hash
from harness.tasks.scorers import build_scorer
from harness.tasks.task import Task
from harness.trace.calls import LMCall
from harness.trace.errors import RunError
from harness.trace.events import EventViews
from harness.trace.steps import ToolStep, TrajectoryStep, step_acts
from harness.trace.trajectory import Trajectory
from harness.version import __version__


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


def observation_texts(steps: Sequence[TrajectoryStep]) -> tuple[str, ...]:
    """What the model was shown of each action's outcome, as it saw it (each call's of a step of several calls)."""
    return tuple(text for step in steps for text in (
        [call.observation for call in step.calls] if isinstance(step, ToolStep) and len(step.calls) > 1
        else [step.observation]))


def token_totals(calls: Sequence[LMCall], record: EventViews | None, provider_source: str) -> TokenTotals:
    """Provider-reported tokens where given (else counted), plus the model-independent split (what of each prompt
    was tool definitions and tool results, by the texts the run's transcript `record` holds)."""
    prompt = completion = tik_prompt = tik_completion = definitions = results = task = reused = 0
    sources = set()
    definition_texts = record.tool_definition_texts if record is not None else ()
    shown = observation_texts(record.steps) if record is not None else ()
    for call in calls:
        text = "\n".join(str(m.get("content") or "") for m in call.messages)
        split = split_prompt(text, definition_texts, shown)
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


def agent_calls(calls: Sequence[LMCall]) -> list[LMCall]:
    """The agent's LM calls: a row's tokens, calls, cost and LM time are the agent's (the comparison is about it);
    a simulated user's calls are counted in the user columns. A call cut short by the run's end (no reply, its
    tokens unknown) is in the transcript, not in these counts."""
    return [c for c in calls if c.role == "agent" and not c.cut_short]


def _role_columns(role: str, model: str, count_column: str, count: int | None, calls: Sequence[LMCall],
                  token_source: str) -> dict[str, int | float | str | None]:
    """A second model role's columns (`role`_model, the count, _prompt_tokens, _completion_tokens, _time_s): tokens
    provider-reported where given, else counted; null (empty model) when `count` is None: the role did not act."""
    names = (f"{role}_model", count_column, f"{role}_prompt_tokens", f"{role}_completion_tokens", f"{role}_time_s")
    if count is None:
        return dict(zip(names, ("", None, None, None, None), strict=True))
    mine = [c for c in calls if c.role == role and not c.cut_short]
    totals = token_totals(mine, None, token_source)
    return dict(zip(names, (model, count, totals.prompt, totals.completion, sum(c.latency_s for c in mine)),
                    strict=True))


def user_columns(run: RunContext, calls: Sequence[LMCall]) -> dict[str, int | float | str | None]:
    """A conversation task's user columns: its model and messages (each message one LM call of the user's that
    returned); null (empty model) without a simulated user."""
    turns = sum(c.role == "user" and not c.cut_short for c in calls) if run.user_model else None
    return _role_columns("user", run.user_model, "user_turns", turns, calls, run.user_token_source)


def ending_error(recorded: RunError | None, run: RunContext, calls: Sequence[LMCall]) -> RunError | None:
    """What ended the run: a per-run spending limit its LM calls passed (the user's count too: the engine ended the
    run at that call, which the agent saw as a failed LM call), else the error it recorded."""
    spending = RunLimits(run.limits.max_tokens_per_run, run.limits.max_cost_per_run)
    reached = spending.exceeded(run.pricing, calls) if spending.active else None
    return RunError(reached.error_type, reached.message) if reached is not None else recorded


def judge_columns(run: RunContext, calls: Sequence[LMCall]) -> dict[str, int | float | str | None]:
    """The judge's columns: its model, calls, cost and the hash of the instructions the task's scorer sends it;
    null (empty model) for a run whose scorer called no judge (none named, or nothing to judge). A verdict taken
    from the judge's cache is 0 calls of the named judge."""
    mine = [c for c in calls if c.role == "judge"]
    instructions = build_scorer(run.task.scorer).judge_instructions()
    asked = bool(instructions and run.judge_model)
    columns = _role_columns("judge", run.judge_model, "judge_calls", len(mine) if mine or asked else None, calls,
                            run.judge_token_source)
    columns["judge_cost_usd"] = run_cost(run.judge_pricing, mine) if mine and run.judge_pricing else None
    columns["judge_prompt_hash"] = judge_prompt_hash(instructions) if instructions else ""
    return columns


def run_tokens(calls: Sequence[LMCall], provider_source: str) -> int:
    """The run's tokens so far (prompt + completion), as its row will count them: what a scorer sees."""
    totals = token_totals(calls, None, provider_source)
    return totals.prompt + totals.completion


def sandbox_time_s(record: EventViews) -> float:
    """Code's own time in a run: its code runs less the tool calls made from them (a hybrid run's native calls ran
    outside any code run)."""
    return max(0.0, sum(r.duration_s for r in record.code_runs)
               - sum(c.duration_s for c in record.tool_calls if c.in_code))


def action_counts(steps: Sequence[TrajectoryStep]) -> tuple[int, int]:
    """(tool actions, code actions): turns that called tools themselves and turns that ran code, as each step's arm
    recorded what its action did (harness.trace.steps.step_acts); a reply whose calls both call a tool and run code
    is one of each."""
    acts = [step_acts(step) for step in steps]
    return sum("tool" in kinds for kinds in acts), sum("code" in kinds for kinds in acts)


@dataclass(frozen=True)
class RunContext:
    """What a row records beyond its run's events: which run and sample it is, how it was run (its limits) and
    priced, and when, read from the run's start line (`run_context`); its wall time, session place, servers' logs
    and the task text it was given."""

    run_id: str
    suite: str
    task: Task
    arm: str
    model: str
    epoch: int
    scaffold: Scaffold
    program_hash: str
    limits: Limits
    token_source: str
    pricing: Pricing
    started_at: datetime
    latency_s: float
    trajectory_ref: str
    git_sha: str
    user_model: str = ""  # the model that played a conversation task's user ("" : none)
    user_token_source: str = ""
    judge_model: str = ""  # the scorer's judge model (--judge-model; "" : none named)
    judge_token_source: str = ""
    judge_pricing: Pricing | None = None  # how the judge's calls are priced (None: not priced)
    session: SessionSlot | None = None  # the task's place in its session, filled in by its lease; None: none
    cache_mode: str = ""  # the run's response-cache mode (harness.models.cache.CACHE_MODES)
    prompt: str = ""  # the task text the agent was given (a conversation's holds the user's opening)
    server_logs: dict[str, str] = field(default_factory=dict)  # external server (or agent) -> its stderr's file


def run_context(start: dict[str, Any], task: Task, latency_s: float, trajectory_ref: str,
                session: SessionSlot | None = None, server_logs: dict[str, str] | None = None,
                prompt: str = "") -> RunContext:
    """What a row records beyond its run's events, read from the run's start line (harness.run.sample.run_start):
    the same at run time and when a row is computed again from the stored file (harness.run.rebuild). The rest is
    what the events do not hold: `latency_s`, the run's wall time; `session`, its place in its session while it
    runs (a rebuilt row reads its session columns from the end line); the servers' log files; the task text the
    agent was given ("": the start line's)."""
    judge_pricing = start.get("judge_pricing")
    return RunContext(
        run_id=start["run_id"], suite=start["suite"], task=task, arm=start["arm"], model=start["model"],
        epoch=int(start["epoch"]), scaffold=scaffold_from_dict(start["scaffold"]),
        program_hash=start.get("program_hash", ""), limits=Limits(**start["limits"]),
        token_source=start["token_source"], pricing=Pricing(**start["pricing"]),
        started_at=datetime.fromisoformat(start["started_at"]), latency_s=latency_s,
        trajectory_ref=trajectory_ref, git_sha=start.get("git_sha", ""), user_model=start.get("user_model", ""),
        user_token_source=start.get("user_token_source", ""), judge_model=start.get("judge_model", ""),
        judge_token_source=start.get("judge_token_source", ""),
        judge_pricing=Pricing(**judge_pricing) if judge_pricing else None, session=session,
        cache_mode=start.get("cache_mode", ""), prompt=prompt or str(start.get("prompt") or task.prompt),
        server_logs=dict(server_logs or {}))


def session_columns(slot: SessionSlot | None) -> dict[str, str | int | None]:
    """The session columns: where the task ran (null outside a session) and, where its sandbox lease ended in the
    session, the skills it found, saved and reused and the workspace's files (null where skills or the workspace
    are off, or the arm has no sandbox: there the session only orders the tasks)."""
    if slot is None:
        return dict.fromkeys(("session", "session_position", "skills_available", "skills_saved", "skills_used",
                              "workspace_files"))
    place, leased = slot.place, slot.after is not None
    available = tuple(place.before.skills)
    skills = leased and place.skills
    return {"session": place.session, "session_position": place.position,
            "skills_available": ",".join(available) if skills else None,
            "skills_saved": ",".join(slot.skills_saved) if skills else None,
            "skills_used": ",".join(name for name in slot.used if name in available) if skills else None,
            "workspace_files": len(slot.after.workspace_files) if leased and place.workspace else None}


def parallel_columns(run: RunContext, steps: Sequence[TrajectoryStep]) -> dict[str, bool | int | None]:
    """`parallel_tool_calls` (the scaffold's, for an arm that runs several native calls of a reply) and
    `parallel_turns` (its turns that did); both null for the other arms, where the rule does not apply."""
    if not get_arm(run.arm).parallel_calls:
        return {"parallel_tool_calls": None, "parallel_turns": None}
    return {"parallel_tool_calls": run.scaffold.parallel_tool_calls,
            "parallel_turns": sum(isinstance(s, ToolStep) and len(s.calls) > 1 for s in steps)}


def run_row(transcript: EventViews, run: RunContext) -> tuple[RunRecord, Trajectory]:
    """The row and trajectory of one run, from its transcript's events: every LM call it made (each with its step),
    its tool calls, code runs, steps and answers, how it ended (its `end` event: the answer and the error) and its
    score; a per-run spending limit its LM calls passed comes first as its error (ending_error). One-time start-up
    the run waited for (its setup events) is its cold_start_s, taken out of its latency, so latency compares the arms
    rather than the order runs started in."""
    task, end, verdict = run.task, transcript.end, transcript.verdict
    answer = end.answer if end is not None else ""
    passed, value, reason = (verdict.passed, verdict.value, verdict.reason) if verdict is not None else (False, 0.0, "")
    calls, steps, all_lm_calls = transcript.tool_calls, transcript.steps, transcript.lm_calls
    lm_calls = agent_calls(all_lm_calls)
    users, judges = user_columns(run, all_lm_calls), judge_columns(run, all_lm_calls)
    error = ending_error(end.error if end is not None else None, run, all_lm_calls)
    tool_time = sum(c.duration_s for c in calls)
    lm_time = sum(c.latency_s - c.setup_s for c in lm_calls)  # start-up inside a call is cold start
    code_runs = transcript.code_runs
    sandbox_time = sandbox_time_s(transcript)
    cold_start = transcript.cold_start_s
    latency = round(max(0.0, run.latency_s - cold_start), 6)  # to the microsecond: a rebuilt row gets the same
    callers = tool_callers(task.servers)
    tool_actions, code_actions = action_counts(steps)
    tokens = token_totals(lm_calls, transcript, run.token_source)
    arm = get_arm(run.arm)
    fired = (firing_counts(s.rules for s in steps) if arm.scaffold_applies
             else dict.fromkeys(firing_counts([]), None))  # no rule of the harness's shaped an agent from outside
    sid = sample_id(task.id, run.arm, run.model, run.epoch)
    record = RunRecord(
        schema_version=SCHEMA_VERSION, run_id=run.run_id, sample_id=sid, suite=run.suite, task_id=task.id,
        task_hash=task.content_hash, category=task.category, arm=run.arm, arm_kind=arm.kind,
        arm_source=arm.source or f"harness=={__version__}", model=run.model, epoch=run.epoch,
        program_hash=run.program_hash, scaffold=run.scaffold.name, scaffold_hash=run.scaffold.hash,
        scaffold_applied=arm.scaffold_applies,
        data_size=task.data_size, success=passed, score=value,
        score_reason=reason, answer=answer, expected=encode_expected(task.expected),
        error_type=error.type if error else "", error_message=error.message if error else "",
        prompt_tokens=tokens.prompt, completion_tokens=tokens.completion,
        total_tokens=tokens.prompt + tokens.completion, token_source=tokens.source,
        cost_usd=run_cost(run.pricing, lm_calls), cost_source=run.pricing.source,
        tiktoken_prompt_tokens=tokens.tiktoken_prompt, tiktoken_completion_tokens=tokens.tiktoken_completion,
        context_tool_definition_tokens=tokens.tool_definitions, context_tool_result_tokens=tokens.tool_results,
        context_task_tokens=tokens.task, reused_prompt_tokens=tokens.reused, llm_calls=len(lm_calls),
        cached_llm_calls=sum(c.cached for c in lm_calls), cache_mode=run.cache_mode, lm_retries=sum(c.retries for c in lm_calls),
        tool_calls=len(calls), tool_errors=sum(c.is_error for c in calls),
        max_tool_result_mb=run.limits.max_tool_result_mb, tool_latency_s=run.limits.tool_latency_s,
        timeout_s=run.limits.timeout_s, tool_timeout_s=run.limits.tool_timeout_s,
        max_turns=run.limits.turns(task.max_turns, run.scaffold.turn_limit),
        max_tokens_per_run=run.limits.max_tokens_per_run, max_cost_per_run=run.limits.max_cost_per_run,
        context_window=run.limits.context_window,
        agent_isolation={"builtin": "", "python": run.limits.agent_isolation}.get(arm.kind, "process"),
        agent_memory_mb=run.limits.agent_memory_mb if arm.kind == "python" else None,
        cold_start_s=cold_start, abandoned_tool_calls=sum(c.abandoned for c in calls),
        tool_callers=callers_text(callers), turns=len(steps), tool_actions=tool_actions,
        code_actions=code_actions, **parallel_columns(run, steps),
        tool_files_read=transcript.info("tool_files_read"),
        repeated_actions=sum(1 for s in steps if s.repeat_of is not None),
        answer_attempts=len(transcript.answers),
        policy_violations=sum(1 for r in code_runs if r.error_kind == "policy"), **fired,
        **session_columns(run.session),
        latency_s=latency, lm_time_s=lm_time, tool_time_s=tool_time, sandbox_time_s=sandbox_time,
        **users, **judges, overhead_s=max(0.0, latency - lm_time - tool_time - sandbox_time
                                          - (users["user_time_s"] or 0.0) - (judges["judge_time_s"] or 0.0)),
        started_at=run.started_at,
        harness_version=__version__, git_sha=run.git_sha, trajectory_ref=run.trajectory_ref,
        catalogue_size=task.catalogue_size,
    )
    trajectory = Trajectory(
        task_id=task.id, arm=run.arm, model=run.model, epoch=run.epoch, prompt=run.prompt,
        answer=answer, expected=task.expected, score_reason=reason, error=error,
        events=tuple(transcript.events), server_logs=run.server_logs,
        tool_callers={name: list(allowed) for name, allowed in callers.items()})
    return record, trajectory
