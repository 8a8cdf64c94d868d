"""A model's context window: a prompt over it (tool definitions counted) is refused by the engine stack before it is
sent, as context_overflow with both sizes; the embedded engine's own refusal is the same error; the window comes
from --context-window, else the model's family (the embedded model's context, LiteLLM's model table)."""

import json

import pytest

from harness.agents.failures import decision_error
from harness.models.engine import CallRecorder, make_lm
from harness.models.families import family_of
from harness.models.tokens import count_tokens
from harness.run.config import RunConfig
from harness.tasks.suite import load_suite
from harness.trace.errors import ContextOverflow
from harness.trace.transcript import Transcript
from tests.models.test_base import SEARCH, ReplyingEngine

MESSAGES = [{"role": "system", "content": "You help."}, {"role": "user", "content": "Where does Ada live?"}]


def text_tokens(messages) -> int:
    return count_tokens("\n".join(m["content"] for m in messages))


def call_with_window(window: int | None, tools=None):
    """One LM call through the engine stack under `window`: (the error it failed with, the engine, the transcript)."""
    engine, transcript = ReplyingEngine("Paris"), Transcript()
    lm = make_lm("fake", engine, recorder=CallRecorder(transcript, context_window=window))
    try:
        lm(messages=MESSAGES, **({"tools": tools} if tools else {}))
    except Exception as exc:  # dspy may wrap the engine stack's error: the run's error is read from its causes
        return decision_error(exc), engine, transcript
    return None, engine, transcript


def test_a_prompt_over_the_window_is_never_sent_and_ends_the_run_as_context_overflow():
    size = text_tokens(MESSAGES)
    error, engine, transcript = call_with_window(size - 1)
    assert error.type == "context_overflow" and not error.permanent
    assert f"prompt of {size:,} tokens" in error.message and f"context window of {size - 1:,} tokens" in error.message
    assert engine.requests == [] and transcript.lm_calls == ()  # not sent, so no model event


def test_a_prompt_that_fits_is_sent_and_recorded():
    error, engine, transcript = call_with_window(text_tokens(MESSAGES))
    assert error is None and len(engine.requests) == 1 and len(transcript.lm_calls) == 1


def test_the_tool_definitions_sent_natively_count_toward_the_prompt():
    size = text_tokens(MESSAGES) + count_tokens(json.dumps([SEARCH]))
    assert call_with_window(size, [SEARCH])[0] is None
    error, engine, _ = call_with_window(size - 1, [SEARCH])
    assert error.type == "context_overflow" and engine.requests == []


def test_without_a_window_nothing_is_refused():
    assert call_with_window(None)[0] is None


def test_the_embedded_engines_own_refusal_is_context_overflow():
    pytest.importorskip("llama_cpp")
    from harness.models.llama import LlamaEngine

    class Tokenizing:  # llama.cpp's tokenizer and context, as the engine reads them
        def tokenize(self, text, add_bos, special):
            return list(range(100))

        def n_ctx(self):
            return 120

    engine = LlamaEngine.__new__(LlamaEngine)
    engine.llm, engine.decoder = Tokenizing(), None
    assert len(engine._tokens("prompt", 20)) == 100
    with pytest.raises(ContextOverflow) as refused:
        engine._tokens("prompt", 21)
    assert refused.value.error_type == "context_overflow"
    assert refused.value.prompt_tokens == 121 and refused.value.window == 120


def test_the_window_is_the_stated_one_else_the_models_own():
    import litellm

    suite = load_suite("smoke")
    known = "openai/gpt-4o-mini"
    table = litellm.model_cost["gpt-4o-mini"]["max_input_tokens"]
    assert family_of(known).context_window(known) == table
    assert RunConfig(suite=suite, model=known).limits.context_window == table
    assert RunConfig(suite=suite, model=known, context_window=16384).limits.context_window == 16384
    assert RunConfig(suite=suite, model="scripted:reference").limits.context_window is None  # no window
    assert RunConfig(suite=suite, model="openai/no-such-model").limits.context_window is None


def test_the_embedded_models_window_is_the_context_it_runs_with(monkeypatch):
    suite = load_suite("smoke")
    monkeypatch.setenv("HARNESS_LOCAL_N_CTX", "8192")
    assert RunConfig(suite=suite, model="local").limits.context_window == 8192
    monkeypatch.delenv("HARNESS_LOCAL_N_CTX")
    from harness.models.batching import DEFAULT_N_CTX

    assert RunConfig(suite=suite, model="local").limits.context_window == DEFAULT_N_CTX
