"""Saving and restoring one sequence's state in a llama.cpp context (its KV cells), through llama.cpp's public C API.

A restored state gives the sequence exactly the KV cells it had when saved, so evaluating a prompt after a
restore only computes the tokens past the restored prefix. A state saved from any sequence loads into any
sequence (llama.cpp's destination sequence id): the single-sequence engine uses sequence 0, the batched one
(harness.models.llama_batch) whichever sequence serves the call.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence
from typing import Any

SEQUENCE = 0
_COUNT = struct.Struct("<I")  # llama.cpp's stream count and per-stream cell count
_HEADER = 2 * _COUNT.size  # before the stream count: a magic number and the sequence id


def save_sequence(ctx: Any, seq: int, streams: int = 1) -> bytes:
    """The state of the KV cells of sequence `seq`, in the single-stream layout whatever the context's.

    After a magic number and the sequence id, a context with one KV stream per sequence (`streams` = its
    sequence count) writes the stream count, then a block per stream (a cell count, then the cells), empty (a zero
    count) for every stream but the sequence's own; keeping only that block under a count of 1 (and sequence 0)
    gives the layout a single-stream context writes, so a saved state loads into any sequence of any context
    (llama.cpp refuses a state whose stream count differs from its own)."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(ctx, seq)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, seq)
    state = ctypes.string_at(buffer, written)
    if streams == 1:
        return state
    head, tail = _HEADER + _COUNT.size * (1 + seq), _COUNT.size * (streams - 1 - seq)
    return state[:_HEADER - _COUNT.size] + _COUNT.pack(0) + _COUNT.pack(1) + state[head: len(state) - tail]


def _in_streams(state: bytes, seq: int, streams: int) -> bytes:
    """A single-stream state in the layout of a context with `streams` streams, for sequence `seq`'s stream (the
    inverse of save_sequence's conversion)."""
    if streams == 1:
        return state
    empty = _COUNT.pack(0)
    return (state[:_HEADER - _COUNT.size] + _COUNT.pack(seq) + _COUNT.pack(streams) + empty * seq
            + state[_HEADER + _COUNT.size:] + empty * (streams - 1 - seq))


def restore_sequence(ctx: Any, seq: int, state: bytes, keep: int, streams: int = 1) -> bool:
    """Load a saved state (single-stream layout) into sequence `seq` (replacing its cells) and keep its first
    `keep` positions. False if llama.cpp refused the state; the sequence is then empty."""
    import llama_cpp

    memory = llama_cpp.llama_get_memory(ctx)
    llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
    state = _in_streams(state, seq, streams)
    source = ctypes.cast(ctypes.c_char_p(state), ctypes.POINTER(ctypes.c_uint8))  # no copy of the bytes
    if llama_cpp.llama_state_seq_set_data(ctx, source, len(state), seq) == 0:
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        return False
    if not llama_cpp.llama_memory_seq_rm(memory, seq, max(0, keep), -1):
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        return False
    return True


def save_state(llm: Any) -> tuple[list[int], bytes]:
    """The tokens a single-sequence Llama's context holds and the state of their KV cells."""
    return llm.input_ids[: llm.n_tokens].tolist(), save_sequence(llm.ctx, SEQUENCE)


def restore_state(llm: Any, tokens: Sequence[int], state: bytes, keep: int) -> bool:
    """Load a saved state into a single-sequence Llama and keep its first `keep` tokens (the rest of the KV cells
    are dropped), so the next completion evaluates only what follows them. False (and an empty context) if
    llama.cpp refused the state."""
    import llama_cpp

    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llm.ctx), True)
    keep = max(0, min(keep, len(tokens)))
    if not restore_sequence(llm.ctx, SEQUENCE, state, keep):
        llm.reset()
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llm.ctx), True)
        return False
    llm.input_ids[:keep] = tokens[:keep]
    llm.n_tokens = keep
    return True
