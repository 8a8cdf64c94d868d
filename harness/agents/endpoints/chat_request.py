"""The shape of a Chat Completions request the endpoint accepts, checked before anything reaches the run's LM: a
field of the wrong type anywhere in the messages, their tool calls or the tools is the request's 400 (OpenAI's error
JSON), never a failure inside the harness. Unknown fields are ignored on purpose (not refused, as the harness's
other inputs are): SDKs send options of their own with every request, and an OpenAI-compatible endpoint that refused
them would work with no SDK."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ContentPart(Lenient):
    type: str
    text: str | None = None


class FunctionCall(Lenient):
    name: str
    arguments: str = ""

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_as_text(cls, value: Any) -> Any:
        """Some clients send a call's arguments as an object rather than JSON text: the same call."""
        return json.dumps(value) if isinstance(value, dict) else value


class ToolCall(Lenient):
    id: str = ""
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(Lenient):
    role: str
    content: str | list[ContentPart] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class FunctionTool(Lenient):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class Tool(Lenient):
    type: Literal["function"] = "function"
    function: FunctionTool


class NamedFunction(Lenient):
    name: str


class NamedToolChoice(Lenient):
    type: Literal["function"] = "function"
    function: NamedFunction


class ChatRequest(Lenient):
    """The request fields the endpoint reads, each with the type OpenAI's API gives it."""

    model: str = ""
    messages: list[Message]
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    top_p: float | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False
    n: int = 1


def validation_message(errors: list[dict[str, Any]]) -> str:
    """Pydantic's errors in one line an agent's developer reads: where, and what was wrong (the first three)."""
    parts = []
    for error in errors[:3]:
        where = ".".join(str(part) for part in error.get("loc", ())) or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more
