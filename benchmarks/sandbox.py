"""Sandbox costs, measured side by side in one run (a printed table; no assertions).

1. Per task: acquiring a sandbox + one trivial execution. A lease from the warm pool vs a fresh
   dspy.PythonInterpreter per task (the same offline Deno command; stock dspy cannot start offline).
   Targets: >= 100x faster, <= 50 ms amortized.
2. Warm execution latency of a trivial statement inside one lease.
3. Bridged tool calls: (a) the sandbox <-> host bridge alone (a dispatcher that returns at once; 200 calls
   in one execution, minus an empty execution, minus the dispatcher's own time); (b) one MCP tool call
   (sandbox -> host -> in-memory fixture server on the event loop -> back) over the tool's own time as the
   server session measured it. Target: <= 2 ms over the tool's own time.
4. Monty (pydantic-monty, the sandbox of fastmcp's CodeMode and the codemode-fastmcp arm), side by side with the
   warm pool: per task, start + one trivial execution as CodeMode runs it (its provider starts a new Monty
   worker for every execute), and in one Monty worker kept open (checkout + execute); one MCP tool call
   through CodeMode's execute (call_tool -> the proxy -> the run's session) over the tool's own time.
   Skipped, with a note, without the fastmcp-codemode extra.

Usage: .venv/bin/python benchmarks/sandbox.py [--tasks 50] [--fresh 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.mcp.bridge import make_dispatcher
from harness.mcp.servers import open_servers
from harness.sandbox import SandboxPool, ensure_pyodide_cached
from harness.sandbox.interpreter import _new_python_interpreter
from harness.tasks.task import ServerRef

ECHO_PRELUDE = 'def echo(x: int) -> dict:\n    return _harness_call_tool_json("echo", {"x": x})\n'
BRIDGE_CALLS = 200


def fresh_interpreter_per_task(tasks: int) -> float:
    """What code mode costs without a pool: start an interpreter, run one statement, shut it down."""
    durations = []
    for _ in range(tasks):
        started = time.perf_counter()
        interpreter = _new_python_interpreter(lambda name, arguments: "{}")
        interpreter.execute("print(1)")
        interpreter.shutdown()
        durations.append(time.perf_counter() - started)
    return statistics.mean(durations)


async def pooled(tasks: int) -> dict[str, float]:
    pool = SandboxPool(size=1)
    await pool.start(1)
    out: dict[str, float] = {}

    started = time.perf_counter()
    for _ in range(tasks):
        async with pool.lease(lambda name, arguments: None) as sandbox:
            await sandbox.execute("print(1)")
    out["lease"] = (time.perf_counter() - started) / tasks

    async with pool.lease(lambda name, arguments: {"x": arguments["x"]}, prelude=ECHO_PRELUDE) as sandbox:
        warm = [(await sandbox.execute("x = 1")).duration_s for _ in range(50)]
        out["warm"] = statistics.median(warm)
        per_call = []
        for _ in range(5):
            empty = (await sandbox.execute(f"for i in range({BRIDGE_CALLS}):\n    pass")).duration_s
            looped = await sandbox.execute(f"for i in range({BRIDGE_CALLS}):\n    echo(i)")
            per_call.append((looped.duration_s - empty - looped.tool_time_s) / BRIDGE_CALLS)
        out["bridge"] = statistics.median(per_call)

    async with open_servers((ServerRef("crm"),)) as session:
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        async with pool.lease(dispatcher, prelude=session.toolbox.sandbox_prelude()) as sandbox:
            await sandbox.execute("get_customer(customer_id='C-0001')")
            trips, tool_own, over = [], [], []
            for _ in range(50):  # pairs: an empty execution next to the call, so load drift cancels out
                empty = (await sandbox.execute("_ = None")).duration_s
                before = len(session.calls)
                result = await sandbox.execute("_ = get_customer(customer_id='C-0001')")
                trips.append(result.duration_s)
                tool_own.append(session.calls[before].duration_s)
                over.append(result.duration_s - empty - tool_own[-1])
    out["mcp_trip"] = statistics.median(trips)
    out["mcp_tool"] = statistics.median(tool_own)
    out["mcp_over"] = statistics.median(over)
    stats = pool.stats()
    out["restarts"], out["created"] = stats.restarts, stats.created
    await pool.close()
    return out


async def monty(tasks: int) -> dict[str, float]:
    """Monty's costs, measured as the codemode-fastmcp arm pays them."""
    import pydantic_monty

    from harness.agents.fastmcp_codemode import meta_session, new_sandbox_provider

    provider, out = new_sandbox_provider(), {}
    await provider.run("1")  # the first worker start pays for loading the binary
    started = time.perf_counter()
    for _ in range(tasks):
        await provider.run("1")
    out["start"] = (time.perf_counter() - started) / tasks

    async with pydantic_monty.AsyncMonty() as workers:
        started = time.perf_counter()
        for _ in range(tasks):
            async with workers.checkout(limits=provider.limits) as session:
                await session.feed_run("1")
        out["kept"] = (time.perf_counter() - started) / tasks

    async with open_servers((ServerRef("crm"),)) as session, meta_session(session) as meta:
        call = "_ = await call_tool('get_customer', {'customer_id': 'C-0001'})"
        trips, tool_own, over = [], [], []
        for _ in range(50):  # pairs, as for the Pyodide pool: an empty execute next to the call
            empty_started = time.perf_counter()
            await meta.call("execute", {"code": "_ = None"})
            empty = time.perf_counter() - empty_started
            before, started = len(session.calls), time.perf_counter()
            await meta.call("execute", {"code": call})
            trips.append(time.perf_counter() - started)
            tool_own.append(session.calls[before].duration_s)
            over.append(trips[-1] - empty - tool_own[-1])
    out["mcp_trip"], out["mcp_tool"] = statistics.median(trips), statistics.median(tool_own)
    out["mcp_over"] = statistics.median(over)
    return out


def print_monty(m: dict[str, float], pool: dict[str, float]) -> None:
    ms = 1000
    print(f"\n{'Monty (codemode-fastmcp) vs the warm Pyodide pool':<52}{'pool':>10}{'monty':>10}{'ratio':>9}")
    for label, ours, theirs in (
            ("per task: start + trivial execute, as CodeMode runs", pool["lease"], m["start"]),
            ("per task: checkout of a kept Monty worker + execute", pool["lease"], m["kept"]),
            ("MCP tool call in one execute, median round trip", pool["mcp_trip"], m["mcp_trip"]),
            ("  over the tool (minus the tool, minus an empty exec)", pool["mcp_over"], m["mcp_over"])):
        print(f"{label:<52}{ours * ms:>8.2f}ms{theirs * ms:>8.2f}ms{ours / theirs:>8.1f}x")
    print("(ratio = pool / monty: above 1x, Monty is faster. Monty's round trips include CodeMode's MCP proxy.)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--fresh", type=int, default=3, help="fresh interpreters to time (each takes seconds)")
    parser.add_argument("--smallest", action="store_true", help="3 pooled tasks, 1 fresh interpreter")
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.fresh = 3, 1
    ensure_pyodide_cached()
    m = asyncio.run(pooled(args.tasks))
    fresh = fresh_interpreter_per_task(args.fresh)
    ms = 1000
    print(f"{'measure':<52}{'pool':>10}{'fresh':>10}{'ratio':>9}   target")
    print(f"{'per task: acquire + trivial execute (mean)':<52}{m['lease'] * ms:>8.1f}ms{fresh * ms:>8.0f}ms"
          f"{fresh / m['lease']:>8.0f}x   >= 100x, <= 50 ms")
    print(f"{'warm execute (x = 1), median':<52}{m['warm'] * ms:>8.1f}ms")
    print(f"{'bridge per tool call, sandbox <-> host only':<52}{m['bridge'] * ms:>8.2f}ms{'':>27}<= 2 ms")
    print(f"{'MCP tool call in one execute, median round trip':<52}{m['mcp_trip'] * ms:>8.1f}ms")
    print(f"{'  the tool itself (server session, host side)':<52}{m['mcp_tool'] * ms:>8.1f}ms")
    print(f"{'  over the tool (minus the tool, minus an empty exec)':<52}{m['mcp_over'] * ms:>8.2f}ms{'':>27}<= 2 ms")
    print(f"pool: {int(m['created'])} interpreter(s) created, {int(m['restarts'])} restart(s) over "
          f"{args.tasks + 2} leases")
    if importlib.util.find_spec("pydantic_monty") is None:
        print("\nMonty: skipped (pip install 'harness[fastmcp-codemode]')")
        return
    print_monty(asyncio.run(monty(args.tasks)), m)


if __name__ == "__main__":
    main()
