"""Tool calls gathered from sandbox code against the same calls made one after another, side by side in one
process (a printed table; no assertions).

One warm sandbox bridged to the crm fixture, `get_customer` for N customers, each call delayed on the host
(`session.call` wrapped with `asyncio.sleep(delay)`); the two cells alternate, `repeats` times each. The gathered
cell awaits `asyncio.gather(...)` of the N calls (one batched request the host runs concurrently); the other calls
them in order.

Usage: .venv/bin/python benchmarks/gathered_calls.py [--calls 5] [--delay 0.2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.mcp.bridge import SessionDispatcher, make_dispatcher
from harness.mcp.servers import ServerSession, open_servers
from harness.sandbox import Sandbox, SandboxPool
from harness.tasks.task import ServerRef


def cells(count: int) -> dict[str, str]:
    """The two cells for `count` customers: gathered, and one call after another."""
    calls = ", ".join(f"get_customer(customer_id='C-{i:04d}')" for i in range(1, count + 1))
    return {"gathered": f"import asyncio\nr = await asyncio.gather({calls})\nprint(len(r))",
            "sequential": f"r = [{calls}]\nprint(len(r))"}


@asynccontextmanager
async def delayed_crm_lease(pool: SandboxPool, delay_s: float
                            ) -> AsyncIterator[tuple[Sandbox, ServerSession, SessionDispatcher]]:
    """A lease bridged to a crm session whose every call takes `delay_s` longer (also used by the tests)."""
    async with open_servers((ServerRef("crm"),)) as session:
        call = session.call

        async def delayed(*args, **kwargs):
            await asyncio.sleep(delay_s)
            return await call(*args, **kwargs)

        session.call = delayed
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        async with pool.lease(dispatcher, prelude=session.toolbox.sandbox_prelude()) as sandbox:
            yield sandbox, session, dispatcher


async def measure(count: int, delay_s: float, repeats: int) -> dict[str, list[float]]:
    pool = SandboxPool(1)
    await pool.start()
    times: dict[str, list[float]] = {name: [] for name in cells(count)}
    try:
        async with delayed_crm_lease(pool, delay_s) as (sandbox, _session, _dispatcher):
            for _ in range(repeats):
                for name, code in cells(count).items():
                    started = time.perf_counter()
                    result = await sandbox.execute(code)
                    times[name].append(time.perf_counter() - started)
                    if result.error or result.stdout.strip() != str(count):
                        raise SystemExit(f"{name}: {result.error or result.stdout}")
    finally:
        await pool.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds added to every call on the host")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smallest", action="store_true", help="two calls, 0.05 s each, once")
    args = parser.parse_args()
    if args.smallest:
        args.calls, args.delay, args.repeats = 2, 0.05, 1
    times = asyncio.run(measure(args.calls, args.delay, args.repeats))
    print(f"{args.calls} calls of get_customer, {args.delay:g} s added to each, {args.repeats} runs of each cell")
    print("| cell | median | min | max |\n|---|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.3f} s | {min(values):.3f} s | {max(values):.3f} s |")


if __name__ == "__main__":
    main()
