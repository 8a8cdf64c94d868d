"""How `scripted:reference` replays a task's reference solution through an arm's own protocol: each arm names its
replay in the registry (harness.agents.arms: `Arm.replay`), built from the pieces here, so the run stage traces a
reference and hands it to the arm without knowing any arm's protocol. Also the reference solution as an agent
(`ReferenceAgent`: its code run once in the sandbox with the bridged tools), which the run stage traces.

A reference is traced in a run of its own, on its own fresh servers; a server started per run (`${RUN_DIR}` in its
mcp_servers.json entry) had its own folder then, so a traced call's arguments naming paths under that folder are
replayed under this run's folder (`Localize`): a correct suite passes its reference in every arm on any server.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.loop import FINAL_ANSWER_TOOL, echoes_error
from harness.agents.sessions import session_lease
from harness.mcp.bridge import make_dispatcher
from harness.mcp.tool_files import PACKAGE, server_folder
from harness.mcp.toolbox import identifier
from harness.models.scripted import Policy, ScriptedReply, ScriptedRequest, task_messages
from harness.sandbox import SandboxPool
from harness.sandbox.pool import CRASH_MARKER
from harness.tasks.scorers import ScoreContext
from harness.tasks.task import Task
from harness.trace.events import CodeExecution

# The protocols a reference replays through (an arm names one in its registry entry, through `replay_for`):
# ChatAdapter fields, native tool calls (ending with the final_answer tool, or with a reply without a tool call as
# any OpenAI-compatible client reads an answer), native tool calls after searches that load those tools
# (direct-search), native calls to fastmcp's meta-tools, code blocks, code blocks that first read the files of the
# tools they call and import them (codemode-files), the reference code as one native call of a code tool, or
# smolagents' own formats: its ToolCallingAgent's native calls (each result or error sent back in a user message)
# and its CodeAgent's replies (its `<code>` blocks, `final_answer(...)` in the code).
ReplayProtocol = Literal["react_fields", "tool_calls", "chat_tools", "tool_search", "meta_tools", "code_blocks",
                         "tool_files", "code_tool", "smol_tools", "smol_code"]


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


# (the trace, the task, whether the arm runs several calls of a reply, the run's context) -> the replay's policy
Replay = Callable[[ReferenceTrace, Task, bool, SampleContext | None], Policy]


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
            ctx.transcript.code_started(code)
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


# What the replay answers when it cannot give the reference's answer honestly: never an error text (which the
# loop would refuse under `guided`, and which would read as a wrong answer under `plain`).
DIVERGED = "no answer: a tool call failed in this run that did not fail when the reference was traced"
TRACE_FAILED = "no answer: the reference solution itself failed when it was traced for this run"
SANDBOX_DIED = f"Error: {CRASH_MARKER}"  # a code observation of an execution the sandbox died under
SMOL_CODE_TAGS = ("<code>", "</code>")  # smolagents' CodeAgent's default code tags (its code_agent.yaml prompt)
# how smolagents shows a code run's prints, its value, and an error its step raised (memory.py, agents.py)
SMOL_LOGS, SMOL_OUTPUT, SMOL_ERROR = "Execution logs:\n", "Last output from code snippet:", "Error:\n"
_OBSERVATION_FIELD = re.compile(r"\[\[ ## observation_\d+ ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", re.DOTALL)


def _last_observations(request: ScriptedRequest, protocol: str, calls: int) -> list[str]:
    """The observations of the replay's last action (its last `calls` calls, in order), as the arm showed them
    (none before any action)."""
    last = request.messages[-1] if request.messages else {}
    if protocol == "react_fields":
        found = _OBSERVATION_FIELD.findall(str(last.get("content", "")))
        return found[-1:]
    if protocol == "smol_tools":  # smolagents sends a call's observation, or the error it raised, as a user message
        text = str(last.get("content", ""))
        return [text[text.index(SMOL_ERROR):] if SMOL_ERROR in text else text] if calls > 0 else []
    tools = list(itertools.takewhile(lambda m: m.get("role") == "tool", reversed(request.messages)))[::-1]
    return [str(m.get("content") or "") for m in tools[-calls:]] if calls > 0 else []


def _error_lines(text: str) -> int:
    return sum(line.startswith("Error:") for line in text.splitlines())


def replay_diverged(trace: ReferenceTrace, request: ScriptedRequest, protocol: str, call_indexes: range) -> bool:
    """Whether this run's last replayed action failed where the traced reference's did not: one of its calls (the
    traced calls at `call_indexes`, one per reply or a batch replayed as one reply) showed an error and that traced
    call succeeded (every failure counts where the trace does not say; a meta-tool replay's own calls never fail,
    so any error there is one)."""
    several = protocol in ("tool_calls", "chat_tools")  # each call's result is its own tool message
    shown = _last_observations(request, protocol, len(call_indexes) if several else 1)
    failed_here = [index for index, text in zip(call_indexes[-len(shown):] if shown else [], shown)
                   if text.startswith("Error:")]
    if not failed_here:
        return False
    if protocol == "meta_tools":
        return True
    if trace.failed_calls is None:
        return False
    failed = trace.failed_calls
    return any(not (0 <= index < len(failed) and failed[index]) for index in failed_here)


def call_groups(trace: ReferenceTrace, parallel: bool) -> list[list[tuple[str, dict[str, Any]]]]:
    """The traced calls as the replies that make them: with `parallel`, consecutive calls the reference made in one
    concurrent batch (the same non-None batch id) are one reply; otherwise, and for calls made alone, one call a
    reply."""
    batches = trace.call_batches if parallel and trace.call_batches is not None else (None,) * len(trace.tool_calls)
    groups: list[list[tuple[str, dict[str, Any]]]] = []
    previous: int | None = None
    for call, batch in zip(trace.tool_calls, batches, strict=True):
        if batch is not None and batch == previous:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous = batch
    return groups


def code_diverged(trace: ReferenceTrace, observation: str) -> bool:
    """Whether the replayed reference code showed an error its traced run did not print (or raise)."""
    return _error_lines(observation) > _error_lines(trace.stdout) + (1 if trace.error else 0)


def final_text(trace: ReferenceTrace, diverged: bool, candidate: str) -> str:
    """The replay's answer: the reference's, unless this run diverged from the trace, the traced reference
    failed, or the answer would be an error message the model was shown."""
    if diverged:
        return DIVERGED
    if trace.error or echoes_error(candidate):
        return TRACE_FAILED
    return candidate


def _code_observation(messages: list[dict[str, Any]], block: int = 0) -> str:
    """What the reference code showed, as the observation after its code block reads (`block`: the reference's
    block among the replay's; a later observation is the loop's answer to a reply, not the code's output)."""
    observations = [m["content"] for m in messages if m["role"] == "user" and
                    str(m["content"]).startswith("Output:\n")]
    return observations[block][len("Output:\n"):] if len(observations) > block else ""


def _last_printed_line(observation: str) -> str:
    lines = [line.strip() for line in observation.splitlines()]
    return ([line for line in lines if line] or [""])[-1]


def meta_tool_replay(trace: ReferenceTrace, max_calls: int) -> list[tuple[str, dict[str, Any]]]:
    """The reference through fastmcp's Code Mode meta-tools: search for its tools, read their schemas, make its
    calls with `await call_tool(...)` in execute blocks (at most the per-execute limit each; a call that fails, as
    a recovery task's first call does, does not stop the ones after it)."""
    names = list(dict.fromkeys(name for name, _ in trace.tool_calls))
    replies: list[tuple[str, dict[str, Any]]] = [("search", {"query": " ".join(names)}),
                                                 ("get_schema", {"tools": names})]
    calls = list(trace.tool_calls)
    for start in range(0, len(calls), max_calls):
        lines = [f"try:\n    results.append(await call_tool({name!r}, {arguments!r}))\n"
                 f"except Exception as error:\n    results.append(str(error))"  # a failed call ends no chain
                 for name, arguments in calls[start:start + max_calls]]
        replies.append(("execute", {"code": "\n".join(["results = []", *lines, "len(results)"])}))
    return replies


def tool_file_replay(trace: ReferenceTrace, reference: str) -> tuple[str, str]:
    """The reference through codemode-files: a block that lists the folders of the servers it calls and prints the
    file of each tool it calls (what an agent that knew which tools it needs reads), then the reference code after
    the imports of those tools."""
    servers = trace.call_servers or ("",) * len(trace.tool_calls)
    tools = list(dict.fromkeys((server_folder(server), identifier(name))
                               for (name, _), server in zip(trace.tool_calls, servers, strict=True) if server))
    folders = list(dict.fromkeys(folder for folder, _ in tools))
    listed = [f"{PACKAGE}/{folder}" for folder in folders] or [PACKAGE]
    explore = ["import os", *(f"print(os.listdir({path!r}))" for path in listed),
               *(f"print(open('{PACKAGE}/{folder}/{tool}.py').read())" for folder, tool in tools)]
    imports = [f"from {PACKAGE}.{folder} import {', '.join(t for f, t in tools if f == folder)}" for folder in folders]
    return "\n".join(explore), "\n".join([*imports, reference.strip()])


def smol_code_reply(trace: ReferenceTrace, reference: str, request: ScriptedRequest) -> str:
    """The reference through smolagents' CodeAgent, in the reply format its prompt asks for (a thought, then code
    between its code tags): the reference code first; then `final_answer(...)` of the line it printed last, read
    from the observation the agent sent back (its execution logs); no answer (`final_text`) where its executor
    raised, or the code printed errors the traced run did not."""
    opened, closed = SMOL_CODE_TAGS
    if not any(m.get("role") == "assistant" for m in request.messages):
        return f"Thought: I run the reference solution.\n{opened}\n{reference.strip()}\n{closed}"
    shown = str(request.messages[-1].get("content") or "") if request.messages else ""
    raised = SMOL_ERROR in shown
    logs = shown.split(SMOL_LOGS, 1)[1] if SMOL_LOGS in shown else ""
    logs = logs.split(SMOL_OUTPUT, 1)[0].split(SMOL_ERROR, 1)[0]
    answer = final_text(trace, raised or code_diverged(trace, logs), _last_printed_line(logs))
    return f"Thought: I give the answer it printed.\n{opened}\nfinal_answer({answer!r})\n{closed}"


def replay_for(protocol: ReplayProtocol, *, code_tool: str = "", max_calls: int = 0, search_tool: str = "") -> Replay:
    """An arm's replay through `protocol` (`code_tool`: the arm's code tool, for `code_tool`; `max_calls`: the calls
    one execute may make, for `meta_tools`; `search_tool`: the arm's search tool, for `tool_search`)."""
    def replay(trace: ReferenceTrace, task: Task, parallel: bool, ctx: SampleContext | None) -> Policy:
        return protocol_policy(localized(trace, ctx), task, protocol, parallel, code_tool=code_tool,
                               max_calls=max_calls, search_tool=search_tool)

    return replay


def search_replay(trace: ReferenceTrace, search_tool: str, parallel: bool) -> list[list[tuple[str, dict[str, Any]]]]:
    """The searches that load the reference's tools: one per tool, its name as the query (a tool whose name is the
    query comes first in any search method), in the order the reference first calls them; one reply of them all
    with `parallel`, else one a reply."""
    searches = [(search_tool, {"query": name}) for name in dict.fromkeys(name for name, _ in trace.tool_calls)]
    return ([searches] if searches else []) if parallel else [[search] for search in searches]


def protocol_policy(trace: ReferenceTrace, task: Task, protocol: ReplayProtocol, parallel: bool = False, *,
                    code_tool: str = "", max_calls: int = 1, search_tool: str = "") -> Policy:
    """Replays a reference through an arm's protocol, ending as the loop contract says (with final_answer):
    - react_fields (ChatAdapter fields): the reference's tool calls, then final_answer with its answer;
    - tool_calls (native tool calls): the same calls as native tool calls, then the final_answer tool; with
      `parallel` (the run's scaffold lets the arm run several calls of a reply), the calls the reference made in
      one concurrent batch are one reply (`call_groups`), otherwise one call a reply;
    - smol_tools: as tool_calls (one call a reply), each call's result or error read from the user message
      smolagents' ToolCallingAgent sends it back in;
    - chat_tools: as tool_calls (one call a reply), then the answer as a reply without a tool call, as any
      OpenAI-compatible client reads an answer (an agent from outside, through the run's endpoint);
    - tool_search: the searches that load the reference's tools (`search_replay`), then as tool_calls;
    - meta_tools (native calls to fastmcp's meta-tools): search, get_schema, the calls inside execute
      (meta_tool_replay), then the final_answer tool;
    - code_blocks: the reference code, then final_answer() of the line it printed last, read from the
      observation (the answer comes from what the agent saw, as a model's would);
    - tool_files: as code_blocks, after a block reading the files of the tools it calls, and with the reference
      importing them (tool_file_replay);
    - code_tool: the reference code as one native call of the arm's code tool, then the final_answer tool with
      the line it printed last, read from that call's result;
    - smol_code: smolagents' CodeAgent's format (`smol_code_reply`): the reference code in its code tags, then
      final_answer() in code, of the line it printed last.
    The replay never answers with an error it was shown, and gives no answer (`final_text`) where this run's
    calls failed where the trace's did not, or the traced reference itself failed; after a sandbox crash under its
    code it replies with nothing (the loop then ends the run as the crash)."""
    if protocol == "meta_tools":
        planned = [[call] for call in meta_tool_replay(trace, max_calls)]
    else:
        planned = call_groups(trace, parallel and protocol in ("tool_calls", "tool_search"))
    searches = search_replay(trace, search_tool, parallel) if protocol == "tool_search" else []
    planned = [*searches, *planned]
    pending = list(planned)
    replayed = 0  # calls replayed so far (the traced call indexes of the last reply end here)

    def policy(request: ScriptedRequest) -> dict[str, Any] | str | ScriptedReply:
        if protocol == "smol_code":
            return smol_code_reply(trace, task.reference or "", request)
        if protocol in ("code_blocks", "tool_files"):
            conversation = task_messages(request, task.prompt)
            blocks = ([task.reference.strip()] if protocol == "code_blocks"
                      else list(tool_file_replay(trace, task.reference)))
            replied = sum(m["role"] == "assistant" for m in conversation)
            if replied < len(blocks):
                return f"```python\n{blocks[replied]}\n```"
            shown = _code_observation(conversation, len(blocks) - 1)
            if SANDBOX_DIED in shown:  # nothing to answer from: the replay says nothing, as a model would
                return ""
            answer = final_text(trace, code_diverged(trace, shown), _last_printed_line(shown))
            return f"```python\nfinal_answer({answer!r})\n```"
        if protocol == "code_tool":
            shown = next(iter(_last_observations(request, protocol, 1)), None)
            if shown is None:
                return ScriptedReply(tool_calls=((code_tool, {"code": (task.reference or "").strip()}),))
            if SANDBOX_DIED in shown:
                return ""
            answer = final_text(trace, code_diverged(trace, shown), _last_printed_line(shown))
            return ScriptedReply(tool_calls=((FINAL_ANSWER_TOOL, {"answer": answer}),))
        nonlocal replayed
        done = len(planned) - len(pending)
        last = planned[done - 1] if done else []
        if 0 < done <= len(searches):  # the replay's own searches: any error is this run's
            diverged = any(text.startswith("Error:") for text in _last_observations(request, protocol, len(last)))
        else:
            diverged = replay_diverged(trace, request, "tool_calls" if protocol == "tool_search" else protocol,
                                       range(replayed - len(last), replayed))
        if pending and not diverged:
            group = pending.pop(0)
            replayed += len(group) if done >= len(searches) else 0
            if protocol == "react_fields":
                name, arguments = group[0]
                return {"next_thought": f"I call {name}.", "next_tool_name": name, "next_tool_args": arguments}
            return ScriptedReply(tool_calls=tuple(group))
        answer = final_text(trace, diverged, trace.answer)
        if protocol == "chat_tools":
            return ScriptedReply(text=answer)
        if protocol == "react_fields":
            return {"next_thought": "I have what I need.", "next_tool_name": FINAL_ANSWER_TOOL,
                    "next_tool_args": {"answer": answer}}
        return ScriptedReply(tool_calls=((FINAL_ANSWER_TOOL, {"answer": answer}),))

    return policy


