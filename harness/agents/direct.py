"""The direct arm: dspy.ReAct calling the run's MCP tools one at a time, each result back in its context."""

from __future__ import annotations

from typing import Any

import dspy

from harness.agents.base import AgentError, AgentResult, Step
from harness.servers import ServerSession, ToolCallFailed
from harness.suite import Task
from harness.toolbox import ToolSpec

INSTRUCTIONS = (
    "Solve the task by calling the tools. Tool results are JSON. "
    "Give the final answer in exactly the form the task asks for."
)


class DirectProgram(dspy.ReAct):
    """ReAct that remembers why its loop ended: stock ReAct swallows an unparseable step and moves on."""

    def __init__(self, tools: list[dspy.Tool], max_iters: int):
        super().__init__(dspy.Signature("task: str -> answer: str", INSTRUCTIONS), tools=tools, max_iters=max_iters)
        self.stop_error: Exception | None = None

    async def _async_call_with_potential_trajectory_truncation(self, module, trajectory, **input_args):
        try:
            return await super()._async_call_with_potential_trajectory_truncation(module, trajectory, **input_args)
        except Exception as exc:
            if module is self.react:
                self.stop_error = exc
            raise


def _mcp_tool(spec: ToolSpec, session: ServerSession, observations: list[str]) -> dspy.Tool:
    """A dspy.Tool whose result is the MCP result text; a tool error comes back as text, as a client shows it."""

    async def call(**kwargs: Any) -> str:
        try:
            _value, text = await session.call(spec.name, kwargs)
        except ToolCallFailed as exc:
            text = f"Error: {exc}"
        observations.append(text)
        return text

    properties = spec.input_schema.get("properties", {}) or {}
    return dspy.Tool(call, name=spec.name, desc=spec.description, args=dict(properties),
                     arg_desc={k: v.get("description", "") for k, v in properties.items() if v.get("description")})



class DirectAgent:
    name = "direct"

    def __init__(self, program_state: dict[str, Any] | None = None):
        self.program_state = program_state  # an optimized program's saved predictors, or None

    def build(self, task: Task, session: ServerSession, observations: list[str]) -> DirectProgram:
        tools = [_mcp_tool(spec, session, observations) for spec in session.toolbox.specs]
        program = DirectProgram(tools, max_iters=task.max_turns)
        if self.program_state:
            program.load_state(self.program_state)
        return program

    async def run(self, task: Task, session: ServerSession) -> AgentResult:
        observations: list[str] = []
        program = self.build(task, session, observations)
        definitions = tuple(str(tool) for tool in program.tools.values())
        try:
            prediction = await program.acall(task=task.prompt)
        except Exception as exc:  # the extract step failed: the run has no answer
            return AgentResult("", (), AgentError.from_exception(exc), tool_definition_texts=definitions,
                               observation_texts=tuple(observations))
        trajectory = prediction.trajectory
        steps = []
        for index in range(task.max_turns):
            if f"tool_name_{index}" not in trajectory:
                break
            steps.append(Step("tool", {
                "thought": trajectory[f"thought_{index}"], "tool": trajectory[f"tool_name_{index}"],
                "arguments": trajectory[f"tool_args_{index}"],
                "observation": str(trajectory.get(f"observation_{index}", "")),
            }))
        error = None
        if program.stop_error is not None:
            error = AgentError.from_exception(program.stop_error)
        elif steps and steps[-1].content["tool"] != "finish" and len(steps) >= task.max_turns:
            error = AgentError("max_turns", f"stopped after {task.max_turns} turns without finishing")
        return AgentResult(str(prediction.answer or ""), tuple(steps), error,
                           tool_definition_texts=definitions, observation_texts=tuple(observations))

