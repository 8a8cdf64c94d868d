"""A reference solution given turn by turn, for a task whose scripted user gives fixed turns (a benchmark's
conversation: BFCL's multi-turn entries, whose ground truth is per turn): `UserScenario.references` holds one
Python solution per user turn.

Traced (`TurnReferenceAgent`): each turn's code runs in the sandbox as a step of its own, in one lease, and the line
it printed last is the message that ends the turn (the scripted user then gives the next turn, offering any tools it
held back: the lease defines them before the next turn's code). Each turn becomes a trace of its own
(`turn_traces`: its calls, its output, its answer), so the scorer of the traced run sees the calls stamped with
their turn as an agent's are.

Replayed (`turns_policy`): each turn's trace through the arm's own replay (harness.agents.arms: `Arm.replay`), one
after another: the turn in progress is the number of turns the scripted user has given (the run's context), and
that turn's replay sees the conversation from the turn's message on, as if the task had begun there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.conversation import ScriptedUser
from harness.agents.replay import ReferenceTrace, answer_from_stdout
from harness.agents.sessions import session_lease
from harness.mcp.bridge import make_dispatcher
from harness.models.scripted import Policy, ScriptedRequest
from harness.sandbox import SandboxPool
from harness.tasks.task import Task
from harness.trace.calls import ToolCallRecord
from harness.trace.events import CodeExecution

# (a turn's trace, the task as that turn gives it, parallel, the run's context) -> the arm's replay of that turn
TurnReplay = Callable[[ReferenceTrace, Task, bool, "SampleContext | None"], Policy]


def has_turn_references(task: Task) -> bool:
    """Whether the task's reference is given per user turn (a scripted user with one reference per turn)."""
    return task.user is not None and bool(task.user.turns) and len(task.user.references) == len(task.user.turns)


@dataclass(frozen=True)
class TurnReferenceAgent:
    """The task's per-turn references as an agent: turn by turn, each turn's code run as its own step in one leased
    sandbox (the tool functions defined again when the tools changed at a turn), its last printed line the message
    that ends the turn."""

    pool: SandboxPool
    name: str = "reference"

    async def run(self, ctx: SampleContext) -> AgentResult:
        session, user = ctx.session, ctx.user
        references = ctx.task.user.references if ctx.task.user is not None else ()
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        answer = ""
        async with session_lease(self.pool, dispatcher, ctx.slot, prelude=session.toolbox.sandbox_prelude(),
                                 transcript=ctx.transcript) as sandbox:
            tools_read = session.tools_version
            for turn, code in enumerate(references):
                ctx.transcript.begin_step(turn)
                if session.tools_version != tools_read:  # the user's turn offered more tools
                    await sandbox.define(session.toolbox.sandbox_prelude())
                    tools_read = session.tools_version
                ctx.transcript.code_started(code, output=sandbox.output_so_far)
                result = await sandbox.execute(code)
                ctx.transcript.code_run(CodeExecution(code=code, stdout=result.stdout, error=result.error,
                                                      error_kind=result.error_kind, duration_s=result.duration_s,
                                                      tool_calls=result.tool_calls))
                answer = answer_from_stdout(result.stdout)
                if isinstance(user, ScriptedUser) and (await user.reply(answer)).ended:
                    break
        ctx.transcript.begin_step(None)
        return AgentResult(answer)


def turn_traces(whole: ReferenceTrace, runs: tuple[CodeExecution, ...],
                calls: tuple[ToolCallRecord, ...]) -> tuple[ReferenceTrace, ...]:
    """The traced run split by turn (step n is turn n): each turn's code output, answer, error and calls."""
    traces = []
    for turn, run in enumerate(runs):
        mine = [n for n, call in enumerate(calls) if call.step == turn]

        def pick(values: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
            return None if values is None else tuple(values[n] for n in mine)

        traces.append(replace(
            whole, answer=answer_from_stdout(run.stdout), stdout=run.stdout, error=run.error,
            tool_calls=tuple(whole.tool_calls[n] for n in mine), end_state={}, context=None,
            failed_calls=pick(whole.failed_calls), call_batches=pick(whole.call_batches),
            call_servers=pick(whole.call_servers), turns=()))
    return tuple(traces)


def _turn_in_progress(request: ScriptedRequest, texts: tuple[str, ...], ctx: SampleContext | None) -> int:
    """The turn the request is made in: the turns the run's scripted user has given so far; without the run's
    context, the latest turn whose message the request shows."""
    if ctx is not None and isinstance(ctx.user, ScriptedUser):
        return min(len(ctx.user.turn_steps), len(texts) - 1)
    shown = [n for n, text in enumerate(texts)
             if any(m.get("role") in ("user", "tool") and text in str(m.get("content")) for m in request.messages)]
    return max(shown, default=0)


def _from_turn(request: ScriptedRequest, text: str) -> ScriptedRequest:
    """The request as the turn's replay reads it: the system message, the turn's message as the task's, and what
    followed it."""
    messages = list(request.messages)
    starts = [n for n, m in enumerate(messages) if text in str(m.get("content"))]
    start = starts[-1] if starts else 0
    head = [m for m in messages[:1] if m.get("role") == "system"]
    return replace(request, messages=tuple([*head, {"role": "user", "content": text}, *messages[start + 1:]]))


def turns_policy(traces: tuple[ReferenceTrace, ...], task: Task, replay: TurnReplay, parallel: bool,
                 ctx: SampleContext | None) -> Policy:
    """The per-turn traces replayed through the arm's replay, one turn after another."""
    assert task.user is not None
    texts, references = task.user.turns, task.user.references
    replays = [replay(trace, replace(task, prompt=text, reference=code), parallel, ctx)
               for trace, text, code in zip(traces, texts, references, strict=True)]

    def policy(request: ScriptedRequest) -> Any:
        turn = _turn_in_progress(request, texts, ctx)
        return replays[turn](_from_turn(request, texts[turn]))

    return policy
