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

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspy.lm15 import (
    ContextLengthError,
    Request,
    Response,
    StreamDeltaEvent,
    StreamEndEvent,
    StreamErrorEvent,
    StreamStartEvent,
    ToolCallPart,
    Usage,
    response_to_events,
)

from harness.errors import UserError
from harness.models.grammars import (
    check_grammar,
    code_block_grammar,
    code_reply_grammar,
    react_step_grammar,
    tool_call_grammar,
    tool_reply_grammar,
)
from harness.models.lazy_grammar import LazyGrammar
from harness.models.llama_state import restore_state, save_state
from harness.models.messages import (
    ReplyShape,
    ReuseSource,
    parse_arguments,
    reply_response,
    request_messages,
    request_reply_shape,
    request_tools,
)
from harness.models.model_file import INSTALL_HINT, resolve_local_model
from harness.models.prefix_cache import PrefixCache, prefix_cache_from_env, shared_prefix_length

DEFAULT_N_CTX = 16384
DEFAULT_SEED = 0
# A restore copies a saved state (tens of ms); it pays only when it spares more than a few tokens' evaluation.
MIN_RESTORE_GAIN = 32
# A call is worth a saved state when it evaluated a long prompt mostly from nothing: a run's first call.
MIN_SAVE_TOKENS = 256


StreamEvent = StreamStartEvent | StreamDeltaEvent | StreamEndEvent | StreamErrorEvent


# ---- inference ----

def chatml(messages: list[dict[str, Any]]) -> str:
    """ChatML for plain messages: what a model file without a chat template gets."""
    rendered = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return rendered + "<|im_start|>assistant\n"


def _template_message(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat dict as Hugging Face chat templates take it: tool-call arguments as objects."""
    if not message.get("tool_calls"):
        return message
    calls = [{**call, "function": {**call["function"], "arguments": parse_arguments(call["function"]["arguments"])
                                   or {}}} for call in message["tool_calls"]]
    return {**message, "tool_calls": calls}


class ChatTemplate:
    """The model's own chat template (the GGUF's `tokenizer.chat_template`), rendered the way transformers
    renders it, so tools appear in the prompt and tool calls and results in the history exactly as the model
    was trained on them. Prompts are plain strings: consecutive agent turns share their prefix, which the KV
    cache reuses."""

    def __init__(self, source: str | None, name: str = "model", eos_token: str = "<|im_end|>",
                 bos_token: str = "<|endoftext|>"):
        self.source, self.name = source, name
        self._formatter = None
        if source:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(source, eos_token=eos_token, bos_token=bos_token)

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        if self._formatter is None:
            if tools:
                raise UserError(f"{self.name} has no chat template, so it cannot be offered tools natively; "
                                "use a GGUF with a tool-calling chat template (e.g. the embedded Qwen2.5 model)")
            return chatml(messages)
        return self._formatter(messages=[_template_message(m) for m in messages], tools=tools or None).prompt


_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _read_call(body: str) -> tuple[str, dict[str, Any]] | None:
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    arguments = parse_arguments(value.get("arguments", {}))
    return None if arguments is None else (value["name"], arguments)


def parse_tool_calls(text: str) -> tuple[str, tuple[ToolCallPart, ...]]:
    """A Qwen reply -> (its text, its tool calls). Each well-formed `<tool_call>{"name", "arguments"}</tool_call>`
    block becomes a call (ids call_0, call_1, ... in order); a malformed or unfinished block stays in the text,
    so the agent sees what the model wrote instead of a call it did not make."""
    calls: list[ToolCallPart] = []

    def take(match: re.Match) -> str:
        call = _read_call(match.group(1))
        if call is None:
            return match.group(0)
        calls.append(ToolCallPart(id=f"call_{len(calls)}", name=call[0], input=call[1]))
        return ""

    rest = _TOOL_CALL_BLOCK.sub(take, text)
    return (rest.strip() if calls else text), tuple(calls)


@dataclass(frozen=True)
class CallStats:
    """One completion as llama.cpp ran it: `reused_prompt_tokens` is measured (the prompt tokens the model did
    not evaluate because its context already held them), not predicted from the token lists; `reuse_source`
    says where they came from: the previous call's context or a saved prefix restored from the cache."""

    prompt_tokens: int
    reused_prompt_tokens: int
    completion_tokens: int
    prompt_seconds: float
    seconds: float
    finish_reason: str
    grammar: bool = False
    reuse_source: ReuseSource = "none"
    grammar_refusals: int = 0

    @property
    def evaluated_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.reused_prompt_tokens


class LlamaEngine:
    """A DSPy engine over one in-process llama.cpp model. One instance per model file per process
    (`for_path`); calls are serialized, since a llama.cpp context serves one sequence at a time."""

    _instances: dict[Path, LlamaEngine] = {}
    _instances_lock = threading.Lock()

    def __init__(self, path: Path, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None, seed: int = DEFAULT_SEED,
                 prefix_cache: PrefixCache | None = None, lazy_grammar: bool = True):
        try:
            from llama_cpp import Llama
        except ImportError:
            raise UserError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from None
        self.path, self.seed, self.prefix_cache, self.lazy_grammar = path, seed, prefix_cache, lazy_grammar
        self.model_id = f"local/{path.stem}"
        started = time.perf_counter()
        self.llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads or os.cpu_count(), seed=seed,
                         verbose=False)
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
    def for_path(cls, path: Path) -> LlamaEngine:
        """The process-wide engine for this model file, loaded on first use. HARNESS_LOCAL_N_CTX and
        HARNESS_LOCAL_THREADS override the context size and thread count (default: all cores; fewer helps when
        other busy processes share the machine, since llama.cpp's threads wait for each other);
        HARNESS_PREFIX_CACHE=0 turns the prefix cache off, HARNESS_PREFIX_CACHE_MB and _DISK_MB bound it;
        HARNESS_LAZY_GRAMMAR=0 applies every grammar in full (for benchmarks and debugging)."""
        path = path.resolve()
        with cls._instances_lock:
            if path not in cls._instances:
                n_ctx = int(os.environ.get("HARNESS_LOCAL_N_CTX", DEFAULT_N_CTX))
                n_threads = int(os.environ.get("HARNESS_LOCAL_THREADS") or 0) or None
                lazy = os.environ.get("HARNESS_LAZY_GRAMMAR", "1").strip().lower() not in ("0", "false", "off", "no")
                try:
                    from llama_cpp import __version__ as runtime
                except ImportError:  # the engine says how to install it
                    runtime = ""
                cache = prefix_cache_from_env(path, f"llama-cpp-python {runtime} n_ctx {n_ctx}")
                cls._instances[path] = cls(path, n_ctx=n_ctx, n_threads=n_threads, prefix_cache=cache,
                                           lazy_grammar=lazy)
            return cls._instances[path]

    def _token_text(self, token: int) -> str:
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace") if token >= 0 else ""

    def _counting_eval(self, tokens) -> None:
        started = time.perf_counter()
        self._llama_eval(tokens)
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
        with self._lock:
            tokens = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
            if len(tokens) + max_tokens > self.llm.n_ctx():
                raise ContextLengthError(f"prompt of {len(tokens)} tokens + {max_tokens} to generate exceeds the "
                                         f"{self.llm.n_ctx()}-token context (set HARNESS_LOCAL_N_CTX)")
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
            tool_calls=calls, finish_reason=stats.finish_reason, grammar=stats.grammar, reuse=stats.reuse_source)

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


def local_engine(file: str | None = None) -> LlamaEngine:
    """The engine for a GGUF file, or the embedded model when none is given (resolving, assembling and verifying
    the file first)."""
    return LlamaEngine.for_path(resolve_local_model(file))
