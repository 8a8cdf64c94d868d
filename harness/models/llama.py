"""The embedded model run in process by llama.cpp as a DSPy engine (the model file itself: harness.models.model_file).

Prompt evaluation is the cost on a CPU, so the engine evaluates each prompt token as rarely as it can:
- consecutive calls of an agent loop share their prefix (system prompt, tools, examples and task first, the
  growing trajectory last), and the llama.cpp context keeps the previous call's tokens, so a new turn only
  evaluates what is new;
- the prefix every run of an arm shares (instructions, tool definitions, worked examples) is saved after the
  first run that evaluated it and restored for the next (harness.models.prefix_cache), so a run's first call
  only evaluates its task and what follows.
Each call reports how many prompt tokens it reused and where they came from.

Prompts are rendered with the model's own chat template, so offered tools, tool calls and tool results look
exactly as the model was trained on them (Qwen2.5: tools in the system prompt, `<tool_call>` blocks in replies,
`<tool_response>` blocks in user turns). Decoding runs under a grammar (harness.models.grammars) that this engine
builds from the reply shape the caller declared (harness.models.messages.ReplyShape): a tool call with
schema-valid arguments, one code block, one ReAct step, each with or without a plain answer as the shape says.
A request with tools and no shape gets the grammar of its tool_choice, as a provider's API would enforce it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dspy.lm15 import (
    Request,
    Response,
    StreamDeltaEvent,
    StreamEndEvent,
    StreamErrorEvent,
    StreamStartEvent,
    Usage,
    response_to_events,
)

from harness.env import cache_dir
from harness.errors import UserError
from harness.models.batching import DEFAULT_N_CTX, local_n_ctx
from harness.models.chat_template import ChatTemplate, parse_tool_calls
from harness.models.grammars import (
    check_grammar,
    code_block_grammar,
    code_reply_grammar,
    react_step_grammar,
    tool_call_grammar,
    tool_reply_grammar,
)
from harness.models.lazy_grammar import LazyGrammar
from harness.models.llama_batch import MIN_RESTORE_GAIN, MIN_SAVE_TOKENS, BatchDecoder, batched_decoder
from harness.models.llama_state import restore_state, save_state
from harness.models.machine_share import claim_machine
from harness.models.messages import (
    ReplyShape,
    ReuseSource,
    reply_response,
    request_messages,
    request_reply_shape,
    request_tools,
)
from harness.models.model_file import INSTALL_HINT, resolve_local_model
from harness.models.prefix_cache import PrefixCache, prefix_cache_from_env, shared_prefix_length
from harness.models.stopping import check_not_stopped
from harness.models.token_picker import Sampling
from harness.trace.errors import ContextOverflow

DEFAULT_SEED = 0
# A batched engine's own Llama context only tokenizes; the sequences live in the batched context.
UNUSED_N_CTX = 512


StreamEvent = StreamStartEvent | StreamDeltaEvent | StreamEndEvent | StreamErrorEvent


@dataclass(frozen=True)
class CallStats:
    """One completion as llama.cpp ran it: `reused_prompt_tokens` is measured (the prompt tokens the model did
    not evaluate because its context already held them), not predicted from the token lists; `reuse_source`
    says where they came from: the previous call's context or a saved prefix restored from the cache. Decoded in
    a batch, `prompt_seconds` is the wall time of the steps that evaluated its prompt (shared with the other
    sequences in them) and `seconds` runs from the call's arrival to its reply."""

    prompt_tokens: int
    reused_prompt_tokens: int
    completion_tokens: int
    prompt_seconds: float
    seconds: float
    finish_reason: str
    grammar: bool = False
    reuse_source: ReuseSource = "none"
    grammar_refusals: int = 0
    setup_seconds: float = 0.0  # of prompt_seconds, the first evaluation of a prefix later runs share (cold start)

    @property
    def evaluated_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.reused_prompt_tokens


class LlamaEngine:
    """A DSPy engine over one in-process llama.cpp model. One instance per model file and sequence count per
    process (`for_path`). With one sequence, calls are serialized over one context; with `sequences` > 1,
    concurrent calls are decoded together in a batched context of that many sequences of `n_ctx` tokens each
    (harness.models.llama_batch), each replying as it would alone."""

    _instances: dict[tuple[Path, int], LlamaEngine] = {}
    _instances_lock = threading.Lock()

    def __init__(self, path: Path, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None, seed: int = DEFAULT_SEED,
                 prefix_cache: PrefixCache | None = None, lazy_grammar: bool = True, sequences: int = 1):
        try:
            from llama_cpp import Llama
        except ImportError:
            raise UserError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from None
        self.path, self.seed, self.prefix_cache, self.lazy_grammar = path, seed, prefix_cache, lazy_grammar
        self.model_id, self.n_ctx, self.sequences = f"local/{path.stem}", n_ctx, sequences
        started = time.perf_counter()
        self.llm = Llama(model_path=str(path), n_ctx=n_ctx if sequences == 1 else UNUSED_N_CTX,
                         n_threads=n_threads or os.cpu_count(), seed=seed, verbose=False)
        self.decoder: BatchDecoder | None = (
            batched_decoder(self.llm, sequences, n_ctx, prefix_cache) if sequences > 1 else None)
        self.load_seconds = time.perf_counter() - started
        self.template = ChatTemplate(self.llm.metadata.get("tokenizer.chat_template"), path.name,
                                     eos_token=self._token_text(self.llm.token_eos()),
                                     bos_token=self._token_text(self.llm.token_bos()))
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._evals: list[tuple[int, float]] = []
        self._llama_eval = self.llm.eval
        self.llm.eval = self._counting_eval  # generate() calls self.eval: first call = the prompt suffix
        self.last_call: CallStats | None = None

    @classmethod
    def for_path(cls, path: Path, sequences: int = 1) -> LlamaEngine:
        """The process-wide engine for this model file decoding up to `sequences` calls together (the run's
        --max-concurrency), loaded on first use. HARNESS_LOCAL_N_CTX (per sequence) and
        HARNESS_LOCAL_THREADS override the context size and thread count (default: all cores; fewer helps when
        other busy processes share the machine, since llama.cpp's threads wait for each other);
        HARNESS_PREFIX_CACHE=0 turns the prefix cache off, HARNESS_PREFIX_CACHE_MB and _DISK_MB bound it;
        HARNESS_LAZY_GRAMMAR=0 applies every grammar in full (for benchmarks and debugging)."""
        key = (path.resolve(), sequences)
        path = key[0]
        with cls._instances_lock:
            if key not in cls._instances:
                n_ctx = local_n_ctx()
                n_threads = int(os.environ.get("HARNESS_LOCAL_THREADS") or 0) or None
                lazy = os.environ.get("HARNESS_LAZY_GRAMMAR", "1").strip().lower() not in ("0", "false", "off", "no")
                try:
                    from llama_cpp import __version__ as runtime
                except ImportError:  # the engine says how to install it
                    runtime = ""
                cache = prefix_cache_from_env(path, f"llama-cpp-python {runtime} n_ctx {n_ctx}")
                claim_machine(cache_dir())  # a later process's run says it shares the cores with this one
                cls._instances[key] = cls(path, n_ctx=n_ctx, n_threads=n_threads, prefix_cache=cache,
                                          lazy_grammar=lazy, sequences=sequences)
            return cls._instances[key]

    def _token_text(self, token: int) -> str:
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace") if token >= 0 else ""

    def _counting_eval(self, tokens) -> None:
        """llama.cpp's eval of `tokens` (a prompt's suffix, or one generated token), timed, one batch at a time
        so that a stopped command (harness.models.stopping) ends the call within one batch."""
        started = time.perf_counter()
        step = max(int(self.llm.n_batch), 1)
        for start in range(0, len(tokens), step):
            check_not_stopped()
            self._llama_eval(tokens[start:start + step])
        self._evals.append((len(tokens), time.perf_counter() - started))

    def _grammar(self, text: str) -> Any:
        """A llama.cpp grammar, checked once per text: llama.cpp would crash building a sampler from a grammar
        it cannot parse."""
        if text not in self._grammars:
            from llama_cpp import LlamaGrammar

            check_grammar(text)
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def _restore_prefix(self, tokens: list[int]) -> bool:
        """Restore the saved prefix that shares the most tokens with this prompt, if it shares more than the
        context already holds. At least the prompt's last token is always evaluated, so the reply's logits
        are computed fresh."""
        if self.prefix_cache is None:
            return False
        held = shared_prefix_length(self.llm.input_ids[: self.llm.n_tokens].tolist(), tokens)
        hit = self.prefix_cache.best(tokens, at_least=held + MIN_RESTORE_GAIN)
        if hit is None:
            return False
        if restore_state(self.llm, hit.saved.tokens, hit.saved.state, min(hit.shared_tokens, len(tokens) - 1)):
            return True
        self.prefix_cache.forget(hit.saved.tokens)  # a state this llama.cpp cannot load: evaluate instead
        return False

    def _save_prefix(self, prompt_tokens: int, evaluated: int) -> None:
        """Save the context after a call that evaluated most of a long prompt: the next run of the same arm
        shares its prefix up to the task text."""
        if self.prefix_cache is not None and evaluated >= MIN_SAVE_TOKENS and 2 * evaluated >= prompt_tokens:
            self.prefix_cache.put(*save_state(self.llm))

    def complete_messages(self, messages: list[dict[str, Any]], max_tokens: int = 1024, temperature: float = 0.0,
                          stop: tuple[str, ...] = (), seed: int | None = None, top_p: float | None = None,
                          tools: list[dict[str, Any]] | None = None,
                          grammar: str | None = None) -> tuple[str, CallStats]:
        """Render with the model's chat template (tools in its system prompt) and complete, decoding under
        `grammar` (GBNF) if given: checked token by token when decoding is greedy (harness.models.lazy_grammar),
        applied in full otherwise."""
        prompt = self.template.render(messages, tools)
        if self.decoder is not None:
            text, stats = self._complete_batched(prompt, max_tokens, temperature, stop, seed, top_p, grammar)
        else:
            text, stats = self._complete_alone(prompt, max_tokens, temperature, stop, seed, top_p, grammar)
        return text, replace(stats, setup_seconds=self._first_prefix_seconds(messages, tools, prompt, stats))

    def _first_prefix_seconds(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                              prompt: str, stats: CallStats) -> float:
        """Of a call's prompt evaluation, the part spent on the prefix every later run with the same instructions,
        tools and worked examples shares (the prompt before its last message, the task's), when this call evaluated
        it from nothing and the engine now keeps it (its prefix cache): one-time start-up, which the run records as
        cold start rather than as its own time. 0 without a prefix cache, or for a call that saved no prefix."""
        evaluated = stats.evaluated_prompt_tokens
        if (self.prefix_cache is None or len(messages) < 2 or evaluated < MIN_SAVE_TOKENS
                or 2 * evaluated < stats.prompt_tokens):
            return 0.0
        tokens = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
        before = self.llm.tokenize(self.template.render(messages[:-1], tools).encode(), add_bos=False, special=True)
        first_time = max(0, shared_prefix_length(before, tokens) - stats.reused_prompt_tokens)
        return stats.prompt_seconds * min(first_time, evaluated) / evaluated

    def _complete_alone(self, prompt: str, max_tokens: int, temperature: float, stop: tuple[str, ...],
                        seed: int | None, top_p: float | None, grammar: str | None) -> tuple[str, CallStats]:
        """One call over the engine's one context, serialized with the others."""
        with self._lock:
            tokens = self._tokens(prompt, max_tokens)
            checked = self._grammar(grammar) if grammar else None
            restored = self._restore_prefix(tokens)
            greedy = temperature == 0 and self.lazy_grammar
            lazy = LazyGrammar(self.llm, grammar, len(tokens)) if grammar and greedy else None
            self._evals = []
            started = time.perf_counter()
            try:
                result = self.llm.create_completion(
                    tokens, max_tokens=max_tokens, temperature=temperature, top_p=1.0 if top_p is None else top_p,
                    seed=self.seed if seed is None else seed, stop=["<|im_end|>", "<|endoftext|>", *stop],
                    grammar=checked if lazy is None else None,
                    logits_processor=[lazy] if lazy else None)
            finally:
                if lazy is not None:
                    lazy.close()
            seconds = time.perf_counter() - started
            evaluated, prompt_seconds = self._evals[0] if self._evals else (0, 0.0)
            usage, choice = result["usage"], result["choices"][0]
            reused = usage["prompt_tokens"] - evaluated
            source: ReuseSource = "prefix_cache" if restored else ("context" if reused else "none")
            stats = CallStats(usage["prompt_tokens"], reused, usage["completion_tokens"], prompt_seconds, seconds,
                              "length" if choice["finish_reason"] == "length" else "stop", grammar=bool(grammar),
                              reuse_source=source, grammar_refusals=lazy.refusals if lazy else 0)
            self._save_prefix(usage["prompt_tokens"], evaluated)
            self.last_call = stats
        return choice["text"], stats

    def _tokens(self, prompt: str, max_tokens: int) -> list[int]:
        """The prompt's tokens; a prompt that leaves no room for `max_tokens` in a sequence's context is refused
        before any of it is evaluated (the run's context_overflow), never cut."""
        tokens = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
        n_ctx = self.llm.n_ctx() if self.decoder is None else self.n_ctx
        if len(tokens) + max_tokens > n_ctx:
            raise ContextOverflow(len(tokens) + max_tokens, n_ctx, f"the model's own tokenizer, with the {max_tokens} "
                                  "to generate; HARNESS_LOCAL_N_CTX sets the context")
        return tokens

    def _complete_batched(self, prompt: str, max_tokens: int, temperature: float, stop: tuple[str, ...],
                          seed: int | None, top_p: float | None, grammar: str | None) -> tuple[str, CallStats]:
        """One call through the batched context: submitted to its step loop, waited for. `last_call` is then
        whichever call finished last (read it only when calls do not overlap)."""
        assert self.decoder is not None
        tokens = self._tokens(prompt, max_tokens)
        if grammar:
            with self._lock:
                self._grammar(grammar)  # checked once: llama.cpp would crash on a grammar it cannot parse
        sampling = Sampling(temperature, 1.0 if top_p is None else top_p, self.seed if seed is None else seed,
                            grammar, self.lazy_grammar)
        reply = self.decoder.submit(tokens, sampling, ("<|im_end|>", "<|endoftext|>", *stop), max_tokens).result()
        stats = CallStats(reply.prompt_tokens, reply.reused_prompt_tokens, reply.completion_tokens,
                          reply.prompt_seconds, reply.seconds, reply.finish_reason, grammar=bool(grammar),
                          reuse_source=reply.reuse_source, grammar_refusals=reply.grammar_refusals)
        self.last_call = stats
        return reply.text, stats

    @staticmethod
    def reply_grammar(request: Request) -> str | None:
        """The grammar this engine decodes the request's declared reply shape under (None: no shape declared).
        The response cache keys a call by it, so a changed grammar is a changed request."""
        shape = request_reply_shape(request)
        return None if shape is None else shape_grammar(shape, offered_tools(request))

    def complete(self, request: Request) -> Response:
        """One reply; with tools, Qwen's `<tool_call>` blocks become native tool calls. Decoded under the grammar
        of the declared reply shape, or with tools and no shape, under that of the request's tool_choice."""
        config = request.config
        tools = offered_tools(request)
        grammar = self.reply_grammar(request)
        if grammar is None and tools:
            grammar = tool_choice_grammar(tools, config.tool_choice)
        text, stats = self.complete_messages(
            request_messages(request), max_tokens=config.max_tokens or 1024,
            temperature=config.temperature if config.temperature is not None else 0.0, stop=tuple(config.stop),
            seed=config.seed, top_p=config.top_p, tools=tools, grammar=grammar)
        text, calls = parse_tool_calls(text) if tools else (text, ())
        return reply_response(text, self.model_id, Usage(
            input_tokens=stats.prompt_tokens, output_tokens=stats.completion_tokens,
            total_tokens=stats.prompt_tokens + stats.completion_tokens, cache_read_tokens=stats.reused_prompt_tokens),
            tool_calls=calls, finish_reason=stats.finish_reason, grammar=stats.grammar, reuse=stats.reuse_source,
            setup_s=stats.setup_seconds)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        """The whole completion as one event sequence (the harness never streams tokens)."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        pass  # shared by every run in the process; released at exit


def offered_tools(request: Request) -> list[dict[str, Any]]:
    """The request's tools as the model is offered them: none under tool_choice "none", so none can be called."""
    choice = request.config.tool_choice
    return [] if choice is not None and choice.mode == "none" else request_tools(request)


def shape_grammar(shape: ReplyShape, tools: list[dict[str, Any]]) -> str:
    """The GBNF for a declared reply shape: a native tool call names one of `tools` (the request's), a ReAct
    step one of the shape's own; `shape.answer` adds the plain answer where the protocol has one, and
    `shape.parallel` admits several tool calls."""
    if shape.protocol == "tool_call":
        builder = tool_reply_grammar if shape.answer else tool_call_grammar
        return builder(tools, parallel=True) if shape.parallel else builder(tools)
    if shape.protocol == "code_block":
        return code_reply_grammar() if shape.answer else code_block_grammar()
    return react_step_grammar(list(shape.tools))


def tool_choice_grammar(tools: list[dict[str, Any]], choice: Any) -> str:
    """The grammar that enforces a request's tool_choice as a provider's API would: "auto" (the default) a tool
    call or a plain reply, "required" a call, `allowed` names (with "required"/"auto") a call to one of them."""
    mode, allowed = (choice.mode, choice.allowed) if choice is not None else ("auto", ())
    if allowed:
        tools = [t for t in tools if t["function"]["name"] in allowed] or tools
    return tool_call_grammar(tools) if mode == "required" else tool_reply_grammar(tools)


def local_engine(file: str | None = None, sequences: int = 1) -> LlamaEngine:
    """The engine for a GGUF file, or the embedded model when none is given (resolving, assembling and verifying
    the file first), decoding up to `sequences` calls together."""
    return LlamaEngine.for_path(resolve_local_model(file), sequences)
