"""The embedded model's prompt format and reply parsing: its own chat template, and Qwen's `<tool_call>` blocks read
back as tool calls."""

from __future__ import annotations

import json
import re
from typing import Any

from dspy.lm15 import ToolCallPart

from harness.errors import UserError
from harness.models.messages import parse_arguments


def chatml(messages: list[dict[str, Any]]) -> str:
    """ChatML for plain messages: what a model file without a chat template gets."""
    rendered = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return rendered + "<|im_start|>assistant\n"


def _template_message(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat dict as Hugging Face chat templates take it: tool-call arguments as objects."""
    if not message.get("tool_calls"):
        return message
    calls = [{**call, "function": {**call["function"], "arguments": parse_arguments(call["function"]["arguments"])
                                   or {}}} for call in message["tool_calls"]]
    return {**message, "tool_calls": calls}


class ChatTemplate:
    """The model's own chat template (the GGUF's `tokenizer.chat_template`), rendered the way transformers
    renders it, so tools appear in the prompt and tool calls and results in the history exactly as the model
    was trained on them. Prompts are plain strings: consecutive agent turns share their prefix, which the KV
    cache reuses."""

    def __init__(self, source: str | None, name: str = "model", eos_token: str = "<|im_end|>",
                 bos_token: str = "<|endoftext|>"):
        self.source, self.name = source, name
        self._formatter = None
        if source:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(source, eos_token=eos_token, bos_token=bos_token)

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        if self._formatter is None:
            if tools:
                raise UserError(f"{self.name} has no chat template, so it cannot be offered tools natively; "
                                "use a GGUF with a tool-calling chat template (e.g. the embedded Qwen2.5 model)")
            return chatml(messages)
        return self._formatter(messages=[_template_message(m) for m in messages], tools=tools or None).prompt


_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _read_call(body: str) -> tuple[str, dict[str, Any]] | None:
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    arguments = parse_arguments(value.get("arguments", {}))
    return None if arguments is None else (value["name"], arguments)


def parse_tool_calls(text: str) -> tuple[str, tuple[ToolCallPart, ...]]:
    """A Qwen reply -> (its text, its tool calls). Each well-formed `<tool_call>{"name", "arguments"}</tool_call>`
    block becomes a call (ids call_0, call_1, ... in order); a malformed or unfinished block stays in the text,
    so the agent sees what the model wrote instead of a call it did not make."""
    calls: list[ToolCallPart] = []

    def take(match: re.Match) -> str:
        call = _read_call(match.group(1))
        if call is None:
            return match.group(0)
        calls.append(ToolCallPart(id=f"call_{len(calls)}", name=call[0], input=call[1]))
        return ""

    rest = _TOOL_CALL_BLOCK.sub(take, text)
    return (rest.strip() if calls else text), tuple(calls)
