"""The catalogue fixture: N tools over eight servers, deterministic for (seed, size), the task tools at every size,
near-miss distractors first, realistic schemas, and state that writes change and a fresh build resets."""

import asyncio
import sys

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

import fixtures_servers
from fixtures_servers import end_state
from fixtures_servers.catalogue import MAX_SIZE, MIN_SIZE, SERVERS, build, catalogue, check_size
from fixtures_servers.catalogue.core import CORE

TASK_TOOLS = [tool.name for tool, _ in CORE]


def test_the_same_seed_and_size_give_the_same_catalogue_and_another_seed_another():
    first = [(t.name, t.server, t.description, t.schema) for t in catalogue(0, 256)]
    catalogue.cache_clear()
    assert [(t.name, t.server, t.description, t.schema) for t in catalogue(0, 256)] == first
    assert [t.name for t in catalogue(1, 256)] != [name for name, *_ in first]


@pytest.mark.parametrize("size", [16, 64, 256, 1024])
def test_every_size_has_exactly_its_tools_the_task_tools_and_every_server(size):
    tools = catalogue(0, size)
    assert len(tools) == size == len({t.name for t in tools})
    assert [t.name for t in tools[:len(TASK_TOOLS)]] == TASK_TOOLS
    assert {t.server for t in tools} == set(SERVERS)


def test_a_larger_catalogue_is_a_smaller_one_plus_tools():
    assert catalogue(0, 1024)[:64] == catalogue(0, 64)


def test_the_first_distractors_are_near_misses_of_the_task_tools():
    names = [t.name for t in catalogue(0, 16)[len(TASK_TOOLS):]]
    assert {"list_ticket_history", "list_account_history", "list_employee_history", "list_invoice_history"} <= set(names)


def test_sizes_outside_the_catalogue_are_refused_in_one_line():
    check_size(MIN_SIZE)
    check_size(MAX_SIZE)
    with pytest.raises(ValueError, match=f"a catalogue has {MIN_SIZE} to {MAX_SIZE} tools, not {MAX_SIZE + 1}"):
        check_size(MAX_SIZE + 1)


def test_schemas_nest_objects_use_enums_and_leave_parameters_optional():
    schemas = [t.schema for t in catalogue(0, 1024)]
    nested = [s for s in schemas if any(p.get("type") == "object" and "properties" in p
                                        for p in s["properties"].values())]
    enums = [s for s in schemas if any("enum" in p for p in s["properties"].values())]
    optional = [s for s in schemas if set(s["properties"]) - set(s.get("required", []))]
    assert len(nested) > 300 and len(enums) > 300 and len(optional) > 1000
    lengths = sorted(len(t.description) for t in catalogue(0, 1024))
    assert lengths[0] < 60 and lengths[-1] > 200  # one-liners and paragraphs, as real servers have


def test_each_server_lists_its_share_and_the_fixture_registry_builds_it():
    shares = {server: len(asyncio.run(_names(fixtures_servers.build(server, size=64)))) for server in SERVERS}
    assert sum(shares.values()) == 64
    assert fixtures_servers.describe("cat_billing") == SERVERS["cat_billing"]


async def _names(server) -> list[str]:
    async with Client(server) as client:
        return [tool.name for tool in await client.list_tools()]


async def test_a_write_changes_this_build_only_and_arguments_are_checked_against_the_schema():
    first, second = build(size=16, server="cat_helpdesk"), build(size=16, server="cat_helpdesk")
    async with Client(first) as client:
        updated = await client.call_tool("update_ticket", {"ticket_id": "HD-4025", "changes": {"priority": "urgent"}})
        assert updated.data["priority"] == "urgent"
        with pytest.raises(ToolError, match="'changes.priority' must be one of low, normal, high, urgent"):
            await client.call_tool("update_ticket", {"ticket_id": "HD-4025", "changes": {"priority": "asap"}})
        with pytest.raises(ToolError, match="unknown parameter 'ticket'"):
            await client.call_tool("get_ticket", {"ticket_id": "HD-4025", "ticket": "HD-4025"})
    changed = [t for t in end_state(first)["tickets"] if t["id"] == "HD-4025"]
    fresh = [t for t in end_state(second)["tickets"] if t["id"] == "HD-4025"]
    assert changed[0]["priority"] == "urgent" != fresh[0]["priority"]


async def test_a_distractor_works_on_records_of_its_own():
    server = build(size=MAX_SIZE, server="cat_devops")  # every tool
    async with Client(server) as client:
        listed = await client.call_tool("list_incidents", {"filter": {"status": "resolved"}, "limit": 2})
        assert set(listed.data) == {"incidents", "total", "next_cursor"}
        created = await client.call_tool("create_incident", {"name": "db failover", "severity": "sev2"})
    assert created.data["status"] == "investigating"
    assert any(r["name"] == "db failover" for r in end_state(server)["incidents"])


@pytest.mark.integration
def test_the_stdio_entry_point_serves_one_named_server():
    from fastmcp.client.transports import StdioTransport

    async def main():
        transport = StdioTransport(command=sys.executable, args=["-m", "fixtures_servers.catalogue", "--server",
                                                                 "cat_sales", "--size", "64"])
        async with Client(transport) as client:
            return await client.list_tools()

    names = [t.name for t in asyncio.run(main())]
    assert {"find_accounts", "get_account"} <= set(names)
