"""Viewer: how fast a 1,000-run results file opens in `harness view`.

Makes 1,000 real runs (a trivial task, zero-latency scripted model), then pads every trajectory to about
--kb-per-run KB (a long tool result, as a data-heavy run has) and measures, side by side:
- indexing the file (Parquet rows + one pass over the JSONL for byte offsets: what `harness view` does before
  it serves) vs parsing every trajectory line (what a viewer that loads all of them up front would do);
- the table's data (data/runs.js) and one run's trajectory (data/run/N.js): bytes and time to build;
- headless Chromium opening the table page of the static copy, against the same Chromium opening an empty
  page (its own start-up), so the difference is the page's own cost.
Usage: .venv/bin/python benchmarks/viewer.py [--runs 1000] [--kb-per-run 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import trivial_provider, trivial_suite
from harness.run.runner import RunConfig, Runner
from harness.viewer import export_site, load_index
from harness.viewer.site import run_script, runs_script

CHROMIUM = Path("/usr/bin/chromium")


def make_runs(out: Path, runs: int) -> Path:
    config = RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=("direct",), epochs=runs, out_dir=out,
                       run_id="view", max_concurrency=8)
    return asyncio.run(Runner(config, provider=trivial_provider()).run()).path


def pad_trajectories(results: Path, kb: int) -> int:
    """Give every trajectory a long tool result (kb KB); returns the JSONL file's size in bytes."""
    path = results.with_name(results.name.replace(".parquet", ".trajectories.jsonl"))
    padding = json.dumps({"rows": [{"sku": f"S-{i:05d}", "qty": i % 97} for i in range(kb * 1024 // 28)]})
    lines = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        next(event for event in entry["events"] if event["event"] == "tool")["result_preview"] = padding
        lines.append(json.dumps(entry))
    path.write_text("\n".join(lines) + "\n")
    return path.stat().st_size


def timed(fn, repeat: int = 3):
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def parse_everything(results: Path) -> int:
    path = results.with_name(results.name.replace(".parquet", ".trajectories.jsonl"))
    return sum(1 for line in path.open() if json.loads(line))


def chromium_seconds(page: Path, fragment: str, profile: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-sync", "--disable-background-networking", "--disable-component-update",
                           f"--user-data-dir={profile}", "--dump-dom", page.as_uri() + fragment],
                          capture_output=True, text=True, timeout=120, check=True)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--kb-per-run", type=int, default=50)
    parser.add_argument("--smallest", action="store_true", help="20 runs of 5 KB")
    args = parser.parse_args()
    if args.smallest:
        args.runs, args.kb_per_run = 20, 5
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        results = make_runs(out / "results", args.runs)
        jsonl_bytes = pad_trajectories(results, args.kb_per_run)
        index_s, index = timed(lambda: load_index([results]))
        eager_s, _ = timed(lambda: parse_everything(results))
        table_s, table = timed(lambda: runs_script(index, None))
        run_s, one = timed(lambda: run_script(index, len(index.rows) // 2))
        print(f"{len(index.rows):,} runs, trajectories {jsonl_bytes / 1e6:.1f} MB")
        print(f"{'step':<58}{'time':>10}{'bytes':>12}")
        print(f"{'index (Parquet rows + JSONL byte offsets)':<58}{index_s * 1000:>8.0f} ms")
        print(f"{'  vs parsing every trajectory up front':<58}{eager_s * 1000:>8.0f} ms   "
              f"({eager_s / index_s:.1f}x slower)")
        print(f"{'table data (data/runs.js)':<58}{table_s * 1000:>8.0f} ms{len(table):>12,}")
        print(f"{'one run (data/run/N.js)':<58}{run_s * 1000:>8.1f} ms{len(one):>12,}")
        print(f"{'first table JSON after start (index + table data)':<58}{(index_s + table_s) * 1000:>8.0f} ms")
        if not CHROMIUM.exists():
            print("(no /usr/bin/chromium: browser timings skipped)")
            return
        page = export_site(index, out / "site")
        empty = out / "empty.html"
        empty.write_text("<!doctype html><title>empty</title>")
        chromium_seconds(empty, "", out / "profile")  # warm the profile and the page cache
        base_s = min(chromium_seconds(empty, "", out / "profile")[0] for _ in range(3))
        table_runs = []
        for _ in range(3):
            seconds, dom = chromium_seconds(page, "", out / "profile")
            table_runs.append(seconds)
        rows = len(re.findall(r'<tr data-run="', dom))
        render_ms = re.search(r'data-render-ms="(\d+)"', dom).group(1)
        page_s = min(table_runs)
        print(f"{'Chromium: empty page (its own start-up)':<58}{base_s * 1000:>8.0f} ms")
        print(f"{'Chromium: run table page, all rows rendered':<58}{page_s * 1000:>8.0f} ms   ({rows:,} rows)")
        print(f"{'  the page itself (difference)':<58}{(page_s - base_s) * 1000:>8.0f} ms")
        print(f"{'  of which building the table in the page (its script)':<58}{render_ms:>8} ms")


if __name__ == "__main__":
    main()
