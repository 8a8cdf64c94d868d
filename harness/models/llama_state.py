"""Saving and restoring a llama.cpp context's sequence state (its KV cells), through llama.cpp's public C API.

A restored state gives the context exactly the KV cells it had when saved, so evaluating a prompt after a
restore only computes the tokens past the restored prefix. Only sequence 0 is used: the engine serves one
sequence at a time.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

SEQUENCE = 0


def save_state(llm: Any) -> tuple[list[int], bytes]:
    """The tokens the context holds and the state of their KV cells."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llm.ctx, SEQUENCE)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llm.ctx, buffer, size, SEQUENCE)
    return llm.input_ids[: llm.n_tokens].tolist(), ctypes.string_at(buffer, written)


def restore_state(llm: Any, tokens: Sequence[int], state: bytes, keep: int) -> bool:
    """Load a saved state and keep its first `keep` tokens (the rest of the KV cells are dropped), so the next
    completion evaluates only what follows them. False (and an empty context) if llama.cpp refused the state."""
    import llama_cpp

    memory = llama_cpp.llama_get_memory(llm.ctx)
    llama_cpp.llama_memory_clear(memory, True)
    source = ctypes.cast(ctypes.c_char_p(state), ctypes.POINTER(ctypes.c_uint8))  # no copy of the bytes
    if llama_cpp.llama_state_seq_set_data(llm.ctx, source, len(state), SEQUENCE) == 0:
        llm.reset()
        llama_cpp.llama_memory_clear(memory, True)
        return False
    keep = max(0, min(keep, len(tokens)))
    if not llama_cpp.llama_memory_seq_rm(memory, SEQUENCE, keep, -1):
        llm.reset()
        llama_cpp.llama_memory_clear(memory, True)
        return False
    llm.input_ids[:keep] = tokens[:keep]
    llm.n_tokens = keep
    return True
