"""The code-mode arm: the LM writes Python that calls the tools inside the Deno+Pyodide sandbox.

A CodeAct-style loop of our own (dspy.CodeAct runs tool source inside the sandbox and cannot bridge MCP
calls): generate code -> execute in a leased sandbox (tool calls bridged to the run's MCP clients) ->
observe -> repeat until the LM says it is finished -> extract the answer. The tool API reaches the LM as
an INPUT field (typed stubs), never baked into instructions, so an instruction optimizer cannot drop it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import dspy

from harness.agents.base import AgentError, AgentResult, Step
from harness.sandbox import ExecutionResult, SandboxPool, ToolDispatcher
from harness.servers import ServerSession
from harness.suite import Task
from harness.tool_bridge import make_dispatcher

OBSERVATION_LIMIT_CHARS = 6000  # printed output shown back to the LM per step


class GenerateCode(dspy.Signature):
    """Solve the task by writing Python code that runs in a sandbox.
    The functions listed in `tool_api` are already defined there: call them directly (no import needed);
    they return parsed JSON (dicts and lists). Keep large data inside the code: filter, aggregate and loop
    in Python, and print() only what you need to see. Printed output comes back in the trajectory.
    Variables persist between steps. Set `finished` to True when your code prints the final answer."""

    task: str = dspy.InputField()
    tool_api: str = dspy.InputField(desc="Python functions available in the sandbox")
    trajectory: str = dspy.InputField(desc="code you ran so far and what it printed")
    generated_code: str = dspy.OutputField(desc="Python code to run next (plain code, no markdown fences)")
    finished: bool = dspy.OutputField(desc="True if this code prints the final answer")


class ExtractAnswer(dspy.Signature):
    """Give the final answer to the task, in exactly the form the task asks for, from what the code printed."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField(desc="code that was run and what it printed")
    answer: str = dspy.OutputField()


_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


def strip_fences(code: str) -> str:
    """Models often wrap code in markdown fences despite being asked not to."""
    blocks = _FENCE.findall(code)
    return "\n".join(blocks).strip() if blocks else code.strip().strip("`")


def format_step(index: int, code: str, result: ExecutionResult) -> str:
    output = result.stdout
    if len(output) > OBSERVATION_LIMIT_CHARS:
        output = output[:OBSERVATION_LIMIT_CHARS] + f"\n... [output truncated: {len(result.stdout)} chars]"
    observation = output.rstrip() if output.strip() else "(no output)"
    if result.error:
        observation = f"{observation}\n{result.error}" if output.strip() else result.error
    return f"### Step {index + 1}\nCode:\n{code}\nOutput:\n{observation}\n"


@dataclass(frozen=True)
class CodeStep:
    code: str
    finished: bool
    result: ExecutionResult
    text: str  # the step as the LM sees it in later prompts


class CodeModeProgram(dspy.Module):
    """The code-mode predictors (what an optimizer tunes); the sandbox is passed in per call."""

    def __init__(self):
        super().__init__()
        self.generate = dspy.Predict(GenerateCode)
        self.extract = dspy.Predict(ExtractAnswer)

    async def aforward(self, task: str, tool_api: str, *, sandbox: Any, max_turns: int,
                       steps: list[CodeStep] | None = None) -> dspy.Prediction:
        steps = [] if steps is None else steps
        for index in range(max_turns):
            trajectory = "".join(s.text for s in steps) or "(nothing yet)"
            prediction = await self.generate.acall(task=task, tool_api=tool_api, trajectory=trajectory)
            code = strip_fences(str(prediction.generated_code or ""))
            result = await sandbox.execute(code)
            steps.append(CodeStep(code, bool(prediction.finished), result, format_step(index, code, result)))
            if prediction.finished and result.ok:
                break
        trajectory = "".join(s.text for s in steps) or "(nothing)"
        extracted = await self.extract.acall(task=task, trajectory=trajectory)
        return dspy.Prediction(answer=str(extracted.answer or ""), steps=steps)

    def forward(self, task: str, tool_api: str, **kwargs: Any) -> dspy.Prediction:
        return asyncio.run(self.aforward(task, tool_api, **kwargs))


class CodeModeAgent:
    name = "codemode"

    def __init__(self, pool: SandboxPool, program_state: dict[str, Any] | None = None,
                 program: CodeModeProgram | None = None):
        self.pool, self.program_state = pool, program_state
        self.program = program  # a shared program instance (an optimizer's candidate) instead of a saved state

    def build(self) -> CodeModeProgram:
        if self.program is not None:
            return self.program
        program = CodeModeProgram()
        if self.program_state:
            program.load_state(self.program_state)
        return program

    def tool_api(self, session: ServerSession) -> str:
        """What the LM reads about the tools: every typed stub."""
        return session.toolbox.python_stubs()

    def dispatcher(self, session: ServerSession) -> ToolDispatcher:
        return make_dispatcher(session, asyncio.get_running_loop())

    def prelude(self, session: ServerSession) -> str:
        return session.toolbox.sandbox_prelude()

    async def run(self, task: Task, session: ServerSession) -> AgentResult:
        program = self.build()
        tool_api = self.tool_api(session)
        steps: list[CodeStep] = []
        error = None
        answer = ""
        async with self.pool.lease(self.dispatcher(session), prelude=self.prelude(session)) as sandbox:
            try:
                prediction = await program.acall(task=task.prompt, tool_api=tool_api, sandbox=sandbox,
                                                 max_turns=task.max_turns, steps=steps)
                answer = prediction.answer
            except Exception as exc:
                error = AgentError.from_exception(exc)
        if error is None and steps and not steps[-1].finished and len(steps) >= task.max_turns:
            error = AgentError("max_turns", f"stopped after {task.max_turns} turns without finishing")
        return AgentResult(
            answer=answer,
            steps=tuple(Step("code", {"code": s.code, "finished": s.finished, "stdout": s.result.stdout[:4000],
                                      "error": s.result.error, "error_kind": s.result.error_kind,
                                      "duration_s": s.result.duration_s}) for s in steps),
            error=error,
            policy_violations=sum(1 for s in steps if s.result.error_kind == "policy"),
            sandbox_time_s=sum(s.result.duration_s for s in steps),
            tool_definition_texts=(tool_api,),
            observation_texts=tuple(s.text.split("Output:\n", 1)[-1] for s in steps),
        )


SEARCH_TOOLS, GET_TOOL_SCHEMA = "__harness_search_tools", "__harness_get_tool_schema"

DISCOVERY_STUBS = '''def search_tools(query: str, limit: int = 8) -> list[str]:
    """Find tools by keywords. Returns lines "name: what it does", best match first."""

def get_tool_schema(name: str) -> str:
    """The full Python signature and documentation of one tool, to read before calling it."""'''

DISCOVERY_PRELUDE = f'''
def search_tools(query: str, limit: int = 8) -> list:
    return _harness_call_tool_json("{SEARCH_TOOLS}", {{"query": query, "limit": limit}})

def get_tool_schema(name: str) -> str:
    return _harness_call_tool_json("{GET_TOOL_SCHEMA}", {{"name": name}})
'''


class DiscoveryCodeModeAgent(CodeModeAgent):
    """Progressive discovery: the LM sees only an index of tool names and one-line summaries, and looks
    up what it needs with search_tools / get_tool_schema from inside the sandbox. Every tool function is
    defined in the sandbox all the same; what changes is what the LM's context has to carry."""

    name = "codemode-discover"

    def tool_api(self, session: ServerSession) -> str:
        return (f"{DISCOVERY_STUBS}\n\n# Tools available as functions (call get_tool_schema(name) for the "
                f"signature before first use):\n{session.toolbox.index()}")

    def dispatcher(self, session: ServerSession) -> ToolDispatcher:
        mcp_dispatch = super().dispatcher(session)
        toolbox = session.toolbox

        def dispatch(name: str, arguments: dict[str, Any]) -> Any:
            if name == SEARCH_TOOLS:
                return [f"{s.py_name}: {s.summary}" for s in toolbox.search(arguments["query"], arguments["limit"])]
            if name == GET_TOOL_SCHEMA:
                try:
                    return toolbox.get(arguments["name"]).stub()
                except KeyError:
                    raise ValueError(f"no tool named {arguments['name']!r}; use search_tools(query)") from None
            return mcp_dispatch(name, arguments)

        return dispatch

    def prelude(self, session: ServerSession) -> str:
        return session.toolbox.sandbox_prelude() + DISCOVERY_PRELUDE
