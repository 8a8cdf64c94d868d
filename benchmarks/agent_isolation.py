"""What running each Python agent's run in a process of its own costs against running it in the harness's process,
side by side (a printed table; no assertions), and what a suite of misbehaving agents does to the harness.

Per-run cost: the trivial smoke task (one chat completion through the run's endpoint, on a zero-latency scripted
model) run `runs` times by an agent from outside (benchmarks/_isolation_agent.py) under `--agent-isolation process`
and `in-process`, each setting in a child process of its own (its own peak memory), alternating `repeats` times.
Shown: milliseconds per run (median over repeats), the zygote's start (once per agent per harness process), the
harness process's peak RSS, and the largest agent process's peak RSS (its zygote's pages shared copy-on-write
counted in full), with the ratio of process to in-process per run.

Faults (`--faults`): `harness run` on the smoke task with the built-in direct arm beside agents that call
sys.exit, os._exit, change directory, hang past --timeout, leave a process behind, return a circular structure,
send malformed requests, pass --agent-memory, and a command whose child keeps stdout open, for `epochs` epochs:
its exit code, wall time, rows by error type, and the processes left behind.

Usage: .venv/bin/python benchmarks/agent_isolation.py [--runs 40] [--repeats 3] [--faults --epochs 10] [--smallest]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENT = "agent:benchmarks._isolation_agent:one_completion"
FAULTS = ("exits", "hard_exit", "moves", "hangs", "leaves_a_process", "circular", "bad_request", "greedy")
COMMAND = "cmd:sh -c 'sleep 3600 & echo IN'"


def one_setting(isolation: str, runs: int) -> dict:
    """In this (child) process: `runs` runs of the agent under `isolation`, timed after a warm-up run."""
    from benchmarks._common import trivial_provider, trivial_suite
    from harness.agents.arms import get_arm
    from harness.agents.isolation.pool import close_zygotes
    from harness.run.runner import RunConfig, Runner

    started = time.perf_counter()
    get_arm(AGENT)  # the zygote starts here (its module imported once)
    zygote_ms = (time.perf_counter() - started) * 1000
    with tempfile.TemporaryDirectory() as out:
        def config(epochs: int, run_id: str) -> RunConfig:
            return RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=(AGENT,), epochs=epochs,
                             out_dir=Path(out), run_id=run_id, agent_isolation=isolation, cache=False)

        asyncio.run(Runner(config(1, "warm"), provider=trivial_provider()).run())
        started = time.perf_counter()
        asyncio.run(Runner(config(runs, "timed"), provider=trivial_provider()).run())
        per_run_ms = (time.perf_counter() - started) * 1000 / runs
    close_zygotes()  # waited for: its peak (and its children's) joins RUSAGE_CHILDREN
    return {"per_run_ms": per_run_ms, "zygote_ms": zygote_ms,
            "harness_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "agent_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def per_run_table(runs: int, repeats: int) -> None:
    from benchmarks._common import child_result

    results: dict[str, list[dict]] = {"process": [], "in-process": []}
    for _ in range(repeats):
        for isolation, cells in results.items():
            cells.append(child_result(
                [sys.executable, __file__, "--child", isolation, "--runs", str(runs)],
                {**os.environ, "PYTHONPATH": str(ROOT)}, f"{isolation} x{runs}"))
    print(f"{runs} runs of one chat completion each, scripted model, median of {repeats} (one child per cell)")
    print(f"{'isolation':<12} {'ms/run':>8} {'zygote ms':>10} {'harness peak MB':>16} {'agent peak MB':>14}")
    medians = {}
    for isolation, cells in results.items():
        median = {key: statistics.median(cell[key] for cell in cells) for key in cells[0]}
        medians[isolation] = median
        agent = f"{median['agent_peak_mb']:.0f}" if isolation == "process" else "(in harness)"
        print(f"{isolation:<12} {median['per_run_ms']:>8.1f} {median['zygote_ms']:>10.0f} "
              f"{median['harness_peak_mb']:>16.0f} {agent:>14}")
    ratio = medians["process"]["per_run_ms"] / medians["in-process"]["per_run_ms"]
    extra = medians["process"]["per_run_ms"] - medians["in-process"]["per_run_ms"]
    print(f"process / in-process per run: {ratio:.2f}x ({extra:+.1f} ms a run)")


def running(pid: int) -> bool:
    """Whether a process is still there (a zombie waiting to be reaped is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def faults_table(epochs: int) -> None:
    """`harness run` with every kind of faulty agent for `epochs` epochs: exit code, time, rows, processes left."""
    arms = ",".join(["direct", *(f"agent:tests.agents.faulty_agents:{name}" for name in FAULTS), COMMAND])
    with tempfile.TemporaryDirectory() as folder:
        pids = Path(folder) / "pids"
        pids.mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_TEST_PIDS": str(pids), "COLUMNS": "200"}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "harness", "run", "--suite", "smoke", "--tasks",
                               "customer-country", "--model", "scripted:reference", "--arms", arms, "--epochs",
                               str(epochs), "--out", "results", "--run-id", "faults", "--timeout", "5",
                               "--agent-memory", "400", "--max-concurrency", "4"],
                              cwd=folder, env=env, capture_output=True, text=True, check=False)
        took = time.perf_counter() - started
        from harness.run.records import read_results

        path = Path(folder) / "results" / "smoke" / "faults.parquet"
        frame = read_results([path]) if path.exists() else None
        rows = len(frame) if frame is not None else 0
        kinds = Counter(frame.error_type.replace("", "(none)")) if frame is not None else Counter()
        left = sum(running(int(p.name.rpartition("-")[2])) for p in pids.iterdir())
        tracebacks = (done.stdout + done.stderr).count("Traceback")
    print(f"harness run: {len(FAULTS) + 2} arms x {epochs} epochs, --timeout 5, --max-concurrency 4")
    print(json.dumps({"exit_code": done.returncode, "wall_s": round(took, 1), "rows": rows,
                      "rows_by_error_type": dict(sorted(kinds.items())), "agent_processes_left": left,
                      "tracebacks_on_terminal": tracebacks}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--faults", action="store_true", help="run the suite of faulty agents instead")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--smallest", action="store_true", help="3 runs, 1 repeat (and 1 epoch with --faults)")
    parser.add_argument("--child", choices=("process", "in-process"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_setting(args.child, args.runs)))
    elif args.faults:
        faults_table(1 if args.smallest else args.epochs)
    else:
        per_run_table(3 if args.smallest else args.runs, 1 if args.smallest else args.repeats)


if __name__ == "__main__":
    main()
