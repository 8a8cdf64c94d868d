"""One Deno + Pyodide process, owned by one worker thread (dspy's interpreter refuses to be used from two
threads), which can be killed from outside and replaced."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import dspy

from harness.sandbox.guest_async import BATCH_TOOL
from harness.sandbox.mounts import Mount
from harness.sandbox.offline import DEFAULT_MEMORY_MB, ensure_pyodide_cached, interpreter_command
from harness.sandbox.output_stream import OutputSoFar, watch_output
from harness.sandbox.runtime import RUNTIME
from harness.sandbox.transfer import RESULT_CHUNK_TOOL, ResultTransfer

ToolDispatcher = Callable[[str, dict[str, Any]], Any]
# Sync; called on the sandbox's own thread when sandbox code calls a tool. Returns a JSON-able value or raises
# (the message reaches the code as ToolError). It should time out by itself: a call that never returns
# keeps the thread, and the interpreter is then abandoned STUCK_GRACE_S after its execution limit.
# A dispatcher may also have `batch(calls: list[tuple[str, dict]]) -> list[Any]`: the calls async sandbox code
# awaited together, run concurrently; each entry the call's value or the exception it failed with
# (harness.mcp.bridge.SessionDispatcher). Without it a batch runs one call after another.

STUCK_GRACE_S = 60.0  # covers booting a replacement queued ahead of the call (~6 s) with a wide margin


class SandboxCrashed(Exception):
    """The interpreter process died or stopped answering; it has been discarded."""


def _new_python_interpreter(host_tool: Callable[[str, str], str], memory_mb: int = DEFAULT_MEMORY_MB):
    """A dspy PythonInterpreter (its public constructor only) on our offline command line, with `host_tool` as its
    one bridged tool."""
    ensure_pyodide_cached()
    return dspy.PythonInterpreter(deno_command=interpreter_command(memory_mb), tools={"_harness_call_tool": host_tool})


def run_batch(dispatcher: ToolDispatcher, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's value, or the exception it failed with: concurrently through the dispatcher's `batch` if it
    has one, else one call after another."""
    batch = getattr(dispatcher, "batch", None)
    if batch is not None:
        return batch(calls)
    outcomes: list[Any] = []
    for name, arguments in calls:
        try:
            outcomes.append(dispatcher(name, arguments))
        except Exception as exc:
            outcomes.append(exc)
    return outcomes


def _reply(outcome: Any) -> dict[str, Any]:
    """What the guest decodes for one call: {"ok": value}, or {"error": message} for an exception."""
    if isinstance(outcome, BaseException):
        return {"error": str(outcome) or type(outcome).__name__}
    return {"ok": outcome}


class SandboxTimedOut(Exception):
    """The watchdog killed the process: an execution ran past its limit."""


class Interpreter:
    """A sandbox process and the thread that drives it. Methods named `_in_thread_*` run on that thread;
    the async methods submit to it and never block the event loop. A dead process is replaced lazily on
    the same thread, with the lease's tool functions (the prelude) defined again."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox")
        self._closed = False
        self._python = None  # dspy PythonInterpreter, created and used on self._thread only
        self.memory_mb = memory_mb
        self.dispatcher: ToolDispatcher | None = None
        self.prelude = ""  # trusted code defining the lease's tool functions; re-run after any restart
        self.mounts: tuple[Mount, ...] = ()  # the lease's folders of files, written before the prelude (likewise)
        self.restarts = 0  # processes replaced after a timeout, a crash or a dirty reset
        self.abandoned = False  # the thread is stuck (a dispatcher that never returns): never reuse
        self.tool_time_s = 0.0  # host time spent in the dispatcher, summed (callers take differences)
        self.tool_calls = 0
        self._transfer = ResultTransfer()  # a large result waiting for the guest to fetch its chunks
        self.output: OutputSoFar | None = None  # where the output of the code running now streams (Sandbox.execute)

    # ---- on the worker thread ----

    def _host_tool(self, name: str, arguments: str) -> str:
        """The single bridged host function: forwards to the current lease's dispatcher, JSON both ways.
        A dispatcher error becomes {"error": message}, raised as ToolError inside the sandbox. A batch (BATCH_TOOL,
        the calls async code awaited together) answers {"ok": [reply, ...]}, one reply per call. A large reply is
        sent in chunks the guest fetches under RESULT_CHUNK_TOOL (harness.sandbox.transfer)."""
        if name == RESULT_CHUNK_TOOL:
            return self._transfer.chunk(json.loads(arguments)["index"])
        dispatcher = self.dispatcher
        if dispatcher is None:
            return json.dumps({"error": "no tools are available in this sandbox"})
        started = time.perf_counter()
        calls = 1
        try:
            if name == BATCH_TOOL:
                batch = [(call["name"], call["arguments"]) for call in json.loads(arguments)["calls"]]
                calls = len(batch)
                reply = json.dumps({"ok": [_reply(outcome) for outcome in run_batch(dispatcher, batch)]}, default=str)
            else:
                reply = json.dumps({"ok": dispatcher(name, json.loads(arguments))}, default=str)
        except Exception as exc:
            reply = json.dumps(_reply(exc))
        finally:
            self.tool_time_s += time.perf_counter() - started
            self.tool_calls += calls
        return self._transfer.frame(reply)

    def _on_output(self, text: str, dropped: int) -> None:
        """Output the guest streamed as the code wrote it (harness.sandbox.output_stream): kept for the execution in
        flight, if one is listening."""
        output = self.output
        if output is not None:
            output.add(text, dropped)

    def _in_thread_start(self) -> None:
        if self._python is not None:
            return
        python = _new_python_interpreter(self._host_tool, self.memory_mb)
        try:
            python.start()
            watch_output(python, self._on_output)
            if python.execute(RUNTIME) != "ready":
                raise SandboxCrashed("the sandbox runtime did not start")
        except BaseException:
            python.shutdown()
            raise
        self._python = python
        self._in_thread_define()

    def _in_thread_define(self) -> None:
        for mount in self.mounts:
            self._python.execute(mount.install_code())
        if self.prelude:
            self._in_thread_run_prelude(self.prelude)

    def _in_thread_install(self) -> None:
        if self._python is None:
            self._in_thread_start()  # defines the prelude too
        else:
            self._in_thread_define()

    def _in_thread_call(self, expression: str, timeout_s: float | None) -> Any:
        """Run `expression` under a watchdog that starts now (not while a replacement boots)."""
        self._in_thread_start()
        python = self._python
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            if python.deno_process is not None and python.deno_process.poll() is None:
                python.deno_process.kill()

        watchdog = threading.Timer(timeout_s, kill) if timeout_s else None
        if watchdog is not None:
            watchdog.daemon = True
            watchdog.start()
        try:
            return python.execute(expression)
        except Exception as exc:  # the process died (killed, crashed) or the protocol broke
            self._in_thread_discard()
            if fired.is_set():
                raise SandboxTimedOut(f"execution exceeded {timeout_s:g} s") from exc
            raise SandboxCrashed(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if fired.is_set() and self._python is python:  # it finished just as the watchdog fired
                self._in_thread_discard()

    def _in_thread_discard(self, count: bool = True) -> None:
        python, self._python = self._python, None
        if python is not None:
            self.restarts += count
            try:
                python.shutdown()
            except Exception:
                pass

    # ---- from the event loop ----

    def _submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self._thread.submit(fn, *args)

    @property
    def booted(self) -> bool:
        """Whether its process is up (a lease of a booted interpreter waits for no Pyodide boot)."""
        return self._python is not None

    async def start(self) -> None:
        await asyncio.wrap_future(self._submit(self._in_thread_start))

    async def install(self, dispatcher: ToolDispatcher | None, prelude: str, mounts: tuple[Mount, ...] = ()) -> None:
        """Route tool calls to `dispatcher`, write `mounts` and define the tool functions (starting the process if
        needed)."""
        self.dispatcher, self.prelude, self.mounts = dispatcher, prelude, mounts
        await asyncio.wrap_future(self._submit(self._in_thread_install))

    async def extend_prelude(self, prelude: str) -> None:
        """Define `prelude` now and keep it in the prelude a restart runs again."""
        self.prelude = f"{self.prelude}\n\n{prelude}" if self.prelude else prelude
        await asyncio.wrap_future(self._submit(self._in_thread_extend, prelude))

    def _in_thread_extend(self, prelude: str) -> None:
        if self._python is None:
            self._in_thread_start()  # a process that died since: the new one defines the whole prelude
        else:
            self._in_thread_run_prelude(prelude)

    def _in_thread_run_prelude(self, prelude: str) -> None:
        outcome = json.loads(self._python.execute(f"_harness_run({json.dumps(prelude, ensure_ascii=False)}, True)"))
        if outcome["error"]:
            raise RuntimeError(f"the tool prelude failed in the sandbox: {outcome['error']['message']}")

    async def call(self, expression: str, timeout_s: float | None = None) -> Any:
        """Evaluate `expression` (a call into the runtime) under the watchdog. Raises SandboxTimedOut or
        SandboxCrashed (the process is then gone; the next call starts a fresh one). If the thread does not
        come back long after the kill (a dispatcher that never returns), the interpreter is abandoned."""
        waiting = asyncio.wrap_future(self._submit(self._in_thread_call, expression, timeout_s))
        if timeout_s is None:
            return await waiting
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), timeout_s + STUCK_GRACE_S)
        except TimeoutError:
            waiting.add_done_callback(lambda done: done.exception())  # whatever it ends with is moot now
            self.abandoned = True
            self.kill()
            raise SandboxTimedOut(f"execution exceeded {timeout_s:g} s") from None

    async def discard(self) -> None:
        """Stop the process (counted as a restart); the next call or start() boots a fresh one."""
        self.kill()
        await asyncio.wrap_future(self._submit(self._in_thread_discard))

    def kill(self) -> None:
        """Stop the process now, from any thread; the worker thread then sees it die and discards it."""
        python = self._python
        process = getattr(python, "deno_process", None) if python is not None else None
        if process is not None and process.poll() is None:
            process.kill()

    @property
    def closed(self) -> bool:
        """Closed with its pool (e.g. on Ctrl-C while a lease was still ending): nothing more can run on it."""
        return self._closed

    async def close(self) -> None:
        self._closed = True
        self.kill()
        if not self.abandoned:
            await asyncio.wrap_future(self._submit(self._in_thread_discard, False))
        self._thread.shutdown(wait=False)
