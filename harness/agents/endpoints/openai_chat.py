"""The run's model as an OpenAI-compatible Chat Completions endpoint: `POST /v1/chat/completions` and `GET
/v1/models`, served for the run the request's secret names (harness.agents.endpoints.server finds it).

What passes through to the run's LM: the messages (text content; a list of text parts is joined; `developer` is a
system message), `tools` (function tools; `strict` dropped: the harness's engines have no strict mode), `tool_choice`,
`temperature`, `max_tokens` (or `max_completion_tokens`), `top_p`, `stop`, `seed`. Other options an SDK sends
(`stream_options`, `parallel_tool_calls`, `user`, `store`, ...) are accepted and ignored, so any client works
unchanged. Every response carries `usage`; `stream: true` is answered with the whole reply as SSE chunks, then
`[DONE]`. An error is OpenAI's error JSON with `x-should-retry: false` (the engine stack has already retried)."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.agents.endpoints.chat_reply import Completion, complete
from harness.agents.endpoints.chat_request import ChatRequest, validation_message
from harness.agents.endpoints.runs import Refused, RunEndpoint

RUN_KEY = "harness.run"  # where the server puts the request's run in its ASGI scope


def _text(content: Any) -> str:
    """A message's content as text: a string, or a list of text parts joined (anything else is refused)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text"):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise Refused(400, "invalid_request_error", f"only text content is supported, not {kind!r} parts")
            texts.append(str(part.get("text") or ""))
        return "".join(texts)
    raise Refused(400, "invalid_request_error", f"a message's content must be text, not {type(content).__name__}")


def lm_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages as the run's LM takes them (OpenAI chat dicts with text content)."""
    converted = []
    for message in messages:
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Refused(400, "invalid_request_error", f"unknown message role {role!r}")
        row: dict[str, Any] = {"role": "system" if role == "developer" else role, "content": _text(message.get("content"))}
        if role == "assistant" and message.get("tool_calls"):
            row["tool_calls"] = message["tool_calls"]
        if role == "tool":
            row["tool_call_id"] = message.get("tool_call_id") or ""
            if message.get("name"):
                row["name"] = message["name"]
        converted.append(row)
    return converted


def lm_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Function tools as the run's LM takes them: a missing parameter schema is an empty object, `strict` dropped."""
    converted = []
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type", "function") == "function" else None
        if not isinstance(function, dict) or not function.get("name"):
            raise Refused(400, "invalid_request_error", "tools must be function tools with a name")
        function = {k: v for k, v in function.items() if k != "strict"}
        function.setdefault("parameters", {"type": "object", "properties": {}})
        converted.append({"type": "function", "function": function})
    return converted


def lm_options(request: ChatRequest) -> dict[str, Any]:
    """The options passed through to the run's LM (only those set; the run's LM has its own defaults)."""
    choice = request.tool_choice
    options = {"tool_choice": (choice.model_dump() if hasattr(choice, "model_dump") else choice) if request.tools
               else None, "temperature": request.temperature,
               "max_tokens": request.max_tokens or request.max_completion_tokens, "top_p": request.top_p,
               "stop": [request.stop] if isinstance(request.stop, str) else request.stop, "seed": request.seed}
    return {name: value for name, value in options.items() if value is not None}


def error_response(refusal: Refused) -> JSONResponse:
    """OpenAI's error JSON; `x-should-retry: false` because the harness's engine already retried what it could."""
    body = {"error": {"message": refusal.message, "type": refusal.kind, "param": None, "code": refusal.kind}}
    return JSONResponse(body, status_code=refusal.status, headers={"x-should-retry": "false"})


def _message(done: Completion) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": done.text if done.text or not done.tool_calls else None}
    if done.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in done.tool_calls]
    return message


def _usage(done: Completion) -> dict[str, int]:
    return {"prompt_tokens": done.prompt_tokens, "completion_tokens": done.completion_tokens,
            "total_tokens": done.prompt_tokens + done.completion_tokens}


def completion_body(done: Completion, model: str) -> dict[str, Any]:
    """A `chat.completion` object for a reply."""
    return {"id": f"chatcmpl-{secrets.token_hex(12)}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": _message(done), "finish_reason": done.finish_reason}],
            "usage": _usage(done)}


def completion_chunks(done: Completion, model: str) -> list[dict[str, Any]]:
    """A reply as `chat.completion.chunk` objects: the role and text, one chunk per tool call, then the finish
    reason with the usage (on the last chunk that has a choice, so clients reading either place find it)."""
    head = {"id": f"chatcmpl-{secrets.token_hex(12)}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    chunks = [chunk({"role": "assistant", "content": done.text or ("" if not done.tool_calls else None)})]
    chunks += [chunk({"tool_calls": [{"index": n, "id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}]})
               for n, c in enumerate(done.tool_calls)]
    return chunks + [chunk({}, done.finish_reason, usage=_usage(done))]


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def read_request(raw: bytes) -> ChatRequest:
    """The request body as a ChatRequest; not UTF-8, not JSON, or a field of the wrong type is the request's 400."""
    try:
        return ChatRequest.model_validate(json.loads(raw.decode("utf-8")))
    except UnicodeDecodeError as exc:
        raise Refused(400, "invalid_request_error", f"the request body is not UTF-8 ({exc.reason} at byte "
                                                    f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise Refused(400, "invalid_request_error", f"the request body is not JSON ({exc})") from None
    except ValidationError as exc:
        raise Refused(400, "invalid_request_error",
                      f"not a chat completion request: {validation_message(exc.errors())}") from None


async def chat_completions(request: Request) -> Response:
    run: RunEndpoint = request.scope[RUN_KEY]
    try:
        body = read_request(await request.body())
        if body.n != 1:
            raise Refused(400, "invalid_request_error", "n must be 1: the run's model answers one reply a call")
        messages = lm_messages([m.model_dump(exclude_none=True) for m in body.messages])
        tools = lm_tools([t.model_dump(exclude_none=True) for t in body.tools or ()])
        done = await run.on_run_loop(complete(run, messages, tools, lm_options(body)))
    except Refused as refusal:
        return error_response(refusal)
    if body.stream:
        chunks = _sse(completion_chunks(done, run.model))
        return StreamingResponse(iter([chunks]), media_type="text/event-stream", headers={"cache-control": "no-cache"})
    return JSONResponse(completion_body(done, run.model))


async def list_models(request: Request) -> Response:
    run: RunEndpoint = request.scope[RUN_KEY]
    return JSONResponse({"object": "list", "data": [{"id": run.model, "object": "model", "created": 0,
                                                      "owned_by": "harness"}]})


def chat_app() -> Starlette:
    """The /v1 routes (the server has checked the secret and put the run in the scope)."""
    return Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"]),
                             Route("/v1/models", list_models, methods=["GET"])])
