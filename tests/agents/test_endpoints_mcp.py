"""The run's servers as one MCP endpoint, driven with MCP clients (fastmcp's over streamable HTTP; the stdio bridge
with a stdio client): the run's tools as its session has them, every call through the run's session, recorded with
its step, changing the run's own fixtures."""

import os
import subprocess
import sys

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from harness.agents.endpoints import BRIDGE_MODULE, KEY_VARIABLE
from harness.models.scripted import ScriptedReply
from harness.trace.steps import ToolStep
from tests.agents.endpoint_agent import SMOKE, chat_client, served

NOTE = {"customer_id": "C-0041", "body": "VIP follow-up"}


async def test_the_mcp_endpoint_lists_the_run_tools_as_its_session_has_them():
    async with served(lambda request: "") as (ctx, endpoints), Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
        tools = {tool.name: tool for tool in await mcp.list_tools()}
    specs = {spec.name: spec for spec in ctx.session.toolbox.specs}
    assert set(tools) == set(specs)
    for name, spec in specs.items():
        assert tools[name].description == spec.description and tools[name].input_schema == spec.input_schema
        assert tools[name].output_schema == spec.output_schema


async def test_a_call_goes_through_the_run_session_with_the_step_that_asked_for_it():
    policy = lambda request: ScriptedReply(tool_calls=(("add_note", NOTE),))
    async with served(policy, SMOKE["vip-note"]) as (ctx, endpoints), Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
        await mcp.call_tool("get_order", {"order_id": "O-00112"})  # before any completion: the agent's own
        await chat_client(endpoints).chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        result = await mcp.call_tool("add_note", NOTE)
        end_state = ctx.session.end_state()
    first, second = ctx.transcript.tool_calls
    assert (first.tool, first.step, first.in_code) == ("get_order", None, True)
    assert (second.tool, second.step, second.in_code, second.arguments) == ("add_note", 0, False, NOTE)
    assert isinstance(ctx.transcript.steps[0], ToolStep) and ctx.transcript.steps[0].calls[0].tool == "add_note"
    assert not result.is_error
    assert [note["body"] for note in end_state["crm"]["notes"] if note["customer_id"] == "C-0041"] == ["VIP follow-up"]


async def test_a_tool_error_comes_back_as_an_mcp_tool_error_and_is_recorded():
    async with served(lambda request: "") as (ctx, endpoints), Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
        result = await mcp.call_tool("get_customer", {"customer_id": "C-9999"}, raise_on_error=False)
    recorded = ctx.transcript.tool_calls[0]
    assert result.is_error and recorded.is_error and recorded.result_preview in result.content[0].text


async def test_the_run_tool_latency_applies_to_calls_through_the_endpoint():
    async with served(lambda request: "") as (ctx, endpoints):
        ctx.session.tool_latency_s = 0.2
        async with Client(endpoints.mcp_url, auth=endpoints.api_key) as mcp:
            await mcp.call_tool("get_customer", {"customer_id": "C-0007"})
    assert ctx.transcript.tool_calls[0].duration_s >= 0.2


@pytest.mark.integration
async def test_the_stdio_bridge_reaches_the_run_servers_with_the_key_from_its_environment():
    async with served(lambda request: "") as (ctx, endpoints):
        command, *args = endpoints.stdio_command
        assert endpoints.api_key not in " ".join(endpoints.stdio_command)  # `ps` shows a command line
        env = {**os.environ, KEY_VARIABLE: endpoints.api_key}
        async with Client(StdioTransport(command, args, env=env)) as mcp:
            names = {tool.name for tool in await mcp.list_tools()}
            result = await mcp.call_tool("get_customer", {"customer_id": "C-0007"})
    assert "get_customer" in names and '"country":"IN"' in result.content[0].text.replace(" ", "")
    assert [call.tool for call in ctx.transcript.tool_calls] == ["get_customer"]


@pytest.mark.integration
def test_the_stdio_bridge_refuses_to_start_without_the_key():
    command = (sys.executable, "-m", BRIDGE_MODULE, "http://127.0.0.1:1/mcp")
    env = {k: v for k, v in os.environ.items() if k != KEY_VARIABLE}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and KEY_VARIABLE in done.stderr and done.stdout == ""
