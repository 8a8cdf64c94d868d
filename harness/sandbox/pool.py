"""A warm pool of sandboxes. A new interpreter costs ~6 s (Pyodide boot); a lease of a warm one costs a reset
(milliseconds). Leases are isolated: the user globals, modules imported and files written by one lease are
gone before the next. A timeout or crash replaces the process; the lease goes on with a fresh one."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator

from harness.sandbox.interpreter import Interpreter, SandboxCrashed, ToolDispatcher
from harness.sandbox.policy import SandboxPolicy

DEFAULT_TIMEOUT_S = 30.0
RESET_TIMEOUT_S = 30.0
TRUNCATION_MARKER = "\n... [output truncated: {dropped} more characters not shown]"


@dataclass(frozen=True)
class ExecutionResult:
    stdout: str
    error: str | None
    error_kind: str | None  # None | "exception" | "syntax" | "timeout" | "policy" | "crash"
    duration_s: float
    truncated: bool

    @property
    def ok(self) -> bool:
        return self.error is None


class Sandbox:
    """A leased interpreter: state persists across execute() calls until the lease ends."""

    def __init__(self, pool: "SandboxPool", interpreter: Interpreter):
        self._pool, self._interpreter = pool, interpreter

    async def execute(self, code: str, *, timeout_s: float | None = None, check_policy: bool = True) -> ExecutionResult:
        """Run code; whatever it does comes back as an ExecutionResult (this never raises for the code)."""
        started = time.perf_counter()
        if check_policy:
            rule = self._pool.policy.check(code)
            if rule is not None:
                return ExecutionResult("", f"POLICY_VIOLATION: {rule}", "policy", time.perf_counter() - started, False)
        timeout_s = timeout_s or self._pool.timeout_s
        try:
            raw = await self._interpreter.call(f"_harness_run({json.dumps(code, ensure_ascii=False)})", timeout_s)
        except TimeoutError:
            return ExecutionResult("", f"TIMEOUT: execution exceeded {timeout_s:g} s; the sandbox was restarted "
                                       "and its variables are lost", "timeout", time.perf_counter() - started, False)
        except SandboxCrashed as exc:
            self._pool.crashes += 1
            return ExecutionResult("", f"CRASH: the sandbox process died ({exc}); it was restarted and its "
                                       "variables are lost", "crash", time.perf_counter() - started, False)
        outcome = json.loads(raw)
        stdout, dropped = outcome["stdout"], outcome["dropped"]
        if dropped:
            stdout += TRUNCATION_MARKER.format(dropped=dropped)
        error = outcome["error"]
        return ExecutionResult(stdout, error["message"] if error else None, error["kind"] if error else None,
                               time.perf_counter() - started, bool(dropped))


class SandboxPool:
    """Up to `size` interpreters, started ahead (`start`) or on first lease, reset between leases."""

    def __init__(self, size: int = 1, *, policy: SandboxPolicy = SandboxPolicy(), timeout_s: float = DEFAULT_TIMEOUT_S):
        self.size, self.policy, self.timeout_s = max(1, size), policy, timeout_s
        self._idle: list[Interpreter] = []
        self._all: list[Interpreter] = []
        self._lock = threading.Lock()  # not an asyncio lock: the pool may be used from several event loops
        self.created = 0
        self.crashes = 0

    @property
    def restarts(self) -> int:
        return sum(i.restarts for i in self._all)

    def _new(self) -> Interpreter:
        interpreter = Interpreter()
        self._all.append(interpreter)
        self.created += 1
        return interpreter

    async def start(self, count: int | None = None) -> None:
        """Warm interpreters ahead of use (in parallel), up to `count` (default: the pool size)."""
        with self._lock:
            wanted = min(self.size, count or self.size) - len(self._all)
            fresh = [self._new() for _ in range(max(0, wanted))]
            self._idle.extend(fresh)
        await asyncio.gather(*(i.start() for i in fresh))

    async def _acquire(self) -> Interpreter:
        while True:
            with self._lock:
                if self._idle:
                    return self._idle.pop()
                if len(self._all) < self.size:
                    return self._new()
            await asyncio.sleep(0.005)

    async def _reset(self, interpreter: Interpreter) -> None:
        interpreter.dispatcher, interpreter.prelude = None, ""
        try:
            await interpreter.call("_harness_reset()", RESET_TIMEOUT_S)
        except (TimeoutError, SandboxCrashed):
            await interpreter.start()  # the process was replaced: fresh state is a clean state

    @asynccontextmanager
    async def lease(self, dispatcher: ToolDispatcher, prelude: str = "") -> AsyncIterator[Sandbox]:
        """A clean interpreter whose tool calls go to `dispatcher`, with `prelude` (trusted code defining the
        tool functions) run first; reset and returned to the pool afterwards."""
        interpreter = await self._acquire()
        try:
            await interpreter.install(dispatcher, prelude)
            yield Sandbox(self, interpreter)
        finally:
            await self._reset(interpreter)
            with self._lock:
                self._idle.append(interpreter)

    async def close(self) -> None:
        with self._lock:
            interpreters, self._all, self._idle = list(self._all), [], []
        await asyncio.gather(*(i.close() for i in interpreters), return_exceptions=True)
