"""The react arm: DSPy ReAct's text protocol (thought, tool name and JSON arguments as `[[ ## field ## ]]`
sections, the trajectory as fields of one user message), one tool call per turn, in the shared loop. It is
what `direct` was before it used native tool calling: kept so users can see what the protocol costs.

Differences from stock dspy.ReAct, all for the shared loop contract: the run ends with a `final_answer`
tool whose argument is the answer (stock ReAct's `finish` takes none, and a separate ChainOfThought call
extracts an answer that can come from the model's priors); a reply ends at its `[[ ## completed ## ]]`
marker or at an `[[ ## observation` the model starts to invent (stop sequences), and each call declares its
reply one ReAct step over the run's tools, which the embedded engine enforces with a grammar (exactly one
thought, one known tool and arguments valid for that tool); an unreadable reply is an observation, not a
silent retry in another format (no JSONAdapter fallback).

Tuning: the step predictor's instructions hold no tool list; each call appends the run's own tool list, so a
program tuned on one task's tools runs with any other's.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError

from harness.agents.base import AgentResult
from harness.agents.chat import system_prompt
from harness.agents.context import SampleContext
from harness.agents.direct import call_tool, tool_definitions
from harness.agents.loop import (
    END_INSTRUCTION,
    FINAL_ANSWER_TOOL,
    Action,
    Outcome,
    Turn,
    run_loop,
    tool_step,
)
from harness.agents.replay import Call, CallFormat, ReferenceTrace, call_groups, calls_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.mcp.servers import ServerSession
from harness.models.messages import ReplyShape, parse_arguments, reply_shape_option
from harness.models.scripted import Policy, ScriptedRequest
from harness.tasks.task import Task
from harness.trace.steps import TrajectoryStep

STEP_PROTOCOL = "Solve the task by calling the tools, one call per step. Tool results are JSON."
PROTOCOL = (
    "You are an Agent. In each episode, you will be given the field `task` as input, and you can see your past "
    "trajectory so far. In each turn you write next_thought, next_tool_name and next_tool_args; after each tool "
    "call you receive an observation, which is appended to your trajectory.\n"
    "When writing next_thought, you may reason about the current situation and plan for future steps.\n"
    "When selecting the next_tool_name and its next_tool_args, the tool must be one of:\n"
)
STOP = ("[[ ## completed ## ]]", "[[ ## observation")


def instructions(scaffold: Scaffold) -> str:
    return f"{STEP_PROTOCOL} {scaffold.finish_instruction(END_INSTRUCTION)}"


class ReactStep(dspy.Signature):
    __doc__ = STEP_PROTOCOL  # a program's instructions follow its scaffold (instructions())

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    next_thought: str = dspy.OutputField()
    next_tool_name: str = dspy.OutputField()
    next_tool_args: dict[str, Any] = dspy.OutputField()


def tool_list_text(tools: list[dict[str, Any]]) -> str:
    """The tool list in ReAct's own words: '(1) name, whose description is <desc>...</desc>. It takes...'."""
    lines = []
    for number, tool in enumerate(tools, 1):
        function = tool["function"]
        arguments = json.dumps(function.get("parameters", {}).get("properties", {}))
        lines.append(f"({number}) {function['name']}, whose description is <desc>{function.get('description', '')}"
                     f"</desc>. It takes arguments {arguments} in JSON format.")
    return "\n".join(lines) + "\nWhen providing `next_tool_args`, the value inside the field must be in JSON format"


@functools.lru_cache(maxsize=256)
def _trajectory_signature(keys: tuple[str, ...]) -> type[dspy.Signature]:
    return dspy.Signature(f"{', '.join(keys)} -> x")


def format_trajectory(turns: list[Turn]) -> str:
    """ReAct's trajectory rendering: thought_i, tool_name_i, tool_args_i, observation_i as fields."""
    if not turns:
        return ""
    fields: dict[str, Any] = {}
    for turn in turns:
        reply = turn.action.reply
        fields[f"thought_{turn.index}"] = reply.get("thought", "")
        fields[f"tool_name_{turn.index}"] = reply.get("tool", "")
        fields[f"tool_args_{turn.index}"] = reply.get("arguments", {})
        fields[f"observation_{turn.index}"] = turn.observation
    return dspy.ChatAdapter().format_user_message_content(_trajectory_signature(tuple(fields)), fields)


class ReactProgram(dspy.Module):
    """What an optimizer tunes in the react arm: the step predictor, its instructions without any tool list (the
    scaffold's instruction sentences; this arm has no worked examples)."""

    def __init__(self, scaffold: Scaffold):
        super().__init__()
        self.step = dspy.Predict(ReactStep.with_instructions(instructions(scaffold)))


class ReactPolicy:
    def __init__(self, program: ReactProgram, task: Task, tools: list[dict[str, Any]], session: ServerSession):
        self.program, self.task, self.session = program, task, session
        self.adapter = dspy.ChatAdapter(use_json_adapter_fallback=False)
        self.use_tools(tools)

    def use_tools(self, tools: list[dict[str, Any]]) -> None:
        """The tools its prompt lists and its reply shape allows (again when they change mid-run)."""
        self.tools, self.tool_text = tools, tool_list_text(tools)
        self.shape = ReplyShape("react_step", tools=tuple(tools))

    def _signature(self) -> type[dspy.Signature]:
        base = self.program.step.signature
        return base.with_instructions(system_prompt(f"{base.instructions}\n\n{PROTOCOL}{self.tool_text}", self.task))

    async def decide(self, turns: list[Turn]) -> Action:
        config = {"stop": list(STOP), **reply_shape_option(self.shape)}
        try:
            with dspy.context(adapter=self.adapter):
                prediction = await self.program.step.acall(signature=self._signature(), task=self.task.prompt,
                                                           trajectory=format_trajectory(turns), config=config)
        except AdapterParseError as exc:
            text = str(exc.lm_response or "")
            return Action("unparsed", text, {"text": text, "error": "expected the fields next_thought, "
                                             "next_tool_name and next_tool_args"},
                          {"thought": text[:500], "tool": "", "arguments": {}})
        name = str(prediction.next_tool_name or "").strip()
        arguments = parse_arguments(prediction.next_tool_args or {})
        if arguments is None:
            return Action("unparsed", f"{name}:{prediction.next_tool_args}",
                          {"tool": name, "error": "next_tool_args is not a JSON object"},
                          {"thought": prediction.next_thought, "tool": name, "arguments": {}})
        content = {"thought": str(prediction.next_thought or ""), "tool": name, "arguments": arguments}
        return Action("tool", json.dumps([name, arguments], sort_keys=True, default=str), content, content)

    async def perform(self, action: Action) -> Outcome:
        return await call_tool(self.session, action.content["tool"], action.content["arguments"])

    def record(self, turn: Turn) -> TrajectoryStep:
        return tool_step(turn)


class ReactAgent:
    name = "react"

    def __init__(self, scaffold: Scaffold, program: ReactProgram | None = None):
        self.program, self.scaffold = program or ReactProgram(scaffold), scaffold

    async def run(self, ctx: SampleContext) -> AgentResult:
        tools = tool_definitions(ctx.session.toolbox.specs)
        policy = ReactPolicy(self.program, ctx.task, tools, ctx.session)
        ctx.transcript.tools_shown(policy.tool_text)

        async def reread_tools() -> None:
            policy.use_tools(tool_definitions(ctx.session.toolbox.specs))
            ctx.transcript.tools_shown(policy.tool_text)

        return (await run_loop(policy, ctx, reread_tools=reread_tools)).result


_OBSERVATION_FIELD = re.compile(r"\[\[ ## observation_\d+ ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", re.DOTALL)


def _last_observation(request: ScriptedRequest, calls: int) -> list[str]:
    """The last observation field of the ChatAdapter's trajectory (none before any action)."""
    last = request.messages[-1] if request.messages else {}
    return _OBSERVATION_FIELD.findall(str(last.get("content", "")))[-1:]


def _call_fields(group: Sequence[Call]) -> dict[str, Any]:
    name, arguments = group[0]
    return {"next_thought": f"I call {name}.", "next_tool_name": name, "next_tool_args": arguments}


def _answer_fields(answer: str) -> dict[str, Any]:
    return {"next_thought": "I have what I need.", "next_tool_name": FINAL_ANSWER_TOOL,
            "next_tool_args": {"answer": answer}}


FIELDS = CallFormat(observations=_last_observation, result_per_call=False, call=_call_fields, answer=_answer_fields)


@register_replay("react_fields")
def replay_fields(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through ChatAdapter fields: the reference's tool calls one a turn, then final_answer
    with its answer."""
    return calls_policy(trace, call_groups(trace, False), FIELDS)
