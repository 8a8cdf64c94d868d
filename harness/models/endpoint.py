"""`harness models --check`: whether an OpenAI-compatible endpoint answers, and whether it returns native tool
calls. A local server (vLLM, llama.cpp's server, LM Studio) may answer chat fine yet hand a model's tool calls
back as text when its chat format does not parse them; a tool-calling arm then scores 0 with no hint why, so the
check asks once, with one trivial tool, and says which it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from harness.defaults import DEFAULT_ENDPOINT_CHECK_TIMEOUT_S
from harness.errors import UserError, describe_exception
from harness.models.litellm_engine import api_key_for, litellm_module
from harness.models.tool_call_text import TEXT_CALL_FIX, looks_like_text_tool_call

ToolCallVerdict = Literal["native", "text", "none"]

CHECK_TOOL = {"type": "function", "function": {
    "name": "add", "description": "Add two integers and return their sum.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}
CHECK_MESSAGES = [{"role": "system", "content": "You are a calculator. Always answer by calling the add tool."},
                  {"role": "user", "content": "What is 2 + 3? Call the add tool."}]


@dataclass(frozen=True)
class EndpointCheck:
    """What the endpoint did: it answered (else the check raised), and how it returned the tool call."""

    url: str
    model: str
    reply: str  # the first words of its answer to the short request
    tool_calls: ToolCallVerdict
    tool_reply: str  # what came back to the tool request: the call, or the text


def tool_call_verdict(tool_calls: list[Any] | None, content: str | None) -> ToolCallVerdict:
    """'native' when the response carries tool_calls; 'text' when its text is a call the server did not parse;
    'none' when the model answered in prose (the server's parsing cannot be told from that)."""
    if tool_calls:
        return "native"
    return "text" if looks_like_text_tool_call(content) else "none"


def verdict_line(verdict: ToolCallVerdict) -> str:
    """The check's line on tool calls, with the fix when the server returned the call as text."""
    if verdict == "native":
        return "native tool calls: yes"
    if verdict == "text":
        return f"native tool calls: no (the server returned the call as text: {TEXT_CALL_FIX})"
    return "native tool calls: unknown (the model answered without calling the tool; try a larger model)"


def _complete(model: str, api_base: str, timeout_s: float, **options: Any) -> Any:
    """One chat completion, no retries; an endpoint that does not answer is a UserError naming the URL."""
    litellm = litellm_module()
    key = api_key_for(model, api_base)
    try:
        return litellm.completion(model=model, api_base=api_base, timeout=timeout_s, num_retries=0, temperature=0.0,
                                  **({"api_key": key} if key else {}), **options)
    except Exception as exc:  # whatever stops the request (refused, timed out, rejected) means it did not answer
        raise UserError(f"the model endpoint {api_base} did not answer for {model}: {describe_exception(exc)}") \
            from None


def check_endpoint(model: str, api_base: str, timeout_s: float = DEFAULT_ENDPOINT_CHECK_TIMEOUT_S) -> EndpointCheck:
    """Two short requests: one plain (does it answer?), one offering one trivial tool with tool_choice auto, as a
    run does (does the call come back as tool_calls?). A forced tool_choice is not used: some servers honour it
    with a grammar even when they cannot parse the model's own calls, so it would say yes where a run gets text."""
    plain = _complete(model, api_base, timeout_s, max_tokens=8,
                      messages=[{"role": "user", "content": "Reply with the word OK."}])
    tooled = _complete(model, api_base, timeout_s, max_tokens=64, messages=CHECK_MESSAGES, tools=[CHECK_TOOL],
                       tool_choice="auto")
    message = tooled.choices[0].message
    calls = list(message.tool_calls or [])
    verdict = tool_call_verdict(calls, message.content)
    shown = "; ".join(f"{c.function.name}({c.function.arguments})" for c in calls) if calls else (message.content or "")
    return EndpointCheck(api_base, model, (plain.choices[0].message.content or "").strip()[:60], verdict,
                         " ".join(shown.split())[:200])
