"""How one sequence of a batch chooses its next token and when its reply ends, exactly as llama-cpp-python's
`create_completion` does for a single sequence, so a call decoded in a batch replies as it would alone.

- Greedy (temperature 0): the best token of the sequence's logits row; under a grammar checked lazily
  (harness.models.lazy_grammar) or, with the lazy grammar off, masked in full first.
- Sampling: a llama.cpp sampler chain of the sequence's own (grammar, top-k 40, typical 1, top-p, min-p 0.05,
  temperature, a seeded draw), the chain create_completion builds.
- The reply ends at an end-of-generation token, at the first of the stop strings found in the detokenized text
  (the text is cut before it, stop strings tried in the order given), or after `max_tokens` tokens.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from harness.models.lazy_grammar import GrammarState

TOP_K, TYPICAL_P, MIN_P = 40, 1.0, 0.05  # create_completion's defaults

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class Sampling:
    """One call's decoding parameters."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    grammar: str | None = None
    lazy_grammar: bool = True


class TokenPicker:
    """The next-token rule of one sequence; owns its llama.cpp samplers (`close` frees them)."""

    def __init__(self, model: Any, sampling: Sampling):
        import llama_cpp

        self._llama_cpp = llama_cpp
        vocab = llama_cpp.llama_model_get_vocab(model)
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        self.greedy = sampling.temperature == 0
        self._grammar = GrammarState(vocab, sampling.grammar) if sampling.grammar and self.greedy else None
        self._lazy = sampling.lazy_grammar
        self._chain = None
        if not self.greedy:
            chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
            parts = [llama_cpp.llama_sampler_init_top_k(TOP_K), llama_cpp.llama_sampler_init_typical(TYPICAL_P, 1),
                     llama_cpp.llama_sampler_init_top_p(sampling.top_p, 1),
                     llama_cpp.llama_sampler_init_min_p(MIN_P, 1), llama_cpp.llama_sampler_init_temp(
                         sampling.temperature), llama_cpp.llama_sampler_init_dist(sampling.seed)]
            if sampling.grammar:
                grammar = llama_cpp.llama_sampler_init_grammar(vocab, sampling.grammar.encode(), b"root")
                if not grammar:
                    llama_cpp.llama_sampler_free(chain)
                    raise ValueError("llama.cpp could not build a sampler from this grammar")
                parts.insert(0, grammar)
            for part in parts:
                llama_cpp.llama_sampler_chain_add(chain, part)  # the chain owns its parts
            self._chain = chain

    @property
    def refusals(self) -> int:
        return self._grammar.refusals if self._grammar else 0

    def pick(self, ctx: Any, index: int) -> int:
        """The token chosen from the logits of batch entry `index`, accepted into the sequence's grammar."""
        if self._chain is not None:
            return int(self._llama_cpp.llama_sampler_sample(self._chain, ctx, index))
        pointer = self._llama_cpp.llama_get_logits_ith(ctx, index)
        scores = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(self._n_vocab,))
        if self._grammar is not None:
            scores = self._grammar.lazy(scores) if self._lazy else self._grammar.masked(scores)
        token = int(np.argmax(scores))
        if self._grammar is not None:
            self._grammar.accept(token)
        return token

    def close(self) -> None:
        if self._grammar is not None:
            self._grammar.close()
        if self._chain is not None:
            self._llama_cpp.llama_sampler_free(self._chain)
            self._chain = None


class ReplyText:
    """A sequence's reply so far and create_completion's rule for when it ends (multi-byte characters are not cut:
    the stop check waits for a character's last byte)."""

    def __init__(self, detokenize: Callable[[list[int]], bytes], is_eog: Callable[[int], bool],
                 stop: tuple[str, ...], max_tokens: int):
        self._detokenize, self._is_eog, self.max_tokens = detokenize, is_eog, max_tokens
        self._stops = [s.encode("utf-8") for s in stop]
        self.tokens: list[int] = []
        self._multibyte_fix = 0
        self.text: str | None = None  # set when the reply has ended
        self.finish_reason: FinishReason = "length"

    def add(self, token: int) -> bool:
        """Take the next token; True when the reply has ended (then `text` and `finish_reason` are set)."""
        if self._is_eog(token):
            return self._end(self._detokenize(self.tokens), "stop")
        self.tokens.append(token)
        text = self._detokenize(self.tokens)
        for k, char in enumerate(text[-3:]):
            k = 3 - k
            for num, pattern in ((2, 192), (3, 224), (4, 240)):
                if num > k and pattern & char == pattern:
                    self._multibyte_fix = num - k
        if self._multibyte_fix > 0:
            self._multibyte_fix -= 1
            return False
        found = [s for s in self._stops if s in text]
        if found:
            return self._end(text[: text.index(found[0])], "stop")
        if len(self.tokens) >= self.max_tokens:
            return self._end(text, "length")
        return False

    def _end(self, text: bytes, reason: FinishReason) -> bool:
        self.text, self.finish_reason = text.decode("utf-8", errors="ignore"), reason
        return True
