"""Tool calls written as text: a reply whose text is a tool call the server did not parse into `tool_calls` (a
fenced or bare JSON object with "name" and "arguments", or Qwen/Hermes `<tool_call>` tags). An OpenAI-compatible
server whose chat format does not parse the model's calls hands them back this way, and a tool-calling agent
then takes them for its answer; the check (`harness models --check`) and the run's diagnostics look for it."""

from __future__ import annotations

import json
import re

_TAG = re.compile(r"</?tool_call>", re.IGNORECASE)
_ARGUMENT_KEYS = ("arguments", "parameters")
_SCANNED_CHARS = 20_000  # a call written as text opens a reply; a long answer is not searched to its end
# How to make each kind of server parse tool calls (the check's and the diagnostic's advice).
TEXT_CALL_FIX = ("start llama.cpp's server with --jinja (llama-server) or --chat_format chatml-function-calling "
                 "(python -m llama_cpp.server), vLLM with --enable-auto-tool-choice --tool-call-parser <parser>, "
                 "or load a model whose template declares tool use in LM Studio")


def _is_call(value: object) -> bool:
    """A JSON value shaped like one tool call."""
    return (isinstance(value, dict) and isinstance(value.get("name"), str)
            and any(isinstance(value.get(key), (dict, str)) for key in _ARGUMENT_KEYS))


def _embedded_values(text: str) -> list[object]:
    """Every JSON object that starts at some '{' of the text (a fenced block, a bare object, one wrapped in extra
    braces as small models write it)."""
    decoder, values = json.JSONDecoder(), []
    text = text[:_SCANNED_CHARS]
    for start in (n for n, char in enumerate(text) if char == "{"):
        try:
            values.append(decoder.raw_decode(text, start)[0])
        except ValueError:
            continue
    return values


def looks_like_text_tool_call(text: str | None) -> bool:
    """Whether `text` holds a tool call written as text: `<tool_call>` tags, or a JSON object anywhere in it with a
    string "name" and "arguments" (or "parameters"). Prose, and JSON data of other shapes, do not count."""
    if not text:
        return False
    return bool(_TAG.search(text)) or any(_is_call(value) for value in _embedded_values(text))
