"""What each framework's own machinery costs per run, beside `direct` (a printed table; no assertions).

One smoke task (one lookup, a short answer) on a zero-latency scripted model replaying its reference through each
arm's own protocol, `runs` epochs per arm in one process (the first run of a framework also pays its import, shown
apart: measured in a child process). Per arm, medians per run: wall time, time in LM calls, in tool calls, and the
rest (`overhead_s`: for a framework, its MCP client connecting and listing tools, building its prompts and parsing
replies, plus the endpoints' few milliseconds a call; for `direct`, the harness's own loop), and the tokens the
run's row counts (what the framework's prompts weigh).

Usage: .venv/bin/python benchmarks/bridges.py [--runs 10] [--smallest]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import trivial_provider, trivial_suite
from harness.agents.arms import get_arm
from harness.env import configure_environment
from harness.errors import UserError
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner

ARMS = ("direct", "smolagents-code", "smolagents-tools", "pydantic-ai", "openai-agents")
BASELINE = "from harness.agents.bridges import mcp_sdk1; mcp_sdk1.provide()"  # what every import below starts from
IMPORTS = {"smolagents-code": "import smolagents, mcpadapt.core", "smolagents-tools": "import smolagents, mcpadapt.core",
           "pydantic-ai": "import pydantic_ai, pydantic_ai.mcp, pydantic_ai.models.openai",
           "openai-agents": "import agents, agents.mcp"}


def import_s(arm: str) -> float:
    """Seconds a fresh interpreter takes to import the framework (beyond starting Python and the harness's agents
    package), median of 3."""
    statement = IMPORTS.get(arm)
    if statement is None:
        return 0.0

    def once(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"{BASELINE}\n{code}"], check=True, capture_output=True)
        return time.perf_counter() - started

    times = sorted(once(statement) - once("pass") for _ in range(3))
    return times[1]


def measure(runs: int, out: Path) -> list[dict[str, object]]:
    arms = tuple(arm for arm in ARMS if _available(arm))
    config = RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=arms, epochs=runs, out_dir=out,
                       run_id="bridges", cache="off")
    summary = asyncio.run(Runner(config, provider=trivial_provider()).run())
    frame = read_results([summary.path])
    rows = []
    for arm in arms:
        mine = frame[frame.arm == arm]
        later = mine[mine.epoch > mine.epoch.min()] if len(mine) > 1 else mine  # the first run pays the imports
        rows.append({"arm": arm, "success": f"{mine.success.mean():.0%}", "wall_ms": later.latency_s.median() * 1e3,
                     "lm_ms": later.lm_time_s.median() * 1e3, "tool_ms": later.tool_time_s.median() * 1e3,
                     "overhead_ms": later.overhead_s.median() * 1e3, "tokens": int(mine.total_tokens.median()),
                     "import_s": import_s(arm)})
    return rows


def _available(arm: str) -> bool:
    try:
        get_arm(arm).check_available()
    except UserError as exc:  # a framework not installed: its row is left out, and said so
        print(f"skipped {arm}: {exc}")
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="runs (epochs) per arm")
    parser.add_argument("--smallest", action="store_true", help="two runs per arm")
    args = parser.parse_args()
    configure_environment()
    with tempfile.TemporaryDirectory() as out:
        rows = measure(2 if args.smallest else args.runs, Path(out))
    direct = next((row for row in rows if row["arm"] == "direct"), None)
    print("| arm | success | wall ms | LM ms | tool ms | overhead ms | vs direct | tokens | import s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        extra = f"{row['overhead_ms'] - direct['overhead_ms']:+.0f}" if direct else "-"
        print(f"| {row['arm']} | {row['success']} | {row['wall_ms']:.0f} | {row['lm_ms']:.0f} | {row['tool_ms']:.0f} "
              f"| {row['overhead_ms']:.0f} | {extra} | {row['tokens']:,} | {row['import_s']:.2f} |")


if __name__ == "__main__":
    main()
