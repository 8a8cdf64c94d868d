"""How many sequences the embedded engine decodes together and how large their context is: the arithmetic that
needs no llama.cpp, so the CLI can name the default and refuse an impossible size before loading anything.

Each of N sequences gets the context one run has alone (HARNESS_LOCAL_N_CTX), so a batched context holds N times
as many KV cells; their memory (llama.cpp's f16 K and V per layer and KV head) plus the prefix cache's bound must
fit in the memory the machine has available, with a margin for everything else the process holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from harness.errors import UserError

DEFAULT_N_CTX = 16384  # tokens of context per sequence: one run's window on the embedded model
MEMORY_SHARE = 0.8  # of the available memory, the most the KV cells and the prefix cache may take
GIB = 1024 ** 3


@dataclass(frozen=True)
class KVShape:
    """What a KV cell costs for one model: layers x KV heads x head size, K and V, f16."""

    n_layer: int
    n_head_kv: int
    head_dim: int
    bytes_per_value: int = 2

    @property
    def bytes_per_token(self) -> int:
        return self.n_layer * self.n_head_kv * self.head_dim * 2 * self.bytes_per_value


def local_n_ctx() -> int:
    """The embedded model's context per sequence, in tokens: HARNESS_LOCAL_N_CTX, else DEFAULT_N_CTX (a run's
    context window on that model)."""
    return int(os.environ.get("HARNESS_LOCAL_N_CTX") or DEFAULT_N_CTX)


def available_memory() -> int:
    """Bytes the kernel says a new allocation can take without swapping (MemAvailable), else physical memory."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_fits(sequences: int, n_ctx: int, shape: KVShape, prefix_cache_bytes: int, available: int,
               max_sequences: int) -> None:
    """A one-line UserError when `sequences` contexts of `n_ctx` tokens cannot be held: more sequences than
    llama.cpp decodes together, or KV cells plus the prefix cache's bound above MEMORY_SHARE of `available`."""
    if sequences > max_sequences:
        raise UserError(f"--max-concurrency {sequences} is more than the {max_sequences} sequences llama.cpp decodes "
                        "together; lower it")
    need = sequences * n_ctx * shape.bytes_per_token
    room = int(available * MEMORY_SHARE) - prefix_cache_bytes
    if need > room:
        raise UserError(
            f"--max-concurrency {sequences} on the embedded model needs {sequences} x {n_ctx} tokens of KV cache = "
            f"{need / GIB:.1f} GiB, but only {max(room, 0) / GIB:.1f} GiB fit ({MEMORY_SHARE:.0%} of "
            f"{available / GIB:.1f} GiB available, less the prefix cache's {prefix_cache_bytes / GIB:.1f} GiB); "
            "lower --max-concurrency, HARNESS_LOCAL_N_CTX or HARNESS_PREFIX_CACHE_MB")


def default_concurrency(cores: int | None = None) -> int:
    """The embedded model's default --max-concurrency: runs decoded together per core (measured on 2 cores,
    docs/experiments.md, 'Batched decoding'), at least 1."""
    cores = cores or os.cpu_count() or 1
    return max(1, RUNS_PER_CORE * cores)


RUNS_PER_CORE = 1  # on 2 cores: 2 runs at once 1.18x the runs/s of 1, 4 runs 1.08x and 0.9 GB more
