"""What the run's two loopback endpoints cost against the in-process path, side by side in one process (a printed
table; no assertions).

One run's context on the crm fixture and a zero-latency scripted model (one tool call per reply). Per LM call: the
run's LM called in process (`await ctx.lm.acall(...)`, what a built-in arm does) against the same call through the
chat endpoint with the `openai` client. Per tool call: `await ctx.session.call(...)` against the same call through
the MCP endpoint with fastmcp's streamable-HTTP client, and through the stdio bridge (a child process) with a stdio
client. The cells alternate in blocks, `repeats` times; each cell's median per call is shown with its ratio to the
in-process path. Also per run: entering and leaving `serving(ctx)` on the process's shared server, against starting
and stopping a server of its own (what a server per run would add).

Usage: .venv/bin/python benchmarks/endpoints.py [--calls 50] [--repeats 5] [--smallest]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from harness.agents.context import SampleContext
from harness.agents.endpoints import KEY_VARIABLE, Endpoints, serving
from harness.agents.endpoints.server import LoopbackServer
from harness.agents.scaffold import GUIDED
from harness.env import configure_environment
from harness.limits import Limits
from harness.mcp.servers import open_servers
from harness.models.engine import CallRecorder, make_lm
from harness.models.scripted import ScriptedEngine, ScriptedReply
from harness.tasks.suite import load_suite

MESSAGES = [{"role": "system", "content": "You look customers up."}, {"role": "user", "content": "Where is C-0007?"}]
TOOL = {"type": "function", "function": {"name": "get_customer", "description": "One customer by id.", "parameters": {
    "type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}}}
ARGUMENTS = {"customer_id": "C-0007"}
Cell = Callable[[], Awaitable[object]]


def _policy(request: object) -> ScriptedReply:
    return ScriptedReply(tool_calls=(("get_customer", ARGUMENTS),))


async def per_call(cell: Cell, calls: int) -> float:
    """Milliseconds per call over `calls` calls of `cell`, one after another."""
    started = time.perf_counter()
    for _ in range(calls):
        await cell()
    return (time.perf_counter() - started) * 1000 / calls


async def measure_calls(ctx: SampleContext, endpoints: Endpoints, calls: int, repeats: int) -> dict[str, list[float]]:
    chat = openai.AsyncOpenAI(base_url=endpoints.base_url, api_key=endpoints.api_key)
    command, *args = endpoints.stdio_command
    stdio = StdioTransport(command, args, env={**os.environ, KEY_VARIABLE: endpoints.api_key})
    async with Client(endpoints.mcp_url, auth=endpoints.api_key) as http, Client(stdio) as bridged:
        cells: dict[str, Cell] = {
            "LM call, in process": lambda: ctx.lm.acall(messages=MESSAGES, tools=[TOOL]),
            "LM call, chat endpoint": lambda: chat.chat.completions.create(model=endpoints.model, messages=MESSAGES,
                                                                          tools=[TOOL]),
            "tool call, in process": lambda: ctx.session.call("get_customer", ARGUMENTS),
            "tool call, MCP endpoint": lambda: http.call_tool("get_customer", ARGUMENTS),
            "tool call, stdio bridge": lambda: bridged.call_tool("get_customer", ARGUMENTS),
        }
        for cell in cells.values():  # warm every path once (connections, first imports)
            await cell()
        times: dict[str, list[float]] = {name: [] for name in cells}
        for _ in range(repeats):
            for name, cell in cells.items():
                ctx.transcript.begin_step(0)
                times[name].append(await per_call(cell, calls))
    return times


async def measure_runs(ctx: SampleContext, repeats: int) -> dict[str, list[float]]:
    """Milliseconds to serve one run: its endpoints on the shared server, and a server of its own."""
    times: dict[str, list[float]] = {"per run: serving(ctx), shared server": [], "per run: a server of its own": []}
    for _ in range(repeats):
        started = time.perf_counter()
        async with serving(ctx):
            pass
        times["per run: serving(ctx), shared server"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        own = LoopbackServer()
        await asyncio.to_thread(own.start)
        await asyncio.to_thread(own.close)
        times["per run: a server of its own"].append((time.perf_counter() - started) * 1000)
    return times


async def measure(calls: int, repeats: int) -> dict[str, list[float]]:
    task = next(t for t in load_suite("smoke").tasks if t.id == "customer-country")
    async with open_servers(task.servers) as session:
        ctx = SampleContext(task=task, session=session, scaffold=GUIDED, limits=Limits(max_turns=10 ** 9),
                            transcript=session.transcript)
        ctx = replace(ctx, lm=make_lm("scripted:bench", ScriptedEngine(_policy), recorder=CallRecorder(ctx.transcript)))
        async with serving(ctx) as endpoints:
            times = await measure_calls(ctx, endpoints, calls, repeats)
        return {**times, **await measure_runs(ctx, repeats)}


def table(times: dict[str, list[float]], calls: int, repeats: int) -> str:
    baseline = {"LM": statistics.median(times["LM call, in process"]),
                "tool": statistics.median(times["tool call, in process"]),
                "per": statistics.median(times["per run: serving(ctx), shared server"])}
    lines = [f"{calls} calls x {repeats} repeats per cell (per-run rows: {repeats} runs), scripted model, crm fixture",
             "", "| path | ms per call (median) | ratio |", "|---|---:|---:|"]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:.2f} | {median / baseline[name.split()[0]]:.1f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smallest", action="store_true", help="3 calls x 1 repeat (CI)")
    options = parser.parse_args()
    calls, repeats = (3, 1) if options.smallest else (options.calls, options.repeats)
    configure_environment()
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # dspy's note on messages=, per call
    times = asyncio.run(measure(calls, repeats))
    print(table(times, calls, repeats))


if __name__ == "__main__":
    main()
