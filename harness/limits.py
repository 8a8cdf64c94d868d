"""Every limit a run is under, as one value: the run's and each tool call's time, the added tool latency, the size of
a tool result, the turns, what a run may spend, and the model's context window. It is built once from the options,
handed to every run whole, written whole into the run's manifest and into every row, so a limit cannot be applied
without being recorded."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from harness.defaults import (
    DEFAULT_MAX_TOOL_RESULT_MB,
    DEFAULT_SERVER_START_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOOL_LATENCY_S,
    DEFAULT_TOOL_TIMEOUT_S,
)
from harness.errors import UserError

AgentIsolation = Literal["process", "in-process"]
AGENT_ISOLATIONS: tuple[AgentIsolation, ...] = ("process", "in-process")


@dataclass(frozen=True)
class Limits:
    """A run's limits. `timeout_s` bounds the whole run (its servers' start included, itself bounded by
    `server_start_timeout_s`); each tool call is bounded by `tool_timeout_s` and `max_tool_result_mb` (None: no size
    limit) and first waits `tool_latency_s`, as a remote server's round trip would; `max_turns` (None: each task's
    own) caps the turns; a run ends at the LM call that takes it past `max_tokens_per_run` or `max_cost_per_run`,
    and at the LM call whose prompt does not fit `context_window` (tokens; None: unknown), before it is sent. A
    Python agent from outside runs in a process of its own per run (`agent_isolation`; "in-process" is for
    debugging, and nothing then shields the harness from the agent), under `agent_memory_mb` of address space
    (None: no limit), whose breach is the run's `resource_limit` error."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    server_start_timeout_s: float = DEFAULT_SERVER_START_TIMEOUT_S
    max_tool_result_mb: float | None = DEFAULT_MAX_TOOL_RESULT_MB
    tool_latency_s: float = DEFAULT_TOOL_LATENCY_S
    max_turns: int | None = None
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    context_window: int | None = None
    agent_isolation: AgentIsolation = "process"
    agent_memory_mb: int | None = None

    def check(self) -> None:
        """Refuse, before any run, a limit no run could work under (one line naming the option)."""
        for option, seconds in (("--timeout", self.timeout_s), ("--tool-timeout", self.tool_timeout_s),
                                ("--server-start-timeout", self.server_start_timeout_s)):
            if seconds <= 0:
                raise UserError(f"{option} must be more than 0 seconds")
        if self.tool_latency_s < 0:
            raise UserError(f"--tool-latency must be at least 0 seconds (got {self.tool_latency_s:g})")
        if self.tool_latency_s >= self.tool_timeout_s:  # the delay counts inside each call's timeout
            raise UserError(f"--tool-latency {self.tool_latency_s:g} s is not below --tool-timeout "
                            f"{self.tool_timeout_s:g} s: the delay counts inside each call's timeout, so every tool "
                            "call would time out; raise --tool-timeout")
        if self.max_turns is not None and self.max_turns < 1:
            raise UserError("--max-turns must be at least 1")
        if self.max_tokens_per_run is not None and self.max_tokens_per_run < 1:
            raise UserError("--max-tokens-per-run must be at least 1")
        if self.max_cost_per_run is not None and self.max_cost_per_run <= 0:
            raise UserError("--max-cost-per-run must be more than 0")
        if self.context_window is not None and self.context_window < 1:
            raise UserError("--context-window must be at least 1 token")
        if self.agent_isolation not in AGENT_ISOLATIONS:
            raise UserError(f"--agent-isolation must be one of {', '.join(AGENT_ISOLATIONS)} "
                            f"(got {self.agent_isolation!r})")
        if self.agent_memory_mb is not None and self.agent_memory_mb < 16:
            raise UserError(f"--agent-memory must be at least 16 MB (got {self.agent_memory_mb})")
        if self.agent_memory_mb is not None and self.agent_isolation != "process":
            raise UserError("--agent-memory limits an agent's own process: it needs --agent-isolation process")

    def turns(self, task_turns: int, scaffold_turns: int | None = None) -> int:
        """The turn limit a run is under: a benchmark protocol's (the scaffold's turn_limit) first, then this
        run's --max-turns, then the task's own."""
        return scaffold_turns or self.max_turns or task_turns

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
