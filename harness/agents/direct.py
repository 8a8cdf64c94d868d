"""The direct arm: dspy.ReAct calling the run's MCP tools one at a time, each result back in its context.

Building a ReAct program costs ~15 ms of signature construction, so one program is built per tool set
(and max_turns, and tuned state) and shared by concurrent runs: its tools find the current run's MCP
session through a context variable, and ReAct keeps all per-run state in local variables.

Tuning (harness optimize): ReAct writes the tool list into its step predictor's instructions, so a tuned
instruction would carry one task's tools (or lose them, as GEPA did to stock CodeAct). `DirectPredictors` is
what an optimizer tunes instead: the step predictor with only the instructions above the tool list, and the
extract step. A program built for a tool set `use()`s them: each call sends the tuned instructions followed by
that program's own tool list, with the tuned demos, and traces name the shared predictor.
"""

from __future__ import annotations

import contextvars
import functools
import json
from dataclasses import dataclass, field
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


@dataclass
class _RunContext:
    session: ServerSession
    observations: list[str] = field(default_factory=list)
    stop_error: Exception | None = None


_RUN: contextvars.ContextVar[_RunContext] = contextvars.ContextVar("harness_direct_run")


class DirectProgram(dspy.ReAct):
    """ReAct that remembers why its loop ended: stock ReAct swallows an unparseable step and moves on."""

    def __init__(self, tools: list[dspy.Tool], max_iters: int):
        super().__init__(dspy.Signature("task: str -> answer: str", INSTRUCTIONS), tools=tools, max_iters=max_iters)

    def _format_trajectory(self, trajectory: dict[str, Any]) -> str:
        """Stock ReAct builds a new Signature (a pydantic model, ~4 ms) for every step; reuse one per key set."""
        adapter = dspy.settings.adapter or dspy.ChatAdapter()
        return adapter.format_user_message_content(_trajectory_signature(tuple(trajectory)), trajectory)

    async def _async_call_with_potential_trajectory_truncation(self, module, trajectory, **input_args):
        try:
            return await super()._async_call_with_potential_trajectory_truncation(module, trajectory, **input_args)
        except Exception as exc:
            run = _RUN.get(None)
            if module is self.react and run is not None:
                run.stop_error = exc
            raise


    def use(self, tuned: "DirectPredictors") -> None:
        """Run with tuned predictors: their instructions (followed by this program's tool list) and demos."""
        self.react = _TunedStep(tuned.react, self.react.signature)
        self.extract = tuned.extract


class _TunedStep:
    """ReAct's step for one tool set: calls the shared tuned predictor with this tool set's signature."""

    def __init__(self, tuned: dspy.Predict, signature: type[dspy.Signature]):
        assert signature.instructions.startswith(INSTRUCTIONS)
        self.tuned, self.signature = tuned, signature
        self.tool_text = signature.instructions[len(INSTRUCTIONS):]  # "You are an Agent..." and the tool list
        self._built: tuple[str, type[dspy.Signature]] | None = None

    def _signature(self) -> type[dspy.Signature]:
        instructions = self.tuned.signature.instructions
        if self._built is None or self._built[0] != instructions:
            self._built = (instructions, self.signature.with_instructions(instructions + self.tool_text))
        return self._built[1]

    def __call__(self, **kwargs: Any) -> dspy.Prediction:
        return self.tuned(signature=self._signature(), **kwargs)

    async def acall(self, **kwargs: Any) -> dspy.Prediction:
        return await self.tuned.acall(signature=self._signature(), **kwargs)


class DirectPredictors(dspy.Module):
    """What an optimizer tunes in the direct arm (and what a saved direct program holds): ReAct's step
    predictor without any tool list in its instructions, and ReAct's extract step."""

    def __init__(self):
        super().__init__()
        template = DirectProgram([], max_iters=1)
        self.react = dspy.Predict(template.react.signature.with_updated_fields("next_tool_name", type_=str)
                                  .with_instructions(INSTRUCTIONS))
        self.extract = template.extract


@functools.lru_cache(maxsize=256)
def _trajectory_signature(keys: tuple[str, ...]) -> type[dspy.Signature]:
    return dspy.Signature(f"{', '.join(keys)} -> x")


class _ServerValidatedTool(dspy.Tool):
    """Arguments go to the server as the model wrote them, as in code mode: the MCP server validates them, its
    short error is the observation, and the attempt counts as a tool call and a tool error in both arms.
    (Stock dspy.Tool validates first, and ReAct shows a rejection as a five-frame traceback of host code:
    ~600 tokens per bad call charged to the direct arm, host paths in the prompt, and no tool error counted.)"""

    async def acall(self, **kwargs: Any) -> Any:
        return await self.func(**kwargs)


def _mcp_tool(spec: ToolSpec) -> dspy.Tool:
    """A dspy.Tool calling the current run's MCP session; a tool error comes back as text, as a client shows it."""

    async def call(**kwargs: Any) -> str:
        run = _RUN.get()
        try:
            _value, text = await run.session.call(spec.name, kwargs)
        except ToolCallFailed as exc:
            text = f"Error: {exc}"
        run.observations.append(text)
        return text

    properties = spec.input_schema.get("properties", {}) or {}
    return _ServerValidatedTool(call, name=spec.name, desc=spec.description, args=dict(properties),
                                arg_desc={k: v.get("description", "") for k, v in properties.items()
                                          if v.get("description")})


def _tools_key(specs: tuple[ToolSpec, ...]) -> str:
    return json.dumps([(s.name, s.description, s.input_schema) for s in specs], sort_keys=True, default=str)


class DirectAgent:
    name = "direct"

    def __init__(self, program_state: dict[str, Any] | None = None, predictors: DirectPredictors | None = None):
        self.program_state = program_state  # an optimized program's saved DirectPredictors state, or None
        if predictors is None and program_state:
            predictors = DirectPredictors()
            predictors.load_state(program_state)
        self.predictors = predictors  # tuned predictors every program uses, or None for the built-in prompt
        self._programs: dict[tuple[str, int], DirectProgram] = {}

    def build(self, specs: tuple[ToolSpec, ...], max_turns: int) -> DirectProgram:
        """The (shared) program for a tool set; tuned state applied once, when it is built."""
        key = (_tools_key(specs), max_turns)
        if key not in self._programs:
            program = DirectProgram([_mcp_tool(spec) for spec in specs], max_iters=max_turns)
            if self.predictors is not None:
                program.use(self.predictors)
            self._programs[key] = program
        return self._programs[key]

    async def run(self, task: Task, session: ServerSession) -> AgentResult:
        program = self.build(session.toolbox.specs, task.max_turns)
        run = _RunContext(session)
        token = _RUN.set(run)
        try:
            return await self._run(program, task, run)
        finally:
            _RUN.reset(token)

    async def _run(self, program: DirectProgram, task: Task, run: _RunContext) -> AgentResult:
        definitions = tuple(str(tool) for tool in program.tools.values())
        try:
            prediction = await program.acall(task=task.prompt)
        except Exception as exc:  # the extract step failed: the run has no answer
            return AgentResult("", (), AgentError.from_exception(exc), tool_definition_texts=definitions,
                               observation_texts=tuple(run.observations))
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
        if run.stop_error is not None:
            error = AgentError.from_exception(run.stop_error)
        elif steps and steps[-1].content["tool"] != "finish" and len(steps) >= task.max_turns:
            error = AgentError("max_turns", f"stopped after {task.max_turns} turns without finishing")
        return AgentResult(str(prediction.answer or ""), tuple(steps), error,
                           tool_definition_texts=definitions, observation_texts=tuple(run.observations))
