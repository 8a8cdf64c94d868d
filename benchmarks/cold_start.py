"""Cold-start costs a user waits for before anything runs (a printed table; no assertions).

1. Refusing an unknown model string, from a cold start: a new Python process imports the harness, applies its
   offline defaults and calls `check_model` (litellm's routing table, no network). CPU seconds of the child,
   not wall time, so a busy machine shows less of its load. Target: well under 5 CPU s.
2. The Pyodide cache check on a warm cache (`ensure_pyodide_cached`, a stat of a marker file), what every
   `harness run` with a code-mode arm does first. Target: well under 100 ms.

Tests assert neither figure (a loaded machine is slow, not wrong); they assert what keeps them small: no
network in (1), no Deno process in (2).

Usage: .venv/bin/python benchmarks/cold_start.py [--repeats 3] [--smallest]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REFUSE_UNKNOWN_MODEL = """
from harness.env import configure_environment
configure_environment()
from harness.models import check_model
try:
    check_model('nosuchprovider:xyz/abc')
except Exception as exc:
    assert type(exc).__name__ == 'UserError', exc
"""


def refusal_cpu_s() -> float:
    """CPU seconds (user + system) of a new process that refuses an unknown model."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", REFUSE_UNKNOWN_MODEL], cwd=ROOT, check=True, capture_output=True,
                   timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def warm_cache_check_ms(checks: int) -> float | None:
    """Mean wall time of a warm Pyodide cache check; None when Pyodide cannot be cached here (no Deno)."""
    from harness.errors import UserError
    from harness.sandbox import ensure_pyodide_cached

    try:
        ensure_pyodide_cached()
    except UserError as exc:
        print(f"(Pyodide cache check skipped: {exc})", file=sys.stderr)
        return None
    started = time.perf_counter()
    for _ in range(checks):
        ensure_pyodide_cached()
    return (time.perf_counter() - started) / checks * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="cold starts to measure (the median is shown)")
    parser.add_argument("--smallest", action="store_true", help="one cold start and ten cache checks (seconds)")
    args = parser.parse_args()
    repeats, checks = (1, 10) if args.smallest else (args.repeats, 1000)

    from harness.env import configure_environment

    configure_environment()
    refusals = [refusal_cpu_s() for _ in range(repeats)]
    check_ms = warm_cache_check_ms(checks)
    print(f"{'what':<52} {'figure':>12}")
    print(f"{'refuse an unknown model, cold start (CPU s, median)':<52} {statistics.median(refusals):>12.2f}")
    shown = "skipped" if check_ms is None else f"{check_ms:.3f}"
    print(f"{'warm Pyodide cache check (ms, mean of ' + str(checks) + ')':<52} {shown:>12}")


if __name__ == "__main__":
    main()
