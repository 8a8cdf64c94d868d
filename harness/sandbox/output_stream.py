"""The host side of the code's output streamed as it is written (the guest's side: harness/sandbox/guest_output.py).

dspy's PythonInterpreter reads the Deno process's stdout one line at a time (`readline`) while an execution runs,
answering tool calls, until the execution's response comes. `watch_output` puts a filter in front of that stream: a
line that is the guest's output notification goes to a callback instead, so dspy sees the protocol it always saw
(and counts no skipped lines). `OutputSoFar` keeps what arrives for one execution, bounded as an execution's own
output is, and takes nothing more once closed: what it holds then is the output of an execution cut short at that
moment. An execution that ends returns its whole output in its outcome; what was streamed is then not used.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from harness.sandbox.guest_output import OUTPUT_PREFIX
from harness.sandbox.runtime import OUTPUT_LIMIT_CHARS

TRUNCATION_MARKER = "\n... [output truncated at {limit:,} characters: {dropped:,} more not shown]"

OutputCallback = Callable[[str, int], None]  # (text kept, characters dropped so far): on the interpreter's thread


def shown_output(text: str, dropped: int, limit: int = OUTPUT_LIMIT_CHARS) -> str:
    """An execution's output as the agent and the record see it: what was kept, and a visible marker saying how
    much was dropped past the limit (if anything was)."""
    return text + TRUNCATION_MARKER.format(limit=limit, dropped=dropped) if dropped else text


class OutputSoFar:
    """The output one execution has streamed so far, kept up to `limit` characters (the guest already keeps no
    more; the bound holds whatever arrives), with the guest's count of characters dropped. Thread-safe: filled on
    the interpreter's thread, read from the event loop."""

    def __init__(self, limit: int = OUTPUT_LIMIT_CHARS) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._size = self._dropped = self._overflow = 0
        self._closed = False
        self._lock = threading.Lock()

    def add(self, text: str, dropped: int) -> None:
        """Take one streamed piece (ignored once closed)."""
        with self._lock:
            if self._closed:
                return
            kept = text[:max(0, self.limit - self._size)]
            if kept:
                self._parts.append(kept)
                self._size += len(kept)
            self._overflow += len(text) - len(kept)
            self._dropped = max(self._dropped, dropped)

    def close(self) -> None:
        """Take nothing more: the execution ended, or was cut short now."""
        with self._lock:
            self._closed = True

    def text(self) -> str:
        """What was streamed, with the truncation marker if anything was dropped."""
        with self._lock:
            return shown_output("".join(self._parts), self._dropped + self._overflow, self.limit)


class _OutputFilter:
    """A text stream's stand-in whose `readline` skips the guest's output notifications, handing each to
    `on_output`; everything else is the stream's."""

    def __init__(self, stream: Any, on_output: OutputCallback) -> None:
        self._stream, self._on_output = stream, on_output

    def readline(self, *args: Any) -> str:
        while True:
            line = self._stream.readline(*args)
            if not line.startswith(OUTPUT_PREFIX):
                return line
            try:
                params = json.loads(line)["params"]
                self._on_output(str(params["text"]), int(params["dropped"]))
            except (ValueError, KeyError, TypeError):  # a line that only looks like one: dropped, as dspy would
                continue

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def watch_output(python: Any, on_output: OutputCallback) -> None:
    """Route the output notifications of a started dspy PythonInterpreter (`python.deno_process` up) to
    `on_output`; the rest of its stdout reaches dspy as before."""
    process = python.deno_process
    process.stdout = _OutputFilter(process.stdout, on_output)
