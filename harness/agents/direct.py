"""The direct arm: the model calls the run's MCP tools one at a time through its NATIVE tool-calling interface
(a provider's `tools=` API, or the embedded model's own chat-template format, grammar-constrained), and
each result comes back as a tool message. The run ends when the model calls the `final_answer` tool, or
replies without any tool call (that reply is the answer).

One call per turn: if a reply holds several calls, the first runs and the observation says the rest did
not (the arm measures calling tools one by one, the modality code mode is compared with).

The step is a `dspy.Predict` (tunable by `harness optimize`) spoken through `ToolCallingAdapter`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import dspy

from harness.agents.base import AgentResult
from harness.agents.chat import FINAL_ANSWER_FUNCTION, ToolCallingAdapter
from harness.agents.example import tool_calling_demos
from harness.agents.loop import (
    END_INSTRUCTION,
    FINAL_ANSWER_TOOL,
    Action,
    Outcome,
    Turn,
    action_only,
    agent_result,
    run_loop,
    step_history,
    tool_step,
)
from harness.agents.scaffold import Scaffold
from harness.mcp.servers import ServerSession, ToolCallFailed
from harness.mcp.toolbox import ToolSpec
from harness.models.messages import parse_arguments
from harness.tasks.task import Task
from harness.trace.steps import TrajectoryStep

PROTOCOL = ("Solve the task by calling the tools, one call per turn; each call's result (JSON) is shown to you in "
            "the next turn.")
ONE_CALL_NOTE = "\n[Only the first tool call of a reply runs: call one tool per turn.]"


def instructions(scaffold: Scaffold) -> str:
    return f"{PROTOCOL} {scaffold.finish_instruction(END_INSTRUCTION)}"


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

    def __init__(self, scaffold: Scaffold, examples: bool | None = None):
        super().__init__()
        self.step = dspy.Predict(ToolStep.with_instructions(instructions(scaffold)))
        if scaffold.worked_examples if examples is None else examples:
            self.step.demos = [dspy.Example(**demo) for demo in tool_calling_demos()]


class DirectPolicy:
    def __init__(self, program: DirectProgram, task: Task, tools: list[dict[str, Any]], session: ServerSession,
                 scaffold: Scaffold):
        self.program, self.task, self.tools, self.session, self.scaffold = program, task, tools, session, scaffold
        self.adapter = ToolCallingAdapter(scaffold.answer_or_act_grammar)

    def inputs(self, turns: list[Turn]) -> dict[str, Any]:
        """The step predictor's inputs for the next turn (an arm built on this one may add its own)."""
        return {"task": self.task.prompt, "tools": self.tools, "history": step_history(turns)}

    async def decide(self, turns: list[Turn]) -> Action:
        with dspy.context(adapter=self.adapter):
            prediction = await self.program.step.acall(**self.inputs(turns))
        return replace(self.action(prediction.reply), rules=("answer_or_act_grammar",) if action_only(
            turns, self.scaffold) else ())

    def action(self, reply: dict[str, Any] | None) -> Action:
        """What a reply chose: its first tool call, or (no call) the answer."""
        reply = reply or {"text": "", "tool_calls": []}
        text, calls = reply.get("text") or "", reply.get("tool_calls") or []
        if not calls:
            return Action("answer", text.strip(), {"text": text}, {"text": text})
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
        outcome = await self.call(action.content["tool"], action.content["arguments"])
        if action.content["dropped_calls"]:
            outcome = replace(outcome, observation=outcome.observation + ONE_CALL_NOTE)
        return outcome

    def record(self, turn: Turn) -> TrajectoryStep:
        return tool_step(turn)


class DirectAgent:
    name = "direct"

    def __init__(self, scaffold: Scaffold, program: DirectProgram | None = None):
        self.program, self.scaffold = program or DirectProgram(scaffold), scaffold

    async def run(self, task: Task, session: ServerSession) -> AgentResult:
        tools = tool_definitions(session.toolbox.specs)
        result = await run_loop(DirectPolicy(self.program, task, tools, session, self.scaffold), task.max_turns,
                                self.scaffold, ids_refused=lambda: session.ids_refused)
        return agent_result(result, tool_definition_texts=(json.dumps(tools),))
