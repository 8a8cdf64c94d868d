"""What both arms share: the Agent protocol and the AgentResult every run produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from dspy.utils.exceptions import AdapterParseError

from harness.mcp.servers import ServerSession
from harness.models.retry import is_permanent
from harness.tasks.task import Task


@dataclass(frozen=True)
class Step:
    """One agent iteration as the trajectory shows it (a thought and tool call, or code and its output)."""

    kind: str  # "tool" (direct, react) | "code" (code mode) | "answer" (a reply with no action) | "unparsed"
    content: dict[str, Any]
    rules: tuple[str, ...] = ()  # the scaffold rules that fired at this step (harness.agents.scaffold)


@dataclass(frozen=True)
class AgentError:
    type: str  # parse_error | lm_error | max_turns | repeated_action | timeout | server_error | sandbox_crash | internal ...
    message: str
    permanent: bool = False  # an LM error that will fail every call the same way (auth, unknown model, ...)
    server: str = ""  # server_error: the server that did not come up

    @classmethod
    def from_exception(cls, exc: BaseException) -> AgentError:
        """An LM-side failure: output that could not be parsed, or the LM call itself failing."""
        kind = "parse_error" if isinstance(exc, (AdapterParseError, ValueError)) else "lm_error"
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return cls(kind, f"{type(exc).__name__}: {first_line[:300]}", kind == "lm_error" and is_permanent(exc))


@dataclass(frozen=True)
class AgentResult:
    """The outcome of one agent run; LM calls and tool calls are logged separately by the runner."""

    answer: str
    steps: tuple[Step, ...]
    error: AgentError | None = None
    policy_violations: int = 0
    sandbox_time_s: float = 0.0
    repeated_actions: int = 0  # turns whose action and outcome were identical to an earlier turn's
    # Texts the agent put into its prompts, so token counts can be split by where they came from.
    tool_definition_texts: tuple[str, ...] = ()
    observation_texts: tuple[str, ...] = field(default=(), repr=False)

    @property
    def turns(self) -> int:
        return len(self.steps)


class Agent(Protocol):
    """An arm: runs one task against one run's servers with the LM set in dspy's context."""

    name: str

    async def run(self, task: Task, session: ServerSession) -> AgentResult: ...
