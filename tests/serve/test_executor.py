"""`harness serve`: execute_code answers a real MCP client, with the servers' tools callable from code, under the
server's bounds (each refusal a tool error, nothing of it run); over stdio as before, with no token."""

import asyncio
import json

import pytest
from fastmcp import Client

from harness.errors import UserError
from harness.serve import ExecutorBounds, build_executor
from harness.tasks.task import ServerRef
from tests.mcp import stub_servers

pytestmark = pytest.mark.sandbox


async def test_execute_code_calls_tools_and_reports_diagnostics():
    executor = await build_executor((ServerRef("crm"),))
    async with Client(executor) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools] == ["execute_code"]
        assert "def get_customer(customer_id: str)" in tools[0].description
        result = await client.call_tool("execute_code", {"code": "print(get_customer(customer_id='C-0007')['name'])"})
        body = result.structured_content
        assert body["success"] and body["stdout"].strip() == "Chen Tanaka"
        assert body["diagnostics"]["tool_calls"][0]["tool"] == "get_customer"
        failed = (await client.call_tool("execute_code", {"code": "1/0"})).structured_content
        assert not failed["success"] and "ZeroDivisionError" in failed["stderr"]
        blocked = (await client.call_tool("execute_code", {"code": "import os"})).structured_content
        assert not blocked["success"] and "POLICY_VIOLATION" in blocked["stderr"]


async def test_writes_persist_across_calls_but_interpreter_state_does_not():
    executor = await build_executor((ServerRef("crm"),))
    async with Client(executor) as client:
        await client.call_tool("execute_code", {"code": "x = add_note(customer_id='C-0001', body='hi')"})
        second = (await client.call_tool("execute_code", {
            "code": "print(len(list_notes(customer_id='C-0001')))\ntry:\n    x\n    print(True)\nexcept NameError:\n"
                    "    print(False)"})).structured_content
    assert second["stdout"].split() == ["1", "False"]


@pytest.mark.integration
def test_harness_serve_over_stdio_answers_a_real_client_with_no_token():
    import asyncio
    import sys

    from fastmcp.client.transports import StdioTransport

    async def main():
        transport = StdioTransport(command=sys.executable,
                                   args=["-c", "from harness.cli import main; main()", "serve", "--servers", "crm"])
        async with Client(transport) as client:
            result = await client.call_tool("execute_code", {"code": "print(len(search_customers(query='a')))"})
            return json.loads(result.content[0].text)

    body = asyncio.run(main())
    assert body["success"] and int(body["stdout"]) > 0


@pytest.mark.integration
async def test_a_server_that_does_not_start_is_one_line_before_anything_is_served(tmp_path, monkeypatch):
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", quitter=stub_servers.quitting())
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))
    with pytest.raises(UserError, match="server 'quitter' did not start: the process exited .*bad token"):
        await build_executor((ServerRef("quitter"),))


async def test_execute_code_runs_gathered_calls_as_one_batch():
    executor = await build_executor((ServerRef("crm"),))
    code = ("import asyncio\nfirst, second = await asyncio.gather(get_customer(customer_id='C-0001'), "
            "get_customer(customer_id='C-0007'))\nprint(first['id'], second['name'])")
    async with Client(executor) as client:
        body = (await client.call_tool("execute_code", {"code": code})).structured_content
    assert body["success"] and body["stdout"].split() == ["C-0001", "Chen", "Tanaka"]
    batches = [c["batch"] for c in body["diagnostics"]["tool_calls"]]
    assert len(batches) == 2 and batches[0] == batches[1] is not None


async def refusal(client: Client, arguments: dict) -> str:
    result = await client.call_tool("execute_code", arguments, raise_on_error=False)
    assert result.is_error
    return result.content[0].text


async def test_code_over_the_size_bound_and_a_timeout_over_the_cap_are_refused_and_not_run():
    executor = await build_executor((ServerRef("crm"),), bounds=ExecutorBounds(max_code_chars=80, max_timeout_s=60))
    write = "add_note(customer_id='C-0002', body='x')"
    async with Client(executor) as client:
        tools = await client.list_tools()
        assert "code up to 80 characters" in tools[0].description and "at most 60 s" in tools[0].description
        too_long = await refusal(client, {"code": write + "\n" + "#" * 80})
        assert "the code is 121 characters; this server runs at most 80" in too_long
        too_slow = await refusal(client, {"code": write, "timeout": 61})
        assert "timeout 61 s is over this server's cap of 60 s" in too_slow
        counted = (await client.call_tool("execute_code", {
            "code": "print(len(list_notes(customer_id='C-0002')))", "timeout": 60})).structured_content
    assert counted["stdout"].strip() == "0"  # neither refused call wrote its note


async def test_executions_past_the_pool_and_its_queue_are_refused_while_the_queued_one_runs():
    executor = await build_executor((ServerRef("crm"),), bounds=ExecutorBounds(running=1, queued=1))
    slow = {"code": "import time\ntime.sleep(1.5)\nprint('slept')"}
    async with Client(executor) as client:
        first = asyncio.create_task(client.call_tool("execute_code", slow))
        await asyncio.sleep(0.3)
        second = asyncio.create_task(client.call_tool("execute_code", {"code": "print('queued')"}))
        await asyncio.sleep(0.3)
        busy = await refusal(client, {"code": "print('third')"})
        done = [t.structured_content["stdout"].strip() for t in await asyncio.gather(first, second)]
    assert "busy (1 execution running and 1 waiting" in busy and "--pool-size, --queue" in busy
    assert done == ["slept", "queued"]


async def test_executions_running_at_once_each_report_only_their_own_tool_calls():
    executor = await build_executor((ServerRef("crm"),), bounds=ExecutorBounds(running=2, queued=0))
    slow_reads = {"code": "import time\nfor _ in range(3):\n    get_customer(customer_id='C-0001')\n"
                          "    time.sleep(0.3)"}
    one_search = {"code": "import time\ntime.sleep(0.2)\nsearch_customers(query='a')"}
    async with Client(executor) as client:
        await asyncio.gather(*(client.call_tool("execute_code", {"code": "pass"}) for _ in range(2)))  # both warm
        reads, search = await asyncio.gather(client.call_tool("execute_code", slow_reads),
                                             client.call_tool("execute_code", one_search))
    assert [c["tool"] for c in reads.structured_content["diagnostics"]["tool_calls"]] == ["get_customer"] * 3
    assert [c["tool"] for c in search.structured_content["diagnostics"]["tool_calls"]] == ["search_customers"]
