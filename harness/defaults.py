"""Defaults shared by `harness run`, `harness optimize` and the library API, declared once."""

# a safety net per run or episode, long enough for a multi-step run of a slow local model (docs/experiments.md)
DEFAULT_TIMEOUT_S = 1800.0
# per MCP tool call: a hung server costs one error result, not the whole run
DEFAULT_TOOL_TIMEOUT_S = 60.0
# opening a run's servers (process start, MCP initialize, tool listing): a server stuck on a prompt, a lock or a
# slow install ends the run as server_error instead of hanging it
DEFAULT_SERVER_START_TIMEOUT_S = 60.0
# per MCP tool result: a larger one is a tool error the agent sees (it can ask for less). Well above the 50 MB the
# code-mode sandbox is required to carry, well below what its 1 GiB of WebAssembly memory holds while it decodes
# one (the encoded chunks, the joined text and the decoded value are alive at once); no model context holds either
DEFAULT_MAX_TOOL_RESULT_MB = 100.0
# per request of `harness models --check`: a local server on a busy CPU is slow, and a cold one loads its model first
DEFAULT_ENDPOINT_CHECK_TIMEOUT_S = 120.0
# added to every tool call of a run (--tool-latency): none, as fixtures answer in process; a remote MCP server's
# network round trip is what a larger value stands for
DEFAULT_TOOL_LATENCY_S = 0.0
# asking an --api-base server which model it serves (GET /v1/models, once per run configuration, for the response
# cache's key): an answer is local and quick; a server that takes longer is keyed by its URL alone
DEFAULT_SERVED_MODEL_TIMEOUT_S = 3.0
