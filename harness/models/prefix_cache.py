"""Saved model states for prompt prefixes that recur across runs, kept in a bounded LRU.

Every run of an arm starts with the same system prompt, tool definitions and worked examples; only the task
text after them differs. The embedded engine saves its state (llama.cpp's KV cells for the prompt) after a
call that evaluated most of its prompt from nothing, and before the next such call restores the saved state
that shares the longest token prefix with the new prompt, so only what follows the shared prefix is
evaluated. Keys are exact token sequences, so a different tool list, scaffold or program simply misses.

The cache is per engine (so per process, and per Ray actor); its bound is in bytes, because a state's size
grows with its token count (docs/experiments.md has the size per token measured). Saved states are also written
to disk (harness.models.prefix_store), so a later process restores them instead of evaluating its first run's
prefix again.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError
from harness.models.prefix_store import PrefixStore, store_folder

DEFAULT_CAPACITY_MB = 1024
DEFAULT_DISK_CAPACITY_MB = 2048
SWITCH_ENV = "HARNESS_PREFIX_CACHE"
CAPACITY_ENV = "HARNESS_PREFIX_CACHE_MB"
DISK_CAPACITY_ENV = "HARNESS_PREFIX_CACHE_DISK_MB"
FOLDER_ENV = "HARNESS_PREFIX_CACHE_DIR"


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
    """An LRU of saved prefixes in memory, bounded by the total size of their states in bytes, over an optional
    store on disk that outlives the process (consulted for prefixes not in memory)."""

    def __init__(self, capacity_bytes: int, store: PrefixStore | None = None):
        if capacity_bytes <= 0:
            raise ValueError("a prefix cache needs a positive capacity")
        self.capacity_bytes, self.store = capacity_bytes, store
        self._entries: OrderedDict[tuple[int, ...], SavedPrefix] = OrderedDict()
        self._on_disk: dict[tuple[int, ...], Path] = store.index() if store else {}
        self.hits = self.misses = self.evictions = self.disk_hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def best(self, tokens: Sequence[int], at_least: int = 1) -> PrefixHit | None:
        """The saved prefix sharing the most leading tokens with `tokens` (at least `at_least`), in memory or on
        disk (then read into memory), marked as recently used; None (a miss) when no entry shares that many."""
        best_key, best_shared = None, at_least - 1
        for key in (*self._entries, *self._on_disk):
            shared = shared_prefix_length(key, tokens)
            if shared > best_shared:
                best_key, best_shared = key, shared
        if best_key is not None and best_key not in self._entries and not self._read_from_disk(best_key):
            return self.best(tokens, at_least)  # that file could not be read (and is forgotten): the next best
        if best_key is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(best_key)
        return PrefixHit(self._entries[best_key], best_shared)

    def _read_from_disk(self, key: tuple[int, ...]) -> bool:
        path = self._on_disk.pop(key)
        state = self.store.load(path) if self.store else None
        if state is None:
            return False
        self.disk_hits += 1
        self._keep(key, state)
        self._on_disk[key] = path
        return True

    def forget(self, tokens: Sequence[int]) -> None:
        """Drop a saved prefix that turned out unusable (llama.cpp refused its state), on disk too."""
        key = tuple(tokens)
        self._entries.pop(key, None)
        path = self._on_disk.pop(key, None)
        if path is not None and self.store:
            self.store.forget(path)

    def put(self, tokens: Sequence[int], state: bytes) -> None:
        """Keep `state` for `tokens`, evicting the least recently used entries beyond the capacity. A state
        larger than the whole capacity is not kept."""
        key = tuple(tokens)
        self._keep(key, state)
        if self.store is not None:
            self._on_disk[key] = self.store.save(key, state)

    def _keep(self, key: tuple[int, ...], state: bytes) -> None:
        if len(state) > self.capacity_bytes:
            return
        self._entries.pop(key, None)
        self._entries[key] = SavedPrefix(key, state)
        while self.nbytes > self.capacity_bytes:
            self._entries.popitem(last=False)
            self.evictions += 1


def _megabytes(name: str, default: int) -> float:
    raw = os.environ.get(name, "").strip() or str(default)
    try:
        megabytes = float(raw)
    except ValueError:
        raise UserError(f"{name}={raw!r} is not a number of megabytes") from None
    if megabytes < 0:
        raise UserError(f"{name} must not be negative (set {SWITCH_ENV}=0 to turn the cache off)")
    return megabytes


def prefix_cache_from_env(model_path: Path | None = None, runtime_version: str = "") -> PrefixCache | None:
    """The engine's cache as the environment sets it: HARNESS_PREFIX_CACHE=0 turns it off (for benchmarks and
    debugging), HARNESS_PREFIX_CACHE_MB bounds its memory (default 1024) and HARNESS_PREFIX_CACHE_DISK_MB its
    folder (default 2048; 0: memory only), HARNESS_PREFIX_CACHE_DIR or `prefix-states` in the harness cache.
    Without `model_path` it is memory only."""
    if os.environ.get(SWITCH_ENV, "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    memory = _megabytes(CAPACITY_ENV, DEFAULT_CAPACITY_MB)
    if memory == 0:
        raise UserError(f"{CAPACITY_ENV} must be positive (set {SWITCH_ENV}=0 to turn the cache off)")
    disk = _megabytes(DISK_CAPACITY_ENV, DEFAULT_DISK_CAPACITY_MB)
    store = None
    if model_path is not None and disk > 0:
        root = Path(os.environ.get(FOLDER_ENV) or cache_dir() / "prefix-states")
        folder = store_folder(root, model_path, runtime_version)
        store = PrefixStore(folder, int(disk * 1024 * 1024))
    return PrefixCache(int(memory * 1024 * 1024), store)
