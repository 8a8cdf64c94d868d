"""Sandbox costs, measured side by side in one run.

1. Per-task acquisition + a trivial execution: a lease from the warm pool vs a fresh dspy.PythonInterpreter
   per task (targets: >= 100x faster, <= 50 ms amortized).
2. Warm execution latency of a trivial statement.
3. One bridged MCP tool call (sandbox -> host -> in-memory MCP server -> back) over the tool's own time
   measured on the host (target: <= 2 ms of bridge overhead).

Usage: .venv/bin/python benchmarks/sandbox.py [--tasks 20] [--fresh 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.sandbox import SandboxPool, ensure_pyodide_cached  # noqa: E402
from harness.sandbox.interpreter import _new_python_interpreter  # noqa: E402
from harness.servers import open_servers  # noqa: E402
from harness.suite import ServerRef  # noqa: E402
from harness.tool_bridge import make_dispatcher  # noqa: E402


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


async def pooled(tasks: int) -> tuple[float, float, float, float]:
    pool = SandboxPool(size=1)
    await pool.start(1)
    durations = []
    for _ in range(tasks):
        started = time.perf_counter()
        async with pool.lease(lambda name, arguments: None) as sandbox:
            await sandbox.execute("print(1)")
        durations.append(time.perf_counter() - started)
    async with pool.lease(lambda name, arguments: None) as sandbox:
        warm = []
        for _ in range(50):
            warm.append((await sandbox.execute("x = 1")).duration_s)
    async with open_servers((ServerRef("crm"),)) as session:
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        async with pool.lease(dispatcher, prelude=session.toolbox.sandbox_prelude()) as sandbox:
            await sandbox.execute("get_customer(customer_id='C-0001')")
            bridged = []
            for _ in range(50):
                before = len(session.calls)
                result = await sandbox.execute("get_customer(customer_id='C-0001')")
                tool_time = session.calls[before].duration_s
                bridged.append((result.duration_s, tool_time))
    await pool.close()
    round_trip = statistics.median(d for d, _ in bridged)
    tool_own = statistics.median(t for _, t in bridged)
    return statistics.mean(durations), statistics.median(warm), round_trip, tool_own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--fresh", type=int, default=3, help="fresh interpreters to time (each takes seconds)")
    args = parser.parse_args()
    ensure_pyodide_cached()
    lease, warm, round_trip, tool_own = asyncio.run(pooled(args.tasks))
    fresh = fresh_interpreter_per_task(args.fresh)
    overhead = round_trip - tool_own - warm
    print(f"{'per task: acquire + trivial execute':<44}{'pool':>12}{'fresh':>12}{'ratio':>10}")
    print(f"{'':<44}{lease * 1000:>10.1f}ms{fresh * 1000:>10.0f}ms{fresh / lease:>9.0f}x  (target >= 100x, <= 50 ms)")
    print(f"{'warm execute (x = 1), median':<44}{warm * 1000:>10.1f}ms")
    print(f"{'bridged MCP tool call, median round trip':<44}{round_trip * 1000:>10.1f}ms")
    print(f"{'  of which the tool itself (host side)':<44}{tool_own * 1000:>10.1f}ms")
    print(f"{'  bridge overhead (minus tool, minus exec)':<44}{overhead * 1000:>10.1f}ms  (target <= 2 ms)")


if __name__ == "__main__":
    main()
