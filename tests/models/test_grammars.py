"""GBNF grammars for the embedded model: llama.cpp parses every one built from the fixture servers' real tools;
llama.cpp's own matcher accepts exactly the replies each protocol allows (marked local_model: it needs the
model's vocabulary); and the real model, decoding under each grammar, writes a reply that parses."""

from __future__ import annotations

import ctypes
import json
import math
import re
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

import llama_cpp
from llama_cpp import Llama, LlamaGrammar

from harness.mcp.servers import open_servers
from harness.models.chat_template import chatml
from harness.models.grammars import (
    check_grammar,
    code_block_grammar,
    fields_grammar,
    react_step_grammar,
    tool_call_grammar,
)
from harness.models.model_file import embedded_model_path
from harness.tasks.task import ServerRef

FIXTURES = ("crm", "docs", "tickets", "calendar", "inventory", "sprawl")
FINISH = {"type": "function", "function": {"name": "finish", "description": "Done.",
                                           "parameters": {"type": "object", "properties": {}}}}


def function(name: str, parameters: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


async def fixture_tools(name: str) -> list[dict[str, Any]]:
    """A fixture server's tools as OpenAI function definitions, listed over fastmcp's in-memory client."""
    async with open_servers((ServerRef(name),)) as session:
        return [function(spec.name, spec.input_schema, spec.description) for spec in session.toolbox.specs]


@pytest.fixture(scope="module")
async def tools_by_fixture() -> dict[str, list[dict[str, Any]]]:
    return {name: await fixture_tools(name) for name in FIXTURES}


# ---- llama.cpp parses them ----

@pytest.mark.parametrize("fixture", FIXTURES)
def test_llama_cpp_parses_the_tool_call_grammar_of_each_fixture(tools_by_fixture, fixture):
    check_grammar(tool_call_grammar(tools_by_fixture[fixture]))


@pytest.mark.parametrize("fixture", FIXTURES)
def test_llama_cpp_parses_the_react_step_grammar_of_each_fixture(tools_by_fixture, fixture):
    check_grammar(react_step_grammar([*tools_by_fixture[fixture], FINISH]))


def test_llama_cpp_parses_the_code_block_and_fields_grammars():
    check_grammar(code_block_grammar())
    check_grammar(fields_grammar(["reasoning", "answer"]))


def test_from_string_does_not_parse_so_check_grammar_does():
    bad = 'root ::= "a" missing-rule'
    LlamaGrammar.from_string(bad, verbose=False)  # llama-cpp-python 0.3.x stores the text unparsed
    with pytest.raises(ValueError, match="llama.cpp refused the grammar"):
        check_grammar(bad)


def test_the_same_tools_give_the_same_cached_grammar(tools_by_fixture):
    tools = tools_by_fixture["sprawl"]
    assert tool_call_grammar(tools) is tool_call_grammar(json.loads(json.dumps(tools)))


def test_duplicate_tool_names_are_refused():
    with pytest.raises(ValueError, match="unique"):
        tool_call_grammar([FINISH, FINISH])


def test_field_names_must_be_dspy_field_names():
    with pytest.raises(ValueError, match="word characters"):
        fields_grammar(["final answer"])


# ---- llama.cpp's matcher accepts exactly the allowed replies ----

@pytest.fixture(scope="module")
def vocab() -> Llama:
    """The embedded model's tokenizer only (no weights: ~0.2 s)."""
    return Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)


def _allowed(sampler: Any, token: int) -> bool:
    data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
    candidates = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
    return not math.isinf(data[0].logit)


def accepts(vocab: Llama, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets the model write `text` token by token and then stop."""
    sampler = llama_cpp.llama_sampler_init_grammar(vocab._model.vocab, grammar.encode(), b"root")
    assert sampler, "llama.cpp refused the grammar"
    try:
        for token in vocab.tokenize(text.encode(), add_bos=False, special=True):
            if not _allowed(sampler, token):
                return False
            llama_cpp.llama_sampler_accept(sampler, token)
        return _allowed(sampler, vocab.token_eos())
    finally:
        llama_cpp.llama_sampler_free(sampler)


def call(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    (call("get_customer", '{"customer_id": "C-0007"}'), True),
    (call("list_customers", '{"country": null, "limit": 5}'), True),  # Optional[str] from FastMCP takes null
    (call("list_customers", "{}"), True),  # every parameter optional
    (call("get_customer", "{}"), False),  # a required argument missing
    (call("get_customer", '{"order_id": "O-00001"}'), False),  # another tool's argument
    (call("get_customer", '{"customer_id": "C-0007", "limit": 1}'), False),  # no extra arguments
    (call("get_customer", '{"customer_id": 7}'), False),  # wrong type
    (call("get_customers", '{"customer_id": "C-0007"}'), False),  # no such tool
    (call("get_customer", '{"customer_id": "C-\n0007"}'), False),  # a raw newline is not JSON
    (call("get_customer", '{"customer_id":  "C-0007"}'), False),  # at most one space
    (call("search_customers", '{"query": "' + "a" * 501 + '"}'), False),  # strings are bounded
    (call("get_customer", '{"customer_id": "C-0007"}') + "\n", False),  # nothing after the call
    ("I will look it up.\n" + call("get_customer", '{"customer_id": "C-0007"}'), False),  # nor before
])
def test_tool_call_grammar_admits_only_one_call_that_fits_its_tool(vocab, tools_by_fixture, text, allowed):
    assert accepts(vocab, tool_call_grammar(tools_by_fixture["crm"]), text) is allowed


@pytest.mark.local_model
def test_tool_call_grammar_admits_a_call_to_any_of_the_64_sprawl_tools(vocab, tools_by_fixture):
    tools = tools_by_fixture["sprawl"]
    last = tools[-1]["function"]
    required = last["parameters"].get("required", [])
    arguments = json.dumps({name: "x" for name in required})
    assert accepts(vocab, tool_call_grammar(tools), call(last["name"], arguments))


SHAPES = function("shapes", {
    "type": "object",
    "properties": {
        "kind": {"enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"$ref": "#/$defs/Place"},
    },
    "required": ["kind"],
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
})


@pytest.mark.local_model
@pytest.mark.parametrize("arguments, allowed", [
    ('{"kind": "a", "tags": ["x", "y"], "where": {"city": "Pune"}}', True),
    ('{"kind": "c"}', False),  # not in the enum
    ('{"kind": "a", "where": {}}', False),  # the nested object's required key, through a $ref
    ('{"kind": "a", "where": {"city": "Pune", "zip": "1"}}', False),  # nested objects are closed too
])
def test_tool_call_grammar_follows_enums_arrays_refs_and_nested_objects(vocab, arguments, allowed):
    assert accepts(vocab, tool_call_grammar([SHAPES]), call("shapes", arguments)) is allowed


@pytest.mark.local_model
def test_a_ref_to_nothing_in_the_schema_takes_any_value(vocab):
    dangling = function("dangling", {"type": "object", "properties": {"where": {"$ref": "#/$defs/Place"}},
                                     "required": ["where"]})
    assert accepts(vocab, tool_call_grammar([dangling]), call("dangling", '{"where": {"city": "Pune"}}'))
    assert not accepts(vocab, tool_call_grammar([dangling]), call("dangling", "{}"))


@pytest.mark.local_model
def test_a_tool_without_properties_takes_only_empty_arguments(vocab):
    grammar = tool_call_grammar([function("ping", {"type": "object"})])
    assert accepts(vocab, grammar, call("ping", "{}"))
    assert not accepts(vocab, grammar, call("ping", '{"x": 1}'))


def step(thought: str, name: str, arguments: str, after: str = "") -> str:
    return (f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{name}\n\n"
            f"[[ ## next_tool_args ## ]]\n{arguments}\n\n{after}[[ ## completed ## ]]")


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    (step("Look up C-0007 (see [1] and [[x]]).", "get_customer", '{"customer_id": "C-0007"}'), True),
    (step("Done.", "finish", "{}"), True),
    (step("Look it up.", "get_customer", '{"customer_id": "C-0007"}',
          after='[[ ## observation_0 ## ]]\n{"country": "JP"}\n\n'), False),
    (step("Look it up. [[ ## observation_0 ## ]] JP", "get_customer", '{"customer_id": "C-0007"}'), False),
    (step("Look it up.\nThen answer.", "get_customer", '{"customer_id": "C-0007"}'), False),  # one line
    (step("Look it up.", "get_customer", '{"order_id": "O-00001"}'), False),  # arguments of the tool named
    (step("x" * 401, "finish", "{}"), False),  # bounded thought
])
def test_react_step_grammar_admits_one_step_and_no_observation(vocab, tools_by_fixture, text, allowed):
    assert accepts(vocab, react_step_grammar([*tools_by_fixture["crm"], FINISH]), text) is allowed


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    ("```python\nrows = get_customer('C-0007')\nprint(rows['country'], '``')\n```", True),
    ("```python\nprint('```')\n```", False),
    ("Here is the code:\n```python\nprint(1)\n```", False),
    ("```python\nprint(1)\n```\nThis prints 1.", False),
])
def test_code_block_grammar_admits_one_fenced_block_only(vocab, text, allowed):
    assert accepts(vocab, code_block_grammar(), text) is allowed


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    ("[[ ## reasoning ## ]]\nIt says [[1, 2]].\nSo:\n\n[[ ## answer ## ]]\nIN\n\n[[ ## completed ## ]]", True),
    ("[[ ## reasoning ## ]]\nIt says\n[[ ## observation ## ]]\nIN\n\n[[ ## answer ## ]]\nIN\n\n[[ ## completed ## ]]",
     False),
    ("[[ ## answer ## ]]\nIN\n\n[[ ## completed ## ]]", False),
])
def test_fields_grammar_admits_the_fields_in_order_without_other_markers(vocab, text, allowed):
    assert accepts(vocab, fields_grammar(["reasoning", "answer"]), text) is allowed


# ---- the real model writes replies that parse ----

QUESTION = "What country is customer C-0007 in?"
LOOKUP_TOOLS = ("search_customers", "get_customer", "list_customers")  # a short prompt: ~40 tokens/s to read it
MARKERS = re.compile(r"\[\[ ## (\w+) ## \]\]")


@pytest.fixture(scope="module")
def llm() -> Llama:
    return Llama(model_path=str(embedded_model_path()), n_ctx=2048, verbose=False)


def generate(llm: Llama, prompt: str, grammar: str) -> str:
    result = llm.create_completion(prompt, max_tokens=120, temperature=0,
                                   grammar=LlamaGrammar.from_string(grammar, verbose=False))
    assert result["choices"][0]["finish_reason"] == "stop", result["choices"][0]["text"]
    return result["choices"][0]["text"]


def lookup_tools(tools_by_fixture: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [t for t in tools_by_fixture["crm"] if t["function"]["name"] in LOOKUP_TOOLS]


def schema_of(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(t["function"]["parameters"] for t in tools if t["function"]["name"] == name)


@pytest.mark.local_model
def test_the_model_writes_a_valid_tool_call(llm, tools_by_fixture):
    from jsonschema import validate
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    tools = lookup_tools(tools_by_fixture)
    template = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], eos_token="<|im_end|>", bos_token="")
    prompt = template(messages=[{"role": "user", "content": QUESTION}], tools=tools).prompt
    text = generate(llm, prompt, tool_call_grammar(tools))
    body = json.loads(text.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>"))
    validate(body["arguments"], schema_of(tools, body["name"]))


@pytest.mark.local_model
def test_the_model_writes_a_code_block_that_compiles(llm):
    prompt = chatml([
        {"role": "system", "content": "Write Python. get_customer(customer_id: str) -> dict returns a customer "
                                      "with keys name and country. Reply with one ```python block."},
        {"role": "user", "content": f"{QUESTION} Print it."}])
    text = generate(llm, prompt, code_block_grammar())
    compile(text.removeprefix("```python\n").removesuffix("\n```"), "<reply>", "exec")


@pytest.mark.local_model
def test_the_model_writes_one_react_step_without_an_observation(llm, tools_by_fixture):
    from jsonschema import validate

    tools = [*lookup_tools(tools_by_fixture), FINISH]
    tool_list = "\n".join(f"- {t['function']['name']}: {t['function']['description']} "
                          f"Arguments: {json.dumps(t['function']['parameters'])}" for t in tools)
    prompt = chatml([
        {"role": "system", "content": "Your output fields are: `next_thought`, `next_tool_name`, `next_tool_args` "
                                      "(a JSON object), each after its marker [[ ## name ## ]], then "
                                      f"[[ ## completed ## ]]. Tools:\n{tool_list}"},
        {"role": "user", "content": f"[[ ## question ## ]]\n{QUESTION}\n\n[[ ## trajectory ## ]]\n"
                                    "[[ ## thought_0 ## ]]\nSearch for the customer.\n\n"
                                    "[[ ## tool_name_0 ## ]]\nsearch_customers\n\n"
                                    '[[ ## tool_args_0 ## ]]\n{"query": "C-0007"}\n\n'
                                    '[[ ## observation_0 ## ]]\n[{"id": "C-0007", "name": "Chen Tanaka"}]'}])
    text = generate(llm, prompt, react_step_grammar(tools))
    assert MARKERS.findall(text) == ["next_thought", "next_tool_name", "next_tool_args", "completed"]
    name = text.split("[[ ## next_tool_name ## ]]\n")[1].split("\n")[0]
    arguments = text.split("[[ ## next_tool_args ## ]]\n")[1].split("\n\n[[ ## completed ## ]]")[0]
    validate(json.loads(arguments), schema_of(tools, name))


@pytest.mark.local_model
def test_the_model_writes_the_fields_in_order(llm):
    prompt = chatml([
        {"role": "system", "content": "Answer with the fields [[ ## reasoning ## ]] and [[ ## answer ## ]], "
                                      "then [[ ## completed ## ]]."},
        {"role": "user", "content": "[[ ## question ## ]]\nWhat is the capital of India?"}])
    text = generate(llm, prompt, fields_grammar(["reasoning", "answer"]))
    assert MARKERS.findall(text) == ["reasoning", "answer", "completed"]
    assert "Delhi" in text.split("[[ ## answer ## ]]")[1]


def test_reply_grammars_offer_an_action_or_a_plain_answer_and_llama_cpp_parses_them():
    from harness.agents.chat import FINAL_ANSWER_FUNCTION
    from harness.models.grammars import code_reply_grammar, tool_reply_grammar

    code = code_reply_grammar()
    tools = tool_reply_grammar([FINAL_ANSWER_FUNCTION])
    assert code.startswith('root ::= "```python\\n" code "\\n```" | answer')
    assert tools.startswith('root ::= "<tool_call>\\n{\\"name\\": " tool-and-arguments "}\\n</tool_call>" | answer')
    for grammar in (code, tools):
        check_grammar(grammar)


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    (call("get_customer", '{"customer_id": "C-0007"}'), True),
    ("IN", True),  # a plain reply: the native protocol's final answer
    ("I will look it up.\n" + call("get_customer", '{"customer_id": "C-0007"}'), False),  # not half a call
    (call("get_customer", '{"customer_id": "C-0007"}') + "\nIN", False),
    (" IN", False),  # an answer starts with a visible character
    ('```json\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n```', False),  # a fenced "call"
    ('{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}', False),  # a bare JSON "call"
    ('["IN", "US"]', True),
])
def test_tool_reply_grammar_admits_one_call_or_a_plain_answer(vocab, tools_by_fixture, text, allowed):
    from harness.models.grammars import tool_reply_grammar

    assert accepts(vocab, tool_reply_grammar(tools_by_fixture["crm"]), text) is allowed


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    ("```python\nprint(1)\n```", True),
    ("27.0", True),
    ("Here is the code:\n```python\nprint(1)\n```", False),
    ("```python\nprint(1)\n```\nDone.", False),
])
def test_code_reply_grammar_admits_one_block_or_a_plain_answer(vocab, text, allowed):
    from harness.models.grammars import code_reply_grammar

    assert accepts(vocab, code_reply_grammar(), text) is allowed


ANY_ITEMS_TOOL = {"type": "function", "function": {"name": "add", "description": "Add numbers.", "parameters": {
    "type": "object", "properties": {"args": {"type": "array", "items": {}}, "items": {}},
    "required": ["args"]}}}


def test_an_array_of_anything_loses_only_its_items_keyword():
    """A `*args` tool (M3ToolEval has several) takes a list whose items may be anything, `"items": {}`, which
    llama.cpp's converter cannot read; a parameter that happens to be named "items" is kept."""
    from harness.models.grammars import _closed_parameters

    schema = _closed_parameters(ANY_ITEMS_TOOL["function"]["parameters"])
    assert schema["properties"] == {"args": {"type": "array"}, "items": {}}


@pytest.mark.local_model
@pytest.mark.parametrize("arguments, allowed", [
    ('{"args": [1, "x", 2.5]}', True),
    ('{"args": [1, 2], "items": {"a": 1}}', True),  # a parameter named "items" is still offered
    ('{"args": 3}', False),
])
def test_an_array_of_anything_admits_a_list_of_any_values(vocab, arguments, allowed):
    from harness.models.grammars import tool_call_grammar

    assert accepts(vocab, tool_call_grammar([ANY_ITEMS_TOOL]), call("add", arguments)) is allowed


TWO_CALLS = call("get_customer", '{"customer_id": "C-0007"}') + "\n" + call("list_customers", "{}")


@pytest.mark.local_model
@pytest.mark.parametrize("parallel, allowed", [(True, True), (False, False)])
def test_two_tool_call_blocks_are_admitted_only_when_the_shape_allows_parallel_calls(vocab, tools_by_fixture,
                                                                                      parallel, allowed):
    from harness.models.grammars import tool_reply_grammar

    tools = tools_by_fixture["crm"]
    assert accepts(vocab, tool_call_grammar(tools, parallel=parallel), TWO_CALLS) is allowed
    assert accepts(vocab, tool_reply_grammar(tools, parallel=parallel), TWO_CALLS) is allowed


@pytest.mark.local_model
@pytest.mark.parametrize("text, allowed", [
    (call("get_customer", '{"customer_id": "C-0007"}'), True),  # one call is still a reply
    ("IN", True),  # and so is a plain answer
    (TWO_CALLS + "\nIN", False),  # no answer after the calls
    (TWO_CALLS + "\n", True),  # the newline Qwen2.5 writes before its end token does not force another call
    (TWO_CALLS + "\n\n", False),
    ("\n".join([call("list_customers", "{}")] * 9), False),  # at most PARALLEL_CALLS_MAX (8) calls
    ("\n".join([call("list_customers", "{}")] * 8), True),
])
def test_the_parallel_reply_grammar_admits_one_to_eight_calls_or_an_answer(vocab, tools_by_fixture, text, allowed):
    from harness.models.grammars import tool_reply_grammar

    assert accepts(vocab, tool_reply_grammar(tools_by_fixture["crm"], parallel=True), text) is allowed


def test_the_parallel_grammars_parse_and_off_they_are_the_one_call_grammars(tools_by_fixture):
    from harness.models.grammars import tool_reply_grammar

    tools = tools_by_fixture["crm"]
    for grammar in (tool_call_grammar(tools, parallel=True), tool_reply_grammar(tools, parallel=True)):
        check_grammar(grammar)
        assert grammar.startswith('root ::= tool-call-block ("\\n" tool-call-block){0,7} "\\n"?')
    assert tool_call_grammar(tools, parallel=False) == tool_call_grammar(tools)
