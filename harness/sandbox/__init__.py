"""The code-mode sandbox: Deno + Pyodide interpreters, offline, pooled, guarded and self-healing.

Closed by default (no host files, network, env vars or subprocesses: Deno's permissions, tested with the
policy off in tests/sandbox/test_escape.py); a watchdog replaces an interpreter that runs past its limit
or dies; a reset between leases keeps tasks from seeing each other's state."""

from harness.sandbox.interpreter import ToolDispatcher
from harness.sandbox.mounts import Mount
from harness.sandbox.offline import deno_dir, ensure_pyodide_cached
from harness.sandbox.policy import SandboxPolicy
from harness.sandbox.pool import ExecutionResult, PoolStats, Sandbox, SandboxPool

__all__ = ["ExecutionResult", "Mount", "PoolStats", "Sandbox", "SandboxPolicy", "SandboxPool", "ToolDispatcher", "deno_dir",
           "ensure_pyodide_cached"]
