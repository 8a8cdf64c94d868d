"""The HTTP transport's access checks against a live server on loopback, with real HTTP clients (httpx, and the MCP
Python SDK's streamable HTTP client): no token or a wrong one is 401 and runs nothing, the right one runs; a foreign
Origin or a Host naming another name is 403; an allowed origin's browser preflight is answered. The server is the
one `harness serve` runs (harness.serve.http), around a small FastMCP app that counts its calls, so these need no
sandbox (the executor itself over HTTP: test_serve_cli.py)."""

import asyncio
import io
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import httpx2
import pytest
from fastmcp import FastMCP
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from harness.errors import UserError
from harness.serve.guard import Access
from harness.serve.http import announce, check_exposure, http_server, listen, resolve, url_of
from harness.serve.token import BearerToken

TOKEN = BearerToken("s3cret-" + "x" * 40, "HARNESS_SERVE_TOKEN")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run", "arguments": {"code": "1"}}}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def counting_server() -> tuple[FastMCP, list[str]]:
    calls: list[str] = []
    mcp = FastMCP("counting")

    @mcp.tool
    def run(code: str) -> str:
        calls.append(code)
        return f"ran {code}"

    return mcp, calls


@contextmanager
def serving(mcp: FastMCP, access: Access) -> Iterator[str]:
    """The app on a free loopback port in a thread of its own; yields its URL."""
    sock = listen(resolve("127.0.0.1"), 0)
    server = http_server(mcp, access)
    thread = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, list[str]]]:
    mcp, calls = counting_server()
    with serving(mcp, Access.build(TOKEN, origins=["http://localhost:6274"])) as url:
        yield url, calls


def post(url: str, body: dict, **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers={**MCP_HEADERS, **headers}, timeout=10)


async def call_with_sdk(url: str, token: str | None) -> str:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (httpx2.AsyncClient(headers=headers, timeout=10) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        result = await client.call_tool("run", {"code": "print(1)"})
        return result.content[0].text


def test_the_right_token_lets_the_mcp_sdk_client_call_a_tool(live):
    url, calls = live
    before = len(calls)
    assert asyncio.run(call_with_sdk(url, TOKEN.value)) == "ran print(1)"
    assert len(calls) == before + 1


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-" + "x" * 40, f"Basic {TOKEN.value}",
                                           f"Bearer {TOKEN.value[:-1]}"])
def test_no_token_or_a_wrong_one_is_401_and_runs_nothing(live, authorization):
    url, calls = live
    before = len(calls)
    extra = {"Authorization": authorization} if authorization else {}
    for body in (INITIALIZE, CALL):
        response = post(url, body, **extra)
        assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer TOKEN" in response.text
    assert len(calls) == before


def test_the_mcp_sdk_client_without_the_token_is_refused_and_nothing_runs(live):
    url, calls = live
    before = len(calls)
    with pytest.raises(ExceptionGroup) as refused:
        asyncio.run(call_with_sdk(url, None))
    assert refused.value.subgroup(MCPError) is not None and len(calls) == before


def test_every_path_needs_the_token_not_only_the_mcp_endpoint(live):
    url, _ = live
    assert httpx.get(url.replace("/mcp", "/.well-known/oauth-protected-resource")).status_code == 401


def test_a_foreign_origin_is_403_even_with_the_token(live):
    url, calls = live
    before = len(calls)
    response = post(url, INITIALIZE, Authorization=f"Bearer {TOKEN.value}", Origin="https://evil.example")
    assert response.status_code == 403 and "--allow-origin" in response.text
    assert len(calls) == before


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1"])
def test_a_host_naming_another_name_or_port_is_403_even_with_the_token(live, host):
    url, _ = live
    port = httpx.URL(url).port
    response = post(url, INITIALIZE, Authorization=f"Bearer {TOKEN.value}", Host=host.format(port=port))
    assert response.status_code == 403 and "Host header does not name this server" in response.text


def test_localhost_is_a_name_of_a_loopback_server(live):
    url, _ = live
    response = post(url.replace("127.0.0.1", "localhost"), INITIALIZE, Authorization=f"Bearer {TOKEN.value}")
    assert response.status_code == 200


def test_an_allowed_origin_gets_its_preflight_answered_and_its_calls_need_the_token(live):
    url, _ = live
    origin = "http://localhost:6274"
    preflight = httpx.options(url, headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                            "Access-Control-Request-Headers": "authorization, content-type"})
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    refused = post(url, INITIALIZE, Origin=origin)
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == origin
    assert post(url, INITIALIZE, Origin=origin, Authorization=f"Bearer {TOKEN.value}").status_code == 200


def test_a_preflight_from_an_origin_not_allowed_is_403(live):
    url, _ = live
    preflight = httpx.options(url, headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 403


def test_a_loopback_host_needs_no_flag_and_any_other_needs_the_flag_and_a_set_token():
    generated = BearerToken("g" * 43, "generated")
    check_exposure(resolve("localhost"), False, generated)
    network = resolve("0.0.0.0")
    with pytest.raises(UserError, match="--host 0.0.0.0 is not a loopback address.*--expose-to-network"):
        check_exposure(network, False, TOKEN)
    with pytest.raises(UserError, match="needs a token you set.*HARNESS_SERVE_TOKEN or --token-file"):
        check_exposure(network, True, generated)
    check_exposure(network, True, TOKEN)


def test_a_taken_port_is_one_line_naming_it():
    taken = listen(resolve("127.0.0.1"), 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(UserError, match=f"--port {port}: cannot listen there"):
            listen(resolve("127.0.0.1"), port)
    finally:
        taken.close()


def test_a_generated_token_is_printed_with_the_header_line_and_a_set_one_is_not():
    generated, out = BearerToken("g" * 43, "generated"), io.StringIO()
    announce("http://127.0.0.1:8765/mcp", generated, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("harness serve: MCP (streamable HTTP) at http://127.0.0.1:8765/mcp; every request needs this "
                        "header:")
    assert lines[1] == f"Authorization: Bearer {generated.value}"
    out = io.StringIO()
    announce("http://127.0.0.1:8765/mcp", TOKEN, out)
    assert TOKEN.value not in out.getvalue()
    assert out.getvalue().splitlines()[1] == "Authorization: Bearer <the token in HARNESS_SERVE_TOKEN>"


def test_a_server_on_every_interface_is_announced_by_its_port_not_by_0_0_0_0():
    out = io.StringIO()
    announce("http://0.0.0.0:8765/mcp", TOKEN, out)
    assert "0.0.0.0" not in out.getvalue() and "http://ADDRESS:8765/mcp (every interface" in out.getvalue()
