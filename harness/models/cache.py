"""An on-disk LM response cache shared across runs: an identical request (model, messages, parameters, and
the run's cache scope) returns the stored response instead of calling the model again.

The scope keeps independent samples independent: each run's requests carry their epoch as the scope
(harness.models.messages.with_cache_scope), so `--epochs 3` makes three
real samples while re-running the same command (or resuming it) is served from the cache. A cache hit is
marked in the response id (`was_cache_hit`); rows count hits, and reports keep their latencies out of
latency statistics.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from dspy.lm15 import Request, Response, Usage, response_to_events

from harness.env import cache_dir
from harness.files import atomic_write_text
from harness.models.messages import (
    GRAMMAR_KEY,
    REPLY_KEY,
    SCOPE_KEY,
    reply_response,
    request_cache_scope,
    request_messages,
    request_tool_choice,
    request_tools,
    response_text,
    used_grammar,
)

HIT_PREFIX = "harness-cache-hit:"


def was_cache_hit(response: Response) -> bool:
    """True if this response came from the cache rather than the model (read per call by the recorder)."""
    return bool(response.id) and response.id.startswith(HIT_PREFIX)


def request_key(model: str, request: Request, scope: str, grammar: str | None = None) -> str:
    """Everything that can change the answer: model, system, messages, tools, sampling parameters, extensions
    (the declared reply shape), scope. `grammar`: the one the engine builds from the reply shape, which stands
    in the key for the shape, so a changed grammar is a changed request (and the key is the one a request
    carrying that grammar itself had)."""
    config = request.config
    payload = {"model": model, "messages": request_messages(request), "scope": scope,
               "temperature": config.temperature, "max_tokens": config.max_tokens, "seed": config.seed,
               "stop": list(config.stop), "top_p": config.top_p, "top_k": config.top_k,
               "frequency_penalty": config.frequency_penalty, "presence_penalty": config.presence_penalty,
               "response_format": config.response_format}
    # only when set, so entries stored before tools and grammars existed keep their keys
    for name, value in (("tools", request_tools(request)), ("tool_choice", request_tool_choice(request)),
                        ("extensions", _keyed_extensions(config.extensions, grammar))):
        if value:
            payload[name] = value
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _keyed_extensions(extensions: dict[str, Any] | None, grammar: str | None) -> dict[str, Any] | None:
    """The request's extensions as the key sees them: with `grammar` in place of the reply shape, and without the
    cache scope (keyed on its own)."""
    metadata = extensions.get("metadata") if extensions else None
    if isinstance(metadata, dict) and SCOPE_KEY in metadata:
        metadata = {name: value for name, value in metadata.items() if name != SCOPE_KEY}
        extensions = {**extensions, "metadata": metadata} if metadata else {
            k: v for k, v in extensions.items() if k != "metadata"}  # type: ignore[union-attr]
    if grammar is None or not extensions:
        return extensions or None
    metadata = {name: value for name, value in (extensions.get("metadata") or {}).items() if name != REPLY_KEY}
    return {**extensions, "metadata": {**metadata, GRAMMAR_KEY: grammar}}


def _stored_response(key: str, stored: dict[str, Any]) -> Response:
    from dspy.lm15 import ToolCallPart

    calls = tuple(ToolCallPart(id=c["id"], name=c["name"], input=c["arguments"]) for c in stored.get("tool_calls", []))
    response = reply_response(stored["text"], stored["model"], Usage(**stored["usage"]), tool_calls=calls,
                              finish_reason=stored.get("finish_reason", "stop"), grammar=stored.get("grammar", False))
    return replace(response, id=f"{HIT_PREFIX}{key}")


class CachingEngine:
    """Wraps any engine; the inner engine's `model_id` (or class name) is part of the key, and so is the
    grammar it would decode a request under, when it builds one (`reply_grammar`)."""

    def __init__(self, inner: Any, directory: Path | None = None):
        self.inner = inner
        self.directory = directory or cache_dir() / "lm-responses"
        self.model = getattr(inner, "model_id", None) or getattr(inner, "model", None) or type(inner).__name__

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def complete(self, request: Request) -> Response:
        reply_grammar = getattr(self.inner, "reply_grammar", None)  # an engine that decodes under grammars
        key = request_key(self.model, request, request_cache_scope(request),
                          reply_grammar(request) if reply_grammar else None)
        path = self._path(key)
        try:
            return _stored_response(key, json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError):
            pass
        response = self.inner.complete(request)
        usage = response.usage or Usage()
        record = {"model": response.model or self.model, "text": response_text(response),
                  "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.input} for c in response.tool_calls],
                  "grammar": used_grammar(response), "finish_reason": response.finish_reason or "stop",
                  "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}}
        atomic_write_text(path, json.dumps(record))  # concurrent processes never read half a file
        return response

    def stream(self, request: Request) -> Iterator[Any]:
        """The (possibly cached) whole response as one event sequence."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()
