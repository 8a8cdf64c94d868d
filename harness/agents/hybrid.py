"""The hybrid arm: the model calls the run's MCP tools through its NATIVE tool-calling interface, as in the direct
arm, and has one more tool, `run_python(code)`, which runs Python in the code-mode sandbox where the tools are
functions (calls bridged to the host's MCP clients, variables kept between runs within the run). What the code
prints is that call's result; final_answer(...) in the code ends the run, as do the final_answer tool and a reply
without any call. Each turn the model chooses: call a tool, run code, or answer.

Which tools are offered which way follows each server's `callers` (harness.mcp.registry.tool_callers): a tool
of a server declared `[code]` is not offered natively, one declared `[direct]` is not defined in the sandbox nor
in its stubs. The stubs of the code-callable tools go in the system message (an INPUT no optimizer can rewrite;
a provider caps a function's description, and the embedded model's template would print them JSON-escaped),
and are counted as tool-definition tokens.

The policy is the direct arm's with the code tool as one more tool: every call goes through `call`, so the arm
does with several calls in a reply whatever the direct arm does. The step is a `dspy.Predict` spoken through
`HybridAdapter` (native tool calls, the stubs in the system message).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import dspy

from harness.agents.base import AgentResult
from harness.agents.chat import FINAL_ANSWER_FUNCTION, CodeChatAdapter, ToolCallingAdapter
from harness.agents.codemode import FINAL_ANSWER_STUB, SHOWN, SHOWN_WITH_ECHO, code_step, run_code
from harness.agents.context import SampleContext
from harness.agents.direct import PROTOCOL as DIRECT_PROTOCOL
from harness.agents.direct import DirectPolicy, function_definition, protocol
from harness.agents.example import CHAIN, COUNT, SUM, WRITE, code_demo, tool_calling_demo
from harness.agents.loop import END_INSTRUCTION, FINAL_ANSWER_TOOL, Outcome, Turn, run_loop, tool_step
from harness.agents.replay import (
    SANDBOX_DIED,
    ReferenceTrace,
    code_diverged,
    final_text,
    last_printed_line,
    register_replay,
    tool_messages,
)
from harness.agents.scaffold import Scaffold
from harness.agents.sessions import session_lease
from harness.mcp.bridge import make_dispatcher
from harness.mcp.servers import ServerSession
from harness.mcp.toolbox import Toolbox
from harness.models.scripted import Policy, ScriptedReply, ScriptedRequest
from harness.sandbox import SandboxPool, ToolDispatcher
from harness.tasks.task import Task
from harness.trace.steps import TrajectoryStep

CODE_TOOL = "run_python"
CODE_TOOL_FUNCTION = {"type": "function", "function": {
    "name": CODE_TOOL,
    "description": "Run Python code in the sandbox where the functions listed in the instructions are defined "
                   "(call them directly, no import). What the code prints is the result; variables persist "
                   "between runs; final_answer(answer) in the code ends the task.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string", "description": "Python code"}},
                   "required": ["code"]}}}
CODE_SENTENCE = (f"One tool, {CODE_TOOL}(code), runs Python in a sandbox where the functions below are defined: use "
                 "it to call tools in a loop, filter, aggregate or compute from results instead of calling tools "
                 "one by one; variables persist between its runs.")


def instructions(scaffold: Scaffold) -> str:
    """The direct arm's protocol (calls together or one per turn, as the scaffold's parallel_tool_calls says), the
    code tool's sentence, what code shows (the scaffold's echo), the ending."""
    shown = SHOWN_WITH_ECHO if scaffold.echo_last_expression else SHOWN
    return f"{protocol(scaffold.parallel_tool_calls)} {CODE_SENTENCE} {shown} {scaffold.finish_instruction(END_INSTRUCTION)}"


class HybridStep(dspy.Signature):
    __doc__ = DIRECT_PROTOCOL  # a program's instructions follow its scaffold (instructions())

    task: str = dspy.InputField()
    tools: list[dict[str, Any]] = dspy.InputField(desc="the tools, as function definitions")
    tool_api: str = dspy.InputField(desc="Python functions defined in the code tool's sandbox")
    history: list[dict[str, Any]] = dspy.InputField(desc="earlier turns: the tool call and its result")
    reply: dict[str, Any] = dspy.OutputField(desc="text and tool calls")


def code_tool_demo(example_demo: dict[str, Any]) -> dict[str, Any]:
    """A code-mode worked example as calls of the code tool: each code block one run_python call."""
    history = [{"action": {"text": "", "tool_calls": [{"id": f"call_{n}", "name": CODE_TOOL,
                                                        "arguments": {"code": turn["action"]["code"]}}]},
                "observation": turn["observation"]} for n, turn in enumerate(example_demo["history"])]
    return {**example_demo, "history": history, "reply": {"text": example_demo["reply"], "tool_calls": []}}


def hybrid_demos() -> list[dict[str, Any]]:
    """The worked examples in both kinds: lookups that follow one record call the tools natively, and those that
    list and add up a page run code."""
    return [tool_calling_demo(CHAIN), code_tool_demo(code_demo(COUNT)), code_tool_demo(code_demo(SUM)),
            tool_calling_demo(WRITE)]


class HybridProgram(dspy.Module):
    """What an optimizer tunes in the hybrid arm: the one step predictor (instructions and demos), starting from
    the scaffold's instruction sentences and, if `worked_examples`, the built-in worked examples."""

    def __init__(self, scaffold: Scaffold, examples: bool | None = None):
        super().__init__()
        self.step = dspy.Predict(HybridStep.with_instructions(instructions(scaffold)))
        if scaffold.worked_examples if examples is None else examples:
            self.step.demos = [dspy.Example(**demo) for demo in hybrid_demos()]


class HybridAdapter(ToolCallingAdapter):
    """Native tool calling (the tools, the code tool among them, in the request's `tools`), with the code tool's
    stubs in the system message as code mode shows them."""

    system_message = CodeChatAdapter.system_message


class HybridPolicy(DirectPolicy):
    """The direct arm's policy, with the code tool routed to the run's leased sandbox (one execution at a time:
    an interpreter is not thread-safe) and the code-only tools refused when called natively."""

    def __init__(self, program: HybridProgram, ctx: SampleContext, tools: list[dict[str, Any]], tool_api: str,
                 sandbox: Any, code_only: frozenset[str]):
        super().__init__(program, ctx, tools, ctx.scaffold.parallel_tool_calls)
        self.tool_api, self.sandbox, self.code_only = tool_api, sandbox, code_only
        self.adapter = HybridAdapter(self.parallel, ctx.task)
        self.running = asyncio.Lock()

    def inputs(self, turns: list[Turn]) -> dict[str, Any]:
        return {**super().inputs(turns), "tool_api": self.tool_api}

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        if name == CODE_TOOL:
            code = arguments.get("code")
            if not isinstance(code, str) or not code.strip():
                return Outcome(f"Error: {CODE_TOOL} takes the Python to run as its `code` argument (a string)",
                               error_kind="tool")
            async with self.running:
                return await run_code(self.sandbox, code, self.scaffold, self.ctx.transcript)
        if name in self.code_only:
            return Outcome(f"Error: tool '{name}' can only be called from code: call it inside {CODE_TOOL}",
                           error_kind="tool")
        return await super().call(name, arguments)

    def record(self, turn: Turn) -> TrajectoryStep:
        """A turn that ran code alone is a code step (its code, what it printed, the thought in its detail); any other
        a tool step (several calls of one reply, the code tool among them, are each a call of that step)."""
        if turn.action.content.get("tool") == CODE_TOOL and "stdout" in turn.outcome.detail:
            step = code_step(turn, turn.action.content["arguments"]["code"])
            thought = turn.action.content.get("thought")
            return replace(step, detail={**step.detail, "thought": thought}) if thought else step
        return tool_step(turn, code_tool=CODE_TOOL)


def code_dispatcher(session: ServerSession, code_tools: Toolbox) -> ToolDispatcher:
    """The bridge to the MCP session for the code-callable tools only (single and batched calls alike): a tool its
    server declares `[direct]` is not reachable from code, even through the bridge's own helper."""

    def refuse(name: str) -> str | None:
        return None if name in code_tools.names else (
            f"tool '{name}' cannot be called from code (its server's callers: direct)")

    return make_dispatcher(session, asyncio.get_running_loop(), refuse=refuse)


class HybridAgent:
    name = "hybrid"

    def __init__(self, pool: SandboxPool, scaffold: Scaffold, program: HybridProgram | None = None):
        self.pool, self.scaffold = pool, scaffold
        self.program = program or HybridProgram(scaffold)

    async def run(self, ctx: SampleContext) -> AgentResult:
        """One task: the native tools and the code tool, its stubs, then the loop with a sandbox leased as code
        mode leases one (in a session, its skills and workspace: harness.agents.sessions)."""
        session = ctx.session
        native, in_code = session.toolbox.callable_by("direct"), session.toolbox.callable_by("code")
        tools = [function_definition(spec) for spec in native.specs] + [CODE_TOOL_FUNCTION, FINAL_ANSWER_FUNCTION]
        tool_api = "\n\n".join(filter(None, [FINAL_ANSWER_STUB, in_code.python_stubs()]))
        ctx.transcript.tools_shown(json.dumps(tools), tool_api)
        code_only = frozenset(in_code.names) - frozenset(native.names)
        async with session_lease(self.pool, code_dispatcher(session, in_code), ctx.slot,
                                 prelude=in_code.sandbox_prelude(), transcript=ctx.transcript) as sandbox:
            return (await run_loop(HybridPolicy(self.program, ctx, tools, tool_api, sandbox, code_only), ctx)).result


@register_replay("code_tool")
def replay_code_tool(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through this arm: the reference code as one native call of the code tool, then the
    final_answer tool with the line it printed last, read from that call's result (no answer where it showed errors
    the traced run did not; after a sandbox crash under its code, a reply with nothing)."""
    def policy(request: ScriptedRequest) -> ScriptedReply | str:
        shown = next(iter(tool_messages(request, 1)), None)
        if shown is None:
            return ScriptedReply(tool_calls=((CODE_TOOL, {"code": (task.reference or "").strip()}),))
        if SANDBOX_DIED in shown:
            return ""
        answer = final_text(trace, code_diverged(trace, shown), last_printed_line(shown))
        return ScriptedReply(tool_calls=((FINAL_ANSWER_TOOL, {"answer": answer}),))

    return policy
