"""Scripted language models: deterministic DSPy engines for tests and for proving a suite end to end.

A scripted engine reads which output fields DSPy asks for (from the ChatAdapter system prompt) and asks a
policy for their values; it answers in the ChatAdapter text protocol and reports token usage counted with
tiktoken, so rows carry realistic, deterministic token numbers.

Public models:
- `scripted:reference` replays each task's reference solution through each arm's protocol; its policies come
  from the caller (`harness.run.reference.reference_policies`), since tracing a reference needs the sandbox and
  the servers. It proves the pipeline and the suite, not an LLM.
- `scripted:garbage` answers text that follows no protocol (a model whose output cannot be parsed).
- `scripted:user` plays the simulated user of a conversation task by a script (`USER_SCRIPT`: an opening, then it
  ends the conversation at the agent's first message); `user_script_policy(lines)` is a user that follows any
  script, for tests.
- `scripted:judge` grades open answers by word overlap (harness.models.scripted_judge), for judged suites' tests.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.lm15 import Request, Response, ToolCallPart, Usage

from harness.errors import UserError
from harness.models.engine import CallRecorder, make_lm
from harness.models.messages import reply_response, request_messages, request_tools
from harness.models.retry import RetryPolicy
from harness.models.tokens import TIKTOKEN_SOURCE, count_tokens
from harness.tasks.task import Task

SCRIPTED_MODELS = ("scripted:reference", "scripted:garbage", "scripted:user", "scripted:judge")
# The scripted user's lines: its opening, then the end of the conversation (the stop token of
# harness.agents.conversation, which the models stage cannot import: it is written out here).
USER_SCRIPT = ("Hello, I need help with a request.", "Thank you, that is all. ###STOP###")

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


def task_messages(request: ScriptedRequest, prompt: str) -> list[dict[str, Any]]:
    """The conversation of the task itself: what follows its prompt (earlier turns are demos, e.g. the
    built-in worked example)."""
    starts = [n for n, m in enumerate(request.messages) if m["role"] == "user" and m["content"] == prompt]
    return request.messages[starts[-1]:] if starts else request.messages


def garbage_policy(request: ScriptedRequest) -> str:
    return "I am not sure what you mean. Here is a poem about tools instead."


@dataclass
class ScriptedProvider:
    """A fresh scripted engine per run, built from the task (and, for `reference`, its recorded trace)."""

    name: str
    make_policy: Callable[..., Awaitable[Policy]]  # (task, arm) or, for a reference replay, (task, arm, sample)
    token_source: str = TIKTOKEN_SOURCE
    retry: RetryPolicy = RetryPolicy()
    takes_sample: bool = False  # make_policy reads the run's context (a replay on the run's own servers)

    async def lm_for(self, task: Task, arm: str, recorder: CallRecorder | None = None,
                     sample: Any = None) -> dspy.LM:
        policy = await (self.make_policy(task, arm, sample) if self.takes_sample else self.make_policy(task, arm))
        return make_lm(self.name, ScriptedEngine(policy, name=self.name), retry=self.retry, recorder=recorder)


# (task, arm, the run's context) -> the replay's policy (harness.run.reference.reference_policies)
ReferencePolicies = Callable[[Task, str, Any], Awaitable[Policy]]


def reference_provider(model: str, reference_policies: ReferencePolicies | None) -> ScriptedProvider:
    """`scripted:reference`: its policies come from the caller, who traces the references in its sandbox."""
    if reference_policies is None:
        raise UserError("scripted:reference needs the runner's sandbox to trace references")
    return ScriptedProvider(model, reference_policies, takes_sample=True)


def user_script_policy(lines: tuple[str, ...]) -> Policy:
    """A simulated user that says `lines` in order, one per LM call, whatever it is told; after the last line it
    says the last line again."""

    def policy(request: ScriptedRequest) -> str:
        return lines[min(request.call_index, len(lines) - 1)]

    return policy


def scripted_user_provider(model: str) -> ScriptedProvider:
    """`scripted:user`: a simulated user that follows USER_SCRIPT."""
    return policy_provider(model, lambda task, arm: user_script_policy(USER_SCRIPT))


def garbage_provider(model: str) -> ScriptedProvider:
    """`scripted:garbage`: a model whose output follows no protocol."""

    async def make_garbage_policy(task: Task, arm: str) -> Policy:
        return garbage_policy

    return ScriptedProvider(model, make_garbage_policy)


def policy_provider(name: str, policy_for: Callable[[Task, str], Policy],
                    retry: RetryPolicy = RetryPolicy()) -> ScriptedProvider:
    """A provider from a plain function (task, arm) -> policy: how tests script an agent."""

    async def make(task: Task, arm: str) -> Policy:
        return policy_for(task, arm)

    return ScriptedProvider(name, make, retry=retry)
