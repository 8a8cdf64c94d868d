"""The code-mode arm: each turn the model writes one Python block that runs in the Deno+Pyodide sandbox, where the
run's MCP tools are functions (calls bridged to the host's MCP clients). What the code prints is the next
observation; the run ends when the code calls `final_answer(value)`, whose value is the answer.

The step is a `dspy.Predict` (tunable by `harness optimize`) spoken through `CodeChatAdapter`: a conversation
of code blocks and their output. The tool API is an INPUT (typed stubs), so no optimizer can drop it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import dspy

from harness.agents.base import AgentResult
from harness.agents.chat import CodeChatAdapter
from harness.agents.context import SampleContext
from harness.agents.example import code_demos
from harness.agents.loop import (
    END_INSTRUCTION,
    Action,
    Outcome,
    Turn,
    act_rules,
    answer_text,
    must_act,
    run_loop,
    step_history,
)
from harness.agents.replay import ReferenceTrace, code_blocks_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.agents.sessions import session_api, session_lease
from harness.mcp.bridge import make_dispatcher
from harness.mcp.servers import ServerSession
from harness.mcp.tool_files import documentation_lines, printed_documentation
from harness.models.scripted import Policy
from harness.sandbox import ExecutionResult, Mount, SandboxPolicy, SandboxPool, ToolDispatcher
from harness.tasks.task import Task
from harness.trace import steps as trace
from harness.trace.events import CodeExecution
from harness.trace.transcript import Transcript

PROTOCOL = (
    "Solve the task by writing Python code. Reply with one ```python block per turn. It runs in a sandbox "
    "where the functions below are already defined: call them directly (no import needed); each returns what "
    "its stub says: the declared type, or text parsed when the text is JSON. Work step by step: call a tool, print() its result (or the part you need) and read "
    "it in the next turn before you rely on it; variables persist between turns. Filter, aggregate and loop in "
    "Python instead of printing large data."
)
SHOWN_WITH_ECHO = "Only what your code prints, and the value of its last line if that is an expression, is shown to you."
SHOWN = "Only what your code prints is shown to you."
ASYNC_TOOLS = ("The functions are also awaitable: in async code (an `async def`, or a block using `await`) write "
               "`await f(...)`, and `await asyncio.gather(f(...), g(...))` runs independent calls concurrently.")


def instructions(scaffold: Scaffold, protocol: str = PROTOCOL) -> str:
    """The arm's instructions (`protocol`, then): what the model is shown follows the scaffold's last-expression
    echo; the sentence on awaitable tools follows its `async_tools`."""
    shown = SHOWN_WITH_ECHO if scaffold.echo_last_expression else SHOWN
    awaitable = f" {ASYNC_TOOLS}" if scaffold.async_tools else ""
    return f"{protocol}{awaitable} {shown} {scaffold.finish_instruction(END_INSTRUCTION)}"


FINAL_ANSWER_STUB = '''def final_answer(answer: Any) -> None:
    """End the task with this answer (a string, number, list or dict), in exactly the form the task asks for."""'''


class CodeStep(dspy.Signature):
    __doc__ = PROTOCOL  # a program's instructions follow its scaffold (instructions())

    task: str = dspy.InputField()
    tool_api: str = dspy.InputField(desc="Python functions defined in the sandbox")
    history: list[dict[str, Any]] = dspy.InputField(desc="earlier turns: the code and what it printed")
    reply: str = dspy.OutputField(desc="one ```python block")


_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_code(reply: str) -> str | None:
    """The code of a reply: its fenced blocks joined, or None if it has none (a reply with no action)."""
    blocks = [b.strip() for b in _FENCE.findall(reply)]
    blocks = [b for b in blocks if b]
    return "\n".join(blocks) if blocks else None


_NOTHING = object()


def stated_value(code: str) -> Any:
    """The constant a code block only states (`3`, `'IN'`, `{'country': 'IN'}`, or `print` of one), else _NOTHING.
    Such a block takes no action (no tool, no computation): it is the model answering in its own medium, as a
    reply without a tool call is in the direct arm."""
    import ast

    try:
        body = ast.parse(code).body
    except SyntaxError:
        return _NOTHING
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return _NOTHING
    node = body[0].value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
            and len(node.args) == 1 and not node.keywords):
        node = node.args[0]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOTHING


def render_output(result: ExecutionResult) -> str:
    """What the code printed, and its error if it failed: the observation the model reads."""
    printed = result.stdout.rstrip()
    if result.error:  # "Error: ..." as a failed tool call reads in the direct arm
        return f"{printed}\nError: {result.error}" if printed else f"Error: {result.error}"
    return printed or "(no output)"


class CodeModeProgram(dspy.Module):
    """What an optimizer tunes in code mode: the one step predictor, starting from the scaffold's instruction
    sentences and, if `worked_examples`, the built-in worked examples (optimizers may replace them)."""

    def __init__(self, scaffold: Scaffold, examples: bool | None = None, protocol: str = PROTOCOL,
                 imports_from: str | None = None):
        super().__init__()
        self.step = dspy.Predict(CodeStep.with_instructions(instructions(scaffold, protocol)))
        if scaffold.worked_examples if examples is None else examples:
            self.step.demos = [dspy.Example(**demo) for demo in code_demos(imports_from)]


class CodeModePolicy:
    """One run's code-mode actions: decide with the step predictor, perform in the leased sandbox; tool
    documentation the code prints (lines of `documentation`) is recorded as tool-definition text as it is shown."""

    def __init__(self, program: CodeModeProgram, ctx: SampleContext, tool_api: str, sandbox: Any,
                 documentation: frozenset[str] = frozenset()):
        self.program, self.ctx, self.tool_api, self.sandbox = program, ctx, tool_api, sandbox
        self.task, self.scaffold, self.documentation = ctx.task, ctx.scaffold, documentation
        self.adapter = CodeChatAdapter(ctx.task)

    async def decide(self, turns: list[Turn]) -> Action:
        self.adapter.must_act = acting = must_act(turns, self.ctx)
        with dspy.context(adapter=self.adapter):
            prediction = await self.program.step.acall(task=self.task.prompt, tool_api=self.tool_api,
                                                       history=step_history(turns))
        grammar = act_rules(acting)
        reply = str(prediction.reply or "")
        code = extract_code(reply)
        if code is None:
            return Action("answer", reply.strip(), {"text": reply}, reply, grammar)
        value = stated_value(code) if self.scaffold.constant_block_is_answer else _NOTHING
        if value is not _NOTHING:
            return Action("answer", code, {"text": answer_text(value), "code": code}, {"code": code},
                          (*grammar, "constant_block_is_answer"))
        return Action("code", code, {"code": code}, {"code": code}, grammar)  # replayed as the code alone

    async def perform(self, action: Action) -> Outcome:
        return await run_code(self.sandbox, action.content["code"], self.scaffold, self.ctx.transcript)

    def record(self, turn: Turn) -> trace.CodeStep:
        """The code turn as stored; tool documentation in what the model saw of it counts as tool definitions."""
        if self.documentation and (printed := printed_documentation(turn.observation, self.documentation)):
            self.ctx.transcript.tools_shown(*printed)
        return code_step(turn, turn.action.content["code"])


async def run_code(sandbox: Any, code: str, scaffold: Scaffold, transcript: Transcript) -> Outcome:
    """Run one block of the model's code in its leased sandbox, under the scaffold's last-expression echo and
    result notes, recorded in the run's transcript as it ends: what it printed (and its error) is the observation,
    final_answer() in it ends the run."""
    # the tool calls it makes are its; a run that ends meanwhile keeps it, cut short, with its output so far
    transcript.code_started(code, output=sandbox.output_so_far)
    result: ExecutionResult = await sandbox.execute(code, echo_last=scaffold.echo_last_expression,
                                                    result_notes=scaffold.result_notes)
    transcript.code_run(CodeExecution(code=code, stdout=result.stdout, error=result.error,
                                      error_kind=result.error_kind, duration_s=result.duration_s,
                                      tool_calls=result.tool_calls, files_read=tuple(result.files_read or ())))
    detail = {"stdout": result.stdout, "error": result.error, "error_kind": result.error_kind,
              "duration_s": result.duration_s, "tool_calls": result.tool_calls}
    if result.files_read:  # files of a counted mount the code opened (codemode-files' tool files)
        detail["files_read"] = list(result.files_read)
    if result.final:
        detail["final_answer"] = result.final_value
    rules = ("result_notes",) * bool(result.notes) + ("echo_last_expression",) * result.echoed
    return Outcome(render_output(result), final=result.final, answer=result.final_value,
                   error_kind=result.error_kind, detail=detail,
                   shows_nothing=not (result.final or result.error or result.stdout.strip()), rules=rules)


def code_step(turn: Turn, code: str) -> trace.CodeStep:
    """A code turn as the trajectory stores it: the code, what running it did (`run_code`'s detail), and its final
    answer if any; the rest of the detail stays in the step's."""
    detail = dict(turn.outcome.detail)
    return trace.CodeStep(code=code, stdout=detail.pop("stdout", ""),
                          error=detail.pop("error", None), error_kind=detail.pop("error_kind", None),
                          duration_s=detail.pop("duration_s", 0.0), tool_calls=detail.pop("tool_calls", 0),
                          observation=turn.observation, repeat_of=turn.repeat_of, rules=turn.rules,
                          detail=detail)


class CodeModeAgent:
    name = "codemode"
    follows_tool_changes = True  # its stubs and tool functions are written from the session's toolbox, any time

    def __init__(self, pool: SandboxPool, scaffold: Scaffold, program: CodeModeProgram | None = None):
        self.pool, self.scaffold = pool, scaffold
        # shared by every run of this agent: the built-in prompt, a saved program, or an optimizer's candidate
        self.program = program or CodeModeProgram(scaffold)

    def tool_api(self, session: ServerSession) -> str:
        """What the model reads about the tools: final_answer and every typed stub."""
        return f"{FINAL_ANSWER_STUB}\n\n{session.toolbox.python_stubs()}"

    def dispatcher(self, session: ServerSession) -> ToolDispatcher:
        return make_dispatcher(session, asyncio.get_running_loop())

    def prelude(self, session: ServerSession) -> str:
        return session.toolbox.sandbox_prelude()

    def mounts(self, session: ServerSession) -> tuple[Mount, ...]:
        """Folders of files the arm puts into its sandbox (none: the tools are functions defined by the prelude)."""
        return ()

    def policy(self) -> SandboxPolicy | None:
        """What the arm's code may contain, if not the pool's policy."""
        return None

    def documentation(self, session: ServerSession) -> frozenset[str]:
        """Lines of tool documentation the model can print from the sandbox beyond its prompt (none here: every
        stub is in the prompt): a printed line equal to one counts as tool-definition text (CodeModePolicy)."""
        return frozenset()

    def policy_for(self, ctx: SampleContext, tool_api: str, sandbox: Any) -> CodeModePolicy:
        """The run's policy (an arm built on this one may count more of what its code does)."""
        return CodeModePolicy(self.program, ctx, tool_api, sandbox, self.documentation(ctx.session))

    def full_api(self, ctx: SampleContext) -> str:
        return "\n\n".join(part for part in (self.tool_api(ctx.session), session_api(ctx.slot)) if part)

    async def run(self, ctx: SampleContext) -> AgentResult:
        """One task: the tool API (and, in a session, its skills and workspace: harness.agents.sessions), then
        the loop in a leased sandbox. Tools that change mid-run are re-read where the arm can (`follows_tool_changes`):
        the stubs written again for the next LM call, the tool functions defined again in the sandbox."""
        session = ctx.session
        tool_api = self.full_api(ctx)
        ctx.transcript.tools_shown(tool_api)
        async with session_lease(self.pool, self.dispatcher(session), ctx.slot, prelude=self.prelude(session),
                                 mounts=self.mounts(session), policy=self.policy(),
                                 transcript=ctx.transcript) as sandbox:
            policy = self.policy_for(ctx, tool_api, sandbox)

            async def reread_tools() -> None:
                policy.tool_api = self.full_api(ctx)
                ctx.transcript.tools_shown(policy.tool_api)
                await sandbox.define(self.prelude(session))

            reread = reread_tools if self.follows_tool_changes else None
            return (await run_loop(policy, ctx, reread_tools=reread)).result


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
    """Progressive discovery: the model sees only an index of tool names and one-line summaries, and looks
    up what it needs with search_tools / get_tool_schema from inside the sandbox. Every tool function is
    defined in the sandbox all the same; what changes is what the model's context has to carry."""

    name = "codemode-discover"

    def tool_api(self, session: ServerSession) -> str:
        return (f"{FINAL_ANSWER_STUB}\n\n{DISCOVERY_STUBS}\n\n# Tools available as functions (call "
                f"get_tool_schema(name) for the signature before first use):\n{session.toolbox.index()}")

    def dispatcher(self, session: ServerSession) -> ToolDispatcher:
        def search(arguments: dict[str, Any]) -> list[str]:  # the session's toolbox now (it may change mid-run)
            return [f"{s.py_name}: {s.summary}" for s in session.toolbox.search(arguments["query"], arguments["limit"])]

        def schema(arguments: dict[str, Any]) -> str:
            try:
                return session.toolbox.get(arguments["name"]).stub()
            except KeyError:
                raise ValueError(f"no tool named {arguments['name']!r}; use search_tools(query)") from None

        return make_dispatcher(session, asyncio.get_running_loop(), {SEARCH_TOOLS: search, GET_TOOL_SCHEMA: schema})

    def prelude(self, session: ServerSession) -> str:
        return session.toolbox.sandbox_prelude() + DISCOVERY_PRELUDE

    def documentation(self, session: ServerSession) -> frozenset[str]:
        """The stubs get_tool_schema returns: printed, they are tool documentation that reached the model."""
        return documentation_lines(session.toolbox.python_stubs())


@register_replay("code_blocks")
def replay_code_blocks(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through code blocks: the reference code, then final_answer() of the line it printed
    last (code_blocks_policy)."""
    return code_blocks_policy(trace, task, [(task.reference or "").strip()])
