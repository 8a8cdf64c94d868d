"""What an agent from outside the package is handed for one run (`AgentTask`), kept light to import: the process an
agent runs in (harness.agents.isolation) imports it before the agent's module and rebuilds the task from JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.agents.endpoints import Endpoints
from harness.limits import Limits


@dataclass(frozen=True)
class AgentTask:
    """What an agent from outside the package is handed for one run: the task as every arm gets it, the run's two
    endpoints (its model as an OpenAI-compatible Chat Completions API at `base_url` with `api_key` and `model`; its
    servers as one MCP server at `mcp_url`, or through `stdio_command`), its limits, and a scratch folder of its
    own (removed after the run; a Python agent's process starts in it).

    In a conversation (a task with a user: a benchmark's scripted turns, or a simulated user) the agent is called
    once per user turn (harness.agents.foreign.ForeignAgent): `prompt` is that turn's user message and `history` the
    conversation before it, as Chat Completions messages (`{"role": "user" | "assistant", "content": TEXT}`, oldest
    first: each earlier user message and the agent's answer to it), so an agent can put it before the new message as
    it is. Text only: the tool calls of earlier turns are not in it (their effects are, on the same run's servers).
    Empty on a task's first turn, so a one-turn task's agent is handed exactly what it always was."""

    task_id: str
    prompt: str
    system_instructions: str
    endpoints: Endpoints
    limits: Limits
    max_turns: int
    workdir: Path
    history: tuple[dict[str, str], ...] = ()

    @property
    def base_url(self) -> str:
        return self.endpoints.base_url

    @property
    def api_key(self) -> str:
        return self.endpoints.api_key

    @property
    def model(self) -> str:
        return self.endpoints.model

    @property
    def mcp_url(self) -> str:
        return self.endpoints.mcp_url

    def environment(self) -> dict[str, str]:
        """The task and the endpoints as environment variables, for a child process (docs/your-agent.md)."""
        return {**self.endpoints.environment(), "HARNESS_TASK_ID": self.task_id, "HARNESS_TASK_PROMPT": self.prompt,
                "HARNESS_SYSTEM_INSTRUCTIONS": self.system_instructions, "HARNESS_WORKDIR": str(self.workdir),
                "HARNESS_MAX_TURNS": str(self.max_turns), "HARNESS_TIMEOUT_S": f"{self.limits.timeout_s:g}",
                "HARNESS_HISTORY": json.dumps(list(self.history))}

    def to_json(self) -> dict[str, Any]:
        """The task as a command reads it on its stdin (the secret is in the environment only)."""
        return {"task_id": self.task_id, "prompt": self.prompt, "system_instructions": self.system_instructions,
                "base_url": self.base_url, "model": self.model, "mcp_url": self.mcp_url,
                "max_turns": self.max_turns, "timeout_s": self.limits.timeout_s, "workdir": str(self.workdir),
                "history": list(self.history)}

    def to_wire(self) -> dict[str, Any]:
        """The whole task as JSON, secret included, for the agent's own process (over a private socket)."""
        return {"task_id": self.task_id, "prompt": self.prompt, "system_instructions": self.system_instructions,
                "endpoints": {**asdict(self.endpoints), "stdio_command": list(self.endpoints.stdio_command)},
                "limits": self.limits.as_dict(), "max_turns": self.max_turns, "workdir": str(self.workdir),
                "history": list(self.history)}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> AgentTask:
        endpoints = {**data["endpoints"], "stdio_command": tuple(data["endpoints"]["stdio_command"])}
        return cls(task_id=data["task_id"], prompt=data["prompt"], system_instructions=data["system_instructions"],
                   endpoints=Endpoints(**endpoints), limits=Limits(**data["limits"]), max_turns=data["max_turns"],
                   workdir=Path(data["workdir"]), history=tuple(data.get("history", ())))


# an agent from outside: the task -> its answer (text, or any JSON value), or an awaitable of it
AgentFunction = Callable[[AgentTask], Any]


def source_of(function: Callable[..., Any]) -> str:
    """The package and version behind a function (`mypkg==1.2.0`), or its module when no installed distribution
    provides it (a file of the user's)."""
    return source_of_module(getattr(function, "__module__", "") or "")


def source_of_module(module: str) -> str:
    """The package and version a module comes from (`mypkg==1.2.0`), else `module NAME`."""
    top = module.split(".")[0]
    for distribution in metadata.packages_distributions().get(top, []):
        try:
            return f"{distribution}=={metadata.version(distribution)}"
        except metadata.PackageNotFoundError:
            continue
    return f"module {module}" if module else "unknown"


def answer_text(value: Any) -> str:
    """A final answer as the scorers read it: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, default=str)
