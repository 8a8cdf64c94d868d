"""Requests and replies as OpenAI chat dicts: what every engine reads and writes, whoever answers.

dspy hands engines its own Request/Response types; the harness reads them as the OpenAI shapes LiteLLM and
the chat templates use. What reply an agent needs (its `ReplyShape`) travels as one harness-only option: the
embedded engine builds a grammar from it, other engines ignore it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from dspy.lm15 import FunctionTool, Message, Request, Response, TextPart, ToolCallPart, Usage

GRAMMAR_KEY = "harness_grammar"
REPLY_KEY = "harness_reply"
REUSE_KEY = "harness_reuse"
SCOPE_KEY = "harness_cache_scope"
CACHE_RUN_KEY = "harness_cache_run"
SETUP_KEY = "harness_setup_s"
# Where a call's reused prompt tokens came from: none, the previous call's context, the engine's prefix cache,
# or the provider's own prompt cache (reported by its API).
ReuseSource = Literal["none", "context", "prefix_cache", "provider"]


def _texts(parts: tuple[Any, ...]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _message_dicts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        rows = []
        for part in message.parts:
            row = {"role": "tool", "tool_call_id": part.id, "content": _texts(part.content)}
            if part.name is not None:
                row["name"] = part.name
            rows.append(row)
        return rows
    # dspy reads a system message after the first as a developer message; it was sent as system
    row: dict[str, Any] = {"role": "system" if message.role == "developer" else message.role,
                           "content": _texts(message.parts)}
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    if calls:
        row["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.input)}} for c in calls]
    return [row]


def request_messages(request: Request) -> list[dict[str, Any]]:
    """A canonical request as OpenAI chat messages (system first, tool calls and tool results in OpenAI's
    shape), the one form every engine, the cache key and the trajectory read."""
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        messages.extend(_message_dicts(message))
    return messages


def request_tools(request: Request) -> list[dict[str, Any]]:
    """The request's tools as OpenAI function definitions (what LiteLLM and Qwen's chat template take)."""
    tools = []
    for tool in request.tools:
        if not isinstance(tool, FunctionTool):
            raise TypeError(f"harness engines take function tools only, got {type(tool).__name__}")
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = tool.parameters
        tools.append({"type": "function", "function": function})
    return tools


def request_tool_choice(request: Request) -> str | dict[str, Any] | None:
    """Config.tool_choice in OpenAI's spelling (None: the provider's default)."""
    choice = request.config.tool_choice
    if choice is None:
        return None
    if choice.mode == "required" and len(choice.allowed) == 1:
        return {"type": "function", "function": {"name": choice.allowed[0]}}
    return choice.mode


# The reply protocols an agent can ask for: a native tool call (to one of the request's tools), one fenced
# python block, one DSPy ReAct step (thought, tool name, JSON arguments) naming one of the shape's tools.
ReplyProtocol = Literal["tool_call", "code_block", "react_step"]


@dataclass(frozen=True)
class ReplyShape:
    """The reply an agent's LM call needs, in engine-neutral terms. An engine that can constrain decoding builds
    its grammar from this (the embedded one: harness.models.llama); the others ignore it, since a provider's
    API has no such option. `answer`: whether a plain answer (no action) is admitted this turn (a ReAct step
    always names a tool: its answer is a final_answer call). `tools`: OpenAI function definitions a text
    protocol's reply may name (a native tool call names one of the request's own tools). `parallel`: a native
    tool-calling reply may hold several calls (the scaffold's `parallel_tool_calls`); a provider is told so with
    its own `parallel_tool_calls` option, the embedded engine's grammar admits several `<tool_call>` blocks."""

    protocol: ReplyProtocol
    answer: bool = False
    tools: tuple[dict[str, Any], ...] = ()
    parallel: bool = False

    def __post_init__(self) -> None:
        if self.protocol == "react_step" and self.answer:
            raise ValueError("a ReAct step names a tool; its answer is a final_answer call")
        if self.parallel and self.protocol != "tool_call":
            raise ValueError("only native tool calls can be several in one reply")


def reply_shape_option(shape: ReplyShape) -> dict[str, Any]:
    """The LM-call keyword argument that declares the reply an agent needs:
    `await lm.acall(messages=..., **reply_shape_option(shape))`. dspy refuses keywords OpenAI's chat API does
    not know, and `metadata` is one it carries into Config.extensions; engines never forward it to a provider.
    The shape goes as plain JSON values, so the response cache keys it like any other option; `parallel` goes only
    when on, so a one-call shape keys the cache as it did before the field existed."""
    declared = {**asdict(shape), "tools": list(shape.tools)}
    if not shape.parallel:
        del declared["parallel"]
    return {"metadata": {REPLY_KEY: declared}}


def request_reply_shape(request: Request) -> ReplyShape | None:
    """The reply shape a caller declared with `reply_shape_option`, if any."""
    metadata = (request.config.extensions or {}).get("metadata")
    declared = metadata.get(REPLY_KEY) if isinstance(metadata, dict) else None
    if not isinstance(declared, dict):
        return None
    return ReplyShape(**{**declared, "tools": tuple(declared.get("tools") or ())})


def with_cache_scope(request: Request, scope: str, run: str = "") -> Request:
    """The request carrying the run's response-cache scope (its epoch: independent samples are cached apart) and the
    run id that makes the call (whose stored answers a resume reuses), harness-only options as the reply shape is;
    engines never forward them."""
    if not scope and not run:
        return request
    extensions = dict(request.config.extensions or {})
    metadata = extensions.get("metadata")
    carried = {**({SCOPE_KEY: scope} if scope else {}), **({CACHE_RUN_KEY: run} if run else {})}
    extensions["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), **carried}
    return replace(request, config=replace(request.config, extensions=extensions))


def _cache_metadata(request: Request, key: str) -> str:
    metadata = (request.config.extensions or {}).get("metadata")
    return str(metadata.get(key) or "") if isinstance(metadata, dict) else ""


def request_cache_scope(request: Request) -> str:
    """The scope the request's answer is cached under ("" : none)."""
    return _cache_metadata(request, SCOPE_KEY)


def request_cache_run(request: Request) -> str:
    """The run id that makes the request ("" : an LM used outside any run)."""
    return _cache_metadata(request, CACHE_RUN_KEY)


def reply_response(text: str, model: str, usage: Usage, tool_calls: tuple[ToolCallPart, ...] = (),
                   finish_reason: str = "stop", grammar: bool = False, reuse: ReuseSource | None = None,
                   setup_s: float = 0.0) -> Response:
    """An assistant reply: its text, then its tool calls; `grammar` marks a reply decoded under a grammar,
    `reuse` says where an engine's reused prompt tokens came from, `setup_s` how much of the call was one-time
    start-up (`setup_seconds`)."""
    parts = ([TextPart(text)] if text or not tool_calls else []) + list(tool_calls)
    provider_data = {**({GRAMMAR_KEY: True} if grammar else {}), **({REUSE_KEY: reuse} if reuse else {}),
                     **({SETUP_KEY: setup_s} if setup_s else {})}
    return Response(id=None, model=model, message=Message.assistant(parts),
                    finish_reason="tool_call" if tool_calls else finish_reason, usage=usage,
                    provider_data=provider_data or None)


def response_text(response: Response) -> str:
    """The reply's text without its tool calls ("" when it has none)."""
    return _texts(response.message.parts)


def response_tool_calls(response: Response) -> tuple[dict[str, Any], ...]:
    """The reply's tool calls as {"name", "arguments"} (what the trajectory records)."""
    return tuple({"name": call.name, "arguments": call.input} for call in response.tool_calls)


def setup_seconds(response: Response) -> float:
    """Seconds of the call an engine reports as one-time start-up (the embedded engine's first evaluation of a
    prompt prefix it keeps for every later run sharing it); 0 for a call that had none."""
    return float((response.provider_data or {}).get(SETUP_KEY) or 0.0)


def used_grammar(response: Response) -> bool:
    """True if the engine decoded this reply under a grammar (it says so in provider_data)."""
    return bool((response.provider_data or {}).get(GRAMMAR_KEY))


def reuse_source(response: Response) -> ReuseSource:
    """Where the reply's reused prompt tokens came from: what the engine said, else the provider's cache when
    its usage reports cache reads, else none."""
    said = (response.provider_data or {}).get(REUSE_KEY)
    if said in ("none", "context", "prefix_cache", "provider"):
        return said
    return "provider" if response.usage and response.usage.cache_read_tokens else "none"


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool-call arguments as a JSON object, or None when they are not one."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
