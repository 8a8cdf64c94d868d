"""Grammar-constrained greedy decoding that checks one token instead of the whole vocabulary.

Under greedy decoding the grammar only matters when the model's most likely token is one the grammar refuses.
So the most likely token is checked alone against the grammar; only when it is refused is the grammar applied
to every candidate and the best allowed token taken. The chosen token is the same as with the full grammar
applied first (the best allowed token is the best token whenever that one is allowed), at a fraction of the
cost per generated token. llama.cpp's own common sampler uses the same shortcut. With sampling (temperature
above 0) the shortcut would change the distribution, so the engine uses the full grammar there.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np


class GrammarState:
    """One completion's grammar state (a llama.cpp grammar sampler fed with the tokens chosen so far), used
    lazily: `greedy` checks the best token alone and masks the whole vocabulary only on a refusal (counted)."""

    def __init__(self, vocab: Any, grammar: str, root: str = "root"):
        import llama_cpp

        self._llama_cpp = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), root.encode("utf-8"))
        if not self._sampler:
            raise ValueError("llama.cpp could not build a sampler from this grammar")
        self.refusals = 0

    def close(self) -> None:
        if self._sampler:
            self._llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()

    def accept(self, token: int) -> None:
        self._llama_cpp.llama_sampler_accept(self._sampler, int(token))

    def apply(self, ids: np.ndarray, logits: np.ndarray) -> None:
        """Let the grammar set the logits of the tokens it refuses to -inf (in place)."""
        llama_cpp = self._llama_cpp
        data = np.zeros(len(ids), dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)],
                                                  align=True))
        data["id"], data["logit"] = ids, logits
        array = llama_cpp.llama_token_data_array(
            data=data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), size=len(ids), selected=-1,
            sorted=False)
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(array))
        logits[:] = data["logit"]

    def masked(self, scores: np.ndarray) -> np.ndarray:
        """A copy of `scores` with every token the grammar refuses at -inf."""
        masked = np.array(scores, dtype=np.single)
        self.apply(np.arange(len(masked), dtype=np.intc), masked)
        return masked

    def lazy(self, scores: np.ndarray) -> np.ndarray:
        """`scores` itself when the grammar allows its best token, else the masked copy (a refusal)."""
        best = int(np.argmax(scores))
        single = np.array([scores[best]], dtype=np.single)
        self.apply(np.array([best], dtype=np.intc), single)
        if np.isfinite(single[0]):
            return scores
        self.refusals += 1
        return self.masked(scores)


class LazyGrammar:
    """A llama-cpp-python logits processor for one completion: it keeps its own grammar state, fed with the
    tokens generated so far, and masks the logits only when the greedy token is refused."""

    def __init__(self, llm: Any, grammar: str, prompt_tokens: int, root: str = "root"):
        import llama_cpp

        self._state = GrammarState(llama_cpp.llama_model_get_vocab(llm.model), grammar, root)
        self._fed = prompt_tokens

    @property
    def refusals(self) -> int:
        return self._state.refusals

    def close(self) -> None:
        self._state.close()

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        for token in input_ids[self._fed:]:  # the tokens sampled (and evaluated) since the last call
            self._state.accept(int(token))
        self._fed = len(input_ids)
        return self._state.lazy(scores)
