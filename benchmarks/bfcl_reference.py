"""BFCL's ground truth replayed through the harness's arms and scored by BFCL's own checker: `python
benchmarks/bfcl_reference.py [--category multi_turn_base] [--limit N] [--arms direct,codemode]` (`--smallest`: two
entries of base, direct only).

Each task's reference is BFCL's ground truth per turn (harness.adapters.bfcl: UserScenario.references), and the run
is `scripted:reference`: each turn's calls are traced in the sandbox, then replayed in their turn through each arm's
own replay protocol (harness.agents.turn_reference), on the adapter's MCP server over fresh BFCL instances, with the
scripted user giving the turns (miss_func's held-back functions offered at theirs); the `bfcl` scorer hands the
executed calls to BFCL's `multi_turn_checker`. Every run should be valid: a failure is a bug of the adapter (or a
ground truth the harness cannot replay), and is printed with the checker's reason.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness.adapters  # noqa: E402,F401  (registers the bfcl adapter)
from harness.agents.scaffold import all_presets  # noqa: E402
from harness.run.records import read_results  # noqa: E402
from harness.run.runner import RunConfig, Runner  # noqa: E402
from harness.tasks.registry import load_suite  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", default="installed")
    parser.add_argument("--category", default="")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--arms", default="direct,codemode")
    parser.add_argument("--tasks", default="", help="comma-separated entry ids (instead of --limit)")
    parser.add_argument("--keep", type=Path, help="keep the results (rows and trajectories) in this folder")
    parser.add_argument("--smallest", action="store_true")
    args = parser.parse_args()
    if args.smallest:
        args.category, args.limit, args.arms = args.category or "multi_turn_base", 2, "direct"
    spec = f"bfcl:{args.package}" + (f"#{args.category}" if args.category else "")
    suite = load_suite(spec)
    if args.limit:  # the first N entries of each category
        counts: Counter[str] = Counter()
        kept = [t for t in suite.tasks if (counts.update([t.category]) or counts[t.category] <= args.limit)]
        suite = replace(suite, tasks=tuple(kept))
    if args.tasks:
        wanted = set(args.tasks.split(","))
        suite = replace(suite, tasks=tuple(t for t in suite.tasks if t.id in wanted))
    arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
    with tempfile.TemporaryDirectory() as temporary:
        out = args.keep or Path(temporary)
        config = RunConfig(suite=suite, model="scripted:reference", arms=arms, out_dir=out,
                           run_id="bfcl-reference", scaffold=all_presets()["bfcl"])
        started = time.perf_counter()
        asyncio.run(Runner(config).run())
        wall = time.perf_counter() - started
        rows = read_results([out])
    print(f"{len(suite.tasks)} entries x {len(arms)} arms in {wall:.0f} s ({spec})")
    for (arm, category), group in rows.groupby(["arm", "category"]):
        print(f"  {arm:10} {category:26} {int(group.success.sum())}/{len(group)} valid")
    for row in rows[~rows.success.astype(bool)].itertuples():
        print(f"  FAIL {row.arm} {row.task_id}: {row.error_type} {str(row.score_reason)[:200]}")


if __name__ == "__main__":
    main()
