"""Scripted language models: deterministic DSPy engines for tests and for proving a suite end to end.

A scripted engine reads which output fields DSPy asks for (from the ChatAdapter system prompt) and asks a
policy for their values; it answers in the ChatAdapter text protocol and reports token usage counted with
tiktoken, so rows carry realistic, deterministic token numbers.

Public models:
- `scripted:reference` replays each task's reference solution. Code mode: emits the reference code, then
  the answer. Direct: emits the tool calls the reference made (recorded by running it once in the sandbox
  against fresh servers), then the answer. It proves the pipeline and the suite, not an LLM.
- `scripted:garbage` answers text that follows no protocol (a model whose output cannot be parsed).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.lm15 import Request, Response, ToolCallPart, Usage

from harness.errors import UserError
from harness.models.base import RetryPolicy, make_lm, reply_response, request_messages, request_tools
from harness.models.tokens import TIKTOKEN_SOURCE, count_tokens
from harness.tasks.suite import Task

_OUTPUT_SECTION = re.compile(r"Your output fields are:\n(.*?)\n(?:All interactions|\Z)", re.DOTALL)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.MULTILINE)


@dataclass(frozen=True)
class ScriptedRequest:
    """What a policy sees of one LM call: OpenAI chat messages (tool calls and tool results included) and the
    names of the tools the call offered."""

    messages: tuple[dict[str, Any], ...]
    output_fields: tuple[str, ...]
    call_index: int
    tools: tuple[str, ...] = ()

    @property
    def system(self) -> str:
        return self.messages[0]["content"] if self.messages and self.messages[0]["role"] == "system" else ""

    @property
    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


@dataclass(frozen=True)
class ScriptedReply:
    """A reply with native tool calls: (name, arguments) pairs that come back as the response's tool calls."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()


Policy = Callable[[ScriptedRequest], "ScriptedReply | dict[str, Any] | str"]


def output_fields(system: str) -> tuple[str, ...]:
    section = _OUTPUT_SECTION.search(system)
    return tuple(_FIELD.findall(section.group(1))) if section else ()


def format_fields(values: dict[str, Any]) -> str:
    """Field values in DSPy's ChatAdapter reply format."""
    parts = []
    for name, value in values.items():
        if isinstance(value, (dict, list)):
            value = json.dumps(value)
        parts.append(f"[[ ## {name} ## ]]\n{value}")
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


def scripted_latency_s() -> float:
    """Simulated model latency per call, from $HARNESS_SCRIPTED_LATENCY_S (for crash tests and benchmarks)."""
    try:
        return max(0.0, float(os.environ.get("HARNESS_SCRIPTED_LATENCY_S", "0")))
    except ValueError:
        return 0.0


class ScriptedEngine:
    """A DSPy engine whose replies come from a policy; usage is counted with tiktoken."""

    def __init__(self, policy: Policy, name: str = "scripted"):
        self.policy, self.name, self.calls = policy, name, 0
        self.latency_s = scripted_latency_s()

    def complete(self, request: Request) -> Response:
        if self.latency_s:
            time.sleep(self.latency_s)
        messages = tuple(request_messages(request))
        tools = request_tools(request)
        scripted = ScriptedRequest(messages, output_fields(messages[0]["content"] if messages else ""), self.calls,
                                   tuple(tool["function"]["name"] for tool in tools))
        self.calls += 1
        reply = self.policy(scripted)
        if not isinstance(reply, ScriptedReply):
            reply = ScriptedReply(reply if isinstance(reply, str) else format_fields(reply))
        calls = tuple(ToolCallPart(id=f"call_{n}", name=name, input=arguments)
                      for n, (name, arguments) in enumerate(reply.tool_calls))
        prompt_tokens = sum(count_tokens(json.dumps(m) if m.get("tool_calls") else m["content"]) for m in messages)
        prompt_tokens += count_tokens(json.dumps(tools)) if tools else 0
        output = reply.text + "".join(json.dumps({"name": c.name, "arguments": c.input}) for c in calls)
        return reply_response(reply.text, self.name, Usage(input_tokens=prompt_tokens,
                                                           output_tokens=count_tokens(output)), tool_calls=calls)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class ReferenceTrace:
    """What a task's reference solution did against fresh servers."""

    answer: str
    stdout: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...]
    end_state: dict[str, Any] = field(hash=False, compare=False)
    error: str | None = None


ReferenceRunner = Callable[[Task], Awaitable[ReferenceTrace]]


def task_messages(request: ScriptedRequest, prompt: str) -> list[dict[str, Any]]:
    """The conversation of the task itself: what follows its prompt (earlier turns are demos, e.g. the
    built-in worked example)."""
    starts = [n for n, m in enumerate(request.messages) if m["role"] == "user" and m["content"] == prompt]
    return request.messages[starts[-1]:] if starts else request.messages


def _last_printed_line(messages: list[dict[str, Any]]) -> str:
    """What the code printed last, as the previous turn's observation shows it."""
    observations = [m["content"] for m in messages if m["role"] == "user" and
                    str(m["content"]).startswith("Output:\n")]
    lines = [line.strip() for line in (observations[-1][len("Output:\n"):] if observations else "").splitlines()]
    return ([line for line in lines if line] or [""])[-1]


def meta_tool_replay(trace: ReferenceTrace) -> list[tuple[str, dict[str, Any]]]:
    """The reference through fastmcp's Code Mode meta-tools: search for its tools, read their schemas, make its
    calls with `await call_tool(...)` in execute blocks (at most the per-execute limit each; a call that fails, as
    a recovery task's first call does, does not stop the ones after it)."""
    from harness.agents.fastmcp_codemode import MAX_TOOL_CALLS

    names = list(dict.fromkeys(name for name, _ in trace.tool_calls))
    replies: list[tuple[str, dict[str, Any]]] = [("search", {"query": " ".join(names)}),
                                                 ("get_schema", {"tools": names})]
    calls = list(trace.tool_calls)
    for start in range(0, len(calls), MAX_TOOL_CALLS):
        lines = [f"try:\n    results.append(await call_tool({name!r}, {arguments!r}))\n"
                 f"except Exception as error:\n    results.append(str(error))"  # a failed call ends no chain
                 for name, arguments in calls[start:start + MAX_TOOL_CALLS]]
        replies.append(("execute", {"code": "\n".join(["results = []", *lines, "len(results)"])}))
    return replies


def reference_policy(trace: ReferenceTrace, task: Task, arm: str = "") -> Policy:
    """Replays a reference through each arm's own protocol, ending as the loop contract says (with final_answer):
    - react (ChatAdapter fields): the reference's tool calls, then final_answer with the reference's answer;
    - direct (native tool calls): the same calls as native tool calls, then the final_answer tool;
    - codemode-fastmcp (native calls to fastmcp's meta-tools): search, get_schema, the calls inside execute
      (meta_tool_replay), then the final_answer tool;
    - code mode (code blocks): the reference code, then final_answer() of the line it printed last, read
      from the observation (the answer comes from what the agent saw, as a model's would)."""
    pending = meta_tool_replay(trace) if arm == "codemode-fastmcp" else list(trace.tool_calls)

    def policy(request: ScriptedRequest) -> dict[str, Any] | str | ScriptedReply:
        if "next_tool_name" in request.output_fields:
            if pending:
                name, arguments = pending.pop(0)
                return {"next_thought": f"I call {name}.", "next_tool_name": name, "next_tool_args": arguments}
            return {"next_thought": "I have what I need.", "next_tool_name": "final_answer",
                    "next_tool_args": {"answer": trace.answer}}
        if request.tools:
            if pending:
                return ScriptedReply(tool_calls=(pending.pop(0),))
            return ScriptedReply(tool_calls=(("final_answer", {"answer": trace.answer}),))
        conversation = task_messages(request, task.prompt)
        if not any(m["role"] == "assistant" for m in conversation):
            return f"```python\n{task.reference.strip()}\n```"
        return f"```python\nfinal_answer({_last_printed_line(conversation)!r})\n```"

    return policy


def garbage_policy(request: ScriptedRequest) -> str:
    return "I am not sure what you mean. Here is a poem about tools instead."


@dataclass
class ScriptedProvider:
    """A fresh scripted engine per run, built from the task (and, for `reference`, its recorded trace)."""

    name: str
    make_policy: Callable[[Task, str], Awaitable[Policy]]
    token_source: str = TIKTOKEN_SOURCE
    retry: RetryPolicy = RetryPolicy()

    async def lm_for(self, task: Task, arm: str) -> dspy.LM:
        return make_lm(self.name, ScriptedEngine(await self.make_policy(task, arm), name=self.name), retry=self.retry)


def scripted_provider(model: str, reference_runner: ReferenceRunner | None = None) -> ScriptedProvider:
    kind = model.split(":", 1)[1]
    if kind == "reference":
        if reference_runner is None:
            raise UserError("scripted:reference needs the runner's sandbox to trace references")
        traces: dict[tuple[str, str], ReferenceTrace] = {}

        async def make_reference_policy(task: Task, arm: str) -> Policy:
            key = (task.id, task.reference)
            if key not in traces:
                traces[key] = await reference_runner(task)
            return reference_policy(traces[key], task, arm)

        return ScriptedProvider(model, make_reference_policy)
    if kind == "garbage":
        async def make_garbage_policy(task: Task, arm: str) -> Policy:
            return garbage_policy

        return ScriptedProvider(model, make_garbage_policy)
    raise UserError(f"unknown scripted model '{model}'")


def policy_provider(name: str, policy_for: Callable[[Task, str], Policy],
                    retry: RetryPolicy = RetryPolicy()) -> ScriptedProvider:
    """A provider from a plain function (task, arm) -> policy: how tests script an agent."""

    async def make(task: Task, arm: str) -> Policy:
        return policy_for(task, arm)

    return ScriptedProvider(name, make, retry=retry)
