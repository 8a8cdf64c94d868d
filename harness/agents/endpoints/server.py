"""The process's one loopback HTTP server for the run's endpoints: uvicorn on 127.0.0.1 and a free port, on a thread
and event loop of its own (so it serves runs on any event loop, and a request never waits for a busy run's loop to
parse it), started on first use and closed at exit. A request finds its run by the per-run secret it carries
(`Authorization: Bearer KEY`): /v1/... goes to the run's Chat Completions endpoint, /mcp to its MCP endpoint; a
missing or unknown secret is refused with 401 on both, before anything of a run is touched."""

from __future__ import annotations

import asyncio
import atexit
import logging
import socket
import threading
import time
from typing import Any

import dspy
import uvicorn

from harness.agents.context import SampleContext
from harness.agents.endpoints.logs import endpoints_log
from harness.agents.endpoints.mcp_proxy import MCP_PATH, RunMCPApp
from harness.agents.endpoints.openai_chat import RUN_KEY, chat_app
from harness.agents.endpoints.runs import RunEndpoint

HOST = "127.0.0.1"  # loopback only, never another interface: the endpoints hold the run's model and servers
START_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 5.0

_lock = threading.Lock()
_server: LoopbackServer | None = None


def bearer_secret(scope: dict[str, Any]) -> str:
    """The secret a request carries in its Authorization header ("" when none)."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            scheme, _, secret = value.decode("latin-1").partition(" ")
            return secret.strip() if scheme.lower() == "bearer" else ""
    return ""


async def _send_json(send: Any, status: int, body: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


UNAUTHORIZED = (b'{"error": {"message": "a request to the harness endpoints needs this run\'s key '
                b'(Authorization: Bearer KEY)", "type": "authentication_error", "param": null, '
                b'"code": "invalid_api_key"}}')
NOT_FOUND = b'{"error": {"message": "no such endpoint: /v1/chat/completions, /v1/models and /mcp are served", ' \
            b'"type": "invalid_request_error", "param": null, "code": "not_found"}}'


class LoopbackServer:
    """The server, its thread and loop, and the runs it serves (secret -> run)."""

    def __init__(self) -> None:
        self.runs: dict[str, RunEndpoint] = {}
        self.chat = chat_app()
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and without it every response
        # written in two parts waits for the client's delayed ACK
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.bind((HOST, 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}"
        config = uvicorn.Config(self, lifespan="off", access_log=False, log_level="warning", timeout_keep_alive=30,
                                log_config=None)  # its loggers go to the endpoints' log (log_to_file), not stderr
        self.uvicorn = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="harness-endpoints", daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.uvicorn.serve(sockets=[self.socket]))

    def start(self) -> None:
        """Start serving and wait until the server accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.uvicorn.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the harness endpoints' server did not start on {self.url}")
            time.sleep(0.005)

    def close(self) -> None:
        self.uvicorn.should_exit = True
        self.thread.join(CLOSE_TIMEOUT_S)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        mcp = path == MCP_PATH or path.startswith(MCP_PATH + "/")
        if not (mcp or path.startswith("/v1/")):
            await _send_json(send, 404, NOT_FOUND)
            return
        run = self.runs.get(bearer_secret(scope))
        if run is None:
            await _send_json(send, 401, UNAUTHORIZED, ((b"www-authenticate", b"Bearer"),))
            return
        if mcp:
            await run.mcp_app(scope, receive, send)
        else:
            await self.chat({**scope, RUN_KEY: run}, receive, send)

    async def open_run(self, ctx: SampleContext, code_tools: frozenset[str] = frozenset()) -> RunEndpoint:
        """Serve a run (called on the run's loop): its MCP endpoint started, then its secret known."""
        run = RunEndpoint(ctx=ctx, lm=ctx.lm if ctx.lm is not None else dspy.settings.lm,
                          loop=asyncio.get_running_loop(), code_tools=code_tools)
        if run.lm is None:
            raise RuntimeError("the run's endpoints need its LM: the context has none and dspy has none configured")

        async def start() -> None:
            run.mcp_app = RunMCPApp(run)
            await run.mcp_app.start()
            self.runs[run.secret] = run

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(start(), self.loop))
        return run

    async def close_run(self, run: RunEndpoint) -> None:
        """Stop serving a run: its secret forgotten, what its requests still had out cancelled, its MCP endpoint
        stopped."""
        self.runs.pop(run.secret, None)
        run.cancel_pending()
        if run.mcp_app is not None:
            stopping = asyncio.run_coroutine_threadsafe(run.mcp_app.stop(), self.loop)
            await asyncio.wait_for(asyncio.wrap_future(stopping), CLOSE_TIMEOUT_S)


SERVER_LOGGERS = ("uvicorn", "mcp.server.streamable_http", "mcp.server.streamable_http_manager")


def log_to_file() -> None:
    """What the server and its MCP transport log (a request cut short, a client gone) goes to the endpoints' log
    file, never the terminal: the run's transcript records what matters to the run."""
    path = endpoints_log()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(logging.WARNING)


def _started_server() -> LoopbackServer:
    global _server
    with _lock:
        if _server is None:
            log_to_file()
            server = LoopbackServer()
            server.start()
            atexit.register(server.close)
            _server = server
        return _server


async def shared_server() -> LoopbackServer:
    """The process's server, started on first use (from any thread or event loop: the start waits in a worker
    thread, never on a run's loop) and closed at exit."""
    return _server if _server is not None else await asyncio.to_thread(_started_server)


def run_for_secret(secret: str) -> RunEndpoint | None:
    """The run a secret belongs to while it is served (None: unknown, or its run has ended)."""
    return _server.runs.get(secret) if _server is not None else None
