"""The guest's awaitable tools: part of the guest program (harness/sandbox/guest.py), shipped before it into the
same namespace (harness/sandbox/runtime.py); a module of its own so each file keeps one job. Standard library only.

A tool function answers by its caller (`_in_async_code`): called from async code (an `async def`, a cell whose
top level awaits, or a comprehension written in one) it returns a _PendingCall to await; anywhere else the guest
calls the host at once, as before. Async code runs on a _BatchLoop of its own; the guest connects it to the host
with `_connect_async` (how to make one call, send a request, read a reply, and end the run on final_answer).
"""

import asyncio as _asyncio
import time as _time
from asyncio import events as _events
from collections.abc import Coroutine as _Coroutine

_GUEST = {}  # set by _connect_async: call_now, request, value, tool_error, final, final_error
_OUTER_LOOP = [None]  # Pyodide's own event loop, set aside while a _BatchLoop runs: the bridge needs it running


def _connect_async(**guest):
    """Install the guest's pieces this part calls (see _GUEST)."""
    _GUEST.update(guest)


def _in_outer_loop(call):
    """`call()` with Pyodide's loop as the running loop when called from a _BatchLoop: the bridge's JS call
    needs it."""
    inner = _events._get_running_loop()
    if not isinstance(inner, _BatchLoop):
        return call()
    _events._set_running_loop(_OUTER_LOOP[0])
    try:
        return call()
    finally:
        _events._set_running_loop(inner)


# A tool called from async code (an `async def`, or a cell whose top level awaits) returns a _PendingCall. Awaiting
# it registers the call with the cell's _BatchLoop; when no task can run any more, the loop sends every registered
# call to the host as ONE request (BATCH_TOOL), which the host runs concurrently, and each awaiting task gets its
# call's value or ToolError. So `await asyncio.gather(a(), b(), c())` costs the slowest call, not the sum.

BATCH_TOOL = "__harness_batch"  # the reserved tool name of a batch: {"calls": [{"name", "arguments"}, ...]}
_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: the code of an async def, or of a cell compiled with top-level await
_COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>")
_STARVED_ROUNDS = 1000  # loop rounds with runnable tasks after which waiting calls are sent anyway
_CREATED = []  # pending calls created in this run (the ones never awaited are named at its end)


def _in_async_code(frame):
    """Whether `frame` runs async code. A comprehension counts as the code it is written in, so
    `gather(*(tool(x) for x in xs))` inside async code gathers pending calls."""
    while frame is not None and frame.f_code.co_name in _COMPREHENSIONS:
        frame = frame.f_back
    return frame is not None and bool(frame.f_code.co_flags & _CO_COROUTINE)


class _PendingCall(_Coroutine):
    """A tool call made in async code: it runs when awaited or run as a task (alone, or with the other calls
    awaited at the same time). A coroutine as asyncio sees one, so gather, create_task and wait_for take it. Used
    as if it were the result, it says to await it."""

    __slots__ = ("_steps", "arguments", "awaited", "function", "name")

    def __init__(self, function, name, arguments):
        self.function, self.name, self.arguments, self.awaited, self._steps = function, name, arguments, False, None
        _CREATED.append(self)

    def __await__(self):
        self.awaited = True
        loop = _events._get_running_loop()
        if not isinstance(loop, _BatchLoop):  # awaited on some other loop: an ordinary call
            return _GUEST["call_now"](self.name, self.arguments)
        future = loop.create_future()
        loop.waiting.append((future, self.name, self.arguments))
        return (yield from future)

    def send(self, value):
        if self._steps is None:
            self._steps = self.__await__()
        return self._steps.send(value)

    def throw(self, *exc):
        if self._steps is None:
            self._steps = self.__await__()
        return self._steps.throw(*exc)

    def close(self):
        if self._steps is not None:
            self._steps.close()

    def _hint(self):
        return (f"{self.function}(...) was called in async code, where a tool call must be awaited: write "
                f"`await {self.function}(...)`, or gather several with `await asyncio.gather(...)`")

    def _misused(self, *args, **kwargs):
        raise TypeError(self._hint())

    def __getattr__(self, attribute):
        raise AttributeError(self._hint())

    def __repr__(self):
        return f"<{self.function}(...) not awaited: {self._hint()}>"

    __getitem__ = __iter__ = __len__ = __bool__ = __contains__ = _misused
    __str__ = __repr__


def _unawaited_note():
    """The note for tool calls made in async code that were never awaited (so never run), or ""."""
    missed = [call for call in _CREATED if not call.awaited]
    _CREATED.clear()
    if not missed:
        return ""
    return (f"[note: {len(missed)} tool call(s) in async code were never awaited, so they did not run "
            f"(first: {missed[0].function}); write `await {missed[0].function}(...)`]\n")


class _BatchSelector:
    """The loop's stand-in for a selector: there are no sockets, only tool calls waiting for the host. When no
    task can run (or they have run a long while with calls waiting), it sends the waiting calls as one batch."""

    def __init__(self, loop):
        self.loop, self.rounds = loop, 0

    def select(self, timeout):
        loop = self.loop
        if loop.waiting and (timeout != 0 or self.rounds >= _STARVED_ROUNDS):
            self.rounds = 0
            loop.send_waiting()
        elif loop.waiting:
            self.rounds += 1
        elif timeout is None:
            raise RuntimeError("the code awaits something that can never finish (no task or tool call is running)")
        elif timeout > 0:  # only timers are due: skip ahead to the next one (the sandbox cannot sleep)
            loop.skipped += timeout
        return []


class _BatchLoop(_asyncio.BaseEventLoop):
    """The event loop async agent code runs on: asyncio's own loop logic (tasks, gather, sleep, timeouts) with
    tool calls as its only I/O. No sockets, subprocesses or threads: those methods of BaseEventLoop stay
    unimplemented. Its clock skips the time nothing but a timer would wait for (asyncio.sleep returns at once), and
    runs at the real pace while tool calls run. final_answer() ends the loop at once, even inside a task whose
    exception was swallowed."""

    def __init__(self):
        super().__init__()
        self._selector = _BatchSelector(self)
        self.waiting = []  # (future, tool name, arguments) awaited and not yet sent
        self.ended = False
        self.skipped = 0.0  # seconds the clock skipped ahead

    def time(self):
        return _time.monotonic() + self.skipped

    def _process_events(self, event_list):
        pass

    def _make_subprocess_transport(self, *args, **kwargs):
        raise NotImplementedError("the sandbox has no subprocesses")

    def run_in_executor(self, executor, func, *args):
        raise NotImplementedError("the sandbox has no threads: call the function directly")

    def _write_to_self(self):
        pass

    def _run_once(self):
        super()._run_once()
        final = _GUEST["final"]
        if final and not self.ended:
            self.ended = True
            raise _GUEST["final_error"](final[0])

    def send_waiting(self):
        """Send the waiting calls (one alone as an ordinary call, several as one batch) and settle their futures."""
        waiting, self.waiting = [w for w in self.waiting if not w[0].done()], []
        if len(waiting) == 1:
            (future, name, arguments), = waiting
            replies = [_GUEST["request"](name, arguments)]
        elif waiting:
            calls = [{"name": name, "arguments": arguments} for _, name, arguments in waiting]
            reply = _GUEST["request"](BATCH_TOOL, {"calls": calls})
            replies = [reply] * len(waiting) if "error" in reply else reply["ok"]
        for (future, _, _), reply in zip(waiting, replies if waiting else []):
            try:
                future.set_result(_GUEST["value"](reply))
            except _GUEST["tool_error"] as exc:
                future.set_exception(exc)


def _run_awaitable(awaitable):
    """Run a coroutine (a cell with top-level await, or asyncio.run's argument) to its end on a fresh _BatchLoop,
    with Pyodide's own loop set aside meanwhile; tasks it left running are cancelled, as asyncio.run does."""
    outer = _events._get_running_loop()
    _OUTER_LOOP[0] = outer
    _events._set_running_loop(None)
    loop = _BatchLoop()
    try:
        return loop.run_until_complete(awaitable)
    finally:
        try:
            left = _asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.ended = True
                loop.run_until_complete(_asyncio.gather(*left, return_exceptions=True))
        finally:
            loop.close()
            _events._set_running_loop(outer)


def _asyncio_run(main, *, debug=None, loop_factory=None):
    """asyncio.run while agent code runs (Pyodide's loop is running, so the real one refuses): main on a
    _BatchLoop."""
    return _run_awaitable(main)


_ASYNCIO_RUN = _asyncio.run


def _async_begin():
    """Before agent code runs: no pending calls yet, and asyncio.run runs its coroutine on a _BatchLoop (restored by
    _async_end, and by a reset: it is module state)."""
    _CREATED.clear()
    _asyncio.run = _asyncio_run


def _async_end():
    """After agent code ran: asyncio.run restored; the note on calls never awaited, or ""."""
    _asyncio.run = _ASYNCIO_RUN
    return _unawaited_note()


def _run_code(code, namespace):
    """exec or eval compiled agent code: a coroutine code object (top-level await) runs on a _BatchLoop."""
    if code.co_flags & _CO_COROUTINE:
        return _run_awaitable(eval(code, namespace))
    return eval(code, namespace)
