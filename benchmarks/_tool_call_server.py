"""An OpenAI chat-completions server for a Qwen2.5 GGUF behind llama.cpp's server, serving tool calls the way vLLM
serves Qwen2.5 with `--tool-call-parser hermes`: the model's own chat template (read from the GGUF) renders the
messages and tools, llama.cpp's `/v1/completions` continues the prompt, and `<tool_call>{...}</tool_call>` blocks in
the reply become OpenAI `tool_calls` (rendered and read by the harness's own embedded engine code,
harness.models.chat_template, so the served model meets tools as `--model local` does).

Why: BFCL's own `generate` (its OpenAI FC client) and the harness's `direct` arm have to meet the model through one
server for a call-by-call comparison, and llama-cpp-python's own `chatml-function-calling` handler does not do: it
leaves out a request's tools unless `tool_choice` is set, never renders `tool` messages (the model never sees a
result), and refuses an assistant message whose content is null (BFCL's next request after a call). Both clients go
through this one alike. Used by benchmarks/bfcl_own_harness.py; `python benchmarks/_tool_call_server.py --gguf PATH
--upstream http://127.0.0.1:8765 --port 8766` serves it alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.agents.endpoints.openai_chat import lm_messages
from harness.agents.endpoints.runs import Refused
from harness.models.chat_template import ChatTemplate, parse_tool_calls
from harness.models.messages import parse_arguments

STOPS = ("<|im_end|>", "<|endoftext|>")
DEFAULT_MAX_TOKENS = 2048  # llama.cpp's completions default is 16 tokens; vLLM's is the rest of the context


class BadRequest(Exception):
    """A request this server cannot serve: answered with a 400 and the reason."""


def gguf_chat_template(gguf: Path) -> str:
    """The chat template stored in the GGUF's metadata (the one vLLM would read from the model's tokenizer config)."""
    import llama_cpp

    model = llama_cpp.Llama(str(gguf), vocab_only=True, verbose=False)
    template = model.metadata.get("tokenizer.chat_template")
    if not template:
        raise SystemExit(f"{gguf}: no tokenizer.chat_template in its metadata")
    return template


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages as the template takes them, read as the harness's own chat endpoint reads them
    (harness.agents.endpoints.openai_chat.lm_messages: text content, null as empty, `developer` as system), and each
    tool call's arguments checked to be a JSON object (the template renders them as one)."""
    if not all(isinstance(message, dict) for message in messages):
        raise BadRequest("each message must be a JSON object")
    try:
        prepared = lm_messages(messages)
    except Refused as refused:
        raise BadRequest(refused.message) from None
    for message in prepared:
        for call in message.get("tool_calls") or []:
            if parse_arguments((call.get("function") or {}).get("arguments") or "{}") is None:
                raise BadRequest(f"a tool call's arguments are not a JSON object: {call.get('function')}"[:200])
    return prepared


def reply_message(text: str) -> dict[str, Any]:
    """The model's reply as an OpenAI assistant message: its `<tool_call>` blocks as `tool_calls` (read as the
    embedded engine reads them: harness.models.chat_template), the rest as content (null when only calls)."""
    content, calls = parse_tool_calls(text)
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                                  "function": {"name": call.name,
                                               "arguments": json.dumps(call.input, ensure_ascii=False)}}
                                 for call in calls]
    return message


@dataclass(frozen=True)
class Shim:
    """Renders requests with the template, asks `upstream`'s completions endpoint, and answers in OpenAI's shape."""

    template: str
    upstream: str
    model_name: str = "qwen"

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        try:
            return ChatTemplate(self.template).render(template_messages(messages), tools)
        except jinja2.TemplateError as error:
            raise BadRequest(f"the chat template cannot render these messages: {error}") from None

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("stream"):
            raise BadRequest("stream is not served here")
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise BadRequest("messages must be a non-empty list")
        tools = body.get("tools")
        if body.get("tool_choice") == "none":
            tools = None
        prompt = self.render(body["messages"], tools)
        stop = list(STOPS) + ([body["stop"]] if isinstance(body.get("stop"), str) else list(body.get("stop") or []))
        request = {"prompt": prompt, "stop": stop, "temperature": body.get("temperature", 1.0),
                   "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS}
        for option in ("top_p", "seed"):
            if body.get(option) is not None:
                request[option] = body[option]
        upstream = _post_json(f"{self.upstream}/v1/completions", request)
        choice = upstream["choices"][0]
        message = reply_message(choice.get("text") or "")
        usage = upstream.get("usage") or {}
        return completion_body(message, body.get("model") or self.model_name, int(usage.get("prompt_tokens", 0)),
                               int(usage.get("completion_tokens", 0)), choice.get("finish_reason") or "stop")


def completion_body(message: dict[str, Any], model: str, prompt_tokens: int, completion_tokens: int,
                    finish_reason: str = "stop") -> dict[str, Any]:
    """An OpenAI chat-completion response around one assistant message."""
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if "tool_calls" in message else finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def _post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=3600) as response:
        return json.loads(response.read())


class ChatModel(Protocol):
    """What the HTTP handler serves: a chat-completions request body in, a chat-completion body out (a BadRequest
    for a request it cannot answer)."""

    model_name: str

    def complete(self, body: dict[str, Any]) -> dict[str, Any]: ...


def handler_for(shim: ChatModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": shim.model_name, "object": "model"}]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                self._send(200, shim.complete(body))
            except (BadRequest, json.JSONDecodeError, ValueError) as error:
                self._error(400, str(error))
            except urllib.error.HTTPError as error:
                self._error(502, f"upstream answered {error.code}: {error.read()[:300]!r}")

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def serve(shim: ChatModel, port: int) -> ThreadingHTTPServer:
    """Start serving on 127.0.0.1:port in a daemon thread; `.shutdown()` stops it."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(shim))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--upstream", required=True, help="llama.cpp server's base URL, without /v1")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    server = serve(Shim(gguf_chat_template(args.gguf), args.upstream.rstrip("/")), args.port)
    print(f"serving on http://127.0.0.1:{args.port}/v1", flush=True)
    threading.Event().wait()
    server.shutdown()


if __name__ == "__main__":
    main()
