"""One Deno + Pyodide process, owned by one worker thread (dspy's interpreter refuses to be used from two
threads), which can be killed from outside and replaced."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from harness.sandbox.offline import ensure_pyodide_cached, offline_flags
from harness.sandbox.runtime import RUNTIME

ToolDispatcher = Callable[[str, dict[str, Any]], Any]


class SandboxCrashed(Exception):
    """The interpreter process died or stopped answering; it has been discarded."""


def _new_python_interpreter(host_tool: Callable[[str, str], str]):
    from dspy.primitives.python_interpreter import PythonInterpreter

    ensure_pyodide_cached()
    interpreter = PythonInterpreter(tools={"_harness_call_tool": host_tool})
    command = list(interpreter.deno_command)
    run_index = command.index("run")
    interpreter.deno_command = command[:run_index + 1] + offline_flags() + command[run_index + 1:]
    return interpreter


class Interpreter:
    """A sandbox process and the thread that drives it. Methods named `_in_thread_*` run on that thread;
    the async methods submit to it and never block the event loop."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox")
        self._python = None  # dspy PythonInterpreter, created and used on self._thread only
        self._lock = threading.Lock()
        self.dispatcher: ToolDispatcher | None = None
        self.prelude = ""  # trusted code defining the lease's tool functions; re-run after any restart
        self.restarts = 0

    # ---- on the worker thread ----

    def _host_tool(self, name: str, arguments: str) -> str:
        """The single bridged host function: forwards to the current lease's dispatcher, JSON both ways."""
        dispatcher = self.dispatcher
        if dispatcher is None:
            return json.dumps({"error": "no tools are available in this sandbox"})
        try:
            return json.dumps({"ok": dispatcher(name, json.loads(arguments))}, default=str)
        except Exception as exc:
            return json.dumps({"error": str(exc) or type(exc).__name__})

    def _in_thread_start(self) -> None:
        if self._python is not None:
            return
        python = _new_python_interpreter(self._host_tool)
        if python.execute(RUNTIME) != "ready":
            raise SandboxCrashed("the sandbox runtime did not start")
        self._python = python
        self._in_thread_define()

    def _in_thread_define(self) -> None:
        if not self.prelude:
            return
        outcome = json.loads(self._python.execute(f"_harness_run({json.dumps(self.prelude, ensure_ascii=False)}, True)"))
        if outcome["error"]:
            raise RuntimeError(f"the tool prelude failed in the sandbox: {outcome['error']['message']}")

    def _in_thread_install(self) -> None:
        if self._python is None:
            self._in_thread_start()  # defines the prelude too
        else:
            self._in_thread_define()

    def _in_thread_call(self, expression: str) -> Any:
        self._in_thread_start()
        try:
            return self._python.execute(expression)
        except Exception as exc:  # the process died (killed, crashed) or the protocol broke
            self._in_thread_discard()
            raise SandboxCrashed(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc

    def _in_thread_discard(self) -> None:
        python, self._python = self._python, None
        if python is not None:
            try:
                python.shutdown()
            except Exception:
                pass

    # ---- from the event loop ----

    def _submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self._thread.submit(fn, *args)

    async def start(self) -> None:
        await asyncio.wrap_future(self._submit(self._in_thread_start))

    async def install(self, dispatcher: ToolDispatcher | None, prelude: str) -> None:
        """Route tool calls to `dispatcher` and define the tool functions (starting the process if needed)."""
        self.dispatcher, self.prelude = dispatcher, prelude
        await asyncio.wrap_future(self._submit(self._in_thread_install))

    async def call(self, expression: str, timeout_s: float | None = None) -> Any:
        """Evaluate `expression` (a call into the runtime); on timeout the process is killed and replaced."""
        waiting = asyncio.wrap_future(self._submit(self._in_thread_call, expression))
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), timeout_s)
        except TimeoutError:
            waiting.add_done_callback(lambda done: done.exception())  # the dying call's error is expected
            self.kill()
            self.restarts += 1
            self._submit(self._in_thread_start)  # warm a replacement (with the prelude) behind the dying call
            raise

    def kill(self) -> None:
        """Stop the process now, from any thread; the worker thread then sees it die and discards it."""
        python = self._python
        process = getattr(python, "deno_process", None) if python is not None else None
        if process is not None and process.poll() is None:
            process.kill()

    async def close(self) -> None:
        self.kill()
        await asyncio.wrap_future(self._submit(self._in_thread_discard))
        self._thread.shutdown(wait=False)
