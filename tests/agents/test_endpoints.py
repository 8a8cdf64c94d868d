"""The run's model as an OpenAI-compatible Chat Completions endpoint, driven with the `openai` client: every call is
the run's LM call, one step of the run, with its usage as the row counts it; limits and LM errors come back as
OpenAI errors; a request without the run's secret is refused."""

import asyncio
import json

import httpx
import openai
import pytest

from harness.agents.endpoints import Endpoints, run_error
from harness.agents.endpoints.chat_reply import call_usage, read_reply
from harness.models.scripted import ScriptedReply
from harness.run.row import token_totals
from harness.trace.calls import LMCall
from harness.trace.errors import RunLimitReached
from harness.trace.steps import AnswerStep, ToolStep
from tests.agents.endpoint_agent import chat_client, served

ADD = {"type": "function", "function": {"name": "add", "description": "Add two integers.", "strict": True,
                                        "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                                        "b": {"type": "integer"}}}}}
ASK = [{"role": "system", "content": "You add."}, {"role": "user", "content": "What is 2 + 3?"}]


def replies(*items):
    pending = list(items)
    return lambda request: pending.pop(0)


async def test_a_request_with_tools_gets_tool_calls_and_the_usage_the_run_recorded():
    policy = replies(ScriptedReply(text="Adding.", tool_calls=(("add", {"a": 2, "b": 3}),)))
    async with served(policy) as (ctx, endpoints):
        response = await chat_client(endpoints).chat.completions.create(model="any-name", messages=ASK, tools=[ADD],
                                                                         tool_choice="auto", temperature=0.3)
    message, call = response.choices[0].message, ctx.transcript.lm_calls[0]
    assert response.choices[0].finish_reason == "tool_calls" and message.content == "Adding."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (call.prompt_tokens, call.completion_tokens)
    assert response.model == endpoints.model == "scripted:endpoints"
    assert call.messages == ASK and call.tools[0]["function"]["name"] == "add" and call.step == 0
    step = ctx.transcript.steps[0]
    assert isinstance(step, ToolStep) and step.acts == ("tool",) and step.calls[0].tool == "add" and step.thought == "Adding."


async def test_each_completion_is_one_step_and_a_reply_without_calls_is_an_answer_step():
    policy = replies(ScriptedReply(tool_calls=(("add", {"a": 2, "b": 3}),)), ScriptedReply(text="5"))
    async with served(policy) as (ctx, endpoints):
        client = chat_client(endpoints)
        first = (await client.chat.completions.create(model="m", messages=ASK, tools=[ADD])).choices[0].message
        call_id = first.tool_calls[0].id
        second = await client.chat.completions.create(model="m", tools=[ADD], messages=[
            *ASK, first.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call_id, "content": "5"}])
    assert second.choices[0].message.content == "5" and second.choices[0].finish_reason == "stop"
    assert [c.step for c in ctx.transcript.lm_calls] == [0, 1]
    assert isinstance(ctx.transcript.steps[1], AnswerStep) and ctx.transcript.steps[1].text == "5"
    sent = ctx.transcript.lm_calls[1].messages
    assert sent[-2]["tool_calls"][0]["id"] == call_id and sent[-1] == {"role": "tool", "tool_call_id": call_id,
                                                                       "content": "5"}


async def test_a_streamed_request_gets_the_whole_reply_as_chunks_with_its_usage():
    policy = replies(ScriptedReply(text="Adding.", tool_calls=(("add", {"a": 2, "b": 3}),)))
    async with served(policy) as (ctx, endpoints):
        stream = await chat_client(endpoints).chat.completions.create(model="m", messages=ASK, tools=[ADD], stream=True)
        chunks = [chunk async for chunk in stream]
    deltas = [chunk.choices[0].delta for chunk in chunks]
    assert "".join(d.content or "" for d in deltas) == "Adding."
    calls = [call for d in deltas for call in d.tool_calls or []]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("add", {"a": 2, "b": 3})]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].usage.prompt_tokens == ctx.transcript.lm_calls[0].prompt_tokens


async def test_a_failed_lm_call_is_an_openai_error_the_client_does_not_retry():
    asked = []

    def failing(request):
        asked.append(request)
        raise ValueError("the provider is down")

    async with served(failing) as (_ctx, endpoints):
        with pytest.raises(openai.APIStatusError) as refused:
            await chat_client(endpoints).chat.completions.create(model="m", messages=ASK)
        error = run_error(endpoints)
    assert refused.value.status_code == 502 and "the provider is down" in refused.value.message
    assert len(asked) == 1  # x-should-retry: false; the engine stack retries what is transient itself
    assert error is not None and error.type == "lm_error"


async def test_a_completion_past_the_turn_limit_is_refused_as_max_turns():
    async with served(lambda request: "still thinking") as (ctx, endpoints):
        client = chat_client(endpoints)
        for _ in range(ctx.max_turns):
            await client.chat.completions.create(model="m", messages=ASK)
        with pytest.raises(openai.PermissionDeniedError) as refused:  # 403: not a rate limit a client waits out
            await client.chat.completions.create(model="m", messages=ASK)
        assert "429" not in str(refused.value) and "rate limit" not in str(refused.value).lower()
        error = run_error(endpoints)
    assert len(ctx.transcript.lm_calls) == ctx.max_turns == 4 and error.type == "max_turns"


async def test_a_spending_limit_passed_ends_the_run_with_its_error_type():
    def limit(calls):
        if calls:
            raise RunLimitReached("token_limit", "LM call 1 took the run past its tokens")

    async with served(lambda request: "5", check=limit) as (ctx, endpoints):
        with pytest.raises(openai.PermissionDeniedError) as refused:
            await chat_client(endpoints).chat.completions.create(model="m", messages=ASK)
        error = run_error(endpoints)
    assert "past its tokens" in refused.value.message and error.type == "token_limit"
    assert len(ctx.transcript.lm_calls) == 1  # the call that passed it is recorded, as in every arm


async def test_the_model_list_names_the_run_model():
    async with served(lambda request: "5") as (_ctx, endpoints):
        models = await chat_client(endpoints).models.list()
    assert [model.id for model in models.data] == ["scripted:endpoints"]


def _requests(endpoints: Endpoints, headers: dict[str, str]) -> list[int]:
    """The status of one request to each endpoint with `headers`."""
    chat = {"model": "m", "messages": ASK}
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"accept": "application/json, text/event-stream"}
    with httpx.Client() as http:
        return [http.post(f"{endpoints.base_url}/chat/completions", json=chat, headers=headers).status_code,
                http.get(f"{endpoints.base_url}/models", headers=headers).status_code,
                http.post(endpoints.mcp_url, json=mcp, headers={**headers, **accept}).status_code]


async def test_a_request_without_the_run_secret_is_refused_on_both_endpoints():
    async with served(lambda request: "5") as (ctx, endpoints):
        missing = await asyncio.to_thread(_requests, endpoints, {})
        wrong = await asyncio.to_thread(_requests, endpoints, {"authorization": "Bearer not-the-key"})
    after = await asyncio.to_thread(_requests, endpoints, {"authorization": f"Bearer {endpoints.api_key}"})
    assert missing == wrong == after == [401, 401, 401]  # after the run, its secret is forgotten
    assert ctx.transcript.lm_calls == () and ctx.transcript.tool_calls == ()


def test_every_url_is_on_the_loopback_interface_and_the_environment_names_them():
    endpoints = Endpoints("http://127.0.0.1:1/v1", "k", "m", "http://127.0.0.1:1/mcp", ("python", "-m", "bridge", "u"))
    env = endpoints.environment()
    assert env["OPENAI_BASE_URL"] == endpoints.base_url and env["OPENAI_API_KEY"] == env["HARNESS_API_KEY"] == "k"
    assert env["HARNESS_MCP_URL"] == endpoints.mcp_url and env["HARNESS_MCP_STDIO"] == "python -m bridge u"
    assert env["HARNESS_MODEL"] == "m"


def test_a_reply_is_passed_on_as_the_model_gave_it_with_ids_unique_in_the_run():
    answer = {"text": "Adding.", "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}},
        {"id": "call_0", "type": "function", "function": {"name": "final_answer", "arguments": {"answer": 27.0}}}]}
    text, calls = read_reply(answer, 3)
    assert text == "Adding." and [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_3_0", "add", '{"a": 2}'), ("call_3_1", "final_answer", '{"answer": 27.0}')]  # not rewritten


def test_usage_not_reported_by_the_provider_is_counted_as_the_row_counts_it():
    call = LMCall(messages=ASK, output="Adding.", tool_calls=({"name": "add", "arguments": {"a": 2}},), tools=(ADD,))
    totals = token_totals([call], None, "provider")
    assert call_usage(call) == (totals.prompt, totals.completion) and totals.prompt > 0


def test_a_reply_calling_the_agents_code_tool_is_a_code_action_and_any_other_call_a_tool_action():
    from harness.agents.endpoints.chat_reply import ReplyCall, reply_step

    code, lookup = ReplyCall("call_0_0", "codemode", '{"code": "1"}'), ReplyCall("call_0_1", "get_order", "{}")
    assert reply_step("", [code], frozenset({"codemode"})).acts == ("code",)
    assert reply_step("", [lookup], frozenset({"codemode"})).acts == ("tool",)
    assert reply_step("", [code, lookup], frozenset({"codemode"})).acts == ("tool", "code")
    assert reply_step("", [code]).acts == ("tool",)  # an agent that names no code tool: every call is a tool's
