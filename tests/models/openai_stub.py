"""A minimal OpenAI-compatible server on loopback, started by a test: it answers every chat completion with one fixed
reply and lists the models it was given at GET /v1/models, counting both kinds of request. Two of them on two ports
serving one model name stand for two vLLM or llama.cpp servers a user might point a run at."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStub:
    """`with OpenAIStub("IN") as server:` answers "IN" at `server.url` (an --api-base); `models`: the /v1/models
    entries (None: that path is 404, as on a server without it)."""

    def __init__(self, reply: str, models: list[dict[str, Any]] | None = None):
        self.reply, self.models = reply, models
        self.chat_requests = 0
        self.model_requests = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                stub.model_requests += 1
                if self.path != "/v1/models" or stub.models is None:
                    self.send_error(404)
                    return
                self._json({"object": "list", "data": stub.models})

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                stub.chat_requests += 1
                self._json({"id": "x", "object": "chat.completion", "created": 0, "model": "model",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": stub.reply}}],
                            "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}})

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}/v1"

    def __enter__(self) -> OpenAIStub:
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()
