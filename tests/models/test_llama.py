"""The embedded engine: chat template, tool-call parsing, and the real model (marked local_model)."""

import asyncio
import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.models.chat_template import ChatTemplate, chatml, parse_tool_calls

QWEN_TEMPLATE = Path(__file__).with_name("qwen2.5_chat_template.jinja")  # the embedded GGUF's, copied
SEARCH = {"type": "function", "function": {
    "name": "search_customers", "description": "Find customers by name.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def test_chatml_ends_with_the_assistant_turn():
    prompt = chatml([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    assert prompt == "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n"


def qwen() -> ChatTemplate:
    return ChatTemplate(QWEN_TEMPLATE.read_text())


def test_qwens_template_renders_plain_messages_as_chatml():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                {"role": "assistant", "content": "a"}, {"role": "user", "content": "v"}]
    assert qwen().render(messages) == chatml(messages)


def test_without_a_system_message_qwens_template_adds_its_default_one():
    assert qwen().render([{"role": "user", "content": "u"}]).startswith(
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n")


def test_tools_go_into_the_system_prompt_as_qwen_was_trained():
    prompt = qwen().render([{"role": "system", "content": "You help."}, {"role": "user", "content": "u"}], [SEARCH])
    assert prompt.startswith("<|im_start|>system\nYou help.\n\n# Tools\n")
    assert f"<tools>\n{json.dumps(SEARCH)}\n</tools>" in prompt
    assert prompt.endswith("<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n")


def test_tool_calls_and_results_render_as_tool_call_and_tool_response_blocks():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "type": "function", "function": {
                    "name": "search_customers", "arguments": '{"query": "Ada"}'}}]},
                {"role": "tool", "tool_call_id": "call_0", "name": "search_customers", "content": "[7]"}]
    assert qwen().render(messages, [SEARCH]).endswith(
        '<|im_start|>assistant\n<tool_call>\n{"name": "search_customers", "arguments": {"query": "Ada"}}\n'
        '</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n[7]\n</tool_response><|im_end|>\n'
        '<|im_start|>assistant\n')


def test_a_model_file_without_a_chat_template_gets_chatml_but_no_tools():
    template = ChatTemplate(None, "plain.gguf")
    assert template.render([{"role": "user", "content": "u"}]) == chatml([{"role": "user", "content": "u"}])
    with pytest.raises(UserError, match="plain.gguf has no chat template"):
        template.render([{"role": "user", "content": "u"}], [SEARCH])


def test_a_tool_call_block_becomes_a_tool_call():
    text, calls = parse_tool_calls('<tool_call>\n{"name": "search_customers", "arguments": {"query": "Ada"}}\n'
                                   "</tool_call>")
    assert text == ""
    assert [(c.id, c.name, c.input) for c in calls] == [("call_0", "search_customers", {"query": "Ada"})]


def test_several_tool_call_blocks_become_calls_in_order_and_text_around_them_stays():
    reply = ('I will look both up.\n<tool_call>\n{"name": "a", "arguments": {"n": 1}}\n</tool_call>\n'
             '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>')
    text, calls = parse_tool_calls(reply)
    assert text == "I will look both up."
    assert [(c.id, c.name, c.input) for c in calls] == [("call_0", "a", {"n": 1}), ("call_1", "b", {})]


@pytest.mark.parametrize("reply", [
    '<tool_call>\n{"name": "a", "arguments": {"n": 1}\n</tool_call>',  # unbalanced JSON
    '<tool_call>\n{"arguments": {"n": 1}}\n</tool_call>',  # no name
    '<tool_call>\n{"name": "a", "arguments": [1]}\n</tool_call>',  # arguments not an object
    '<tool_call>\n{"name": "a", "arguments": {"n": 1}}',  # never closed (stopped or cut off)
])
def test_a_malformed_tool_call_block_stays_text(reply):
    assert parse_tool_calls(reply) == (reply, ())


def test_a_malformed_block_next_to_a_good_one_stays_in_the_text():
    bad = '<tool_call>\n{"name": "a", "arguments": oops}\n</tool_call>'
    text, calls = parse_tool_calls(f'{bad}\n<tool_call>\n{{"name": "b", "arguments": {{}}}}\n</tool_call>')
    assert text == bad and [c.name for c in calls] == ["b"]


@pytest.mark.local_model
def test_the_embedded_model_answers_and_reuses_its_kv_cache():
    """The next turn extends the previous prompt: llama.cpp evaluates only the new tokens, and the engine's
    usage says how many it reused (measured from what llama.cpp evaluated)."""
    from dspy.lm15 import Config, Message, Request, TextPart

    from harness.models.llama import local_engine

    engine = local_engine()
    first = [{"role": "system", "content": "Answer with a number only."}, {"role": "user", "content": "2+3?"}]
    text, stats = engine.complete_messages(first, max_tokens=8)
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0 and text.strip()
    request = Request(model="local", system=first[0]["content"], config=Config(max_tokens=8), messages=(
        Message.user("2+3?"), Message.assistant([TextPart(text)]), Message.user("And 4+4?")))
    usage = engine.complete(request).usage
    assert usage.input_tokens > stats.prompt_tokens and usage.output_tokens > 0
    assert stats.prompt_tokens - 1 <= usage.cache_read_tokens < usage.input_tokens
    assert engine.last_call.evaluated_prompt_tokens == usage.input_tokens - usage.cache_read_tokens


def _request(user: str, max_tokens: int, tools=(), stop=(), shape=None):
    from dspy.lm15 import Config, FunctionTool, Message, Request

    from harness.models.messages import reply_shape_option

    return Request(model="local", system="You are a careful assistant.", messages=(Message.user(user),),
                   tools=tuple(FunctionTool(t["function"]["name"], t["function"]["description"],
                                            t["function"]["parameters"]) for t in tools),
                   config=Config(max_tokens=max_tokens, stop=tuple(stop),
                                 extensions=reply_shape_option(shape) if shape else None))


@pytest.mark.local_model
def test_the_embedded_models_own_template_is_the_one_rendered_here():
    from harness.models.llama import local_engine

    assert local_engine().template.source == QWEN_TEMPLATE.read_text()


@pytest.mark.local_model
def test_the_embedded_model_calls_a_real_tool_with_schema_valid_arguments_under_the_grammar():
    import jsonschema

    from harness.models.llama import local_engine
    from harness.models.messages import used_grammar

    lookup = {"type": "function", "function": {
        "name": "get_customer", "description": "One customer's record by id.",
        "parameters": {"type": "object", "properties": {"customer_id": {"type": "integer"}},
                       "required": ["customer_id"]}}}
    response = local_engine().complete(
        _request("Which country is customer 42 in? Use the tools.", max_tokens=60, tools=(SEARCH, lookup)))
    (call,) = response.tool_calls
    schema = {t["function"]["name"]: t["function"]["parameters"] for t in (SEARCH, lookup)}[call.name]
    jsonschema.validate(call.input, schema)
    assert response.finish_reason == "tool_call" and used_grammar(response)


@pytest.mark.local_model
def test_a_declared_code_block_shape_decides_the_reply():
    from harness.models.llama import local_engine
    from harness.models.messages import ReplyShape, used_grammar

    response = local_engine().complete(_request("Say hello.", max_tokens=40, shape=ReplyShape("code_block")))
    assert response.message.text.startswith("```python\n") and used_grammar(response)


@pytest.mark.local_model
def test_a_stop_sequence_ends_the_reply_where_asked():
    from harness.models.llama import local_engine

    engine = local_engine()
    response = engine.complete(_request("Count from 1 to 10, one number per line, nothing else.", max_tokens=40,
                                        stop=["5"]))
    assert response.message.text == "1\n2\n3\n4\n"
    assert response.finish_reason == "stop" and engine.last_call.completion_tokens < 10


def test_tool_choice_decides_the_grammar_as_a_providers_api_would():
    from dspy.lm15 import ToolChoice

    from harness.models.grammars import tool_call_grammar, tool_reply_grammar
    from harness.models.llama import tool_choice_grammar

    lookup = {"type": "function", "function": {"name": "get_customer", "description": "By id.",
                                               "parameters": {"type": "object", "properties": {}}}}
    assert tool_choice_grammar([SEARCH, lookup], None) == tool_reply_grammar([SEARCH, lookup])  # auto
    assert tool_choice_grammar([SEARCH, lookup], ToolChoice("required")) == tool_call_grammar([SEARCH, lookup])
    assert tool_choice_grammar([SEARCH, lookup], ToolChoice("required", ("get_customer",))) == \
        tool_call_grammar([lookup])


# ---- the reply shapes the arms declare, and the grammars the engine builds from them ----

LOOKUP = {"type": "function", "function": {
    "name": "get_customer", "description": "One customer's record by id.",
    "parameters": {"type": "object", "properties": {"customer_id": {"type": "integer"}, "fields": {
        "type": "array", "items": {"$ref": "#/$defs/Field"}}}, "required": ["customer_id"],
        "$defs": {"Field": {"enum": ["name", "country"]}}}}}


def _sent(options: dict):
    """The request dspy hands an engine for one LM call made with an arm's options."""
    from dspy.lm15 import Usage

    from harness.models.engine import make_lm
    from harness.models.messages import reply_response

    class Keeping:
        model_id = "local/test"
        requests: list = []

        def complete(self, request):
            self.requests.append(request)
            return reply_response("ok", self.model_id, Usage(input_tokens=1, output_tokens=1))

    engine = Keeping()
    asyncio.run(make_lm("local", engine).acall(messages=[{"role": "user", "content": "u"}], **options))
    return engine.requests[-1]


def _turn() -> dict:
    return {"action": {"code": "print(1)"}, "observation": "1"}


def _acting(adapter, may_answer: bool):
    """The adapter as its policy leaves it before a step (harness.agents.loop.must_act decides)."""
    adapter.must_act = not may_answer
    return adapter


@pytest.mark.parametrize("may_answer", [False, True])
def test_direct_calls_get_the_tool_call_grammar_they_got_when_the_arm_built_it(may_answer):
    from harness.agents.chat import FINAL_ANSWER_FUNCTION, ToolCallingAdapter
    from harness.models.grammars import tool_call_grammar, tool_reply_grammar
    from harness.models.llama import LlamaEngine

    tools = [SEARCH, LOOKUP, FINAL_ANSWER_FUNCTION]
    request = _sent(_acting(ToolCallingAdapter(), may_answer).options({"tools": tools, "history": [_turn()]}))
    expected = tool_reply_grammar(tools) if may_answer else tool_call_grammar(tools)
    assert LlamaEngine.reply_grammar(request) == expected


@pytest.mark.parametrize("may_answer", [False, True])
def test_direct_calls_under_parallel_tool_calls_get_the_grammar_of_several_calls(may_answer):
    from harness.agents.chat import FINAL_ANSWER_FUNCTION, ToolCallingAdapter
    from harness.models.grammars import tool_call_grammar, tool_reply_grammar
    from harness.models.llama import LlamaEngine

    tools = [SEARCH, LOOKUP, FINAL_ANSWER_FUNCTION]
    options = _acting(ToolCallingAdapter(parallel=True), may_answer).options({"tools": tools, "history": [_turn()]})
    builder = tool_reply_grammar if may_answer else tool_call_grammar
    assert LlamaEngine.reply_grammar(_sent(options)) == builder(tools, parallel=True) != builder(tools)


@pytest.mark.parametrize("may_answer", [False, True])
def test_code_mode_calls_get_the_code_grammar_they_got_when_the_arm_built_it(may_answer):
    from harness.agents.chat import CodeChatAdapter
    from harness.models.grammars import code_block_grammar, code_reply_grammar
    from harness.models.llama import LlamaEngine

    request = _sent(_acting(CodeChatAdapter(), may_answer).options({"history": [_turn()]}))
    assert LlamaEngine.reply_grammar(request) == (code_reply_grammar() if may_answer else code_block_grammar())


def test_a_react_step_gets_the_react_grammar_of_its_own_tools_with_none_offered_natively():
    from harness.agents.chat import FINAL_ANSWER_FUNCTION
    from harness.models.grammars import react_step_grammar
    from harness.models.llama import LlamaEngine, offered_tools
    from harness.models.messages import ReplyShape, reply_shape_option

    tools = [SEARCH, LOOKUP, FINAL_ANSWER_FUNCTION]
    request = _sent({"stop": ["[[ ## completed ## ]]"],
                     **reply_shape_option(ReplyShape("react_step", tools=tuple(tools)))})
    assert LlamaEngine.reply_grammar(request) == react_step_grammar(tools)
    assert offered_tools(request) == []


def test_without_a_declared_shape_the_engine_builds_no_reply_grammar():
    from harness.models.llama import LlamaEngine

    assert LlamaEngine.reply_grammar(_sent({"tools": [SEARCH]})) is None


@pytest.mark.local_model
def test_tool_choice_none_gets_a_plain_reply_with_no_tool_call():
    from dataclasses import replace

    from dspy.lm15 import ToolChoice

    from harness.models.llama import local_engine

    request = _request("Which country is customer 42 in? Use the tools.", max_tokens=20, tools=(SEARCH,))
    response = local_engine().complete(replace(request, config=replace(request.config,
                                                                              tool_choice=ToolChoice("none"))))
    assert not response.tool_calls and response.message.text


# ---- the prefix cache and the lazy grammar on the real model ----

LONG_SYSTEM = {"role": "system", "content": "You answer questions about customers with the tools. " * 30}


def _engine(prefix_cache=None, lazy_grammar=True):
    from harness.models.llama import LlamaEngine
    from harness.models.model_file import embedded_model_path

    return LlamaEngine(embedded_model_path(), n_ctx=4096, prefix_cache=prefix_cache, lazy_grammar=lazy_grammar)


def _task(text: str) -> list[dict]:
    return [LONG_SYSTEM, {"role": "user", "content": text}]


@pytest.mark.local_model
def test_a_restored_prefix_gives_the_same_completion_as_a_cold_evaluation_and_counts_its_reuse(tmp_path):
    from harness.models.grammars import tool_reply_grammar
    from harness.models.prefix_cache import PrefixCache
    from harness.models.prefix_store import PrefixStore

    grammar = tool_reply_grammar([SEARCH])
    chen = _task("Find the customer named Chen.")
    warm = _engine(PrefixCache(256 * 2**20, PrefixStore(tmp_path, 2**30)))
    warm.complete_messages(_task("Find the customer named Ada."), max_tokens=24, tools=[SEARCH], grammar=grammar)
    warm.complete_messages([{"role": "user", "content": "Say hi."}], max_tokens=4)  # another arm in between
    text, stats = warm.complete_messages(chen, max_tokens=24, tools=[SEARCH], grammar=grammar)
    assert stats.reuse_source == "prefix_cache"
    assert stats.reused_prompt_tokens > stats.prompt_tokens * 0.8
    del warm
    later = _engine(PrefixCache(256 * 2**20, PrefixStore(tmp_path, 2**30)))  # the next process, from disk
    later_text, from_disk = later.complete_messages(chen, max_tokens=24, tools=[SEARCH], grammar=grammar)
    assert from_disk.reuse_source == "prefix_cache" and later.prefix_cache.disk_hits == 1
    del later
    cold_text, cold = _engine().complete_messages(chen, max_tokens=24, tools=[SEARCH], grammar=grammar)
    assert (cold.reuse_source, cold.reused_prompt_tokens) == ("none", 0)
    assert text == cold_text == later_text


@pytest.mark.local_model
def test_the_first_evaluation_of_a_kept_prefix_is_start_up_and_a_restored_one_is_not(tmp_path):
    from harness.models.prefix_cache import PrefixCache
    from harness.models.prefix_store import PrefixStore

    engine = _engine(PrefixCache(256 * 2**20, PrefixStore(tmp_path, 2**30)))
    _, first = engine.complete_messages(_task("Find the customer named Ada."), max_tokens=4)
    assert 0 < first.setup_seconds < first.prompt_seconds  # the shared system message, not the task's words
    engine.complete_messages([{"role": "user", "content": "Say hi."}], max_tokens=4)  # another arm in between
    _, second = engine.complete_messages(_task("Find the customer named Chen."), max_tokens=4)
    assert second.reuse_source == "prefix_cache" and second.setup_seconds == 0
    _, alone = _engine(prefix_cache=None).complete_messages(_task("Find the customer named Bo."), max_tokens=4)
    assert alone.setup_seconds == 0  # nothing is kept: every run evaluates its prefix, as its own time


@pytest.mark.local_model
def test_without_a_prefix_cache_a_new_prefix_is_evaluated_in_full():
    engine = _engine(prefix_cache=None)
    engine.complete_messages(_task("Find the customer named Ada."), max_tokens=4)
    engine.complete_messages([{"role": "user", "content": "Say hi."}], max_tokens=4)
    _, stats = engine.complete_messages(_task("Find the customer named Chen."), max_tokens=4)
    assert stats.reuse_source != "prefix_cache" and stats.reused_prompt_tokens < 10  # the chat template's start


@pytest.mark.local_model
def test_the_next_turn_of_a_run_reuses_the_previous_calls_context():
    engine = _engine(prefix_cache=None)
    first, _ = engine.complete_messages(_task("Find the customer named Ada."), max_tokens=8)
    _, stats = engine.complete_messages(_task("Find the customer named Ada.") + [
        {"role": "assistant", "content": first}, {"role": "user", "content": "Go on."}], max_tokens=4)
    assert stats.reuse_source == "context" and stats.reused_prompt_tokens > stats.prompt_tokens * 0.8


@pytest.mark.local_model
def test_the_lazy_grammar_chooses_the_same_tokens_as_the_full_grammar():
    from harness.models.grammars import tool_call_grammar

    grammar = tool_call_grammar([SEARCH])  # a call is required, so the model's plain-text start is refused
    lazy_text, lazy = _engine(lazy_grammar=True).complete_messages(
        _task("Who is customer 42?"), max_tokens=32, tools=[SEARCH], grammar=grammar)
    full_text, _ = _engine(lazy_grammar=False).complete_messages(
        _task("Who is customer 42?"), max_tokens=32, tools=[SEARCH], grammar=grammar)
    assert lazy_text == full_text and lazy_text.startswith("<tool_call>")
    assert lazy.grammar_refusals >= 1


@pytest.mark.local_model
def test_a_stopped_command_ends_a_call_within_one_prompt_batch_and_the_engine_decodes_again_after():
    from harness.models.stopping import DecodingStopped, resume_decoding, stop_decoding

    engine = _engine()
    long_prompt = [{"role": "system", "content": "You answer questions about customers with the tools. " * 150},
                   {"role": "user", "content": "Find the customer named Ada."}]  # several of llama.cpp's batches
    expected, _ = engine.complete_messages([{"role": "user", "content": "Say hi."}], max_tokens=4)
    evaluated: list[int] = []
    evaluate = engine._llama_eval

    def stop_after_the_first_batch(tokens):
        evaluate(tokens)
        evaluated.append(len(tokens))
        stop_decoding()

    engine._llama_eval = stop_after_the_first_batch
    try:
        with pytest.raises(DecodingStopped):
            engine.complete_messages(long_prompt, max_tokens=100)
    finally:
        engine._llama_eval = evaluate
        resume_decoding()
    assert evaluated == [engine.llm.n_batch]  # one batch of the prompt, then the stop
    assert engine.complete_messages([{"role": "user", "content": "Say hi."}], max_tokens=4)[0] == expected
