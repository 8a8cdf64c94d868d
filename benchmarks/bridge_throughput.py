"""Large tool results through the sandbox bridge, measured side by side in one run (a printed table; no
assertions).

For each size: one tool call from sandbox code whose result is that many MB of text (the host's dispatcher
returns it at once), the code taking its length; the time is the execution's minus an empty execution's next to
it. Beside it, the floor any bridge to a child process pays: writing the same bytes into a pipe that a child
process (`cat` to /dev/null) drains. The ratio is bridge time over pipe time. Also the same result sent as one
JSON-RPC line instead of in chunks (harness.sandbox.transfer), up to --one-line-max.

Usage: .venv/bin/python benchmarks/bridge_throughput.py [--sizes 1,10,50] [--repeats 3] [--one-line-max 10]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.sandbox import SandboxPool, ensure_pyodide_cached
from harness.sandbox.transfer import ResultTransfer

PRELUDE = 'def dump() -> str:\n    return _harness_call_tool_json("dump", {})\n'
TIMEOUT_S = 300.0


def text_of(megabytes: float) -> str:
    size = int(megabytes * 1_000_000)
    return "abcdefghi\n" * (size // 10) + "x" * (size % 10)


def pipe_seconds(data: bytes) -> float:
    """Writing `data` into a pipe a child process drains, until the child has read it all."""
    started = time.perf_counter()
    done = subprocess.run([shutil.which("cat") or "cat"], input=data, stdout=subprocess.DEVNULL, check=True)
    assert done.returncode == 0
    return time.perf_counter() - started


async def bridge_seconds(pool: SandboxPool, text: str, repeats: int, one_line: bool) -> float | None:
    """The median time one tool call carrying `text` adds to an execution (None: the sandbox died)."""
    times = []
    async with pool.lease(lambda name, arguments: text, prelude=PRELUDE) as sandbox:
        interpreter = sandbox._interpreter
        if one_line:  # the whole reply as one line (the line reader and the bytes path as they are now)
            interpreter._transfer = ResultTransfer(chunk_chars=sys.maxsize)
        try:
            for _ in range(repeats):
                empty = (await sandbox.execute("n = 0", timeout_s=TIMEOUT_S)).duration_s
                result = await sandbox.execute("n = len(dump())\nprint(n)", timeout_s=TIMEOUT_S)
                if result.error is not None:
                    return None
                assert result.stdout.strip() == str(len(text)), result.stdout[:200]
                times.append(result.duration_s - empty)
        finally:
            interpreter._transfer = ResultTransfer()
    return statistics.median(times)


async def measure(sizes: list[float], repeats: int, one_line_max: float) -> list[tuple[float, float, float, float | None]]:
    pool = SandboxPool(size=1)
    await pool.start(1)
    rows = []
    try:
        for megabytes in sizes:
            text = text_of(megabytes)
            chunked = await bridge_seconds(pool, text, repeats, one_line=False)
            pipe = statistics.median(pipe_seconds(text.encode()) for _ in range(repeats))
            one_line = await bridge_seconds(pool, text, 1, one_line=True) if megabytes <= one_line_max else None
            rows.append((megabytes, chunked, pipe, one_line))
    finally:
        await pool.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="result sizes in MB, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--one-line-max", type=float, default=10.0,
                        help="largest size (MB) also sent as one line, without chunks")
    parser.add_argument("--smallest", action="store_true", help="one 2 MB result, once")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    if args.smallest:
        sizes, args.repeats, args.one_line_max = [2.0], 1, 2.0
    ensure_pyodide_cached()
    rows = asyncio.run(measure(sizes, args.repeats, args.one_line_max))
    print(f"{'result':>8}{'bridge':>10}{'MB/s':>9}{'pipe':>10}{'MB/s':>9}{'ratio':>8}{'one line':>11}")
    for megabytes, chunked, pipe, one_line in rows:
        bridge = f"{chunked:>9.2f}s{megabytes / chunked:>9.1f}" if chunked else f"{'died':>10}{'':>9}"
        ratio = f"{chunked / pipe:>7.0f}x" if chunked else f"{'':>8}"
        single = f"{one_line:>10.2f}s" if one_line else f"{'died' if megabytes <= args.one_line_max else '-':>11}"
        print(f"{megabytes:>6g}MB{bridge}{pipe:>9.3f}s{megabytes / pipe:>9.0f}{ratio}{single}")
    print("(bridge: one tool call's result into sandbox code, in chunks; pipe: the same bytes into a child process; "
          "ratio = bridge / pipe; one line: the same result sent as a single JSON-RPC line, without chunks)")


if __name__ == "__main__":
    main()
