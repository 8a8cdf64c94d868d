"""The run's model and the run's servers as two loopback endpoints, for an agent from outside the package (a team's
own, a framework's, a program in any language): an OpenAI-compatible Chat Completions endpoint whose every call goes
through the run's LM (counted, timed, cached, recorded in the run's transcript, one step each), and one MCP endpoint
(streamable HTTP) whose every call goes through the run's ServerSession (recorded, id-guarded, delayed by
--tool-latency, bounded by the tool timeout, scored on the servers' end state), so such an agent is measured exactly
as the built-in arms are.

Both live on ONE HTTP server per process, bound to 127.0.0.1 only (server.py), started on first use and closed at
exit; a request finds its run by the per-run secret it carries (`Authorization: Bearer KEY`), a fresh one per
`serving(ctx)` that is forgotten when the context exits, and a request without a known secret is refused (401).

    async with serving(ctx) as endpoints:
        client = openai.AsyncOpenAI(base_url=endpoints.base_url, api_key=endpoints.api_key)
        ...  # and fastmcp.Client(endpoints.mcp_url, auth=endpoints.api_key), or endpoints.stdio_command

The modules: server.py (the process's server and the routing by secret), runs.py (one run's side: its loop, its
steps, what stopped it), openai_chat.py + chat_reply.py (the Chat Completions endpoint), mcp_proxy.py (the MCP
endpoint), stdio_bridge.py (`python -m harness.agents.endpoints.stdio_bridge URL`: a stdio MCP server forwarding to
the MCP endpoint, for agents that only start stdio servers), chat_replay.py (`scripted:reference` through the chat
endpoint: the `chat_tools` replay protocol).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the stdio bridge starts through this package: it stays light to import
    from harness.agents.context import SampleContext
    from harness.trace.errors import RunError

BRIDGE_MODULE = "harness.agents.endpoints.stdio_bridge"
KEY_VARIABLE = "HARNESS_API_KEY"  # where the stdio bridge reads the run's secret (never on its command line)
CHAT_REPLAY = f"{__name__}.chat_replay"  # registers `scripted:reference` through this endpoint: `chat_tools`


@dataclass(frozen=True)
class Endpoints:
    """One run's two endpoints, as an agent is handed them. `base_url`: the run's model as an OpenAI-compatible
    Chat Completions endpoint; `api_key`: the per-run secret both endpoints require (`Authorization: Bearer KEY`);
    `model`: the model name to send (the run's model string; any name is accepted); `mcp_url`: the run's servers as
    one MCP server (streamable HTTP); `stdio_command`: what an agent that only starts stdio MCP servers runs to reach
    `mcp_url` (it reads the key from HARNESS_API_KEY in its environment)."""

    base_url: str
    api_key: str
    model: str
    mcp_url: str
    stdio_command: tuple[str, ...]

    def environment(self) -> dict[str, str]:
        """The endpoints as a child process's environment variables: the OpenAI SDKs' own (OPENAI_BASE_URL,
        OPENAI_API_KEY) and the harness's (HARNESS_MODEL, HARNESS_MCP_URL, HARNESS_API_KEY, HARNESS_MCP_STDIO: the
        stdio command, shell-quoted)."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": self.api_key, "HARNESS_MODEL": self.model,
                "HARNESS_MCP_URL": self.mcp_url, KEY_VARIABLE: self.api_key,
                "HARNESS_MCP_STDIO": shlex.join(self.stdio_command)}


@asynccontextmanager
async def serving(ctx: SampleContext, code_tools: frozenset[str] = frozenset()) -> AsyncIterator[Endpoints]:
    """Both endpoints for one run, on the process's loopback server (started on first use), under a fresh secret.
    Every request is served on the run's own event loop (the one entering this context), so the agent must not block
    it: a synchronous agent runs in a thread. When the context exits, the secret is forgotten (later requests get
    401) and the calls still in flight are cancelled (a tool call cut short is recorded as such). `code_tools`: the
    agent's tools whose calls run the model's code (a reply calling one is a code action of the run, not a tool
    action)."""
    from harness.agents.endpoints.server import shared_server

    server = await shared_server()
    run = await server.open_run(ctx, code_tools)
    try:
        yield Endpoints(base_url=f"{server.url}/v1", api_key=run.secret, model=run.model, mcp_url=f"{server.url}/mcp",
                        stdio_command=(sys.executable, "-m", BRIDGE_MODULE, f"{server.url}/mcp"))
    finally:
        await server.close_run(run)


def run_error(endpoints: Endpoints) -> RunError | None:
    """What the chat endpoint refused a call of this run for, as the built-in loop would have ended the run: its
    turn limit (max_turns), a spending limit (token_limit, cost_limit), a failed LM call (lm_error), a bug in the
    harness (internal); None while nothing was refused. Read it inside `serving`, after the agent returns or fails:
    an agent that was refused a completion usually fails with an error of its own, and this says why."""
    from harness.agents.endpoints.server import run_for_secret

    run = run_for_secret(endpoints.api_key)
    return run.error if run is not None else None


async def begin_user_turn(endpoints: Endpoints) -> None:
    """A user turn of a conversation begins for an agent from outside, which is called once per turn through the
    same endpoints: what it does from now on is stamped with the endpoint's next step (its completions number their
    steps on across turns), so a call it makes before its turn's first completion is that turn's, not the last
    one's (the user turn events name the step that ended each turn: harness.agents.conversation.ScriptedUser); and
    the MCP endpoint offers the session's tools as they are now (the turn may offer tools held back until then)."""
    import asyncio

    from harness.agents.endpoints.server import run_for_secret, shared_server

    run = run_for_secret(endpoints.api_key)
    if run is None:  # the run has ended: nothing is served any more
        return
    run.ctx.transcript.begin_step(run.steps)
    if run.mcp_app is not None:
        server = await shared_server()
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run.mcp_app.sync_tools(), server.loop))


def end_user_turn(endpoints: Endpoints) -> None:
    """The agent answered its user turn: the step that ends the turn is its last completion's; a turn in which it
    made none keeps the step it began with (begin_user_turn) as its own, so the next turn's calls get a later one
    (that step counts toward the run's turn limit like a completion's)."""
    from harness.agents.endpoints.server import run_for_secret

    run = run_for_secret(endpoints.api_key)
    if run is not None and run.ctx.transcript.step == run.steps:
        run.steps += 1
