"""`harness serve --transport http` as a user runs it: refused at start (one line, exit 2) when it would be reachable
from the network without the owner's flag or without a token they set; otherwise it prints the line a client needs,
and the MCP Python SDK's client runs code with that token and gets 401 without it."""

import asyncio
import subprocess
import sys

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.cli.helpers import ROOT, harness

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_a_network_host_without_the_flag_is_refused_at_start():
    line = one_error_line(harness("serve", "--transport", "http", "--host", "0.0.0.0", "--port", "0"))
    assert line.startswith("error: --host 0.0.0.0 is not a loopback address") and "--expose-to-network" in line


def test_a_network_host_with_the_flag_but_no_token_set_is_refused_at_start(monkeypatch):
    monkeypatch.delenv("HARNESS_SERVE_TOKEN", raising=False)
    result = harness("serve", "--transport", "http", "--host", "0.0.0.0", "--port", "0", "--expose-to-network")
    assert "needs a token you set" in one_error_line(result)


def test_a_token_on_the_command_line_is_not_an_option():
    result = harness("serve", "--transport", "http", "--token", "x" * 40)
    assert result.returncode == 2 and "No such option: --token" in result.stderr


async def run_code(url: str, token: str) -> dict:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        result = await client.call_tool("execute_code", {"code": "print(get_customer(customer_id='C-0007')['name'])"})
        return result.structured_content


@pytest.mark.sandbox
def test_the_printed_token_lets_the_mcp_sdk_client_run_code_and_nothing_else_gets_in():
    process = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "serve", "--transport",
                                "http", "--port", "0", "--servers", "crm"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        announced = process.stderr.readline()
        header = process.stderr.readline().strip()
        assert announced.startswith("harness serve: MCP (streamable HTTP) at http://127.0.0.1:"), announced
        url = announced.split(" at ")[1].split(";")[0]
        assert header.startswith("Authorization: Bearer ")
        token = header.removeprefix("Authorization: Bearer ")
        body = asyncio.run(run_code(url, token))
        assert body["success"] and body["stdout"].strip() == "Chen Tanaka"
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30,
                             headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
    finally:
        process.terminate()
        process.wait(30)
    assert token not in process.stderr.read()  # printed once, at start


def test_an_http_option_with_stdio_is_refused_rather_than_ignored():
    line = one_error_line(harness("serve", "--expose-to-network"))
    assert line == ("error: --expose-to-network applies to --transport http only (over stdio the client that starts "
                    "the server is its only peer)")
