"""Agents from outside the package as arms: a Python function (registered with `harness.agent`, or named on the
command line as `agent:MODULE:FUNCTION`) or a command in any language (`cmd:COMMAND`). Such an agent is handed
the run's model and the run's servers as two loopback endpoints (harness.agents.endpoints), so its every LM call
and tool call goes through the run's engine stack and MCP session: recorded in the run's transcript, limited,
delayed by --tool-latency, and scored on the servers' end state, on the same tasks as the built-in arms. It runs
on the host (not in the sandbox) as its own code builds it, each run in a process group of its own
(harness.agents.isolation) that ends with the run: no rule of the harness's scaffold is added to it, and its rows
say so (`scaffold_applied` false). In a conversation (a task with a user) it is called once per user turn, handed
the conversation so far (AgentTask.history; docs/your-agent.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import shlex
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.agents.agent_task import AgentFunction, AgentTask, answer_text, source_of
from harness.agents.arm import Arm, replays
from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.endpoints import (
    CHAT_REPLAY,
    Endpoints,
    begin_user_turn,
    end_user_turn,
    run_error,
    serving,
)
from harness.agents.failures import decision_error
from harness.agents.isolation.groups import end_group, kill_now, track
from harness.agents.isolation.pool import AgentTarget, IsolatedFailure, zygote_for
from harness.errors import UserError, describe_exception
from harness.mcp.servers import new_stderr_log
from harness.trace.errors import RunError

__all__ = ["AgentFailed", "AgentTask", "CallableAgent", "CommandAgent", "ForeignAgent", "arm_for_spec",
           "command_arm", "python_arm", "source_of"]

STDERR_TAIL_CHARS = 400  # how much of a failed command's stderr its run's error quotes
# colours for arms from outside, picked by name (the built-in arms keep their own)
PALETTE = ("#8c613c", "#956cb4", "#d65f5f", "#82c6e2", "#6acc64", "#ee854a", "#797979", "#d5bb67")


class AgentFailed(Exception):
    """The agent from outside failed: it raised, or its command exited non-zero (the message says how)."""


class ForeignAgent:
    """Runs one sample through an agent from outside: serves it the run's endpoints, hands it the task, records the
    answer it gives (the endpoints record its LM calls and tool calls as they happen). What the agent's processes
    print goes to the run's log (named in its trajectory's `server_logs` as `agent`)."""

    code_tools: frozenset[str] = frozenset()  # tools whose call runs the model's code (a code mode's code tool)

    def __init__(self, name: str):
        self.name = name

    async def answer(self, task: AgentTask, log: Path) -> Any:
        raise NotImplementedError

    async def answer_in(self, ctx: SampleContext, task: AgentTask, log: Path) -> Any:
        """The agent's answer within its run: `answer`, for an agent that needs nothing of the run beyond its task
        (an agent that records into the run's transcript as it goes overrides this, handed the context)."""
        return await self.answer(task, log)

    async def run(self, ctx: SampleContext) -> AgentResult:
        task = ctx.task
        log = new_stderr_log("agent", ctx.session.log_dir)
        ctx.session.stderr_logs["agent"] = str(log)
        with tempfile.TemporaryDirectory(prefix="harness-agent-") as workdir:
            async with serving(ctx, self.code_tools) as endpoints:
                given = AgentTask(task_id=task.id, prompt=task.prompt, system_instructions=task.system_instructions,
                                  endpoints=endpoints, limits=ctx.limits, max_turns=ctx.max_turns,
                                  workdir=Path(workdir))
                try:
                    value = await self.converse(ctx, given, log, endpoints)
                except UserFailed as exc:  # the simulated user's LM failed: as in the built-in loop
                    return AgentResult("", run_error(endpoints) or exc.error)
                except Exception as exc:  # the agent's own code raised (or its process failed): its failure
                    # unless the endpoint refused it a completion first (its turn limit, a spending limit, a failed
                    # LM call): then that ended the run, as it would have ended a built-in arm's
                    kind = getattr(exc, "error_type", "agent_error")
                    message = str(exc) if isinstance(exc, (AgentFailed, IsolatedFailure)) else \
                        f"{type(exc).__name__}: {exc}"
                    return AgentResult("", run_error(endpoints) or RunError(kind, " ".join(message.split())[:500]))
                refused = run_error(endpoints)
        try:
            text = answer_text(value if value is not None else "")
        except (ValueError, TypeError, RecursionError) as exc:  # a circular structure, say: the run's fault
            return AgentResult("", RunError("agent_error", f"its answer ({type(value).__name__}) cannot be stored "
                                                           f"as JSON: {exc}"[:500]))
        ctx.transcript.begin_step(None)
        ctx.transcript.answer(text)
        return AgentResult(text, refused)  # refused a completion (a limit): that ended the run, as in any arm

    async def converse(self, ctx: SampleContext, task: AgentTask, log: Path, endpoints: Endpoints) -> Any:
        """The agent's answer to its task; in a conversation (the run has a user: SampleContext.user) the answer of
        its last user turn. The agent is called once per turn, each call as isolated as the first: the first with
        the task as every arm gets it, each next with the user's next message as its prompt and the conversation so
        far as its `history` (AgentTask). The user's reply to each answer says whether another turn follows (a
        scripted user's last turn, a simulated user's stop token). A failure in any turn ends the run with what it
        recorded so far, as in the first."""
        user = ctx.user
        if user is None:
            return await self.answer_in(ctx, task, log)
        history: list[dict[str, str]] = []
        while True:
            await begin_user_turn(endpoints)
            value = await self.answer_in(ctx, task, log)
            end_user_turn(endpoints)
            message = answer_text(value if value is not None else "")
            try:
                reply = await user.reply(message)
            except Exception as exc:  # the user's failure (its LM's), or a bug of the harness's: not the agent's
                error = decision_error(exc)
                raise UserFailed(replace(error, message=f"user model: {error.message}") if error is not None
                                 else RunError("internal", describe_exception(exc))) from exc
            if reply.ended:
                return value
            history += [{"role": "user", "content": task.prompt}, {"role": "assistant", "content": message}]
            task = replace(task, prompt=reply.text, history=tuple(history))


class UserFailed(Exception):
    """The user could not reply (the simulated user's LM call failed): the run's error, not the agent's."""

    def __init__(self, error: RunError):
        super().__init__(error.message)
        self.error = error


class CallableAgent(ForeignAgent):
    """A Python function as an agent. By default each run is a process of its own, forked from the agent's zygote
    (harness.agents.isolation); with `--agent-isolation in-process` (for debugging: breakpoints, no fork) it runs in
    the harness's process: awaited if it is a coroutine function, else in a worker thread (so its blocking calls to
    the endpoints are served by the run's event loop meanwhile), and nothing shields the harness from it."""

    def __init__(self, name: str, target: AgentTarget):
        super().__init__(name)
        self.target = target

    async def answer(self, task: AgentTask, log: Path) -> Any:
        if task.limits.agent_isolation == "process":
            zygote = await asyncio.to_thread(zygote_for, self.target)
            return await zygote.run(task, log, task.limits.agent_memory_mb)
        function = self.target.load()
        if inspect.iscoroutinefunction(function):
            return await function(task)
        value = await asyncio.to_thread(function, task)
        return await value if inspect.isawaitable(value) else value


class CommandAgent(ForeignAgent):
    """A command as an agent, in any language: started in its scratch folder, in a session and process group of its
    own, with the task and the endpoints in its environment (and the task as JSON on its stdin); what it printed on
    stdout when it exits is its answer (its children may keep stdout open: the answer is read at its exit); a
    non-zero exit is its failure, with the end of its stderr (which goes to the run's log). When the run ends,
    however it ends, the command's whole process group is ended, whatever it left running in the background."""

    def __init__(self, name: str, command: str):
        super().__init__(name)
        self.argv = shlex.split(command)

    async def answer(self, task: AgentTask, log: Path) -> str:
        with tempfile.TemporaryDirectory(prefix="harness-command-") as folder:
            given, out = Path(folder) / "task.json", Path(folder) / "stdout"
            given.write_text(json.dumps(task.to_json()))
            with given.open("rb") as stdin, out.open("wb") as stdout, log.open("ab") as stderr:
                size = stderr.tell()
                process = await asyncio.create_subprocess_exec(
                    *self.argv, cwd=task.workdir, env={**os.environ, **task.environment()}, stdin=stdin,
                    stdout=stdout, stderr=stderr, start_new_session=True)
            track(process.pid)
            try:
                code = await process.wait()
            except BaseException:  # the run ended first: nothing of the agent outlives it
                kill_now(process.pid)
                raise
            finally:
                await end_group(process.pid)
            if code != 0:
                with log.open("rb") as written:
                    written.seek(size)
                    tail = written.read().decode(errors="replace").strip()[-STDERR_TAIL_CHARS:]
                raise AgentFailed(f"command exited with {code}" + (f": {tail}" if tail else ""))
            return out.read_bytes().decode(errors="replace").strip()


def _colour(name: str) -> str:
    return PALETTE[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(PALETTE)]


def python_arm(name: str, function: AgentFunction, description: str = "") -> Arm:
    """The arm of a Python function: native tool calling through the run's endpoints (so `scripted:reference`
    replays a reference to it as tool calls, then a reply with the answer), its scaffold its own. Its runs import
    it by name in their own process, or copy it there by value when no other process can import it (a function of
    a notebook or a script's `__main__`: harness.agents.isolation.pool.AgentTarget)."""
    if not callable(function):
        raise UserError(f"arm '{name}': {function!r} is not callable (an agent is a function of its task)")
    return target_arm(name, AgentTarget.of_function(function),
                      description or (inspect.getdoc(function) or "").split("\n")[0] or f"agent {name}",
                      getattr(function, "__module__", ""), source_of(function))


def target_arm(name: str, target: AgentTarget, description: str, module: str, source: str) -> Arm:
    """The arm of a Python agent found by its target (a module and a name, or a function by value). Its check
    before any run starts its zygote, so that no run's time includes the agent's imports."""
    return Arm(name, description, False, None, lambda pool, program, scaffold: CallableAgent(name, target),
               _colour(name), replays("chat_tools", CHAT_REPLAY), lambda: start_zygote(name, target), module=module,
               native_tools=True, kind="python", source=source, scaffold_applies=False)


def start_zygote(arm: str, target: AgentTarget) -> None:
    """Start the agent's zygote (its module imported in its own process); one line naming the arm if it fails."""
    try:
        zygote_for(target)
    except UserError as exc:
        raise UserError(f"arm '{arm}': {exc}") from None


def command_arm(name: str, command: str) -> Arm:
    """The arm of a command (`cmd:node agent.mjs`)."""
    if not shlex.split(command):
        raise UserError(f"arm '{name}': give the command after 'cmd:', e.g. cmd:node agent.mjs")
    return Arm(name, f"the command {command}", False, None,
               lambda pool, program, scaffold: CommandAgent(name, command), _colour(name), replays("chat_tools", CHAT_REPLAY),
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
    target = AgentTarget(module_name, attribute)
    start_zygote(spec, target)  # imported in the agent's own zygote, never in the harness: its import stays there
    described = zygote_for(target).described
    return target_arm(spec, target, described["doc"] or f"agent {spec}", described["module"], described["source"])
