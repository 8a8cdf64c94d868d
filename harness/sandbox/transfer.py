"""How a tool result crosses from the host into the sandbox: whole when it is small, in chunks when it is large.

Every message between the host and the Deno process is one JSON-RPC line, and a tool result is JSON-encoded
twice on its way (once by the host, once by dspy's framing), so a large result makes one very long line for the
JavaScript side to assemble, parse and hand to Pyodide as a single string. Above `CHUNK_CHARS` the host keeps the
encoded result and answers with a header, `{"chunks": N}`; the guest (harness/sandbox/guest.py) then asks for
each chunk in turn through the same bridged function, under the reserved tool name `RESULT_CHUNK_TOOL`, and joins
them before decoding once. Every line then stays near `CHUNK_CHARS` whatever the result's size, and a small
result costs nothing extra.
"""

from __future__ import annotations

import json

from harness.sandbox.guest import CHUNKED_PREFIX, RESULT_CHUNK_TOOL

CHUNK_CHARS = 1 << 20  # characters of the encoded result per line (ASCII: json.dumps escapes the rest)
__all__ = ["CHUNKED_PREFIX", "CHUNK_CHARS", "RESULT_CHUNK_TOOL", "ResultTransfer"]


class ResultTransfer:
    """The host side for one interpreter: at most one result is pending at a time (one request crosses the bridge
    at a time, a batch of calls awaited together being one request with one result: the guest fetches every chunk
    of a result before the next request can start)."""

    def __init__(self, chunk_chars: int = CHUNK_CHARS) -> None:
        self.chunk_chars = chunk_chars
        self._pending = ""
        self._count = 0

    def frame(self, payload: str) -> str:
        """What the host answers a tool call with: the encoded result itself, or a header naming its chunks
        (the result is then kept until its last chunk is fetched, or the next result replaces it)."""
        if len(payload) <= self.chunk_chars:
            self._pending, self._count = "", 0
            return payload
        self._pending = payload
        self._count = -(-len(payload) // self.chunk_chars)
        return json.dumps({"chunks": self._count, "chars": len(payload)})

    def chunk(self, index: int) -> str:
        """Chunk `index` of the pending result, as raw text; fetching the last one releases the result."""
        if not 0 <= index < self._count:
            raise ValueError(f"no chunk {index} of a pending tool result ({self._count} chunks)")
        start = index * self.chunk_chars
        piece = self._pending[start:start + self.chunk_chars]
        if index == self._count - 1:
            self._pending, self._count = "", 0
        return piece
