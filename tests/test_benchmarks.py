"""Every script in benchmarks/ still runs: each at its smallest size (`--smallest`), in a child process, as a
user would start it. The figures are not asserted (machines here are noisy); a refactor that breaks a benchmark
fails here instead of in the next person's measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
# What a script needs beyond the package, as the markers of tests/conftest.py name it.
NEEDS = {"local_model.py": pytest.mark.local_model, "ray_executor.py": pytest.mark.ray,
         "sandbox.py": pytest.mark.sandbox, "bridge_throughput.py": pytest.mark.sandbox,
         "gathered_calls.py": pytest.mark.sandbox, "arms_as_shipped.py": pytest.mark.sandbox,
         "tools_as_files.py": pytest.mark.sandbox}


def test_there_are_benchmarks_to_check():
    assert {"prefix_cache.py", "local_model.py", "load.py"} <= {p.name for p in SCRIPTS}


# Each script runs in a child process (a few seconds to a minute): the integration tier, out of `make test-quick`.
@pytest.mark.integration
@pytest.mark.parametrize("script", [pytest.param(p, id=p.name, marks=[NEEDS[p.name]] if p.name in NEEDS else [])
                                    for p in SCRIPTS])
def test_a_benchmark_runs_at_its_smallest_size(script: Path, tmp_path: Path):
    done = subprocess.run([sys.executable, str(script), "--smallest"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "a benchmark prints its table"
