"""Defaults shared by `harness run`, `harness optimize` and the library API, declared once."""

# a safety net per run or episode: a 1.5B model on 2 cores needs minutes per multi-step run
DEFAULT_TIMEOUT_S = 1800.0
# per MCP tool call: a hung server costs one error result, not the whole run
DEFAULT_TOOL_TIMEOUT_S = 60.0
# opening a run's servers (process start, MCP initialize, tool listing): a server stuck on a prompt, a lock or a
# slow install ends the run as server_error instead of hanging it
DEFAULT_SERVER_START_TIMEOUT_S = 60.0
