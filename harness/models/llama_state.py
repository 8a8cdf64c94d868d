"""Saving and restoring one sequence's state in a llama.cpp context (its KV cells), through llama.cpp's public C API.

A restored state gives the sequence exactly the KV cells it had when saved, so evaluating a prompt after a
restore only computes the tokens past the restored prefix. A state saved from any sequence loads into any
sequence (llama.cpp's destination sequence id): the single-sequence engine uses sequence 0, the batched one
(harness.models.llama_batch) whichever sequence serves the call.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

SEQUENCE = 0


def save_sequence(ctx: Any, seq: int) -> bytes:
    """The state of the KV cells of sequence `seq`."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(ctx, seq)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, seq)
    return ctypes.string_at(buffer, written)


def restore_sequence(ctx: Any, seq: int, state: bytes, keep: int) -> bool:
    """Load a saved state into sequence `seq` (replacing its cells) and keep its first `keep` positions. False if
    llama.cpp refused the state; the sequence is then empty."""
    import llama_cpp

    memory = llama_cpp.llama_get_memory(ctx)
    llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
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
