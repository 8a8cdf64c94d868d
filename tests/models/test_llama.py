"""Assembling and verifying the embedded model, on small fake parts through the real code path; and the
real model, marked local_model."""

import hashlib
import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.models.llama import (
    ChatTemplate,
    ModelFile,
    assemble,
    chatml,
    is_verified,
    parse_tool_calls,
    resolve_local_model,
    verify,
)

QWEN_TEMPLATE = Path(__file__).with_name("qwen2.5_chat_template.jinja")  # the embedded GGUF's, copied
SEARCH = {"type": "function", "function": {
    "name": "search_customers", "description": "Find customers by name.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


@pytest.fixture
def parts(tmp_path):
    paths = []
    for n, content in enumerate([b"GGUF-first-", b"second-", b"third"], start=1):
        path = tmp_path / f"part{n:02d}.bin"
        path.write_bytes(content)
        paths.append(path)
    whole = b"GGUF-first-second-third"
    return paths, ModelFile(hashlib.sha256(whole).hexdigest(), len(whole))


def test_parts_in_order_assemble_into_the_verified_file(parts, tmp_path):
    paths, expected = parts
    model = assemble(paths, tmp_path / "out" / "model.gguf", expected)
    assert model.read_bytes() == b"GGUF-first-second-third"
    assert is_verified(model, expected)
    assert resolve_local_model(f"local:{model}") == model


def test_parts_out_of_order_are_refused_in_one_line(parts, tmp_path):
    paths, expected = parts
    with pytest.raises(UserError, match="out of order") as info:
        assemble([paths[1], paths[0], paths[2]], tmp_path / "model.gguf", expected)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "model.gguf").exists()


def test_a_missing_part_is_refused(parts, tmp_path):
    paths, expected = parts
    paths[1].unlink()
    with pytest.raises(UserError, match="model part file missing"):
        assemble(paths, tmp_path / "model.gguf", expected)


def test_a_bad_hash_is_refused(parts, tmp_path):
    paths, expected = parts
    wrong = ModelFile("0" * 64, expected.size)
    with pytest.raises(UserError, match="does not match"):
        assemble(paths, tmp_path / "model.gguf", wrong)


def test_a_changed_file_is_hashed_again(parts, tmp_path):
    paths, expected = parts
    model = assemble(paths, tmp_path / "model.gguf", expected)
    model.write_bytes(b"GGUF-tampered-with-data")
    assert not is_verified(model, expected)
    with pytest.raises(UserError, match="not the embedded model"):
        verify(model, expected)


def test_local_path_must_exist_and_be_gguf(tmp_path):
    with pytest.raises(UserError, match="model file not found"):
        resolve_local_model(f"local:{tmp_path / 'nope.gguf'}")
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(UserError, match="not a GGUF"):
        resolve_local_model(f"local:{text}")


def test_missing_part_packages_name_the_install_command(monkeypatch):
    import harness.models.llama as local_model

    monkeypatch.setattr(local_model, "PART_PACKAGE", "harness-no-such-package-{n}")
    with pytest.raises(UserError, match=r"pip install -e '\.\[local\]'"):
        local_model.installed_parts()


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

    engine = local_engine("local")
    first = [{"role": "system", "content": "Answer with a number only."}, {"role": "user", "content": "2+3?"}]
    text, stats = engine.complete_messages(first, max_tokens=8)
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0 and text.strip()
    request = Request(model="local", system=first[0]["content"], config=Config(max_tokens=8), messages=(
        Message.user("2+3?"), Message.assistant([TextPart(text)]), Message.user("And 4+4?")))
    usage = engine.complete(request).usage
    assert usage.input_tokens > stats.prompt_tokens and usage.output_tokens > 0
    assert stats.prompt_tokens - 1 <= usage.cache_read_tokens < usage.input_tokens
    assert engine.last_call.evaluated_prompt_tokens == usage.input_tokens - usage.cache_read_tokens


def _request(user: str, max_tokens: int, tools=(), stop=(), grammar: str | None = None):
    from dspy.lm15 import Config, FunctionTool, Message, Request

    from harness.models.messages import grammar_option

    return Request(model="local", system="You are a careful assistant.", messages=(Message.user(user),),
                   tools=tuple(FunctionTool(t["function"]["name"], t["function"]["description"],
                                            t["function"]["parameters"]) for t in tools),
                   config=Config(max_tokens=max_tokens, stop=tuple(stop),
                                 extensions=grammar_option(grammar) if grammar else None))


@pytest.mark.local_model
def test_the_embedded_models_own_template_is_the_one_rendered_here():
    from harness.models.llama import local_engine

    assert local_engine("local").template.source == QWEN_TEMPLATE.read_text()


@pytest.mark.local_model
def test_the_embedded_model_calls_a_real_tool_with_schema_valid_arguments_under_the_grammar():
    import jsonschema

    from harness.models.llama import local_engine
    from harness.models.messages import used_grammar

    lookup = {"type": "function", "function": {
        "name": "get_customer", "description": "One customer's record by id.",
        "parameters": {"type": "object", "properties": {"customer_id": {"type": "integer"}},
                       "required": ["customer_id"]}}}
    response = local_engine("local").complete(
        _request("Which country is customer 42 in? Use the tools.", max_tokens=60, tools=(SEARCH, lookup)))
    (call,) = response.tool_calls
    schema = {t["function"]["name"]: t["function"]["parameters"] for t in (SEARCH, lookup)}[call.name]
    jsonschema.validate(call.input, schema)
    assert response.finish_reason == "tool_call" and used_grammar(response)


@pytest.mark.local_model
def test_an_explicit_grammar_decides_the_reply():
    from harness.models.llama import local_engine

    response = local_engine("local").complete(_request("Say hello.", max_tokens=10, grammar='root ::= "forty-two"'))
    assert response.message.text == "forty-two"


@pytest.mark.local_model
def test_a_stop_sequence_ends_the_reply_where_asked():
    from harness.models.llama import local_engine

    engine = local_engine("local")
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


@pytest.mark.local_model
def test_tool_choice_none_gets_a_plain_reply_with_no_tool_call():
    from dataclasses import replace

    from dspy.lm15 import ToolChoice

    from harness.models.llama import local_engine

    request = _request("Which country is customer 42 in? Use the tools.", max_tokens=20, tools=(SEARCH,))
    response = local_engine("local").complete(replace(request, config=replace(request.config,
                                                                              tool_choice=ToolChoice("none"))))
    assert not response.tool_calls and response.message.text
