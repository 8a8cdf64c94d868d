"""'Not found' errors tell the caller what such an id looks like and which tool finds one."""

from fastmcp import Client

import fixtures_servers
from fixtures_servers._common import IdForm, not_found

CUSTOMER = IdForm("customer", "C-", 4, "search_customers finds one by name")
ORDER = IdForm("order", "O-", 5, "get_order fetches it", holds="with its customer_id")


def test_an_unknown_id_error_names_the_shape_of_ids_and_the_tool_that_finds_one():
    message = str(not_found(CUSTOMER, "C-7", (CUSTOMER, ORDER)))
    assert message == "no customer has the id 'C-7' (customer ids are 'C-' then 4 digits; search_customers finds " \
                      "one by name)"


def test_an_id_of_another_kind_is_named_as_such():
    message = str(not_found(CUSTOMER, "O-00112", (CUSTOMER, ORDER)))
    assert message == "'O-00112' is an order id, not a customer id: get_order fetches it (with its customer_id)"


async def test_the_crm_says_an_order_id_is_not_a_customer_id():
    async with Client(fixtures_servers.load("crm").build()) as client:
        result = await client.call_tool("add_note", {"customer_id": "O-00112", "body": "x"}, raise_on_error=False)
    assert result.is_error and "'O-00112' is an order id, not a customer id" in result.content[0].text


async def test_no_tool_description_shows_an_example_id():
    for name in fixtures_servers.FIXTURES:
        async with Client(fixtures_servers.load(name).build()) as client:
            descriptions = [tool.description or "" for tool in await client.list_tools()]
        assert not [d for d in descriptions if "e.g." in d], name
