"""Conversations on the embedded model: one sequence per run against one per speaker, side by side in one run.

A conversation has two speakers on one engine when the user model is the agent's own: with one sequence per run
they take turns in it, so each call finds the other speaker's context there and evaluates its own prompt again
(from the longest saved prefix at best); with a sequence each (what the runner asks for:
harness.run.runner.engine_calls), each call extends its own context. Each setting runs in its own process (a
fresh engine and an empty prefix cache of its own), the `conversations` suite (or --tasks of it) through --arms,
the LM response cache off. Prints per setting: wall time and its ratio, prompt tokens evaluated (the agent's and
the user's), LM time, passes, and how many runs' answers differ from the one-sequence setting (greedy decoding:
the same conversation unless batching's floating point flips a close choice).
Usage: python benchmarks/conversation_contexts.py [--tasks a,b] [--arms direct,codemode] [--runs 1] [--smallest]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import child_result


def run_setting(sequences_per_run: int, tasks: list[str], arms: list[str], runs: int, out: Path) -> dict:
    """One setting, in this process: what the parent prints."""
    import harness
    from harness.models import resolve_model
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.registry import load_suite
    from harness.trace.trajectory import trajectory_from_json

    config = RunConfig(suite=load_suite("conversations"), model="local", arms=tuple(arms), task_ids=tuple(tasks),
                       out_dir=out, run_id=f"s{sequences_per_run}", max_concurrency=runs, cache="off")
    provider = resolve_model("local", cache="off", concurrency=runs * sequences_per_run)  # loads the engine
    runner = Runner(config, provider=provider)
    started = time.perf_counter()
    summary = asyncio.run(runner.run())
    wall = time.perf_counter() - started
    evaluated = {"agent": 0, "user": 0}
    lm_seconds = 0.0
    with open(out / config.suite.name / f"{config.run_id}.trajectories.jsonl", encoding="utf-8") as lines:
        for line in lines:  # one trajectory a run, each written once (a fresh run id)
            for call in trajectory_from_json(json.loads(line)).lm_calls:
                evaluated[call.role] = evaluated.get(call.role, 0) + (call.prompt_tokens or 0) - call.reused_prompt_tokens
                lm_seconds += call.latency_s
    return {"sequences_per_run": sequences_per_run, "wall": wall, "harness": harness.__file__,
            "evaluated": evaluated, "lm_seconds": lm_seconds,
            "outcomes": {f"{r.task_id}/{r.arm}": [bool(r.success), r.answer, r.user_turns] for r in summary.records}}


def child(sequences_per_run: int, args: argparse.Namespace, out: Path) -> dict:
    env = {**os.environ, "HARNESS_PREFIX_CACHE_DIR": str(out / "prefix-states")}
    command = [sys.executable, __file__, "--child", str(sequences_per_run), "--tasks", args.tasks, "--arms",
               args.arms, "--runs", str(args.runs), "--out", str(out)]
    return child_result(command, env, f"setting {sequences_per_run}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="support-country-of-account,support-close-account,support-close-ticket,"
                                           "support-raise-priority")
    parser.add_argument("--arms", default="direct,codemode")
    parser.add_argument("--runs", type=int, default=1, help="runs at once (--max-concurrency)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--smallest", action="store_true", help="one task through direct")
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.arms = "support-country-of-account", "direct"
    if args.child:
        print(json.dumps(run_setting(args.child, args.tasks.split(","), args.arms.split(","), args.runs, args.out)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        results = [child(n, args, Path(tmp) / f"s{n}") for n in (1, 2)]
    base = results[0]
    print(f"harness: {base['harness']}; conversations tasks {args.tasks} x {args.arms}, {args.runs} run(s) at once, "
          f"the embedded model as agent and user, cold prefix cache, no response cache")
    print(f"{'sequences':>22} {'wall s':>7} {'ratio':>6} {'agent evaluated':>15} {'user evaluated':>14} "
          f"{'LM s':>7} {'passed':>6} {'user turns':>10} {'answers differ':>14}")
    for r in results:
        outcomes = r["outcomes"]
        differ = sum(outcomes[k][1] != base["outcomes"][k][1] for k in base["outcomes"] if k in outcomes)
        label = "one per run" if r["sequences_per_run"] == 1 else "one per speaker"
        print(f"{label:>22} {r['wall']:>7.1f} {base['wall'] / r['wall']:>5.2f}x {r['evaluated'].get('agent', 0):>15,} "
              f"{r['evaluated'].get('user', 0):>14,} {r['lm_seconds']:>7.1f} "
              f"{sum(v[0] for v in outcomes.values()):>3}/{len(outcomes):<2} {sum(v[2] for v in outcomes.values()):>10} "
              f"{differ:>14}")


if __name__ == "__main__":
    main()
