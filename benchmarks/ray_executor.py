"""Ray's overhead on one machine: 1,000 trivial runs through the local executor and through Ray, side by side.

Each executor runs in its own child process (so each peak RSS is its own): a 20-run warm-up, then the timed runs
with a zero-latency scripted model at the same --max-concurrency. Prints, per executor: rows recorded, wall time,
runs/s (whole run, and steady: first row to last, i.e. without Ray's worker start), peak RSS of the driver, of
the workers and of Ray's own processes; then the ratio local/Ray.
Usage: .venv/bin/python benchmarks/ray_executor.py [--runs 1000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import benchmarks._common as common
from harness.run.executors import Executor
from harness.run.records import read_results
from harness.run.runner import RunConfig


def peak_rss_mb(pid: int) -> float:
    """Peak resident set size of a live process (VmHWM), 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def descendants(root: int) -> set[int]:
    """Every process below `root` (Ray's GCS, raylet, workers... when this process started the cluster)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


async def timed_run(executor: Executor, runs: int, concurrency: int, out: Path, run_id: str) -> dict:
    config = RunConfig(suite=common.trivial_suite(), model="scripted:trivial", arms=("direct",), epochs=runs,
                       out_dir=out, run_id=run_id, max_concurrency=concurrency)
    runner = executor.runner(config, provider_factory=common.trivial_provider)
    stamps: list[float] = []
    workers: dict[int, float] = {}

    def on_record(record) -> None:
        stamps.append(time.perf_counter())
        if len(stamps) % 100 == 0 or len(stamps) == runs:  # workers' peaks, read while they are alive
            for pid in getattr(runner, "worker_pids", []):
                workers[pid] = max(workers.get(pid, 0.0), peak_rss_mb(pid))
            if executor.name == "ray":
                others = descendants(os.getpid()) - set(workers)
                workers[-1] = max(workers.get(-1, 0.0), sum(peak_rss_mb(pid) for pid in others))

    started = time.perf_counter()
    summary = await runner.run(on_record=on_record)
    seconds = time.perf_counter() - started
    frame = read_results([summary.path])
    return {"rows": len(frame), "complete": bool(len(frame) == runs and frame.sample_id.is_unique
                                                 and frame.success.all()),
            "seconds": seconds, "steady": (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0,
            "workers_mb": sum(v for k, v in workers.items() if k != -1), "workers": len(workers) - (-1 in workers),
            "ray_system_mb": workers.get(-1, 0.0)}


def measure(name: str, runs: int, concurrency: int) -> dict:
    """One executor, in this (child) process."""
    executor = Executor(name)
    start_s = 0.0
    if name == "ray":
        import ray

        ray.cloudpickle.register_pickle_by_value(common)  # the workers need not find benchmarks/ on their path
        began = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        start_s = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(timed_run(executor, 20, concurrency, Path(tmp), "warmup"))
        result = asyncio.run(timed_run(executor, runs, concurrency, Path(tmp), "bench"))
    result["cluster_start_s"] = start_s
    result["driver_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--only", choices=["local", "ray"], help=argparse.SUPPRESS)  # the child's job
    parser.add_argument("--smallest", action="store_true", help="10 runs each (seconds, plus Ray's start)")
    args = parser.parse_args()
    if args.smallest and not args.only:
        args.runs, args.concurrency = 10, 2
    if args.only:
        print(json.dumps(measure(args.only, args.runs, args.concurrency)))
        return
    results = {}
    for name in ("local", "ray"):
        child = subprocess.run([sys.executable, __file__, "--only", name, "--runs", str(args.runs), "--concurrency",
                                str(args.concurrency)], capture_output=True, text=True, check=False)
        if child.returncode != 0:
            sys.exit(f"{name} failed:\n{child.stderr[-3000:]}")
        results[name] = json.loads(child.stdout.strip().splitlines()[-1])
    local, on_ray = results["local"], results["ray"]
    rows = [
        ("runs recorded", lambda r: f"{r['rows']} / {args.runs} ({'all' if r['complete'] else 'MISSING'})"),
        ("wall time (s)", lambda r: f"{r['seconds']:.1f}"),
        ("runs per second", lambda r: f"{args.runs / r['seconds']:.1f}"),
        ("steady runs/s (1st-last row)", lambda r: f"{r['steady']:.1f}"),
        ("cluster start (s)", lambda r: f"{r['cluster_start_s']:.1f}"),
        ("peak RSS driver (MB)", lambda r: f"{r['driver_mb']:.0f}"),
        ("peak RSS workers (MB)", lambda r: f"{r['workers_mb']:.0f} ({r['workers']} worker(s))"),
        ("peak RSS Ray system (MB)", lambda r: f"{r['ray_system_mb']:.0f}"),
    ]
    print(f"{args.runs} trivial runs, --max-concurrency {args.concurrency}, {os.cpu_count()} CPU(s)")
    print(f"{'':<30}{'local':>22}{'ray':>22}")
    for label, show in rows:
        print(f"{label:<30}{show(local):>22}{show(on_ray):>22}")
    with_start = on_ray["seconds"] + on_ray["cluster_start_s"]
    print(f"{'ratio ray/local, runs/s':<30}{local['seconds'] / on_ray['seconds']:>22.2f}  (workers' start included)")
    print(f"{'  with the cluster start':<30}{local['seconds'] / with_start:>22.2f}  (ray.init of a local cluster)")
    print(f"{'  steady':<30}{on_ray['steady'] / local['steady']:>22.2f}  (first row to last)")

if __name__ == "__main__":
    main()
