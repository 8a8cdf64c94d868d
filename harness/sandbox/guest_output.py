"""The guest's output: part of the guest program (harness/sandbox/guest.py), shipped before it into the same
namespace (harness/sandbox/runtime.py). Standard library only.

What agent code prints is kept up to a limit and returned with the execution's outcome, as before. While agent
code runs it is also streamed to the host as it is written, so that a run cut short while its code is still
running (the run's time limit, an interrupt) keeps the output so far: each kept line, as its newline is written
(and whatever is pending on a flush, before each tool call, and when the limit is reached), goes out as one
JSON-RPC notification line on the Deno process's stdout, the channel every host<->Deno message takes. Writing it
is synchronous (Deno's console.log), so a line is out before the code blocks, and no reply is awaited. Past the
limit only the count of characters dropped is sent: at once the first time, then at most every
`STREAM_DROPPED_EVERY_S`, so a program printing forever does not flood the channel. The host keeps what
arrives for the execution in flight (harness.sandbox.output_stream); the outcome's own output stays the record
of an execution that ends.
"""

import io as _io
import json as _json
import time as _time

# The notification's fixed start (the host recognises a line by it; the guest cannot import the host's modules,
# so the host imports it from here). Its params: {"text": kept text, "dropped": characters dropped so far}.
OUTPUT_PREFIX = '{"jsonrpc": "2.0", "method": "harness_output", "params": '
STREAM_CHUNK_CHARS = 4096  # text pending without a newline is sent once it is this long
STREAM_DROPPED_EVERY_S = 0.25
_stream_dumps, _monotonic = _json.dumps, _time.monotonic  # bound now: agent code changing them cannot break it


class _CappedOutput(_io.TextIOBase):
    """Keeps the first `limit` characters written; counts the rest as dropped. With `send` (a function taking one
    line of text: the Deno console during agent code) the kept text is also streamed to the host as above; the
    kept parts are the stream's buffer too (`_streamed`: how many of them were sent), so a write costs little more
    than without."""

    def __init__(self, limit, send=None):
        self.limit, self.parts, self.size, self.dropped = limit, [], 0, 0
        self._send, self._streamed, self._streamed_size, self._sent_dropped, self._sent_at = send, 0, 0, 0, 0.0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if len(text) <= self.limit - self.size:  # the usual case: all of it kept
            self.parts.append(text)
            self.size += len(text)
            if self._send is not None and ("\n" in text or self.size - self._streamed_size >= STREAM_CHUNK_CHARS):
                self.flush()
            return len(text)
        kept = text[:max(0, self.limit - self.size)]
        if kept:
            self.parts.append(kept)
            self.size += len(kept)
        self.dropped += len(text) - len(kept)
        if self._send is not None and (kept or not self._sent_dropped
                                       or _monotonic() - self._sent_at >= STREAM_DROPPED_EVERY_S):
            self.flush()  # the limit reached: what is pending, and (at most so often) the count dropped
        return len(text)

    def stop_streaming(self):
        """Send nothing more (the execution has ended: its outcome carries the output)."""
        self._send = None

    def flush(self):
        """Send what is pending to the host (a no-op without `send`, or with nothing new to say)."""
        if self._send is None or (self._streamed == len(self.parts) and self.dropped == self._sent_dropped):
            return
        text = "".join(self.parts[self._streamed:])
        self._streamed, self._streamed_size = len(self.parts), self.size
        if self.dropped:
            self._sent_dropped, self._sent_at = self.dropped, _monotonic()
        self._send(f'{OUTPUT_PREFIX}{{"text": {_stream_dumps(text)}, "dropped": {self.dropped}}}}}')


def _console_line():
    """The Deno console's log function (writes one line to the process's stdout, synchronously), or None outside
    Pyodide (plain CPython tests): no streaming there."""
    try:
        from js import console
    except ImportError:
        return None
    return console.log
