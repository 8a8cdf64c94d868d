"""One chat completion of a run, made on the run's event loop through the run's own LM: one step of the run (its LM
call, and the MCP calls the agent makes after it, are stamped with it), recorded as the step the reply is, with its
usage as the run's row counts it.

A completion past the run's turn limit is refused, as the built-in loop would stop there; so is one the engine stack
refuses (a spending limit passed, a failed LM call after the engine's retries). Completions of one run are made one
at a time: each is one step, and its LM call is the one the run's transcript records next."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.exceptions import LMUnsupportedFeatureError

from harness.agents.endpoints.runs import Refused, RunEndpoint
from harness.agents.failures import decision_error
from harness.errors import describe_exception
from harness.models.messages import parse_arguments
from harness.models.tokens import count_tokens
from harness.trace.calls import LMCall
from harness.trace.errors import RunError, RunLimitReached
from harness.trace.steps import AnswerStep, ToolStep, ToolUse


@dataclass(frozen=True)
class ReplyCall:
    """One tool call of a reply, as the OpenAI API returns it (arguments as JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """A reply: its text, its tool calls, and its tokens (the provider's where reported, else counted)."""

    text: str
    tool_calls: tuple[ReplyCall, ...]
    prompt_tokens: int
    completion_tokens: int

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


async def complete(run: RunEndpoint, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   options: dict[str, Any]) -> Completion:
    """One completion as one step of the run (on the run's loop): the run's LM called with the request's messages,
    tools and options, the reply recorded as a tool step (the calls it asked for, `acts` tool) or an answer step."""
    ctx = run.ctx
    async with run.turn_lock():
        if run.steps >= ctx.max_turns:
            message = f"the run has used all {ctx.max_turns} of its turns (one per chat completion)"
            raise run.refuse(Refused(403, "turn_limit_reached", message, RunError("max_turns", message)))
        step, recorded = run.steps, len(ctx.transcript.lm_calls)
        run.steps += 1
        ctx.transcript.begin_step(step)
        try:
            with dspy.context(disable_history=True):  # the run's transcript is its record; dspy would keep every call
                outputs = await run.lm.acall(messages=messages, **({"tools": tools} if tools else {}), **options)
        except Exception as exc:
            refusal = lm_refusal(exc)
            if refusal.error is None and len(ctx.transcript.lm_calls) == recorded:
                run.steps -= 1  # a request the model stack cannot carry made no call: not a step
            raise run.refuse(refusal) from exc
        text, calls = read_reply(outputs[0] if outputs else "", step)
        ctx.transcript.step_ended(reply_step(text, calls, run.code_tools), step)
        run.requested = frozenset(call.name for call in calls)
        agent_calls = [c for c in ctx.transcript.lm_calls[recorded:] if c.role == "agent"]
        call = agent_calls[-1] if agent_calls else LMCall(
            messages=messages, output=text, tools=tuple(tools),
            tool_calls=tuple({"name": c.name, "arguments": parse_arguments(c.arguments) or {}} for c in calls))
        prompt_tokens, completion_tokens = call_usage(call)
        return Completion(text, calls, prompt_tokens, completion_tokens)


def lm_refusal(exc: Exception) -> Refused:
    """How a failed LM call is answered: a spending limit passed (403, the run's token_limit or cost_limit: a limit
    that never resets, so not 429, which clients and frameworks retry as a rate limit after waiting), a
    request the model stack cannot carry (400, not the run's error: the agent may send another), a failed call
    after the engine's retries (502, lm_error), anything else a bug in the harness (500, internal)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, RunLimitReached | LMUnsupportedFeatureError):
        cause = cause.__cause__
    if isinstance(cause, RunLimitReached):
        return Refused(403, "run_limit_reached", cause.message, RunError(cause.error_type, cause.message))
    if isinstance(cause, LMUnsupportedFeatureError):
        return Refused(400, "invalid_request_error", describe_exception(cause))
    if (error := decision_error(exc)) is not None:
        return Refused(502, "lm_error", error.message, error)
    message = describe_exception(exc)
    return Refused(500, "internal_error", message, RunError("internal", message))


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def read_reply(output: Any, step: int) -> tuple[str, tuple[ReplyCall, ...]]:
    """The reply's text and tool calls from dspy's output (a text, or {"text", "tool_calls"}), as the model gave
    them, each call with an id unique in the run (`call_<step>_<n>`: engines number calls per reply)."""
    if not isinstance(output, dict):
        return str(output or ""), ()
    calls = []
    for n, raw in enumerate(output.get("tool_calls") or []):
        function = raw["function"] if isinstance(raw, dict) else raw.function
        name = function["name"] if isinstance(function, dict) else function.name
        arguments = function["arguments"] if isinstance(function, dict) else function.arguments
        calls.append(ReplyCall(f"call_{step}_{n}", name, _arguments_text(arguments)))
    return str(output.get("text") or ""), tuple(calls)


def reply_step(text: str, calls: Sequence[ReplyCall], code_tools: frozenset[str] = frozenset()) -> ToolStep | AnswerStep:
    """The step a reply is: the tool calls it asked for (what they returned is the agent's business, not seen
    here), or its text. A call of one of `code_tools` runs code (`acts` code), any other calls a tool."""
    if not calls:
        return AnswerStep(text=text)
    uses = tuple(ToolUse(call.name, parse_arguments(call.arguments) or {}) for call in calls)
    names = {call.name for call in calls}
    acts = (("tool",) if names - code_tools else ()) + (("code",) if names & code_tools else ())
    return ToolStep(calls=uses, thought=text, acts=acts)


def call_usage(call: LMCall) -> tuple[int, int]:
    """(prompt, completion) tokens of a call as the run's row counts them: the provider's when it reported both,
    else counted with tiktoken (the messages' texts and the tool definitions; the reply's text and its calls)."""
    if call.prompt_tokens is not None and call.completion_tokens is not None:
        return call.prompt_tokens, call.completion_tokens
    prompt = count_tokens("\n".join(str(m.get("content") or "") for m in call.messages))
    prompt += count_tokens(json.dumps(list(call.tools))) if call.tools else 0
    return prompt, count_tokens(call.output + (json.dumps(list(call.tool_calls)) if call.tool_calls else ""))
