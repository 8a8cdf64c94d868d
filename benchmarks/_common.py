"""Shared bits for benchmarks: a trivial task and a zero-latency scripted model replaying it."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

from harness.models.scripted import ScriptedProvider, policy_provider
from harness.run.reference import ReferenceTrace, reference_policy
from harness.tasks.suite import load_suite
from harness.tasks.task import Suite

TRIVIAL_CALLS = (("get_customer", {"customer_id": "C-0007"}),)


def trivial_suite() -> Suite:
    """One smoke task: a single tool call and a short answer."""
    smoke = load_suite("smoke")
    task = next(t for t in smoke.tasks if t.id == "customer-country")
    return Suite("trivial", "one lookup", (task,), smoke.path)


def trivial_provider() -> ScriptedProvider:
    trace = ReferenceTrace("IN", "IN", TRIVIAL_CALLS, {})
    return policy_provider("scripted:trivial", lambda task, arm: reference_policy(trace, task, arm))


def rss_mb() -> float:
    """Current resident set size (MB), from /proc (ru_maxrss is the peak, not the current size)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_result(command: list[str], env: dict[str, str], what: str) -> dict:
    """Run one setting of a benchmark in its own process (a fresh engine, its own peak RSS) and read the JSON line
    it prints last; a child that fails stops the benchmark with its stderr's tail, naming the setting."""
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{what} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])
