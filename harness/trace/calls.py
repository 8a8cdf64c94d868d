"""The calls a run makes, each stamped with the step that made it when it is made: the agent's LM calls, its
MCP tool calls (from the model or from code in a sandbox), and a scorer's probes after the run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


# Whose LM call it is: the agent under test, the simulated user of a conversation task, or a judge model.
LMRole = Literal["agent", "user", "judge"]


@dataclass(frozen=True)
class ToolCallRecord:
    """One MCP tool call the agent made. `step` is the index of the step whose action made it (None: made
    outside any step), `in_code` whether code in a sandbox made it rather than the model calling the tool, `batch`
    the id shared by the calls made together (sandbox code awaiting several at once; None: a call made alone),
    `abandoned` whether the run stopped waiting for it at the tool timeout (it may have gone on running on its
    server, which was then closed hard)."""

    tool: str
    arguments: dict[str, Any]
    is_error: bool = False
    result_preview: str = ""
    result_chars: int = 0
    duration_s: float = 0.0
    started_s: float = 0.0  # seconds since the run's servers opened
    server: str = ""  # empty in version 1 lines (not recorded then)
    step: int | None = None
    in_code: bool = False
    batch: int | None = None
    abandoned: bool = False


@dataclass(frozen=True)
class ProbeCall:
    """A read-only tool call a scorer made on the run's own servers after the agent ended (a probe): not one of
    the agent's tool calls, and not counted as one."""

    server: str
    tool: str
    arguments: dict[str, Any]
    is_error: bool = False
    result_preview: str = ""
    result_chars: int = 0
    duration_s: float = 0.0


@dataclass(frozen=True)
class LMCall:
    """One LM call as the run saw it: `output` is the reply's text, `tool_calls` its native tool calls
    ({"name", "arguments"}), `grammar` whether the engine constrained decoding with a grammar, `step` the step
    it was made for, `role` whose call it was (the agent's; a conversation's simulated user's; a judge's), `tools`
    the definitions sent with a native tool call."""

    messages: list[dict[str, Any]]
    output: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reused_prompt_tokens: int = 0
    reuse_source: str = "none"  # none, context (the previous call), prefix_cache (the engine's), provider
    latency_s: float = 0.0
    cached: bool = False
    grammar: bool = False
    tool_calls: tuple[dict[str, Any], ...] = ()
    retries: int = 0
    step: int | None = None
    role: str = "agent"  # LMRole
    setup_s: float = 0.0  # of latency_s, one-time start-up (the first evaluation of a prompt prefix later runs share)
    cut_short: bool = False  # still out when the run ended: no reply, latency_s is its time so far
    tools: tuple[dict[str, Any], ...] = ()  # stored since v6, so a row's token split can be computed again
