"""The embedded model behind the chat endpoint: a request with `tools` and no reply shape gets a native tool call,
decoded under the grammar of its tool_choice (harness.models.llama), so any OpenAI client gets reliable tool calls
from a 1.5B model (with tool_choice "auto" the grammar also admits a plain reply, which the model may choose)."""

import json

import jsonschema
import pytest
from fastmcp import Client

from tests.agents.endpoint_agent import chat_client, openai_tools, served


@pytest.mark.local_model
async def test_the_embedded_model_answers_a_request_with_tools_with_a_native_tool_call():
    from harness.models.llama import local_engine

    async with served(None, engine=local_engine()) as (ctx, endpoints), Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
        tools = openai_tools(await mcp.list_tools())
        response = await chat_client(endpoints).chat.completions.create(
            model=endpoints.model, tools=tools, tool_choice="required", max_tokens=80,
            messages=[{"role": "user", "content": "In which country is customer C-0007? Use the tools."}])
        (call,) = response.choices[0].message.tool_calls
        arguments = json.loads(call.function.arguments)
        result = await mcp.call_tool(call.function.name, arguments, raise_on_error=False)
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    jsonschema.validate(arguments, schemas[call.function.name])
    assert response.choices[0].finish_reason == "tool_calls" and ctx.transcript.lm_calls[0].grammar
    assert response.usage.prompt_tokens == ctx.transcript.lm_calls[0].prompt_tokens > 0
    assert ctx.transcript.tool_calls[0].tool == call.function.name and ctx.transcript.tool_calls[0].step == 0
    assert not ctx.transcript.tool_calls[0].in_code and result is not None
