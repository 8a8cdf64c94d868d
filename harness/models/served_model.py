"""What an OpenAI-compatible server says it serves: its `/v1/models` entry for the model a run names, part of the
response cache's key (harness.models.cache). Two servers can serve different models under one name (`openai/model`
on two ports, or one port restarted with other weights or options), so the name alone cannot tell their answers
apart; the server's own description of the model can, where it gives one."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from harness.defaults import DEFAULT_SERVED_MODEL_TIMEOUT_S

# Fields of a model entry that change from one request to the next (vLLM and llama.cpp's server stamp `created`
# with the time of the request; vLLM's `permission` carries a new id each time): left out, or no two runs would
# share a key.
VOLATILE_FIELDS = frozenset({"created", "permission", "permissions"})


def served_name(model: str) -> str:
    """The name a server knows the model by: the LiteLLM string without its provider ('openai/qwen' -> 'qwen')."""
    return model.split("/", 1)[1] if "/" in model else model


def pick_entry(listing: Any, name: str) -> dict[str, Any] | None:
    """The entry of a `/v1/models` listing for `name`: the one with that id, else the only one (a server of one model,
    as llama.cpp's, answers under any name); None when the listing names neither."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    models = [entry for entry in entries if isinstance(entry, dict)]
    found = [entry for entry in models if entry.get("id") == name] or (models if len(models) == 1 else [])
    if not found:
        return None
    return {field: value for field, value in found[0].items() if field not in VOLATILE_FIELDS}


def served_model_entry(api_base: str, model: str, api_key: str | None = None,
                       timeout_s: float = DEFAULT_SERVED_MODEL_TIMEOUT_S) -> dict[str, Any] | None:
    """The server's `/v1/models` entry for `model` (GET `{api_base}/models`, one request), without its volatile
    fields; None when the server does not answer within `timeout_s`, answers something else, or lists no such model
    (a provider that has no such endpoint): the cache is then keyed by the URL alone."""
    request = urllib.request.Request(api_base.rstrip("/") + "/models",
                                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            listing = json.loads(response.read(1_000_000))
    except (OSError, ValueError):  # refused, timed out, an HTTP error status, not JSON
        return None
    return pick_entry(listing, served_name(model))
