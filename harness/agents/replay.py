"""How `scripted:reference` replays a task's reference solution through an arm's own protocol. A protocol is
registered by the module of the arm or bridge that speaks it (`register_replay`: direct.py registers native tool
calls, smolagents_replay.py smolagents' formats...), and an arm names its protocol and that module in the registry of
arms (`Arm.replay`, harness.agents.arm.replays), so a new arm or bridge adds its replay in its own module and the run
stage traces a reference and hands it to the arm without knowing any protocol. This module keeps the registry and
the pieces protocols share: the trace, its localisation to the run's servers, the calls replay and the code blocks
replay, and what a replay answers. Also the reference solution as an agent (`ReferenceAgent`: its code run once in
the sandbox with the bridged tools), which the run stage traces.

A reference is traced in a run of its own, on its own fresh servers; a server started per run (`${RUN_DIR}` in its
mcp_servers.json entry) had its own folder then, so a traced call's arguments naming paths under that folder are
replayed under this run's folder (`Localize`): a correct suite passes its reference in every arm on any server.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.loop import FINAL_ANSWER_TOOL, echoes_error
from harness.agents.sessions import session_lease
from harness.errors import UserError
from harness.mcp.bridge import make_dispatcher
from harness.models.scripted import Policy, ScriptedReply, ScriptedRequest, task_messages
from harness.sandbox import SandboxPool
from harness.sandbox.pool import CRASH_MARKER
from harness.tasks.scorers import ScoreContext
from harness.tasks.task import Task
from harness.trace.events import CodeExecution


@dataclass(frozen=True)
class ReferenceTrace:
    """What a task's reference solution did against fresh servers."""

    answer: str
    stdout: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...]
    end_state: dict[str, Any] = field(hash=False, compare=False)
    error: str | None = None
    context: ScoreContext | None = field(default=None, hash=False, compare=False)  # what its scorer judged
    # per tool call, whether it failed when traced (None: not known, as in a trace a test writes by hand)
    failed_calls: tuple[bool, ...] | None = None
    # per tool call, the concurrent batch the reference code made it in (calls awaited together share an id;
    # None: made alone); None: not known (a trace written before batches were recorded, or by hand)
    call_batches: tuple[int | None, ...] | None = None
    # per tool call, the server that served it (a files replay reads and imports each tool from its server's
    # folder); None: not known
    call_servers: tuple[str, ...] | None = None
    # per server started per run, the values its placeholders had when traced (`{"RUN_DIR": "/tmp/..."}`)
    run_values: dict[str, dict[str, str]] = field(default_factory=dict, hash=False, compare=False)
    # a reference given per user turn: each turn's own trace (harness.agents.turn_reference); empty: one reference
    turns: tuple[ReferenceTrace, ...] = field(default=(), hash=False, compare=False)


# (the trace, on the run's servers; the task; whether the arm runs several calls of a reply) -> the replay's policy
ProtocolReplay = Callable[[ReferenceTrace, Task, bool], Policy]
REPLAY_PROTOCOLS: dict[str, ProtocolReplay] = {}  # protocol name -> its replay, registered by the module that owns it


def answer_from_stdout(stdout: str) -> str:
    """A reference prints its answer last: the last non-empty line of its output."""
    lines = [line.strip() for line in stdout.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


@dataclass(frozen=True)
class ReferenceAgent:
    """A task's reference solution as an agent: its code runs once in the sandbox with the bridged tools (in the
    task's session, if any), and the last line it prints is its answer."""

    pool: SandboxPool
    name: str = "reference"

    async def run(self, ctx: SampleContext) -> AgentResult:
        session, code = ctx.session, ctx.task.reference or ""
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        async with session_lease(self.pool, dispatcher, ctx.slot, prelude=session.toolbox.sandbox_prelude(),
                                 transcript=ctx.transcript) as sandbox:
            ctx.transcript.code_started(code, output=sandbox.output_so_far)
            result = await sandbox.execute(code)
        ctx.transcript.code_run(CodeExecution(code=code, stdout=result.stdout, error=result.error,
                                              error_kind=result.error_kind, duration_s=result.duration_s,
                                              tool_calls=result.tool_calls))
        return AgentResult(answer_from_stdout(result.stdout))


def localized(trace: ReferenceTrace, ctx: SampleContext | None) -> ReferenceTrace:
    """The trace with each call's arguments under this run's per-run values where the traced run's appear (a path
    under the traced server's `${RUN_DIR}` becomes the same path under this run's): the same calls, on this run's
    servers. A trace without per-run values, or a run without a context, is replayed as it is."""
    if ctx is None or not trace.run_values or trace.call_servers is None:
        return trace
    here = ctx.session.run_values

    def swap(value: Any, pairs: list[tuple[str, str]]) -> Any:
        if isinstance(value, str):
            for old, new in pairs:
                value = value.replace(old, new)
            return value
        if isinstance(value, list):
            return [swap(item, pairs) for item in value]
        if isinstance(value, dict):
            return {key: swap(item, pairs) for key, item in value.items()}
        return value

    calls = []
    for (name, arguments), server in zip(trace.tool_calls, trace.call_servers, strict=True):
        traced, now = trace.run_values.get(server, {}), here.get(server, {})
        pairs = [(old, now[key]) for key, old in traced.items() if key in now and old and old != now[key]]
        calls.append((name, swap(arguments, pairs) if pairs else arguments))
    return ReferenceTrace(**{**trace.__dict__, "tool_calls": tuple(calls)})


def register_replay(protocol: str) -> Callable[[ProtocolReplay], ProtocolReplay]:
    """Register the decorated function as the replay of `protocol` (registering a name again replaces it); the
    module of the arm or bridge that speaks the protocol registers it, where it is imported."""
    def register(replay: ProtocolReplay) -> ProtocolReplay:
        REPLAY_PROTOCOLS[protocol] = replay
        return replay

    return register


def replay_for(protocol: str) -> Callable[[ReferenceTrace, Task, bool, SampleContext | None], Policy]:
    """The registered replay of `protocol`, replaying a trace on the run's own servers (`localized`; a run without a
    context replays the trace as it is). An unknown protocol is one line naming it and the registered ones."""
    try:
        replay = REPLAY_PROTOCOLS[protocol]
    except KeyError:
        raise UserError(f"unknown replay protocol '{protocol}' (registered: "
                        f"{', '.join(sorted(REPLAY_PROTOCOLS)) or 'none'})") from None

    def localized_replay(trace: ReferenceTrace, task: Task, parallel: bool, ctx: SampleContext | None) -> Policy:
        return replay(localized(trace, ctx), task, parallel)

    return localized_replay


# What the replay answers when it cannot give the reference's answer honestly: never an error text (which the
# loop would refuse under `guided`, and which would read as a wrong answer under `plain`).
DIVERGED = "no answer: a tool call failed in this run that did not fail when the reference was traced"
TRACE_FAILED = "no answer: the reference solution itself failed when it was traced for this run"
SANDBOX_DIED = f"Error: {CRASH_MARKER}"  # a code observation of an execution the sandbox died under
Call = tuple[str, dict[str, Any]]
Reply = ScriptedReply | dict[str, Any] | str


def final_text(trace: ReferenceTrace, diverged: bool, candidate: str) -> str:
    """The replay's answer: the reference's, unless this run diverged from the trace, the traced reference
    failed, or the answer would be an error message the model was shown."""
    if diverged:
        return DIVERGED
    if trace.error or echoes_error(candidate):
        return TRACE_FAILED
    return candidate


def _error_lines(text: str) -> int:
    return sum(line.startswith("Error:") for line in text.splitlines())


def code_diverged(trace: ReferenceTrace, observation: str) -> bool:
    """Whether the replayed reference code showed an error its traced run did not print (or raise)."""
    return _error_lines(observation) > _error_lines(trace.stdout) + (1 if trace.error else 0)


def last_printed_line(observation: str) -> str:
    """The last non-empty line code printed: what a reference prints its answer as."""
    lines = [line.strip() for line in observation.splitlines()]
    return ([line for line in lines if line] or [""])[-1]


def tool_messages(request: ScriptedRequest, calls: int) -> list[str]:
    """The results of the last `calls` native calls, as the tool messages that end the request (none before any)."""
    tools = list(itertools.takewhile(lambda m: m.get("role") == "tool", reversed(request.messages)))[::-1]
    return [str(m.get("content") or "") for m in tools[-calls:]] if calls > 0 else []


def native_calls(group: Sequence[Call]) -> Reply:
    return ScriptedReply(tool_calls=tuple(group))


def final_answer_call(answer: str) -> Reply:
    return ScriptedReply(tool_calls=((FINAL_ANSWER_TOOL, {"answer": answer}),))


@dataclass(frozen=True)
class CallFormat:
    """How a protocol that replays calls one reply at a time speaks: `observations(request, calls)` reads what the
    last action showed (its last `calls` calls' results, in order); `result_per_call`: each call of a reply comes
    back as its own result (native tool calls), else the action shows one; `call` and `answer` phrase a reply that
    makes calls and the reply that answers."""

    observations: Callable[[ScriptedRequest, int], list[str]] = tool_messages
    result_per_call: bool = True
    call: Callable[[Sequence[Call]], Reply] = native_calls
    answer: Callable[[str], Reply] = final_answer_call


NATIVE_CALLS = CallFormat()  # native tool calls, ending with the final_answer tool


def replay_diverged(trace: ReferenceTrace, request: ScriptedRequest, form: CallFormat, call_indexes: range) -> bool:
    """Whether this run's last replayed action failed where the traced reference's did not: one of its calls (the
    traced calls at `call_indexes`, one per reply or a batch replayed as one reply) showed an error and that traced
    call succeeded (every failure counts where the trace does not say)."""
    shown = form.observations(request, len(call_indexes) if form.result_per_call else 1)
    failed_here = [index for index, text in zip(call_indexes[-len(shown):] if shown else [], shown)
                   if text.startswith("Error:")]
    if not failed_here or trace.failed_calls is None:
        return False
    failed = trace.failed_calls
    return any(not (0 <= index < len(failed) and failed[index]) for index in failed_here)


def call_groups(trace: ReferenceTrace, parallel: bool) -> list[list[Call]]:
    """The traced calls as the replies that make them: with `parallel`, consecutive calls the reference made in one
    concurrent batch (the same non-None batch id) are one reply; otherwise, and for calls made alone, one call a
    reply."""
    batches = trace.call_batches if parallel and trace.call_batches is not None else (None,) * len(trace.tool_calls)
    groups: list[list[Call]] = []
    previous: int | None = None
    for call, batch in zip(trace.tool_calls, batches, strict=True):
        if batch is not None and batch == previous:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous = batch
    return groups


def calls_policy(trace: ReferenceTrace, planned: Sequence[Sequence[Call]], form: CallFormat = NATIVE_CALLS,
                 own: Sequence[Sequence[Call]] = ()) -> Policy:
    """The reference as calls, one reply a group: first the replay's `own` replies (calls of the arm's own that are
    not traced calls, such as searches that load tools: any error they show is this run's), then the traced calls
    grouped as `planned` (call_groups), then the answer, all phrased as `form` says. The replay never answers with
    an error it was shown, and gives no answer (`final_text`) where this run's calls failed where the trace's did
    not, or the traced reference itself failed."""
    replies = [*own, *planned]
    pending = list(replies)
    replayed = 0  # traced calls replayed so far (the traced call indexes of the last reply end here)

    def policy(request: ScriptedRequest) -> Reply:
        nonlocal replayed
        done = len(replies) - len(pending)
        last = replies[done - 1] if done else []
        if 0 < done <= len(own):
            diverged = any(text.startswith("Error:") for text in form.observations(request, len(last)))
        else:
            diverged = replay_diverged(trace, request, form, range(replayed - len(last), replayed))
        if pending and not diverged:
            group = pending.pop(0)
            replayed += len(group) if done >= len(own) else 0
            return form.call(group)
        return form.answer(final_text(trace, diverged, trace.answer))

    return policy


def _code_observation(messages: list[dict[str, Any]], block: int = 0) -> str:
    """What the reference code showed, as the observation after its code block reads (`block`: the reference's
    block among the replay's; a later observation is the loop's answer to a reply, not the code's output)."""
    observations = [m["content"] for m in messages if m["role"] == "user" and
                    str(m["content"]).startswith("Output:\n")]
    return observations[block][len("Output:\n"):] if len(observations) > block else ""


def code_blocks_policy(trace: ReferenceTrace, task: Task, blocks: Sequence[str]) -> Policy:
    """The reference as code blocks, one a reply (the last of them the reference code), then final_answer() of the
    line it printed last, read from the observation (the answer comes from what the agent saw, as a model's would);
    no answer (`final_text`) where the code printed errors the traced run did not, and after a sandbox crash under
    its code a reply with nothing (the loop then ends the run as the crash)."""
    def policy(request: ScriptedRequest) -> str:
        conversation = task_messages(request, task.prompt)
        replied = sum(m["role"] == "assistant" for m in conversation)
        if replied < len(blocks):
            return f"```python\n{blocks[replied]}\n```"
        shown = _code_observation(conversation, len(blocks) - 1)
        if SANDBOX_DIED in shown:  # nothing to answer from: the replay says nothing, as a model would
            return ""
        answer = final_text(trace, code_diverged(trace, shown), last_printed_line(shown))
        return f"```python\nfinal_answer({answer!r})\n```"

    return policy
