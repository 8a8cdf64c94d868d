import pytest

from harness.errors import UserError
from harness.mcp.toolbox import Toolbox, ToolSpec, python_type

SCHEMA = {"type": "object", "properties": {
    "customer_id": {"type": "string", "description": "like C-0001"},
    "limit": {"type": "integer", "default": 20},
    "status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
    "required": ["customer_id"]}
OUTPUT = {"type": "object", "properties": {"result": {"type": "array", "items": {"type": "object"}}},
          "x-fastmcp-wrap-result": True}


def spec(name="list_orders", server="crm", **kw) -> ToolSpec:
    return ToolSpec(server=server, name=name, description="List orders. Paged.", input_schema=SCHEMA,
                    output_schema=OUTPUT, **kw)


def test_python_type_covers_unions_and_lists():
    assert python_type({"anyOf": [{"type": "string"}, {"type": "null"}]}) == "str | None"
    assert python_type({"type": "array", "items": {"type": "integer"}}) == "list[int]"
    assert python_type({}) == "Any"


def test_stub_has_required_parameters_first_and_the_unwrapped_return_type():
    stub = spec().stub()
    assert stub.startswith("def list_orders(customer_id: str, limit: int = 20, status: str | None = None) -> list[dict]:")
    assert "customer_id: like C-0001" in stub


def test_definition_forwards_original_argument_names_to_the_host():
    definition = spec().definition()
    assert "_harness_call_tool_json('list_orders', {\"customer_id\": customer_id" in definition
    compile(definition, "<prelude>", "exec")


def test_tool_names_that_are_not_identifiers_are_renamed():
    odd = ToolSpec(server="ext", name="read-graph", description="", input_schema={"type": "object"})
    assert odd.py_name == "read_graph"
    assert "_harness_call_tool_json('read-graph'" in odd.definition()


def test_index_and_search_rank_by_matching_words():
    box = Toolbox((spec(), spec(name="get_customer")))
    assert box.index().splitlines() == ["list_orders: List orders", "get_customer: List orders"]
    assert [s.name for s in box.search("orders list")][0] == "list_orders"


def test_same_tool_name_on_two_servers_is_a_user_error():
    with pytest.raises(UserError, match="offered by both 'crm' and 'other'"):
        Toolbox((spec(), spec(server="other")))


def test_the_prelude_defines_tools_whose_parameters_and_result_have_no_json_type():
    untyped = ToolSpec(server="b", name="largest", description="Max.", input_schema={
        "type": "object", "properties": {"values": {"type": "array", "items": {}}, "x": {}}, "required": ["x"]},
        output_schema={"type": "object", "properties": {"result": {}}, "x-fastmcp-wrap-result": True})
    namespace = {"_harness_call_tool_json": lambda name, arguments: (name, arguments)}
    exec(Toolbox((untyped,)).sandbox_prelude(), namespace)  # annotations are evaluated: `Any` must be defined
    assert namespace["largest"](x=1, values=[2]) == ("largest", {"values": [2], "x": 1})


async def _specs(server) -> dict[str, ToolSpec]:
    from fastmcp import Client

    from harness.mcp.servers import tool_spec

    async with Client(server) as client:
        return {tool.name: tool_spec("s", tool) for tool in await client.list_tools()}


async def test_a_tool_without_an_output_schema_says_it_returns_text_parsed_when_json():
    from harness.mcp.toolbox import UNDECLARED_RETURN
    from tests.mcp.test_servers import text_server

    stub = (await _specs(text_server()))["rows"].stub()
    assert stub.startswith("def rows(count: int) -> Any:")
    assert stub.endswith(f'    {UNDECLARED_RETURN}\n    """')
    assert UNDECLARED_RETURN == "Returns: text, parsed when the text is JSON (the server declares no output schema)."


async def test_a_tool_with_an_output_schema_has_its_type_and_no_text_note():
    from harness.mcp.toolbox import UNDECLARED_RETURN
    from tests.mcp.test_servers import text_server

    stub = (await _specs(text_server()))["typed_row"].stub()
    assert stub.startswith("def typed_row() -> dict:") and UNDECLARED_RETURN not in stub
