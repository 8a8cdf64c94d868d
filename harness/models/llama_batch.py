"""Continuous batching: several LM calls decoded together in one llama.cpp context.

A CPU generates a small model's tokens at the speed it reads the weights, so one decoding step for several
sequences costs little more than a step for one. One thread owns the context and runs a step loop: a call
joins when it arrives (it takes a free sequence id, the one that already holds the longest prefix of its prompt,
or restores a saved prefix from the cache into it), each step puts every active sequence's pending tokens (a
joiner's prompt, in chunks, or a decoder's last token) into one batch decoded with one llama_decode, and each
sequence picks its next token from its own logits row with its own sampler, grammar and stop strings
(harness.models.token_picker); a call leaves as soon as its reply ends, the others keep decoding. A stopped
command (harness.models.stopping) ends every call between two steps.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from harness.models.llama_state import restore_sequence, save_sequence
from harness.models.messages import ReuseSource
from harness.models.prefix_cache import PrefixCache, shared_prefix_length
from harness.models.stopping import decoding_stopped, stopped_error
from harness.models.token_picker import FinishReason, ReplyText, Sampling, TokenPicker

# A restore copies a saved state (tens of ms); it pays only when it spares more than a few tokens' evaluation.
MIN_RESTORE_GAIN = 32
# A call is worth a saved state when it evaluated a long prompt mostly from nothing: a run's first call.
MIN_SAVE_TOKENS = 256


@dataclass(frozen=True)
class BatchReply:
    """One call's reply and how it was decoded (the engine's CallStats fields)."""

    text: str
    prompt_tokens: int
    reused_prompt_tokens: int
    completion_tokens: int
    prompt_seconds: float
    seconds: float
    finish_reason: FinishReason
    reuse_source: ReuseSource
    grammar_refusals: int


@dataclass
class _Call:
    tokens: list[int]
    sampling: Sampling
    stop: tuple[str, ...]
    max_tokens: int
    future: Future = field(default_factory=Future)
    submitted: float = field(default_factory=time.perf_counter)


@dataclass
class _Sequence:
    """A sequence id of the context: the tokens its KV cells hold, and the call it serves (None: free)."""

    seq: int
    held: list[int] = field(default_factory=list)
    call: _Call | None = None
    pending: list[int] = field(default_factory=list)
    picker: TokenPicker | None = None
    reply: ReplyText | None = None
    prompting: bool = False
    evaluated: int = 0
    reused: int = 0
    source: ReuseSource = "none"
    prompt_seconds: float = 0.0
    last_used: float = 0.0


class BatchDecoder:
    """The step loop over one context with `n_seq` sequences of up to `n_ctx_seq` tokens each; `submit` is safe
    from any thread and returns the reply's future."""

    def __init__(self, llm: Any, ctx: Any, n_seq: int, n_ctx_seq: int, n_batch: int,
                 prefix_cache: PrefixCache | None = None):
        import llama_cpp

        self._llama_cpp, self._llm, self.ctx = llama_cpp, llm, ctx
        self.n_seq, self.n_ctx_seq, self.n_batch, self.prefix_cache = n_seq, n_ctx_seq, n_batch, prefix_cache
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._sequences = [_Sequence(i) for i in range(n_seq)]
        self._inbox: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._waiting: deque[_Call] = deque()
        self.steps = 0
        self.step_sizes: list[int] = []  # sequences decoded per step: how full the batches were
        self._thread = threading.Thread(target=self._loop, name="llama-batch", daemon=True)
        self._thread.start()

    def submit(self, tokens: list[int], sampling: Sampling, stop: tuple[str, ...], max_tokens: int) -> Future:
        call = _Call(list(tokens), sampling, stop, max_tokens)
        self._inbox.put(call)
        return call.future

    # ---- the decoding thread ----

    def _loop(self) -> None:
        while True:
            active = [s for s in self._sequences if s.call is not None]
            try:
                self._waiting.append(self._inbox.get(block=not active and not self._waiting))
                while True:
                    self._waiting.append(self._inbox.get_nowait())
            except queue.Empty:
                pass
            if decoding_stopped():  # the command was stopped: end every call now, between two steps
                self._stop_all()
                continue
            try:
                self._admit()
                if any(s.call is not None for s in self._sequences):
                    self._step()
            except Exception as exc:  # a bug here must fail the calls in flight, not leave them waiting forever
                for sequence in self._sequences:
                    if sequence.call is not None:
                        self._fail(sequence, exc)

    def _stop_all(self) -> None:
        stopped = stopped_error()
        for sequence in self._sequences:
            if sequence.call is not None:
                self._fail(sequence, stopped)
        while self._waiting:
            self._waiting.popleft().future.set_exception(stopped)

    def _admit(self) -> None:
        """Give waiting calls free sequences: the one holding the longest prefix of the prompt (its run's
        previous turn), else the least recently used. A few shared tokens (the chat template's opening, which every
        prompt shares) do not count: taking another context's sequence for them would destroy that context (a
        conversation's other speaker, another run's turn) while an unused one was free."""
        while self._waiting:
            free = [s for s in self._sequences if s.call is None]
            if not free:
                return
            call = self._waiting.popleft()
            chosen = _sequence_for(free, call.tokens)
            try:
                self._start(chosen, call)
            except Exception as exc:  # a grammar llama.cpp refuses, a state it cannot load: this call only
                self._release(chosen)
                call.future.set_exception(exc)

    def _start(self, sequence: _Sequence, call: _Call) -> None:
        tokens = call.tokens
        keep = min(shared_prefix_length(sequence.held, tokens), len(tokens) - 1)
        sequence.call, sequence.source = call, "none"
        sequence.picker = TokenPicker(self._llm.model, call.sampling)
        sequence.reply = ReplyText(self._detokenize, self._is_eog, call.stop, call.max_tokens)
        if not self._restore(sequence, tokens, keep):
            self._llama_cpp.llama_memory_seq_rm(self._memory, sequence.seq, keep, -1)
            sequence.held = sequence.held[:keep]
            sequence.source = "context" if sequence.held else "none"
        sequence.reused = len(sequence.held)
        sequence.pending, sequence.prompting = tokens[len(sequence.held):], True
        sequence.evaluated, sequence.prompt_seconds = 0, 0.0

    def _restore(self, sequence: _Sequence, tokens: list[int], held: int) -> bool:
        """Restore the saved prefix sharing the most tokens with the prompt into this sequence, if it shares
        more than the sequence already holds; at least the prompt's last token is always evaluated."""
        if self.prefix_cache is None:
            return False
        hit = self.prefix_cache.best(tokens, at_least=held + MIN_RESTORE_GAIN)
        if hit is None:
            return False
        keep = min(hit.shared_tokens, len(tokens) - 1)
        if not restore_sequence(self.ctx, sequence.seq, hit.saved.state, keep, self.n_seq):
            self.prefix_cache.forget(hit.saved.tokens)  # a state this llama.cpp cannot load: evaluate instead
            sequence.held = []
            return False
        sequence.held, sequence.source = list(hit.saved.tokens[:keep]), "prefix_cache"
        return True

    def _step(self) -> None:
        """One llama_decode over every active sequence's next tokens (decoders first, then prompt chunks up to
        the batch size), then one token picked for each sequence whose prompt is done."""
        batch, room = self._batch, self.n_batch
        entries: list[tuple[_Sequence, list[int], int | None]] = []  # (sequence, tokens, index of its logits)
        n = 0
        for sequence in sorted((s for s in self._sequences if s.call is not None), key=lambda s: s.prompting):
            chunk = sequence.pending[:room]
            if not chunk:
                continue
            last = len(chunk) == len(sequence.pending)
            for i, token in enumerate(chunk):
                batch.token[n] = token
                batch.pos[n] = len(sequence.held) + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = sequence.seq
                batch.logits[n] = last and i == len(chunk) - 1
                n += 1
            entries.append((sequence, chunk, n - 1 if last else None))
            room -= len(chunk)
            if room == 0:
                break
        batch.n_tokens = n
        started = time.perf_counter()
        status = self._llama_cpp.llama_decode(self.ctx, batch)
        seconds = time.perf_counter() - started
        self.steps += 1
        self.step_sizes.append(len(entries))
        if status != 0:
            for sequence, _, _ in entries:
                self._fail(sequence, RuntimeError(f"llama_decode failed ({status}) on a batch of {n} tokens"))
            return
        for sequence, chunk, index in entries:
            sequence.held.extend(chunk)
            del sequence.pending[: len(chunk)]
            if sequence.prompting:
                sequence.evaluated += len(chunk)
                sequence.prompt_seconds += seconds
            if index is None:
                continue
            sequence.prompting = False
            self._advance(sequence, index)

    def _advance(self, sequence: _Sequence, index: int) -> None:
        assert sequence.picker is not None and sequence.reply is not None
        try:
            token = sequence.picker.pick(self.ctx, index)
        except Exception as exc:
            self._fail(sequence, exc)
            return
        if sequence.reply.add(token):
            self._finish(sequence)
        else:
            sequence.pending = [token]

    def _finish(self, sequence: _Sequence) -> None:
        call, reply, picker = sequence.call, sequence.reply, sequence.picker
        assert call is not None and reply is not None and picker is not None and reply.text is not None
        result = BatchReply(reply.text, len(call.tokens), sequence.reused, len(reply.tokens), sequence.prompt_seconds,
                            time.perf_counter() - call.submitted, reply.finish_reason, sequence.source,
                            picker.refusals)
        self._save(sequence, len(call.tokens))
        self._release(sequence)
        call.future.set_result(result)

    def _save(self, sequence: _Sequence, prompt_tokens: int) -> None:
        """Save the sequence after a call that evaluated most of a long prompt: the next run of the same arm
        shares its prefix up to the task text."""
        evaluated = sequence.evaluated
        if self.prefix_cache is not None and evaluated >= MIN_SAVE_TOKENS and 2 * evaluated >= prompt_tokens:
            self.prefix_cache.put(list(sequence.held), save_sequence(self.ctx, sequence.seq, self.n_seq))

    def _fail(self, sequence: _Sequence, exc: Exception) -> None:
        call = sequence.call
        self._llama_cpp.llama_memory_seq_rm(self._memory, sequence.seq, -1, -1)
        sequence.held = []
        self._release(sequence)
        if call is not None:
            call.future.set_exception(exc)

    def _release(self, sequence: _Sequence) -> None:
        if sequence.picker is not None:
            sequence.picker.close()
        sequence.call, sequence.picker, sequence.reply, sequence.pending = None, None, None, []
        sequence.prompting, sequence.last_used = False, time.perf_counter()

    def _detokenize(self, tokens: list[int]) -> bytes:
        return self._llm.detokenize(tokens)

    def _is_eog(self, token: int) -> bool:
        return bool(self._llama_cpp.llama_vocab_is_eog(self._vocab, token))


def _sequence_for(free: list[_Sequence], tokens: list[int]) -> _Sequence:
    """The free sequence holding the longest prefix of `tokens` worth restoring, else the least recently used."""

    def worth(sequence: _Sequence) -> tuple[int, float]:
        shared = shared_prefix_length(sequence.held, tokens)
        return (shared if shared >= MIN_RESTORE_GAIN else 0), -sequence.last_used

    return max(free, key=worth)


def batched_decoder(llm: Any, n_seq: int, n_ctx_seq: int, prefix_cache: PrefixCache | None) -> BatchDecoder:
    """A context of `n_seq` sequences of `n_ctx_seq` tokens each over `llm`'s model (its own context's settings,
    one KV stream per sequence, so attention reads only a sequence's own cells), and its step loop. A size that
    cannot fit is a UserError before anything is allocated (harness.models.batching)."""
    import llama_cpp
    from llama_cpp import _internals

    from harness.models.batching import KVShape, available_memory, check_fits

    model = llm.model
    n_head = llama_cpp.llama_model_n_head(model)
    shape = KVShape(llama_cpp.llama_model_n_layer(model), llama_cpp.llama_model_n_head_kv(model),
                    llama_cpp.llama_model_n_embd(model) // max(n_head, 1))
    cache_bytes = prefix_cache.capacity_bytes if prefix_cache is not None else 0
    check_fits(n_seq, n_ctx_seq, shape, cache_bytes, available_memory(), llama_cpp.llama_max_parallel_sequences())
    params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx, params.n_seq_max, params.kv_unified = n_seq * n_ctx_seq, n_seq, False
    context = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    decoder = BatchDecoder(llm, context.ctx, n_seq, n_ctx_seq, params.n_batch, prefix_cache)
    decoder.context = context  # keeps the context alive as long as its decoder
    return decoder
