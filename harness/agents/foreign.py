"""Agents from outside the package as arms: a Python function (registered with `harness.agent`, or named on the
command line as `agent:MODULE:FUNCTION`) or a command in any language (`cmd:COMMAND`). Such an agent is handed
the run's model and the run's servers as two loopback endpoints (harness.agents.endpoints), so its every LM call
and tool call goes through the run's engine stack and MCP session: recorded in the run's transcript, limited,
delayed by --tool-latency, and scored on the servers' end state, on the same tasks as the built-in arms. It runs
on the host (not in the sandbox) as its own code builds it: no rule of the harness's scaffold is added to it, and
its rows say so (`scaffold_applied` false).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import json
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.agents.arm import Arm, replays
from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.endpoints import Endpoints, run_error, serving
from harness.agents.loop import answer_text
from harness.errors import UserError
from harness.limits import Limits
from harness.trace.errors import RunError

STDERR_TAIL_CHARS = 400  # how much of a failed command's stderr its run's error quotes
# colours for arms from outside, picked by name (the built-in arms keep their own)
PALETTE = ("#8c613c", "#956cb4", "#d65f5f", "#82c6e2", "#6acc64", "#ee854a", "#797979", "#d5bb67")


@dataclass(frozen=True)
class AgentTask:
    """What an agent from outside the package is handed for one run: the task as every arm gets it, the run's two
    endpoints (its model as an OpenAI-compatible Chat Completions API at `base_url` with `api_key` and `model`; its
    servers as one MCP server at `mcp_url`, or through `stdio_command`), its limits, and a scratch folder of its
    own (removed after the run)."""

    task_id: str
    prompt: str
    system_instructions: str
    endpoints: Endpoints
    limits: Limits
    max_turns: int
    workdir: Path

    @property
    def base_url(self) -> str:
        return self.endpoints.base_url

    @property
    def api_key(self) -> str:
        return self.endpoints.api_key

    @property
    def model(self) -> str:
        return self.endpoints.model

    @property
    def mcp_url(self) -> str:
        return self.endpoints.mcp_url

    def environment(self) -> dict[str, str]:
        """The task and the endpoints as environment variables, for a child process (docs/your-agent.md)."""
        return {**self.endpoints.environment(), "HARNESS_TASK_ID": self.task_id, "HARNESS_TASK_PROMPT": self.prompt,
                "HARNESS_SYSTEM_INSTRUCTIONS": self.system_instructions, "HARNESS_WORKDIR": str(self.workdir),
                "HARNESS_MAX_TURNS": str(self.max_turns), "HARNESS_TIMEOUT_S": f"{self.limits.timeout_s:g}"}

    def to_json(self) -> dict[str, Any]:
        """The task as a command reads it on its stdin (the secret is in the environment only)."""
        return {"task_id": self.task_id, "prompt": self.prompt, "system_instructions": self.system_instructions,
                "base_url": self.base_url, "model": self.model, "mcp_url": self.mcp_url,
                "max_turns": self.max_turns, "timeout_s": self.limits.timeout_s, "workdir": str(self.workdir)}


# an agent from outside: the task -> its answer (text, or any JSON value), or an awaitable of it
AgentFunction = Callable[[AgentTask], Any]


class AgentFailed(Exception):
    """The agent from outside failed: it raised, or its command exited non-zero (the message says how)."""


class ForeignAgent:
    """Runs one sample through an agent from outside: serves it the run's endpoints, hands it the task, records the
    answer it gives (the endpoints record its LM calls and tool calls as they happen)."""

    def __init__(self, name: str):
        self.name = name

    async def answer(self, task: AgentTask) -> Any:
        raise NotImplementedError

    async def run(self, ctx: SampleContext) -> AgentResult:
        task = ctx.task
        with tempfile.TemporaryDirectory(prefix="harness-agent-") as workdir:
            async with serving(ctx) as endpoints:
                given = AgentTask(task_id=task.id, prompt=task.prompt, system_instructions=task.system_instructions,
                                  endpoints=endpoints, limits=ctx.limits, max_turns=ctx.max_turns,
                                  workdir=Path(workdir))
                try:
                    value = await self.answer(given)
                except Exception as exc:  # the agent's own code raised (or its command failed): its failure
                    # unless the endpoint refused it a completion first (its turn limit, a spending limit, a failed
                    # LM call): then that ended the run, as it would have ended a built-in arm's
                    message = str(exc) if isinstance(exc, AgentFailed) else f"{type(exc).__name__}: {exc}"
                    return AgentResult("", run_error(endpoints) or RunError("agent_error", message[:500]))
                refused = run_error(endpoints)
        answer = answer_text(value if value is not None else "")
        ctx.transcript.begin_step(None)
        ctx.transcript.answer(answer)
        return AgentResult(answer, refused)  # refused a completion (a limit): that ended the run, as in any arm


class CallableAgent(ForeignAgent):
    """A Python function as an agent: awaited if it is a coroutine function, else run in a worker thread (so its
    blocking calls to the endpoints are served by the run's event loop meanwhile)."""

    def __init__(self, name: str, function: AgentFunction):
        super().__init__(name)
        self.function = function

    async def answer(self, task: AgentTask) -> Any:
        if inspect.iscoroutinefunction(self.function):
            return await self.function(task)
        value = await asyncio.to_thread(self.function, task)
        return await value if inspect.isawaitable(value) else value


class CommandAgent(ForeignAgent):
    """A command as an agent, in any language: started in its scratch folder with the task and the endpoints in its
    environment (and the task as JSON on its stdin); what it prints on stdout is its answer; a non-zero exit is its
    failure, with the end of its stderr. Its process group is killed when the run ends first (a timeout, Ctrl-C)."""

    def __init__(self, name: str, command: str):
        super().__init__(name)
        self.argv = shlex.split(command)

    async def answer(self, task: AgentTask) -> str:
        process = await asyncio.create_subprocess_exec(
            *self.argv, cwd=task.workdir, env={**os.environ, **task.environment()}, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        try:
            out, err = await process.communicate(json.dumps(task.to_json()).encode())
        except BaseException:  # the run ended first: nothing of the agent outlives it
            _kill_group(process)
            raise
        if process.returncode != 0:
            tail = err.decode(errors="replace").strip()[-STDERR_TAIL_CHARS:]
            raise AgentFailed(f"command exited with {process.returncode}" + (f": {tail}" if tail else ""))
        return out.decode(errors="replace").strip()


def _kill_group(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _colour(name: str) -> str:
    return PALETTE[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(PALETTE)]


def source_of(function: Callable[..., Any]) -> str:
    """The package and version behind a function (`mypkg==1.2.0`), or its module when no installed distribution
    provides it (a file of the user's)."""
    module = getattr(function, "__module__", "") or ""
    top = module.split(".")[0]
    for distribution in metadata.packages_distributions().get(top, []):
        try:
            return f"{distribution}=={metadata.version(distribution)}"
        except metadata.PackageNotFoundError:
            continue
    return f"module {module}" if module else "unknown"


def python_arm(name: str, function: AgentFunction, description: str = "") -> Arm:
    """The arm of a Python function: native tool calling through the run's endpoints (so `scripted:reference`
    replays a reference to it as tool calls, then a reply with the answer), its scaffold its own."""
    if not callable(function):
        raise UserError(f"arm '{name}': {function!r} is not callable (an agent is a function of its task)")
    return Arm(name, description or (inspect.getdoc(function) or "").split("\n")[0] or f"agent {name}", False,
               None, lambda pool, program, scaffold: CallableAgent(name, function), _colour(name),
               replays("chat_tools"), module=getattr(function, "__module__", ""), native_tools=True, kind="python",
               source=source_of(function), scaffold_applies=False)


def command_arm(name: str, command: str) -> Arm:
    """The arm of a command (`cmd:node agent.mjs`)."""
    if not shlex.split(command):
        raise UserError(f"arm '{name}': give the command after 'cmd:', e.g. cmd:node agent.mjs")
    return Arm(name, f"the command {command}", False, None,
               lambda pool, program, scaffold: CommandAgent(name, command), _colour(name), replays("chat_tools"),
               module=__name__, native_tools=True, kind="command", source=command, scaffold_applies=False)


def arm_for_spec(spec: str) -> Arm:
    """The arm an `agent:MODULE:FUNCTION` or `cmd:COMMAND` name stands for; a module that does not import or a
    function it lacks is one line naming them."""
    if spec.startswith("cmd:"):
        return command_arm(spec, spec.removeprefix("cmd:").strip())
    target = spec.removeprefix("agent:")
    module_name, colon, attribute = target.rpartition(":")
    if not colon or not module_name or not attribute:
        raise UserError(f"arm '{spec}': write agent:MODULE:FUNCTION, e.g. agent:mypkg.agents:my_agent")
    if os.getcwd() not in sys.path:  # a module of the folder the run starts in, as `python -m` finds one
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"arm '{spec}': cannot import {module_name} ({exc})") from None
    function = getattr(module, attribute, None)
    if function is None:
        raise UserError(f"arm '{spec}': {module_name} has no {attribute}")
    return python_arm(spec, function)
