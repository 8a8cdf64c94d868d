"""An on-disk LM response cache: an identical request (model, endpoint, messages, parameters, and the run's cache
scope) can return a stored response instead of calling the model again. Which stored responses a call may reuse is
the run's cache mode, since a repeat is a measurement:

- `resume` (the default): only the calls of the same run id, so resuming an interrupted run does not pay for what
  it already asked, while a new run of the same command (another sample of a noise floor) asks the model again;
- `replay`: any run's stored answer to the same request (the newest), to reproduce a run without the model; a
  request no run stored is asked and stored;
- `off` (`--no-cache`): no engine of this module at all.

The key holds the endpoint (an `--api-base` server's URL and what it says it serves: harness.models.served_model),
so two servers answering under one model name never share answers; a provider's model string is keyed as before.
The scope keeps independent samples apart (each run's requests carry their epoch, harness.models.messages
.with_cache_scope). A cache hit is marked in the response id (`was_cache_hit`); rows count hits, and reports,
gates and the run's summary say how many there were.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from dspy.lm15 import Request, Response, Usage, response_to_events

from harness.env import cache_dir
from harness.files import atomic_write_text
from harness.models.messages import (
    CACHE_RUN_KEY,
    GRAMMAR_KEY,
    REPLY_KEY,
    SCOPE_KEY,
    reply_response,
    request_cache_run,
    request_cache_scope,
    request_messages,
    request_tool_choice,
    request_tools,
    response_text,
    used_grammar,
)

HIT_PREFIX = "harness-cache-hit:"

CacheMode = Literal["resume", "replay", "off"]
# each mode as `harness run --help`, the manifest's readers and the docs describe it
CACHE_MODES: dict[str, str] = {
    "resume": "reuse only this run's own stored answers (resuming it); a new run id asks the model again",
    "replay": "reuse any run's stored answer to the same request (reproduce a run without asking the model)",
    "off": "ask the model for every call and store nothing",
}


def was_cache_hit(response: Response) -> bool:
    """True if this response came from the cache rather than the model (read per call by the recorder)."""
    return bool(response.id) and response.id.startswith(HIT_PREFIX)


def request_key(model: str, request: Request, scope: str, grammar: str | None = None,
                endpoint: dict[str, Any] | None = None) -> str:
    """Everything that can change the answer: model, endpoint, system, messages, tools, sampling parameters,
    extensions (the declared reply shape), scope. `grammar`: the one the engine builds from the reply shape, which
    stands in the key for the shape, so a changed grammar is a changed request (and the key is the one a request
    carrying that grammar itself had). `endpoint`: what the engine says about the server it asks (None: a provider's
    model string, or an engine in process, which its model string names)."""
    config = request.config
    payload = {"model": model, "messages": request_messages(request), "scope": scope,
               "temperature": config.temperature, "max_tokens": config.max_tokens, "seed": config.seed,
               "stop": list(config.stop), "top_p": config.top_p, "top_k": config.top_k,
               "frequency_penalty": config.frequency_penalty, "presence_penalty": config.presence_penalty,
               "response_format": config.response_format}
    # only when set, so entries stored before tools, grammars and endpoints existed keep their keys
    for name, value in (("tools", request_tools(request)), ("tool_choice", request_tool_choice(request)),
                        ("extensions", _keyed_extensions(config.extensions, grammar)), ("endpoint", endpoint)):
        if value:
            payload[name] = value
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _keyed_extensions(extensions: dict[str, Any] | None, grammar: str | None) -> dict[str, Any] | None:
    """The request's extensions as the key sees them: with `grammar` in place of the reply shape, and without the
    cache scope (keyed on its own) or the run id (which names the stored entry, not the request)."""
    metadata = extensions.get("metadata") if extensions else None
    if isinstance(metadata, dict) and (SCOPE_KEY in metadata or CACHE_RUN_KEY in metadata):
        metadata = {name: value for name, value in metadata.items() if name not in (SCOPE_KEY, CACHE_RUN_KEY)}
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


def _run_file(run: str) -> str:
    """The file name of one run's entry under a key: the run id hashed (a run id is any text a user gave)."""
    return hashlib.sha256(run.encode()).hexdigest()[:20] + ".json"


class CachingEngine:
    """Wraps any engine; the inner engine's `model_id` (or class name) is part of the key, and so is the
    grammar it would decode a request under, when it builds one (`reply_grammar`), and the endpoint it asks, when it
    says (`endpoint_identity`, asked once per engine: harness.models.litellm_engine). Each run's answer to a key is
    stored apart (`KEY/RUN.json`), so `mode` decides whose answers a call reuses (the module's docstring)."""

    def __init__(self, inner: Any, directory: Path | None = None, mode: CacheMode = "resume"):
        if mode not in ("resume", "replay"):
            raise ValueError(f"a caching engine reuses answers in mode resume or replay, not {mode!r}")
        self.inner, self.mode = inner, mode
        self.directory = directory or cache_dir() / "lm-responses"
        self.model = getattr(inner, "model_id", None) or getattr(inner, "model", None) or type(inner).__name__

    def key(self, request: Request) -> str:
        """The request's key for this engine's model and endpoint."""
        reply_grammar = getattr(self.inner, "reply_grammar", None)  # an engine that decodes under grammars
        endpoint = getattr(self.inner, "endpoint_identity", None)
        return request_key(self.model, request, request_cache_scope(request),
                           reply_grammar(request) if reply_grammar else None, endpoint() if endpoint else None)

    def _entries(self, key: str, run: str) -> list[Path]:
        """Where a stored answer may be, in the order tried: this run's own; in replay mode then every other run's,
        newest first, and an entry stored before answers were kept per run (`KEY.json`)."""
        folder = self.directory / key[:2] / key
        own = folder / _run_file(run)
        if self.mode == "resume":
            return [own]
        try:
            others = sorted((p for p in folder.glob("*.json") if p != own), key=lambda p: p.stat().st_mtime,
                            reverse=True)
        except OSError:  # an entry removed while listed
            others = []
        return [own, *others, self.directory / key[:2] / f"{key}.json"]

    def _stored(self, key: str, run: str) -> Response | None:
        for path in self._entries(key, run):
            try:
                return _stored_response(key, json.loads(path.read_text()))
            except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
        return None

    def complete(self, request: Request) -> Response:
        key, run = self.key(request), request_cache_run(request)
        stored = self._stored(key, run)
        if stored is not None:
            return stored
        response = self.inner.complete(request)
        usage = response.usage or Usage()
        record = {"model": response.model or self.model, "run_id": run, "text": response_text(response),
                  "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.input} for c in response.tool_calls],
                  "grammar": used_grammar(response), "finish_reason": response.finish_reason or "stop",
                  "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}}
        # concurrent processes never read half a file
        atomic_write_text(self.directory / key[:2] / key / _run_file(run), json.dumps(record))
        return response

    def stream(self, request: Request) -> Iterator[Any]:
        """The (possibly cached) whole response as one event sequence."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()
