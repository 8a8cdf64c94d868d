"""The direct arm: the model calls the run's MCP tools through its NATIVE tool-calling interface (a provider's
`tools=` API, or the embedded model's own chat-template format, grammar-constrained), and each result comes
back as a tool message. The run ends when the model calls the `final_answer` tool, or replies without any tool
call (that reply is the answer).

Calls per turn are the scaffold's `parallel_tool_calls`. On (what providers do by default): every call of a
reply runs, concurrently, through the run's one session, and each result is its own tool message in the reply's
order; a call whose arguments are not a JSON object gets an error observation of its own while the others run;
final_answer among several calls does not run (its observation says to call it alone: an answer given beside
the calls it needs was not read from their results). Off: the first call runs and the observation says the
rest did not (one call per turn).

The step is a `dspy.Predict` (tunable by `harness optimize`) spoken through `ToolCallingAdapter`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import dspy

from harness.agents.base import AgentResult
from harness.agents.chat import FINAL_ANSWER_FUNCTION, ToolCallingAdapter
from harness.agents.context import SampleContext
from harness.agents.example import tool_calling_demos
from harness.agents.loop import (
    END_INSTRUCTION,
    FINAL_ANSWER_TOOL,
    Action,
    Outcome,
    Turn,
    act_rules,
    must_act,
    run_loop,
    step_history,
    tool_step,
)
from harness.agents.observations import join_observations
from harness.agents.replay import ReferenceTrace, call_groups, calls_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.mcp.servers import ServerSession, ToolCallFailed
from harness.mcp.toolbox import ToolSpec
from harness.models.messages import parse_arguments
from harness.models.scripted import Policy
from harness.tasks.task import Task
from harness.trace.steps import TrajectoryStep

PROTOCOL = ("Solve the task by calling the tools, one call per turn; each call's result (JSON) is shown to you in "
            "the next turn.")
PARALLEL_PROTOCOL = ("Solve the task by calling the tools; calls that do not need each other's results may be made "
                     "together in one turn. Each call's result (JSON) is shown to you in the next turn.")
ONE_CALL_NOTE = "\n[Only the first tool call of a reply runs: call one tool per turn.]"
ANSWER_ALONE = "Error: final_answer did not run: call it alone, once you have the results the answer needs."


def protocol(parallel: bool) -> str:
    """The arm's sentence on calling tools: calls may be made together when the policy runs them all."""
    return PARALLEL_PROTOCOL if parallel else PROTOCOL


def instructions(scaffold: Scaffold, parallel: bool | None = None) -> str:
    """The direct arm's instructions under `scaffold`; `parallel` (default: the scaffold's parallel_tool_calls)
    for an arm built on this one that runs one call per turn whatever the scaffold says."""
    several = scaffold.parallel_tool_calls if parallel is None else parallel
    return f"{protocol(several)} {scaffold.finish_instruction(END_INSTRUCTION)}"


class ToolStep(dspy.Signature):
    __doc__ = PROTOCOL  # a program's instructions follow its scaffold (instructions())

    task: str = dspy.InputField()
    tools: list[dict[str, Any]] = dspy.InputField(desc="the tools, as function definitions")
    history: list[dict[str, Any]] = dspy.InputField(desc="earlier turns: the tool call and its result")
    reply: dict[str, Any] = dspy.OutputField(desc="text and tool calls")


def function_definition(spec: ToolSpec) -> dict[str, Any]:
    """An MCP tool as an OpenAI-style function definition (what native tool calling sends)."""
    parameters = dict(spec.input_schema or {"type": "object", "properties": {}})
    parameters.setdefault("type", "object")
    return {"type": "function", "function": {"name": spec.name, "description": spec.description,
                                             "parameters": parameters}}


def tool_definitions(specs: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [function_definition(spec) for spec in specs] + [FINAL_ANSWER_FUNCTION]


def final_value(arguments: dict[str, Any]) -> Any:
    """final_answer's answer: its `answer` argument (or the one argument given under another name)."""
    if "answer" in arguments:
        return arguments["answer"]
    return next(iter(arguments.values())) if len(arguments) == 1 else arguments


async def call_tool(session: ServerSession, name: str, arguments: dict[str, Any]) -> Outcome:
    """One tool action, as every tool-calling arm performs it: final_answer ends the run with its value; any
    other tool goes to the run's MCP session, and its error is an `Error: ...` observation."""
    if name == FINAL_ANSWER_TOOL:
        return Outcome("", final=True, answer=final_value(arguments))
    try:
        _value, text = await session.call(name, arguments)
    except ToolCallFailed as exc:
        return Outcome(f"Error: {exc}", error_kind="tool")
    return Outcome(text)


class DirectProgram(dspy.Module):
    """What an optimizer tunes in the direct arm: the one step predictor (instructions and demos; the tools
    are an input, sent through the native tool interface). Its starting point follows the scaffold: its
    instruction sentences, and the built-in worked examples if `worked_examples` (optimizers may replace them)."""

    def __init__(self, scaffold: Scaffold, examples: bool | None = None, parallel: bool | None = None):
        super().__init__()
        self.step = dspy.Predict(ToolStep.with_instructions(instructions(scaffold, parallel)))
        if scaffold.worked_examples if examples is None else examples:
            self.step.demos = [dspy.Example(**demo) for demo in tool_calling_demos()]


class DirectPolicy:
    """`parallel`: every call of a reply runs (the scaffold's `parallel_tool_calls`), else only the first."""

    def __init__(self, program: DirectProgram, ctx: SampleContext, tools: list[dict[str, Any]],
                 parallel: bool = False):
        self.program, self.ctx, self.tools, self.parallel = program, ctx, tools, parallel
        self.task, self.session, self.scaffold = ctx.task, ctx.session, ctx.scaffold
        self.adapter = ToolCallingAdapter(parallel, ctx.task)

    async def reread_tools(self) -> None:
        """The run's tools changed mid-run: the next LM call sends the new list (recorded as shown)."""
        self.tools = tool_definitions(self.session.toolbox.specs)
        self.ctx.transcript.tools_shown(json.dumps(self.tools))

    def inputs(self, turns: list[Turn]) -> dict[str, Any]:
        """The step predictor's inputs for the next turn (an arm built on this one may add its own)."""
        return {"task": self.task.prompt, "tools": self.tools, "history": step_history(turns)}

    async def decide(self, turns: list[Turn]) -> Action:
        self.adapter.must_act = acting = must_act(turns, self.ctx)
        with dspy.context(adapter=self.adapter):
            prediction = await self.program.step.acall(**self.inputs(turns))
        return replace(self.action(prediction.reply), rules=act_rules(acting))

    def action(self, reply: dict[str, Any] | None) -> Action:
        """What a reply chose: its tool calls (all of them if parallel, else the first), or (no call) the answer."""
        reply = reply or {"text": "", "tool_calls": []}
        text, calls = reply.get("text") or "", reply.get("tool_calls") or []
        if not calls:
            return Action("answer", text.strip(), {"text": text}, {"text": text})
        if self.parallel and len(calls) > 1:
            return several_calls(text, calls)
        first = calls[0]
        arguments = parse_arguments(first["arguments"] or {})
        if arguments is None:
            return Action("unparsed", text + json.dumps(first, default=str),
                          {"text": text, "tool": first["name"], "raw_arguments": first["arguments"],
                           "error": f"the arguments of {first['name']} are not a JSON object"},
                          {"text": f"{text}{first['name']}({first['arguments']})", "tool_calls": []})
        call = {"id": first.get("id") or "call_0", "name": first["name"], "arguments": arguments}
        key = json.dumps([call["name"], arguments], sort_keys=True, default=str)
        content = {"thought": text, "tool": call["name"], "arguments": arguments, "dropped_calls": len(calls) - 1}
        return Action("tool", key, content, {"text": text, "tool_calls": [call]})

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        """One call of a reply (an arm built on this one may route some tools elsewhere)."""
        return await call_tool(self.session, name, arguments)

    async def perform(self, action: Action) -> Outcome:
        if "calls" in action.content:
            return await perform_calls(self.call, action.content["calls"], self.scaffold.refuse_unread_answer)
        outcome = await self.call(action.content["tool"], action.content["arguments"])
        if action.content["dropped_calls"]:
            outcome = replace(outcome, observation=outcome.observation + ONE_CALL_NOTE)
        return outcome

    def record(self, turn: Turn) -> TrajectoryStep:
        return tool_step(turn)


def several_calls(text: str, calls: list[dict[str, Any]]) -> Action:
    """A reply's several tool calls as one action: each call with its parsed arguments, or (not a JSON object) with
    the error its observation will show; the reply as replayed keeps every call, with its id."""
    planned, replayed = [], []
    for n, call in enumerate(calls):
        arguments = parse_arguments(call["arguments"] or {})
        call_id = call.get("id") or f"call_{n}"
        if arguments is None:
            planned.append({"tool": call["name"], "arguments": {}, "raw_arguments": call["arguments"],
                            "error": f"Error: the arguments of {call['name']} are not a JSON object"})
            replayed.append({"id": call_id, "name": call["name"], "arguments": call["arguments"]})
        else:
            planned.append({"tool": call["name"], "arguments": arguments})
            replayed.append({"id": call_id, "name": call["name"], "arguments": arguments})
    key = json.dumps([[c["tool"], c.get("raw_arguments", c["arguments"])] for c in planned], sort_keys=True,
                     default=str)
    return Action("tool", key, {"thought": text, "calls": planned}, {"text": text, "tool_calls": replayed})


async def perform_calls(call_one: Callable[[str, dict[str, Any]], Awaitable[Outcome]],
                        calls: list[dict[str, Any]], answer_alone: bool) -> Outcome:
    """Several calls of one reply, run concurrently, each by `call_one` (the policy's own call: through the run's
    session, each counted and stamped with this step, as any call), their observations in the reply's order. The
    turn failed only if every call did: one result shown is a result the model may answer from.
    A final_answer among them is an answer written beside the calls whose results it would read: under
    `answer_alone` (the scaffold's refuse_unread_answer) it does not run and its observation says so; otherwise
    the other calls run and then the answer ends the run, as a framework taking the reply as given would."""
    async def one(call: dict[str, Any]) -> Outcome:
        if "error" in call:
            return Outcome(call["error"], error_kind="parse")
        if call["tool"] == FINAL_ANSWER_TOOL:
            if answer_alone:
                return Outcome(ANSWER_ALONE, error_kind="unread_answer", rules=("refuse_unread_answer",))
            return Outcome("", final=True, answer=final_value(call["arguments"]))
        return await call_one(call["tool"], call["arguments"])

    outcomes = await asyncio.gather(*(one(call) for call in calls))
    observations = tuple(o.observation for o in outcomes)
    rules = tuple(dict.fromkeys(rule for o in outcomes for rule in o.rules))
    final = next((o for o in outcomes if o.final), None)
    if final is not None:
        return Outcome(join_observations(observations), final=True, answer=final.answer, observations=observations)
    failed = all(o.error_kind for o in outcomes)
    return Outcome(join_observations(observations), error_kind=outcomes[0].error_kind if failed else None,
                   observations=observations, rules=rules)


class DirectAgent:
    name = "direct"

    def __init__(self, scaffold: Scaffold, program: DirectProgram | None = None):
        self.program, self.scaffold = program or DirectProgram(scaffold), scaffold

    async def run(self, ctx: SampleContext) -> AgentResult:
        tools = tool_definitions(ctx.session.toolbox.specs)
        ctx.transcript.tools_shown(json.dumps(tools))
        policy = DirectPolicy(self.program, ctx, tools, self.scaffold.parallel_tool_calls)
        return (await run_loop(policy, ctx, reread_tools=policy.reread_tools)).result


@register_replay("tool_calls")
def replay_tool_calls(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through native tool calls: the reference's calls, then the final_answer tool; with
    `parallel` (the run's scaffold lets the arm run several calls of a reply), the calls the reference made in one
    concurrent batch are one reply (`call_groups`), otherwise one call a reply."""
    return calls_policy(trace, call_groups(trace, parallel))
