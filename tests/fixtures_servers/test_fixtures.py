"""Every fixture server: deterministic for (seed, size), fresh state per build, a working stdio entry point."""

import asyncio
import sys

import pytest
from fastmcp import Client

import fixtures_servers
from fixtures_servers import end_state

WRITES = {  # one state-changing call per server, to show builds do not share state
    "crm": ("add_note", {"customer_id": "C-0001", "body": "x"}),
    "tickets": ("create_ticket", {"title": "x", "priority": "low"}),
    "calendar": ("create_event", {"title": "x", "start": "2026-06-30T09:00", "end": "2026-06-30T09:30",
                                  "attendees": ["P-01"]}),
    "inventory": None,
    "docs": None,
    "sprawl": ("create_coupon", {"name": "NEW50"}),
}


def test_all_six_fixtures_exist_then_the_catalogues_servers():
    from fixtures_servers.catalogue import SERVERS

    assert fixtures_servers.available() == list(fixtures_servers.FIXTURES) + list(SERVERS)
    assert len(fixtures_servers.FIXTURES) == 6


@pytest.mark.parametrize("name", fixtures_servers.FIXTURES)
async def test_same_seed_same_data_and_fresh_state(name):
    module = fixtures_servers.load(name)
    first, second = module.build(seed=3), module.build(seed=3)
    assert end_state(first) == end_state(second)
    assert end_state(module.build(seed=4)) != end_state(first)
    write = WRITES[name]
    if write:
        async with Client(first) as client:
            await client.call_tool(*write)
        assert end_state(first) != end_state(second)
        assert end_state(module.build(seed=3)) == end_state(second)


@pytest.mark.parametrize("size", [10, 100, 10_000])
def test_inventory_scales_with_size(size):
    assert len(end_state(fixtures_servers.load("inventory").build(size=size))["items"]) == size


@pytest.mark.integration
@pytest.mark.parametrize("name", fixtures_servers.FIXTURES)
def test_stdio_entry_point_serves_a_real_client(name):
    from fastmcp.client.transports import StdioTransport

    async def main():
        transport = StdioTransport(command=sys.executable, args=["-m", f"fixtures_servers.{name}", "--seed", "1"])
        async with Client(transport) as client:
            return await client.list_tools()

    tools = asyncio.run(main())
    assert len(tools) >= 3
