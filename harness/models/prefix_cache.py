"""Saved model states for prompt prefixes that recur across runs, kept in a bounded LRU.

Every run of an arm starts with the same system prompt, tool definitions and worked examples; only the task
text after them differs. The embedded engine saves its state (llama.cpp's KV cells for the prompt) after a
call that evaluated most of its prompt from nothing, and before the next such call restores the saved state
that shares the longest token prefix with the new prompt, so only what follows the shared prefix is
evaluated. Keys are exact token sequences, so a different tool list, scaffold or program simply misses.

The cache is per engine (so per process, and per Ray actor); its bound is in bytes, because a state's size
grows with its token count (for the embedded 1.5B model about 28 KB per token).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import UserError

DEFAULT_CAPACITY_MB = 1024
SWITCH_ENV = "HARNESS_PREFIX_CACHE"
CAPACITY_ENV = "HARNESS_PREFIX_CACHE_MB"


@dataclass(frozen=True)
class SavedPrefix:
    """A model state holding the KV cells of exactly `tokens`."""

    tokens: tuple[int, ...]
    state: bytes

    @property
    def nbytes(self) -> int:
        return len(self.state)


@dataclass(frozen=True)
class PrefixHit:
    """The saved state to restore and how many of the new prompt's tokens it covers."""

    saved: SavedPrefix
    shared_tokens: int


def shared_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """The number of leading tokens `a` and `b` have in common."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PrefixCache:
    """An LRU of saved prefixes, bounded by the total size of their states in bytes."""

    def __init__(self, capacity_bytes: int):
        if capacity_bytes <= 0:
            raise ValueError("a prefix cache needs a positive capacity")
        self.capacity_bytes = capacity_bytes
        self._entries: OrderedDict[tuple[int, ...], SavedPrefix] = OrderedDict()
        self.hits = self.misses = self.evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def best(self, tokens: Sequence[int], at_least: int = 1) -> PrefixHit | None:
        """The saved prefix sharing the most leading tokens with `tokens` (at least `at_least`), marked as
        recently used; None (a miss) when no entry shares that many."""
        found: PrefixHit | None = None
        for entry in self._entries.values():
            shared = shared_prefix_length(entry.tokens, tokens)
            if shared >= at_least and (found is None or shared > found.shared_tokens):
                found = PrefixHit(entry, shared)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(found.saved.tokens)
        return found

    def put(self, tokens: Sequence[int], state: bytes) -> None:
        """Keep `state` for `tokens`, evicting the least recently used entries beyond the capacity. A state
        larger than the whole capacity is not kept."""
        key = tuple(tokens)
        if len(state) > self.capacity_bytes:
            return
        self._entries.pop(key, None)
        self._entries[key] = SavedPrefix(key, state)
        while self.nbytes > self.capacity_bytes:
            self._entries.popitem(last=False)
            self.evictions += 1


def prefix_cache_from_env() -> PrefixCache | None:
    """The engine's cache as the environment sets it: HARNESS_PREFIX_CACHE=0 turns it off (for benchmarks and
    debugging), HARNESS_PREFIX_CACHE_MB bounds its memory (default 1024)."""
    if os.environ.get(SWITCH_ENV, "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    raw = os.environ.get(CAPACITY_ENV, "").strip() or str(DEFAULT_CAPACITY_MB)
    try:
        megabytes = float(raw)
    except ValueError:
        raise UserError(f"{CAPACITY_ENV}={raw!r} is not a number of megabytes") from None
    if megabytes <= 0:
        raise UserError(f"{CAPACITY_ENV} must be positive (set {SWITCH_ENV}=0 to turn the cache off)")
    return PrefixCache(int(megabytes * 1024 * 1024))
