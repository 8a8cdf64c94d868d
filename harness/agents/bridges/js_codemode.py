"""The JavaScript code modes teams ship, as agents from outside (commands through the run's endpoints): Cloudflare's
Code Mode inside workerd (cloudflare_codemode.mjs starts workerd, whose Worker runs each program in a Dynamic
Worker) and the Vercel AI SDK's code mode in Node (ai_sdk_codemode.mjs, QuickJS in a worker thread). Both are
harness/js/src/agent.mjs: the AI SDK's generateText loop with the code tool as its only tool.

The command runs in its own process group (foreign.CommandAgent), so a run's end kills Node and workerd with it. Each
program the code tool runs is a JSON line the command appends to `code-events.jsonl` in its scratch folder; this
module reads that file while the command runs and records each line as the run's code event as it comes (and what
is left when the command ends, however it ends), stamped with the step whose reply asked for it (the endpoint names
a reply's calls `call_<step>_<n>`). The code tool's description (the package's prompt with the TypeScript
declarations it generates) reaches the model as a native tool definition, which rows count as tool-definition tokens.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from harness.agents.base import AgentResult
from harness.agents.bridges import js_install
from harness.agents.context import SampleContext
from harness.agents.foreign import AgentTask, CommandAgent
from harness.trace.errors import RunError
from harness.trace.events import CodeEvent, CodeExecution
from harness.trace.transcript import Transcript

JsCodeMode = Literal["cloudflare", "ai-sdk"]
COMMANDS: dict[JsCodeMode, str] = {"cloudflare": "cloudflare_codemode.mjs", "ai-sdk": "ai_sdk_codemode.mjs"}
EVENTS_FILE = "code-events.jsonl"
SETTINGS_FILE = "codemode.json"
POLL_S = 0.05  # how often the events file is read while the command runs
STEP_LIMIT_MESSAGE = "the agent reached its step limit"  # agent.mjs's error when generateText stops at its step limit
STARTUP_INFO = "js_sandbox_startup_s"  # the sandbox runtime's start-up in the run (an info event of its transcript)
CUT_SHORT = "the run ended while the program ran (its time limit, or its agent's end)"
_CALL_STEP = re.compile(r"^call_(\d+)_\d+$")


class EventReader:
    """Reads the lines the command appends to its events file and records each in the run's transcript. It starts
    where the file and the transcript are now: in a conversation the command runs once per user turn in the same
    folder, and what its earlier turns wrote and called is recorded already."""

    def __init__(self, path: Path, transcript: Transcript):
        self.path, self.transcript = path, transcript
        self.offset = path.stat().st_size if path.is_file() else 0
        self.tool_calls_seen = sum(call.in_code for call in transcript.tool_calls)
        self.running: dict[str, dict[str, Any]] = {}  # programs started and not ended yet, by their tool call id

    def drain(self) -> None:
        """Record every complete line written since the last read."""
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        complete = data[:data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            if line.strip():
                self.record(json.loads(line))

    def record(self, event: dict[str, Any]) -> None:
        kind = event.get("kind", "code")
        if kind == "tools":
            self.transcript.tools_shown(str(event.get("description") or ""))
        elif kind == "startup":
            self.transcript.info_event(STARTUP_INFO, float(event.get("duration_s") or 0.0))
        elif kind == "code_started":
            self.running[str(event.get("tool_call_id") or "")] = {**event, "started": self.transcript.elapsed()}
        else:
            self.running.pop(str(event.get("tool_call_id") or ""), None)
            in_code = [c for c in self.transcript.tool_calls if c.in_code]
            calls, self.tool_calls_seen = len(in_code) - self.tool_calls_seen, len(in_code)
            error = event.get("error")
            execution = CodeExecution(code=str(event.get("code") or ""), stdout=str(event.get("output") or ""),
                                      error=str(error) if error else None,
                                      error_kind=error_kind(str(error)) if error else None,
                                      duration_s=float(event.get("duration_s") or 0.0), tool_calls=calls,
                                      cut_short=bool(event.get("cut_short")))
            matched = _CALL_STEP.match(str(event.get("tool_call_id") or ""))
            step = int(matched.group(1)) if matched else self.transcript.step
            self.transcript.add(CodeEvent(execution, step=step, t=self.transcript.elapsed()))


    def cut_short(self) -> None:
        """Record the programs still running when the command ended (the run's time limit, a crash) as code runs
        that the run's end cut short: no output (the code tool gives a program's result only when it ends)."""
        for started in list(self.running.values()):
            self.record({**started, "kind": "code", "output": "", "error": CUT_SHORT, "cut_short": True,
                         "duration_s": max(0.0, self.transcript.elapsed() - started["started"])})


def error_kind(error: str) -> Literal["code_timeout", "syntax", "tool", "exception"]:
    """What kind of failure a program's error text (the package's own) says it was."""
    lowered = error.lower()
    if error == CUT_SHORT or "timed out" in lowered or "timeout" in lowered:
        return "code_timeout"
    if "syntaxerror" in lowered:
        return "syntax"
    if "tool" in lowered and ("not found" in lowered or "is not a function" in lowered or "unknown" in lowered):
        return "tool"
    return "exception"


class JsCodeModeAgent(CommandAgent):
    """One of the JavaScript code modes as a command (`node <installed src>/<its script>`), its code events read
    from its events file as they come."""

    def __init__(self, name: str, mode: JsCodeMode, code_tool: str):
        source = js_install.prepared()
        super().__init__(name, f"node {source / COMMANDS[mode]}")
        self.code_tools = frozenset({code_tool})  # a reply calling it runs code: the run's code action

    async def run(self, ctx: SampleContext) -> AgentResult:
        result = await super().run(ctx)
        error = result.error
        if error is not None and error.type == "agent_error" and STEP_LIMIT_MESSAGE in error.message:
            # the run's turn limit is the loop's step limit: stopping there without an answer is the run's max_turns
            return replace(result, error=RunError("max_turns", f"{STEP_LIMIT_MESSAGE} ({ctx.max_turns} turns) "
                                                                "while its model still called the code tool"))
        return result

    async def answer_in(self, ctx: SampleContext, task: AgentTask, log: Path) -> str:
        """The command's answer, with the program time limit (the run's tool timeout: a program is one call of the
        code tool) in its settings file, and its events recorded while it runs and after it ends."""
        settings = {"code_timeout_ms": int(min(task.limits.tool_timeout_s, task.limits.timeout_s) * 1000)}
        (task.workdir / SETTINGS_FILE).write_text(json.dumps(settings))
        reader = EventReader(task.workdir / EVENTS_FILE, ctx.transcript)
        command = asyncio.ensure_future(self.answer(task, log))
        try:
            while not command.done():
                await asyncio.wait({command}, timeout=POLL_S)
                reader.drain()
            reader.cut_short()
            return command.result()
        finally:
            if not command.done():
                command.cancel()  # the run ended first: CommandAgent kills the command's process group
                await asyncio.gather(command, return_exceptions=True)
            reader.drain()
            reader.cut_short()
