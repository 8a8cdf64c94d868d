"""`harness serve`: code mode for any MCP client. executor.py (the execute_code tool over the named servers' tools),
bounds.py (what one request may ask: code size, timeout, a place among the executions running or waiting), and, for
the streamable HTTP transport, token.py (the bearer token), guard.py (Host, Origin and token checked on every
request) and http.py (binding, loopback unless the owner says otherwise, the line a client needs).

Over stdio the client that started the process is its only peer: no token, no network."""

from harness.serve.bounds import ExecutorBounds
from harness.serve.executor import build_executor

__all__ = ["ExecutorBounds", "build_executor"]
