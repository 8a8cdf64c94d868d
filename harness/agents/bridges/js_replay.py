"""How `scripted:reference` replays a task's reference through a JavaScript code mode's own protocol: one native
call of the arm's code tool whose program makes the traced calls in order (each awaited, a failure caught and
noted) and returns the answer with the indexes of the calls that failed; then the answer as a reply without a tool
call, as the AI SDK's loop reads an answer. No answer where a call failed that did not fail when traced, where the
program itself failed, or where the traced reference failed (replay.final_text). One protocol per code mode, each
registered here under the name its arm declares (js_arms.js_protocol)."""

from __future__ import annotations

import json
import re

from harness.agents.bridges.js_arms import CODE_TOOLS, js_protocol
from harness.agents.replay import ProtocolReplay, ReferenceTrace, final_text, register_replay
from harness.models.scripted import Policy, ScriptedReply, ScriptedRequest
from harness.tasks.task import Task

_FAILED = re.compile(r'\\?"failed\\?":\s*\[([\d,\s]*)\]')


def reference_program(trace: ReferenceTrace, namespace: str) -> str:
    """The traced calls as one JavaScript program over the code mode's tools object (`namespace`): every call
    awaited in order, a call that throws or returns an MCP error result noted by its index, then the answer."""
    lines = ["const failed = [];",
             "const call = async (index, run) => {",
             "  try { const result = await run(); if (result && result.isError) failed.push(index); }",
             "  catch (error) { failed.push(index); }",
             "};"]
    for index, (name, arguments) in enumerate(trace.tool_calls):
        lines.append(f"await call({index}, () => {namespace}[{json.dumps(name)}]({json.dumps(arguments)}));")
    lines.append(f"return {{ answer: {json.dumps(trace.answer)}, failed }};")
    return "\n".join(lines)


def replay_diverged(trace: ReferenceTrace, shown: str) -> bool:
    """Whether the program's result shows a failure the traced reference did not have: the program failed (no list
    of failed calls in its result), or a call failed whose traced call succeeded (every failure, where the trace does
    not say)."""
    found = _FAILED.search(shown)
    if found is None:
        return True
    failed = [int(n) for n in found.group(1).replace(" ", "").split(",") if n]
    traced = trace.failed_calls
    return any(traced is None or not (0 <= index < len(traced) and traced[index]) for index in failed)


def _tool_result(request: ScriptedRequest) -> str | None:
    results = [m for m in request.messages if m.get("role") == "tool"]
    return str(results[-1].get("content") or "") if results else None


def js_code_replay(tool: str, field: str, namespace: str) -> ProtocolReplay:
    """The replay of an arm whose code tool is `tool`, taking its program in `field`, its tools under `namespace`."""
    def replay(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
        def policy(request: ScriptedRequest) -> ScriptedReply:
            shown = _tool_result(request)
            if shown is None:
                return ScriptedReply(tool_calls=((tool, {field: reference_program(trace, namespace)}),))
            return ScriptedReply(text=final_text(trace, replay_diverged(trace, shown), trace.answer))

        return policy

    return replay


for _mode, (_tool, _field, _namespace) in CODE_TOOLS.items():  # one protocol per code mode (js_arms.js_protocol)
    register_replay(js_protocol(_mode))(js_code_replay(_tool, _field, _namespace))
