"""Batched decoding on the embedded model: calls decoded together reply as they would alone (marked local_model),
and the arithmetic and reply rules that need no model."""

from __future__ import annotations

import threading

import pytest

from harness.errors import UserError
from harness.models.batching import KVShape, check_fits, default_concurrency
from harness.models.token_picker import ReplyText

QWEN_1_5B = KVShape(n_layer=28, n_head_kv=2, head_dim=128)
GIB = 1024 ** 3


# ---- sizes ----

def test_a_kv_cell_of_the_embedded_model_costs_28_kib():
    assert QWEN_1_5B.bytes_per_token == 28 * 1024


def test_sizes_that_fit_pass():
    check_fits(4, 16384, QWEN_1_5B, prefix_cache_bytes=GIB, available=16 * GIB, max_sequences=256)


def test_an_impossible_size_is_a_one_line_error_with_the_numbers():
    with pytest.raises(UserError) as caught:
        check_fits(64, 16384, QWEN_1_5B, prefix_cache_bytes=GIB, available=8 * GIB, max_sequences=256)
    message = str(caught.value)
    assert "\n" not in message and "64 x 16384 tokens" in message and "28.0 GiB" in message
    assert "lower --max-concurrency" in message


def test_more_sequences_than_llama_cpp_decodes_together_is_refused():
    with pytest.raises(UserError, match="more than the 256 sequences"):
        check_fits(300, 512, QWEN_1_5B, prefix_cache_bytes=0, available=1024 * GIB, max_sequences=256)


def test_the_default_concurrency_grows_with_the_cores_and_is_at_least_one():
    assert default_concurrency(1) >= 1 and default_concurrency(4) == 2 * default_concurrency(2)


# ---- when a reply ends (create_completion's rule, on a toy vocabulary) ----

VOCAB = {1: b"Hel", 2: b"lo", 3: b" wor", 4: b"ld", 5: b"\n\n", 9: b""}


def _reply(stop: tuple[str, ...] = (), max_tokens: int = 10) -> ReplyText:
    return ReplyText(lambda tokens: b"".join(VOCAB[t] for t in tokens), lambda t: t == 9, stop, max_tokens)


def _feed(reply: ReplyText, tokens: list[int]) -> int:
    for n, token in enumerate(tokens, start=1):
        if reply.add(token):
            return n
    return 0


def test_a_stop_string_ends_the_reply_and_is_cut_from_it():
    reply = _reply(stop=("wor",))
    assert _feed(reply, [1, 2, 3, 4]) == 3 and (reply.text, reply.finish_reason) == ("Hello ", "stop")
    assert reply.tokens == [1, 2, 3]  # counted as generated, as create_completion counts them


def test_of_several_stop_strings_found_the_first_given_cuts():
    reply = _reply(stop=("ld", "lo"))
    _feed(reply, [1, 2, 3, 4])
    assert reply.text == "Hel"  # "lo" is found once "ld" is not yet there: the check runs after every token


def test_an_end_of_generation_token_ends_the_reply_without_being_counted():
    reply = _reply()
    assert _feed(reply, [1, 2, 9]) == 3 and (reply.text, reply.tokens, reply.finish_reason) == ("Hello", [1, 2], "stop")


def test_max_tokens_ends_the_reply_as_length():
    reply = _reply(max_tokens=2)
    assert _feed(reply, [1, 2, 3]) == 2 and (reply.text, reply.finish_reason) == ("Hello", "length")


# ---- the real model ----

SYSTEM = {"role": "system", "content": "You answer questions about customers with short replies. " * 30}
PROMPTS = [[{"role": "user", "content": "Count from 1 to 10 in words."}],
           [{"role": "user", "content": "Write a Python function that adds two numbers."}],
           [{"role": "user", "content": "Name three colours."}]]
YES_NO = 'root ::= "yes" | "no"'


@pytest.fixture(scope="module")
def engines():
    from harness.models.llama import LlamaEngine
    from harness.models.model_file import embedded_model_path

    path = embedded_model_path()
    single = LlamaEngine(path, n_ctx=2048, prefix_cache=None)
    batched = LlamaEngine(path, n_ctx=2048, prefix_cache=None, sequences=3)
    return single, batched


def _together(engine, calls: list[dict]) -> list[tuple[str, object]]:
    """Each call (complete_messages keyword arguments) from its own thread, at once."""
    out: list = [None] * len(calls)

    def one(i: int) -> None:
        out[i] = engine.complete_messages(**calls[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


@pytest.mark.local_model
def test_sequences_decoded_together_give_the_tokens_each_gives_alone(engines):
    single, batched = engines
    calls = [{"messages": PROMPTS[0], "max_tokens": 16}, {"messages": PROMPTS[1], "max_tokens": 16}]
    alone = [single.complete_messages(**call) for call in calls]
    together = _together(batched, calls)
    assert [text for text, _ in together] == [text for text, _ in alone]
    assert [s.completion_tokens for _, s in together] == [s.completion_tokens for _, s in alone] == [16, 16]
    assert max(batched.decoder.step_sizes) == 2  # they were decoded in the same steps


@pytest.mark.local_model
def test_a_sequence_that_finishes_early_leaves_the_others_running(engines):
    # Whether the reply equals the call alone is the test above; here the batch's make-up changes mid-call, which
    # can flip a close greedy choice (floating-point, docs/experiments.md): the long call must just run to its end.
    _, batched = engines
    steps = len(batched.decoder.step_sizes)
    (short, short_stats), (long, long_stats) = _together(
        batched, [{"messages": PROMPTS[0], "max_tokens": 2}, {"messages": PROMPTS[1], "max_tokens": 20}])
    assert short_stats.completion_tokens == 2 and short_stats.finish_reason == "length"
    assert long_stats.completion_tokens == 20 and long_stats.finish_reason == "length" and long.strip()
    assert batched.decoder.step_sizes[-1] == 1 and 2 in batched.decoder.step_sizes[steps:]


@pytest.mark.local_model
def test_a_grammar_refusal_in_one_sequence_does_not_touch_another(engines):
    single, batched = engines
    free_alone, _ = single.complete_messages(PROMPTS[1], max_tokens=12)
    (constrained, constrained_stats), (free, free_stats) = _together(
        batched, [{"messages": PROMPTS[0], "max_tokens": 8, "grammar": YES_NO},
                  {"messages": PROMPTS[1], "max_tokens": 12}])
    assert constrained in ("yes", "no") and constrained_stats.grammar_refusals >= 1
    assert free == free_alone and free_stats.grammar_refusals == 0 and not free_stats.grammar


@pytest.mark.local_model
def test_a_saved_prefix_restores_into_any_sequence_and_replies_as_a_cold_evaluation(tmp_path):
    from harness.models.llama import LlamaEngine
    from harness.models.model_file import embedded_model_path
    from harness.models.prefix_cache import PrefixCache
    from harness.models.prefix_store import PrefixStore

    path, store = embedded_model_path(), PrefixStore(tmp_path, 2**30)
    tasks = [[SYSTEM, {"role": "user", "content": f"Find the customer named {name}."}] for name in ("Ada", "Chen")]
    single = LlamaEngine(path, n_ctx=2048, prefix_cache=PrefixCache(256 * 2**20, store))
    single.complete_messages([SYSTEM, {"role": "user", "content": "Find the customer named Bo."}], max_tokens=2)
    cold = [LlamaEngine(path, n_ctx=2048, prefix_cache=None).complete_messages(t, max_tokens=12)[0] for t in tasks]
    del single
    batched = LlamaEngine(path, n_ctx=2048, prefix_cache=PrefixCache(256 * 2**20, store), sequences=2)
    together = _together(batched, [{"messages": t, "max_tokens": 12} for t in tasks])
    assert [stats.reuse_source for _, stats in together] == ["prefix_cache", "prefix_cache"]  # sequences 0 and 1
    assert all(stats.reused_prompt_tokens > 0.8 * stats.prompt_tokens for _, stats in together)
    assert [text for text, _ in together] == cold


@pytest.mark.local_model
def test_a_stopped_command_ends_the_batched_calls_in_flight_and_the_engine_decodes_again_after(engines):
    from concurrent.futures import ThreadPoolExecutor

    from harness.models.stopping import DecodingStopped, resume_decoding, stop_decoding

    _, batched = engines
    expected, _ = batched.complete_messages(PROMPTS[2], max_tokens=8)
    steps = batched.decoder.steps
    with ThreadPoolExecutor(2) as pool:
        calls = [pool.submit(batched.complete_messages, PROMPTS[i], max_tokens=400) for i in (0, 1)]
        while batched.decoder.steps < steps + 3:  # both calls are decoding
            threading.Event().wait(0.01)
        try:
            stop_decoding()
            for call in calls:
                with pytest.raises(DecodingStopped):
                    call.result()
            with pytest.raises(DecodingStopped):  # a call made after the stop is refused too
                batched.complete_messages(PROMPTS[2], max_tokens=8)
        finally:
            resume_decoding()
    assert batched.decoder.steps < steps + 400  # neither ran to its 400 tokens
    assert batched.complete_messages(PROMPTS[2], max_tokens=8)[0] == expected


@pytest.mark.local_model
def test_two_speakers_taking_turns_each_extend_their_own_context():
    """A conversation's agent and user on one engine: a prompt that shares only the chat template's opening with
    a held context takes an unused sequence, so each speaker's next turn evaluates only what is new."""
    from harness.models.llama import LlamaEngine
    from harness.models.model_file import embedded_model_path

    engine = LlamaEngine(embedded_model_path(), n_ctx=2048, prefix_cache=None, sequences=2)
    agent = [{"role": "system", "content": "You are a support agent. " * 40}]
    user = [{"role": "system", "content": "You play a customer. " * 30}]
    reused = []
    for turn in range(2):
        agent.append({"role": "user", "content": f"Customer message {turn}."})
        text, agent_stats = engine.complete_messages(agent, max_tokens=6)
        agent.append({"role": "assistant", "content": text})
        user.append({"role": "user", "content": text})
        text, user_stats = engine.complete_messages(user, max_tokens=6)
        user.append({"role": "assistant", "content": text})
        reused.append((agent_stats.reused_prompt_tokens / agent_stats.prompt_tokens,
                       user_stats.reused_prompt_tokens / user_stats.prompt_tokens))
    assert reused[0] == (0.0, 0.0)  # first turns: nothing held for either
    assert min(reused[1]) > 0.8  # second turns: each found its own first turn in its sequence
