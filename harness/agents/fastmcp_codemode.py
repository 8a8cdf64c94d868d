"""The codemode-fastmcp arm: fastmcp's own Code Mode (`fastmcp.experimental.transforms.code_mode.CodeMode`) as a
third code-mode design, next to ours (typed stubs up front) and ours with discovery (search_tools /
get_tool_schema inside the sandbox).

The run's servers are wrapped in one in-process FastMCP proxy carrying the CodeMode transform, so the model sees
only its meta-tools: `search` (BM25 over the tools), `get_schema` and `execute` (Python, run in
`pydantic-monty`'s Rust sandbox, where `await call_tool(name, params)` reaches the real tools). The model drives
them with the native direct agent (harness.agents.direct: same step predictor, same loop, one call per turn), so
the comparison differs only in what tools the model sees. Every proxy tool forwards through the run's
ServerSession, so each call made inside `execute` is logged and counted as a tool call, like the other arms'.

Two things differ from fastmcp's stock MontySandboxProvider, both so the arm is measured like the others: the
limits are the harness sandbox's (time, memory), and what the code prints comes back with its result (stock
Monty writes it to the server's stdout, where no model would see it and it would garble the progress bar).

Needs the optional extra `fastmcp-codemode` (pydantic-monty pinned to what this fastmcp release supports).
"""

from __future__ import annotations

import importlib.util
import json
import time
from dataclasses import replace
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import dspy
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent
from pydantic import PrivateAttr

from harness.agents import example as worked_example
from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.direct import DirectPolicy, DirectProgram, tool_definitions
from harness.agents.loop import Action, Outcome, Turn, run_loop, tool_step
from harness.agents.replay import Call, ReferenceTrace, calls_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.errors import UserError
from harness.mcp.servers import ServerSession, ToolCallFailed, tool_spec
from harness.mcp.toolbox import Toolbox, ToolSpec
from harness.models.scripted import Policy
from harness.tasks.task import Task
from harness.trace.events import CodeExecution
from harness.trace.steps import TrajectoryStep
from harness.trace.vocab import StepErrorKind

EXTRA = "fastmcp-codemode"
PROXY_SERVER = "fastmcp-codemode"  # the proxy's name in the meta session (the meta-tools' `server`)
SEARCH, GET_SCHEMA, EXECUTE = "search", "get_schema", "execute"
EXECUTE_TIMEOUT_S = 30.0  # the harness sandbox's per-execution limit (harness.sandbox.pool.DEFAULT_TIMEOUT_S)
EXECUTE_MEMORY_BYTES = 1024 * 1024 * 1024  # the harness sandbox's memory cap (DEFAULT_MEMORY_MB)
MAX_TOOL_CALLS = 50  # CodeMode's default per execute()


def check_monty() -> None:
    """The arm needs pydantic-monty (the optional extra): a one-line error naming it, before any run starts."""
    if importlib.util.find_spec("pydantic_monty") is None:
        raise UserError(f"the codemode-fastmcp arm needs pydantic-monty: pip install 'harness[{EXTRA}]'")


def sandbox_limits(timeout_s: float = EXECUTE_TIMEOUT_S) -> dict[str, Any]:
    """Monty's ResourceLimits, set to what the harness sandbox allows code-mode code."""
    return {"max_feed_duration_secs": timeout_s, "max_memory": EXECUTE_MEMORY_BYTES}


def new_sandbox_provider(limits: dict[str, Any] | None = None) -> Any:
    """fastmcp's Monty provider with the harness limits, whose code's prints come back with its result."""
    from fastmcp.experimental.transforms.code_mode import MontySandboxProvider

    class PrintingMontyProvider(MontySandboxProvider):
        async def _run_monty(self, pydantic_monty: Any, *, code: str, inputs: dict[str, Any] | None,
                             external_functions: dict[str, Any] | None) -> Any:
            printed = pydantic_monty.CollectString()
            async with pydantic_monty.AsyncMonty() as pool, pool.checkout(limits=self.limits) as session:
                try:
                    value = await session.feed_run(code, inputs=inputs, external_lookup=external_functions,
                                                   print_callback=printed)
                except pydantic_monty.MontyError as exc:  # what the code printed, then its error
                    error = f"SyntaxError: {exc}" if isinstance(exc, pydantic_monty.MontySyntaxError) else str(exc)
                    raise ToolError("\n".join(filter(None, [printed.output.rstrip(), error]))) from exc
            return with_printed(printed.output, value)

    return PrintingMontyProvider(limits=sandbox_limits() if limits is None else limits)


def with_printed(printed: str, value: Any) -> Any:
    """execute's result: the code's value, with what it printed (if anything) alongside."""
    if not printed.strip():
        return value
    return {"printed": printed.rstrip(), "result": value}


class SessionTool(Tool):
    """One of the run's tools on the proxy, forwarded through the run's ServerSession (logged and counted)."""

    _session: ServerSession = PrivateAttr()
    _spec: ToolSpec = PrivateAttr()

    @classmethod
    def forwarding(cls, spec: ToolSpec, session: ServerSession) -> SessionTool:
        tool = cls(name=spec.name, description=spec.description, parameters=spec.input_schema or
                   {"type": "object", "properties": {}}, output_schema=spec.output_schema)
        tool._session, tool._spec = session, spec
        return tool

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            value, text = await self._session.call(self.name, arguments, in_code=True)
        except ToolCallFailed as exc:
            return ToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        structured = None
        if self._spec.output_schema:  # as the server sent it: CodeMode's call_tool hands code the structured value
            structured = {"result": value} if self._spec.result_wrapped else value
        return ToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def build_proxy(session: ServerSession, limits: dict[str, Any] | None = None) -> FastMCP:
    """The run's tools behind fastmcp's CodeMode transform: what the model sees is only its meta-tools."""
    check_monty()
    from fastmcp.experimental.transforms.code_mode import CodeMode

    proxy = FastMCP(PROXY_SERVER)
    for spec in session.toolbox.specs:
        proxy.add_tool(SessionTool.forwarding(spec, session))
    proxy.add_transform(CodeMode(sandbox_provider=new_sandbox_provider(limits), max_tool_calls=MAX_TOOL_CALLS))
    return proxy


@asynccontextmanager
async def meta_session(session: ServerSession, limits: dict[str, Any] | None = None) -> AsyncIterator[ServerSession]:
    """A ServerSession over the proxy's meta-tools (its own call log; the run's tools log into `session`)."""
    async with Client(build_proxy(session, limits)) as client:
        specs = tuple(tool_spec(PROXY_SERVER, tool) for tool in await client.list_tools())
        yield ServerSession(clients={PROXY_SERVER: client}, fixtures={}, toolbox=Toolbox(specs),
                            tool_timeout_s=session.tool_timeout_s + EXECUTE_TIMEOUT_S,
                            max_tool_result_mb=session.max_tool_result_mb)


def execute_error_kind(observation: str) -> StepErrorKind:
    """A failed execute as the other code-mode arms name it: a code timeout, syntax, or an exception in the code."""
    last = observation.strip().splitlines()[-1] if observation.strip() else ""
    if last.startswith("TimeoutError:"):
        return "code_timeout"
    return "syntax" if last.startswith("SyntaxError:") else "exception"


# The count example (harness.agents.example.COUNT) as this arm acts: the meta-tools' own renderings of its two
# tools (as fastmcp's search and get_schema show them), then one execute making both calls. Only that one of the
# four examples the direct and code-mode arms see: the other three are not yet written as meta-tool turns.
EXAMPLE_TOOLS = {
    "search_members": "Members whose name contains `query`: id, name, email.",
    "list_loans": "A member's loans, optionally by status (out/returned). Paged: returns {loans, total, next_offset}.",
}
EXAMPLE_SCHEMAS = (
    "### search_members\n\n" + EXAMPLE_TOOLS["search_members"] + "\n\n**Parameters**\n- `query` (string, required)"
    "\n\n**Returns**\n- `result` (object[], required)\n\n"
    "### list_loans\n\n" + EXAMPLE_TOOLS["list_loans"] + "\n\n**Parameters**\n- `member_id` (string, required)\n"
    "- `status` (string?)\n- `limit` (integer, default 20)\n- `offset` (integer, default 0)\n\n"
    "**Returns**\n- `value` (object)")
EXAMPLE_CODE = (
    'members = await call_tool("search_members", {"query": "Ada Byron"})\n'
    'page = await call_tool("list_loans", {"member_id": members["result"][0]["id"], "status": "out", "limit": 100})\n'
    '{"member": members["result"][0]["id"], "total": page["total"], "books": [l["book_id"] for l in page["loans"]]}')


def example_execute_result() -> dict[str, Any]:
    """What EXAMPLE_CODE returns, from the example's own tool results."""
    members, page = worked_example.STEPS[0].result, worked_example.STEPS[1].result
    return {"member": members[0]["id"], "total": page["total"], "books": [loan["book_id"] for loan in page["loans"]]}


def meta_tool_demo() -> dict[str, Any]:
    """The worked example through the meta-tools: search, get_schema, one execute, then the answer."""
    calls = (("search", {"query": "members loans"},
              "\n".join(f"- {name}: {description}" for name, description in EXAMPLE_TOOLS.items())),
             ("get_schema", {"tools": list(EXAMPLE_TOOLS)}, EXAMPLE_SCHEMAS),
             ("execute", {"code": EXAMPLE_CODE}, worked_example.tool_result_text(example_execute_result())))
    history = [{"action": {"text": "", "tool_calls": [{"id": f"call_{n}", "name": name, "arguments": arguments}]},
                "observation": observation} for n, (name, arguments, observation) in enumerate(calls)]
    return {"task": worked_example.EXAMPLE_TASK, "history": history,
            "reply": {"text": worked_example.ANSWER, "tool_calls": []}}


class FastMCPCodeModeProgram(DirectProgram):
    """Direct's step predictor (what an optimizer tunes), with the worked example (if the scaffold has
    `worked_examples`) shown through the meta-tools."""

    def __init__(self, scaffold: Scaffold):
        super().__init__(scaffold, examples=False, parallel=False)  # one meta-tool call per turn
        if scaffold.worked_examples:
            self.step.demos = [dspy.Example(**meta_tool_demo())]


class FastMCPCodeModePolicy(DirectPolicy):
    """The direct arm's policy over the meta-tools (calls go to the `meta` session, whose own log is not the run's);
    an execute step is a code run in the run's transcript, with the run's tool calls it made."""

    def __init__(self, program: DirectProgram, ctx: SampleContext, tools: list[dict[str, Any]], meta: ServerSession):
        super().__init__(program, ctx, tools)
        self.session, self.run_session = meta, ctx.session

    async def perform(self, action: Action) -> Outcome:
        before, started = len(self.run_session.calls), time.perf_counter()
        if action.content["tool"] == EXECUTE:  # the run's tool calls its code makes are this execution's
            self.ctx.transcript.code_started(str(action.content["arguments"].get("code", "")))
        outcome = await super().perform(action)
        if action.content["tool"] != EXECUTE:
            return outcome
        inner = self.run_session.calls[before:]
        kind = execute_error_kind(outcome.observation) if outcome.error_kind else None
        duration = time.perf_counter() - started
        self.ctx.transcript.code_run(CodeExecution(
            code=str(action.content["arguments"].get("code", "")), stdout=outcome.observation,
            error=outcome.observation if kind else None, error_kind=kind, duration_s=duration, tool_calls=len(inner)))
        detail = {"duration_s": duration, "error_kind": kind,
                  "tool_calls": [{"tool": c.tool, "arguments": c.arguments, "is_error": c.is_error} for c in inner]}
        return Outcome(outcome.observation, outcome.final, outcome.answer, kind, detail, rules=outcome.rules)

    def record(self, turn: Turn) -> TrajectoryStep:
        """A meta-tool step whose `acts` are the code it executed: search and get_schema show tools, not data, so
        the rules about answering before an action treat a step of them alone as no action (as direct-search's)."""
        step = tool_step(turn)
        return replace(step, acts=("code",) if any(use.tool == EXECUTE for use in step.calls) else ())


class FastMCPCodeModeAgent:
    name = "codemode-fastmcp"

    def __init__(self, scaffold: Scaffold, program: DirectProgram | None = None,
                 execute_timeout_s: float = EXECUTE_TIMEOUT_S):
        check_monty()
        self.program, self.scaffold = program or FastMCPCodeModeProgram(scaffold), scaffold
        self.limits = sandbox_limits(execute_timeout_s)

    async def run(self, ctx: SampleContext) -> AgentResult:
        """One task through the meta-tools; every run tool call happens inside an execute (a code run, made from
        code), so Monty's own time is execute's less the tools' (a row's sandbox_time_s)."""
        async with meta_session(ctx.session, self.limits) as meta:
            tools = tool_definitions(meta.toolbox.specs)
            ctx.transcript.tools_shown(json.dumps(tools))
            return (await run_loop(FastMCPCodeModePolicy(self.program, ctx, tools, meta), ctx)).result


def meta_tool_replay(trace: ReferenceTrace, max_calls: int) -> list[Call]:
    """The reference through the meta-tools: search for its tools, read their schemas, make its calls with
    `await call_tool(...)` in execute blocks (at most the per-execute limit each; a call that fails, as a recovery
    task's first call does, does not stop the ones after it)."""
    names = list(dict.fromkeys(name for name, _ in trace.tool_calls))
    replies: list[Call] = [(SEARCH, {"query": " ".join(names)}), (GET_SCHEMA, {"tools": names})]
    calls = list(trace.tool_calls)
    for start in range(0, len(calls), max_calls):
        lines = [f"try:\n    results.append(await call_tool({name!r}, {arguments!r}))\n"
                 f"except Exception as error:\n    results.append(str(error))"  # a failed call ends no chain
                 for name, arguments in calls[start:start + max_calls]]
        replies.append((EXECUTE, {"code": "\n".join(["results = []", *lines, "len(results)"])}))
    return replies


@register_replay("meta_tools")
def replay_meta_tools(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through the meta-tools as native calls, one a turn (`meta_tool_replay`), then the
    final_answer tool. They are the replay's own calls, not traced ones: any error they show is this run's."""
    return calls_policy(trace, [], own=[[call] for call in meta_tool_replay(trace, MAX_TOOL_CALLS)])
