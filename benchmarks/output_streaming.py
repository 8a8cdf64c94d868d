"""What streaming code's output to the host as it is written costs (harness/sandbox/guest_output.py: each line a
notification on the Deno process's stdout, so code cut short keeps its output so far), measured side by side in one
process with streaming on and off (SandboxPool's `stream_output`, switched on one warm interpreter), in alternating
order so drift in the machine's load falls on both:

1. a normal suite: smoke replayed by `scripted:reference` through the sandbox's arms (codemode, codemode-discover,
   hybrid), its wall time and its runs' summed sandbox time;
2. the worst case per line: one execution printing many short lines (one notification each), per execution.

Usage: .venv/bin/python benchmarks/output_streaming.py [--epochs 3] [--rounds 3] [--lines 5000]
       .venv/bin/python benchmarks/output_streaming.py --smallest   (1 epoch, 1 round, 500 lines: under a minute)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.sandbox import SandboxPool
from harness.tasks.suite import load_suite
from harness.trace.events import CodeEvent

ARMS = ("codemode", "codemode-discover", "hybrid")
PRINTS_PER_ROUND = 5  # executions of the printing program per setting and round


@dataclass(frozen=True)
class SuiteTiming:
    seconds: float  # wall time
    sandbox_s: float  # the rows' summed sandbox time (code executions less their tool calls)
    runs: int
    executions: int  # code events in the runs' transcripts
    lines: int  # lines those executions printed


async def suite_once(pool: SandboxPool, epochs: int, folder: Path, run_id: str) -> SuiteTiming:
    """The smoke suite through ARMS on `pool`: its times, and how much code it ran and printed."""
    config = RunConfig(suite=load_suite("smoke"), model="scripted:reference", arms=ARMS, epochs=epochs,
                       out_dir=folder, run_id=run_id)
    started = time.perf_counter()
    summary = await Runner(config, pool=pool).run()
    seconds = time.perf_counter() - started
    rows = read_results([summary.path])
    code = [event.execution for sample in rows["sample_id"]
            for event in read_trajectory(summary.path, sample).of(CodeEvent)]
    return SuiteTiming(seconds, float(rows["sandbox_time_s"].sum()), len(rows), len(code),
                       sum(run.stdout.count("\n") for run in code))


async def printing_once(pool: SandboxPool, lines: int) -> float:
    """Seconds per execution of a program printing `lines` short lines (the mean of PRINTS_PER_ROUND)."""
    async with pool.lease(lambda name, arguments: {}) as sandbox:
        started = time.perf_counter()
        for _ in range(PRINTS_PER_ROUND):
            result = await sandbox.execute(f"for i in range({lines}):\n    print('line', i)")
            assert result.ok and result.stdout.count("\n") == lines, result.error
        return (time.perf_counter() - started) / PRINTS_PER_ROUND


async def measure(epochs: int, rounds: int, lines: int) -> None:
    pool = SandboxPool(size=1)  # one interpreter for both settings: two processes differ by more than streaming
    try:
        await pool.start(1)
        suite: dict[bool, list[SuiteTiming]] = {True: [], False: []}
        printing: dict[bool, list[float]] = {True: [], False: []}
        with tempfile.TemporaryDirectory() as tmp:
            await suite_once(pool, 1, Path(tmp), "warmup")  # imports, the first server builds: outside timing
            for round_ in range(rounds):
                for stream in (True, False) if round_ % 2 == 0 else (False, True):
                    pool.stream_output = stream  # read by each execution
                    suite[stream].append(await suite_once(pool, epochs, Path(tmp), f"r{round_}-{stream}"))
                    printing[stream].append(await printing_once(pool, lines))
    finally:
        await pool.close()
    wall = {s: statistics.median(t.seconds for t in suite[s]) for s in suite}
    sandbox = {s: statistics.median(t.sandbox_s for t in suite[s]) for s in suite}
    per_print = {s: statistics.median(printing[s]) for s in printing}
    first = suite[True][0]
    print(f"{'suite runs (smoke x ' + ', '.join(ARMS) + ')':<58}{first.runs:>10}  ({epochs} epoch(s), {rounds} "
          "round(s))")
    print(f"{'  code executions, lines they printed':<58}{first.executions:>10}{first.lines:>10}")
    print(f"{'suite wall time, streaming on (s)':<58}{wall[True]:>10.2f}")
    print(f"{'suite wall time, streaming off (s)':<58}{wall[False]:>10.2f}")
    print(f"{'on / off':<58}{wall[True] / wall[False]:>10.3f}")
    print(f"{'suite sandbox time, on (s)':<58}{sandbox[True]:>10.3f}")
    print(f"{'suite sandbox time, off (s)':<58}{sandbox[False]:>10.3f}")
    print(f"{'on / off':<58}{sandbox[True] / sandbox[False]:>10.3f}")
    print(f"{f'one execution printing {lines:,} lines, on (ms)':<58}{per_print[True] * 1000:>10.1f}")
    print(f"{f'one execution printing {lines:,} lines, off (ms)':<58}{per_print[False] * 1000:>10.1f}")
    print(f"{'on / off':<58}{per_print[True] / per_print[False]:>10.3f}")
    print(f"{'streaming cost per line printed (us)':<58}"
          f"{(per_print[True] - per_print[False]) / lines * 1e6:>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--smallest", action="store_true", help="1 epoch, 1 round, 500 lines")
    args = parser.parse_args()
    if args.smallest:
        args.epochs, args.rounds, args.lines = 1, 1, 500
    asyncio.run(measure(args.epochs, args.rounds, args.lines))


if __name__ == "__main__":
    main()
