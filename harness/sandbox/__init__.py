"""The code-mode sandbox: Deno + Pyodide interpreters, offline, pooled, guarded and self-healing."""

from harness.sandbox.interpreter import ToolDispatcher
from harness.sandbox.offline import ensure_pyodide_cached
from harness.sandbox.policy import SandboxPolicy
from harness.sandbox.pool import ExecutionResult, Sandbox, SandboxPool

__all__ = ["ExecutionResult", "Sandbox", "SandboxPolicy", "SandboxPool", "ToolDispatcher", "ensure_pyodide_cached"]
