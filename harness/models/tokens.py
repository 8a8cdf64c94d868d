"""Token accounting that does not depend on the model: cl100k_base counts of what the LM saw, split by
where it came from (tool definitions, tool results, the task and scaffolding, the LM's own output)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TOKENIZER = "cl100k_base"
TIKTOKEN_SOURCE = f"tiktoken:{TOKENIZER}"


@functools.cache
def _encoding():
    from harness.env import configure_environment

    configure_environment()  # points tiktoken at litellm's bundled files: no download
    import tiktoken

    return tiktoken.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=())) if text else 0


@functools.lru_cache(maxsize=4096)
def count_tokens_cached(text: str) -> int:
    """For texts that recur in every prompt of a run (tool definitions, observations)."""
    return count_tokens(text)


def prompt_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
    """A prompt's tokens as a row counts them (harness.run.row: its `tiktoken_prompt_tokens`): the messages' text,
    then the tool definitions sent natively."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    return count_tokens(text) + (count_tokens_cached(json.dumps(list(tools))) if tools else 0)


@dataclass(frozen=True)
class ContextSplit:
    tool_definitions: int
    tool_results: int
    task: int

    @property
    def total(self) -> int:
        return self.tool_definitions + self.tool_results + self.task


MIN_ATTRIBUTED_CHARS = 16  # shorter texts ("[]", "42") would be found by accident elsewhere in a prompt


def _distinctive(texts: tuple[str, ...]) -> set[str]:
    return {t for t in texts if t and len(t) >= MIN_ATTRIBUTED_CHARS}


def split_prompt(prompt: str, tool_definition_texts: tuple[str, ...], observation_texts: tuple[str, ...]) -> ContextSplit:
    """Attribute a prompt's tokens: each known tool-definition or observation text found in it counts
    toward its kind (once per occurrence); everything else is task, instructions and scaffolding. A definition
    inside an observation (tool documentation the agent's code printed) counts as a definition, not twice."""
    total = count_tokens(prompt)
    defined, observed = _distinctive(tool_definition_texts), _distinctive(observation_texts)
    definitions = sum(prompt.count(t) * count_tokens_cached(t) for t in defined)
    nested = sum(prompt.count(o) * o.count(t) * count_tokens_cached(t) for o in observed for t in defined if t in o)
    results = max(0, sum(prompt.count(t) * count_tokens_cached(t) for t in observed) - nested)
    definitions = min(definitions, total)
    results = min(results, total - definitions)
    return ContextSplit(definitions, results, total - definitions - results)
