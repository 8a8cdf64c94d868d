"""The embedded model's prefix cache and lazy grammar: the same suite, old way and new way, side by side in one
benchmark run (a printed table; no assertions).

Each way runs in a child process of its own (a fresh engine, so none warms another), one after the other:
- old: HARNESS_PREFIX_CACHE=0 HARNESS_LAZY_GRAMMAR=0 (every run evaluates its whole first prompt; full grammar);
- new: the defaults (the shared prefix restored from the cache; the grammar checked token by token), with an
  empty folder of saved prefixes: the first process on a machine, which evaluates each arm's prefix once;
- later: the defaults again on the folder `new` left: a later process, which restores every prefix from disk.
Both use `--no-cache` (no response cache) and greedy decoding. Printed per way: prompt tokens evaluated per
run, mean wall time per run, the suite's wall time; the ratios new/old (targets: evaluated prompt tokens at most
25%, mean wall per run at most a third); and whether the rows agree apart from timings and reuse counts
(answer, success, turns, tool calls, completion tokens), naming every run that differs.

Usage: .venv/bin/python benchmarks/prefix_cache.py [--suite smoke] [--arms direct,codemode] [--model local]
       --smallest: one task and one arm on the scripted model (checks that this script works, not the cache)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WAYS = {"old": {"HARNESS_PREFIX_CACHE": "0", "HARNESS_LAZY_GRAMMAR": "0"},
        "new": {"HARNESS_PREFIX_CACHE": "1", "HARNESS_LAZY_GRAMMAR": "1"},
        "later": {"HARNESS_PREFIX_CACHE": "1", "HARNESS_LAZY_GRAMMAR": "1"}}
COMPARED = ["answer", "success", "turns", "tool_calls", "completion_tokens", "error_type"]


def run_one_way(args: argparse.Namespace) -> None:
    """The child's job: run the suite once, print where its rows are and how long it took."""
    from harness.env import configure_environment
    from harness.run.executors import run_suite
    from harness.run.runner import RunConfig
    from harness.tasks.suite import load_suite

    configure_environment()
    config = RunConfig(suite=load_suite(args.suite), model=args.model, arms=tuple(args.arms.split(",")),
                       task_ids=tuple(args.tasks.split(",")) if args.tasks else (), out_dir=args.out,
                       run_id=args.only, cache="off")
    started = time.perf_counter()
    path = run_suite(config).path
    print(json.dumps({"path": str(path), "wall_s": time.perf_counter() - started}))


def launch(way: str, args: argparse.Namespace, out: Path, states: Path) -> dict:
    command = [sys.executable, __file__, "--only", way, "--suite", args.suite, "--arms", args.arms,
               "--model", args.model, "--out", str(out)] + (["--tasks", args.tasks] if args.tasks else [])
    env = {**os.environ, **WAYS[way], "HARNESS_PREFIX_CACHE_DIR": str(states)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {way} run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="smoke")
    parser.add_argument("--arms", default="direct,codemode")
    parser.add_argument("--model", default="local")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--smallest", action="store_true", help="one task, one arm, the scripted model")
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=sorted(WAYS), help=argparse.SUPPRESS)  # the child's job
    args = parser.parse_args()
    if args.only:
        return run_one_way(args)
    if args.smallest:
        args.model, args.arms, args.tasks = "scripted:reference", "direct", "customer-country"

    from harness.run.records import read_results

    with tempfile.TemporaryDirectory() as tmp:
        runs = {way: launch(way, args, Path(tmp) / way, Path(tmp) / "prefix-states") for way in WAYS}
        frames = {way: read_results([Path(run["path"])]).set_index("sample_id") for way, run in runs.items()}
    print(f"{args.suite} on {args.model}, arms {args.arms}: {len(frames['new'])} runs per way")
    print(f"\n{'':<36}{'old':>10}{'new':>10}{'later':>10}{'new/old':>9}{'later/old':>10}")
    figures = {}
    for way, frame in frames.items():
        evaluated = frame.prompt_tokens - frame.reused_prompt_tokens
        figures[way] = {"evaluated prompt tokens per run": evaluated.mean(),
                        "prompt tokens per run": frame.prompt_tokens.mean(),
                        "mean wall per run (s)": frame.latency_s.mean(),
                        "suite wall (s)": runs[way]["wall_s"], "passed": frame.success.sum()}
    for name in figures["old"]:
        old, new, later = (figures[way][name] for way in WAYS)
        ratios = "".join(f"{value / old:>{width}.2f}" if old else f"{'-':>{width}}"
                         for value, width in ((new, 9), (later, 10)))
        print(f"{name:<36}{old:>10.1f}{new:>10.1f}{later:>10.1f}{ratios}")
    print("targets: evaluated prompt tokens per run <= 0.25; mean wall per run <= 0.33")
    old = frames["old"][COMPARED]
    for way in ("new", "later"):
        other = frames[way].loc[old.index, COMPARED]
        differing = [sid for sid in old.index if not old.loc[sid].equals(other.loc[sid])]
        print(f"\n{way}: rows equal to old apart from timings and reuse: {len(old) - len(differing)}/{len(old)}")
        for sid in differing:
            print(f"  differs: {sid}: old {old.loc[sid].to_dict()} / {way} {other.loc[sid].to_dict()}")


if __name__ == "__main__":
    main()
