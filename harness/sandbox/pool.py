"""A warm pool of sandboxes. A new interpreter costs ~4-6 s (Pyodide boot); a lease of a warm one costs a
reset (milliseconds). Leases are isolated: user globals, modules imported, module state changed and files
written by one lease are gone before the next. A timeout or crash replaces the process; the lease goes on
with a fresh one (its tool functions defined again, its variables lost)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from harness.sandbox.file_transfer import decode_files, imported_modules_source, read_files_source
from harness.sandbox.interpreter import Interpreter, SandboxCrashed, SandboxTimedOut, ToolDispatcher
from harness.sandbox.mounts import Mount
from harness.sandbox.offline import DEFAULT_MEMORY_MB
from harness.sandbox.output_stream import OutputSoFar, shown_output
from harness.sandbox.policy import SandboxPolicy
from harness.trace.vocab import StepErrorKind

DEFAULT_TIMEOUT_S = 30.0
RESET_TIMEOUT_S = 30.0
CRASH_MARKER = "CRASH:"  # how an execution's error says the sandbox process died under the code


@dataclass(frozen=True)
class ExecutionResult:
    """What one execution did, as the agent sees it; never an exception."""

    stdout: str  # stdout and stderr as printed, truncated at 64 kB with a visible marker
    error: str | None  # one message for the agent: "NameError: ...", "TIMEOUT: ...", "POLICY_VIOLATION: ..."
    error_kind: StepErrorKind | None  # None, or exception, syntax, code_timeout, policy, crash
    duration_s: float  # wall time of the execution, tool calls included (see tool_time_s)
    truncated: bool
    tool_calls: int = 0  # bridged tool calls made by this execution
    tool_time_s: float = 0.0  # host time spent in the dispatcher for them
    final: bool = False  # the code called final_answer(value): the run ends with `final_value`
    final_value: Any = None  # as JSON (a value that is not JSON comes back as its repr)
    notes: int = 0  # notes or named errors on misused tool results the code was shown (result_notes)
    echoed: bool = False  # the value of the code's last expression was printed (echo_last)
    files_read: tuple[str, ...] = ()  # files of a counted mount the code opened, in order (harness.sandbox.mounts)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class PoolStats:
    """Counters for benchmarks and tests."""

    created: int  # interpreter slots (thread + process) created
    restarts: int  # processes replaced after a timeout, a crash or a dirty reset
    timeouts: int
    crashes: int
    leases: int
    idle: int


class Sandbox:
    """A leased interpreter: state persists across execute() calls until the lease ends."""

    def __init__(self, pool: SandboxPool, interpreter: Interpreter, policy: SandboxPolicy | None = None):
        self._pool, self._interpreter = pool, interpreter
        self.policy = policy or pool.policy  # what this lease's code may contain
        self.boot_s = 0.0  # how long the lease waited for its interpreter's process to boot (0: it was warm)
        self._output: OutputSoFar | None = None  # the output of the latest execution, as streamed

    def output_so_far(self) -> str:
        """What the latest execution had printed by the time it ended or was cut short (cancelled: the run's time
        limit, an interrupt), as the guest streamed it (each line as it was written, a partial line at a flush or a
        tool call), bounded and marked as an outcome's output is; "" before any. What a run records as the output
        of code the run's end cut short (Transcript.code_started); an execution that ends has its outcome's."""
        return self._output.text() if self._output is not None else ""

    async def execute(self, code: str, *, timeout_s: float | None = None, check_policy: bool = True,
                      echo_last: bool = True, result_notes: bool = True) -> ExecutionResult:
        """Run code; whatever it does comes back as an ExecutionResult (this never raises for the code).
        `echo_last`: a last line that is an expression prints its value (as a REPL does); `result_notes`: tool
        results say what they hold when misused (harness.sandbox.guest)."""
        started = time.perf_counter()
        self._output = output = OutputSoFar()
        rules = None
        if check_policy:
            rule = self.policy.check(code)
            if rule is not None:
                return ExecutionResult("", f"POLICY_VIOLATION: {rule}", "policy", time.perf_counter() - started, False)
            rules = self.policy.rules_if_unparsed(code)
        timeout_s = timeout_s or self._pool.timeout_s
        if self._interpreter.abandoned:
            self._interpreter = await self._pool._replace(self._interpreter)
        interpreter = self._interpreter
        calls_before, tool_time_before = interpreter.tool_calls, interpreter.tool_time_s
        rules_json = json.dumps({k: sorted(v) for k, v in rules.items()}) if rules else "None"
        expression = (f"_harness_run({json.dumps(code, ensure_ascii=False)}, False, {rules_json}, {echo_last}, "
                      f"{result_notes}, {self._pool.stream_output})")
        interpreter.output = output
        try:
            raw = await interpreter.call(expression, timeout_s)
            error_text = None
        except SandboxTimedOut:
            self._pool._count("timeouts")
            error_text, kind = (f"TIMEOUT: execution exceeded {timeout_s:g} s; the sandbox was restarted "
                                "(state lost: define variables again)"), "code_timeout"
        except SandboxCrashed as exc:
            self._pool._count("crashes")
            error_text, kind = (f"{CRASH_MARKER} the sandbox process died ({exc}); it was restarted "
                                "(state lost: define variables again)"), "crash"
        finally:  # ended, or cut short here (cancelled): what it streamed until now is its output so far
            output.close()
            if interpreter.output is output:
                interpreter.output = None
        tools = dict(tool_calls=interpreter.tool_calls - calls_before,
                     tool_time_s=interpreter.tool_time_s - tool_time_before)
        if error_text is not None:
            return ExecutionResult("", error_text, kind, time.perf_counter() - started, False, **tools)
        outcome = json.loads(raw)
        stdout, dropped = shown_output(outcome["stdout"], outcome["dropped"]), outcome["dropped"]
        error, final = outcome["error"], outcome.get("final")
        return ExecutionResult(stdout, error["message"] if error else None, error["kind"] if error else None,
                               time.perf_counter() - started, bool(dropped), **tools, final=final is not None,
                               final_value=final["value"] if final else None, notes=outcome.get("notes", 0),
                               echoed=outcome.get("echoed", False), files_read=tuple(outcome.get("read", ())))


    async def define(self, prelude: str) -> None:
        """Define more trusted code in this lease (tool functions offered mid-run): run now, and again after any
        restart, after the lease's own prelude."""
        await self._interpreter.extend_prelude(prelude)

    async def read_files(self, roots: tuple[str, ...]) -> tuple[dict[str, bytes], tuple[str, ...]]:
        """Every file under `roots` now (path -> bytes) and the paths left out past the read limit
        (harness.sandbox.file_transfer); nothing when the interpreter died under the lease (its files went with it)."""
        if self._interpreter.abandoned:
            return {}, ()
        try:
            return decode_files(await self._interpreter.call(read_files_source(roots), RESET_TIMEOUT_S))
        except (SandboxTimedOut, SandboxCrashed):
            return {}, ()

    async def imported_modules(self, prefix: str) -> tuple[str, ...]:
        """The modules under `prefix` ("skills.") that code of this lease imported, the prefix dropped."""
        if self._interpreter.abandoned:
            return ()
        try:
            return tuple(json.loads(await self._interpreter.call(imported_modules_source(prefix), RESET_TIMEOUT_S)))
        except (SandboxTimedOut, SandboxCrashed):
            return ()


class SandboxPool:
    """Up to `size` interpreters, started ahead (`start`) or on first lease, reset between leases.
    `memory_mb` caps each interpreter's WebAssembly memory (a memory bomb is then a MemoryError). `stream_output`:
    code's output also reaches the host as it is written, so code cut short keeps its output so far (off, it keeps
    none: benchmarks/output_streaming.py measures the difference)."""

    def __init__(self, size: int = 1, *, policy: SandboxPolicy = SandboxPolicy(), timeout_s: float = DEFAULT_TIMEOUT_S,
                 memory_mb: int = DEFAULT_MEMORY_MB, stream_output: bool = True):
        self.size, self.policy, self.timeout_s, self.memory_mb = max(1, size), policy, timeout_s, memory_mb
        self.stream_output = stream_output
        self._idle: list[Interpreter] = []
        self._all: list[Interpreter] = []
        self._lock = threading.Lock()  # not an asyncio lock: the pool may be used from several event loops
        self._counts = {"created": 0, "timeouts": 0, "crashes": 0, "leases": 0, "retired_restarts": 0}

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    @property
    def created(self) -> int:
        return self._counts["created"]

    @property
    def crashes(self) -> int:
        return self._counts["crashes"]

    @property
    def restarts(self) -> int:
        return self._counts["retired_restarts"] + sum(i.restarts for i in self._all)

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(created=self._counts["created"], restarts=self.restarts, timeouts=self._counts["timeouts"],
                             crashes=self._counts["crashes"], leases=self._counts["leases"], idle=len(self._idle))

    def _new(self) -> Interpreter:
        interpreter = Interpreter(self.memory_mb)
        self._all.append(interpreter)
        self._counts["created"] += 1
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

    async def _replace(self, stuck: Interpreter) -> Interpreter:
        """Swap an abandoned interpreter (its thread is stuck in a dispatcher) for a new slot."""
        with self._lock:
            if stuck in self._all:
                self._all.remove(stuck)
                self._counts["retired_restarts"] += stuck.restarts + 1
            fresh = self._new()
        await stuck.close()
        await fresh.install(stuck.dispatcher, stuck.prelude, stuck.mounts)
        return fresh

    async def _reset(self, interpreter: Interpreter) -> None:
        interpreter.dispatcher, interpreter.prelude, interpreter.mounts = None, "", ()
        try:
            if await interpreter.call("_harness_reset()", RESET_TIMEOUT_S) == "dirty":
                await interpreter.discard()  # it cannot undo something (a file present at start was changed)
        except (SandboxTimedOut, SandboxCrashed):
            pass
        if not interpreter.abandoned:
            await interpreter.start()  # a no-op unless the process was replaced: fresh state is clean state

    @asynccontextmanager
    async def lease(self, dispatcher: ToolDispatcher, prelude: str = "", mounts: tuple[Mount, ...] = (),
                    policy: SandboxPolicy | None = None,
                    booting: Callable[[], AbstractContextManager[Any]] | None = None) -> AsyncIterator[Sandbox]:
        """A clean interpreter whose tool calls go to `dispatcher`, with `mounts` written and `prelude` (trusted
        code defining the tool functions, not policy-checked) run first, its code checked by `policy` (default: the
        pool's); reset and returned to the pool afterwards (the mounts gone with everything else the lease wrote).
        `booting`: a context the wait for an interpreter's process to boot is made in (the run's start-up)."""
        interpreter = await self._acquire()
        self._count("leases")
        sandbox = Sandbox(self, interpreter, policy)
        try:
            cold, started = not interpreter.booted, time.perf_counter()
            with booting() if cold and booting is not None else nullcontext():
                await interpreter.install(dispatcher, prelude, mounts)
            sandbox.boot_s = time.perf_counter() - started if cold else 0.0
            yield sandbox
        finally:
            interpreter = sandbox._interpreter  # may have been swapped for a fresh one
            if not interpreter.closed:  # else it was closed with the pool (Ctrl-C while this lease was ending)
                await self._give_back(interpreter)

    async def _give_back(self, interpreter: Interpreter) -> None:
        await self._reset(interpreter)
        with self._lock:
            if not interpreter.abandoned:
                self._idle.append(interpreter)
            elif interpreter in self._all:
                self._all.remove(interpreter)
                self._counts["retired_restarts"] += interpreter.restarts + 1
        if interpreter.abandoned:
            await interpreter.close()

    async def close(self) -> None:
        with self._lock:
            interpreters, self._all, self._idle = list(self._all), [], []
        await asyncio.gather(*(i.close() for i in interpreters), return_exceptions=True)
