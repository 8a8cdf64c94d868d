"""Plain Python functions as MCP tools: parameters from the signature text, `*args` as a list, values kept."""

import json

import pytest
from fastmcp import Client
from pydantic import BaseModel, TypeAdapter

from harness.adapters.functions import PythonTool, python_tool, python_tools_server


def reverse(s):
    return s[::-1]


def largest(*values):
    return max(values)


def book(city, *wishes):
    return {"city": city, "wishes": list(wishes)}


def pair():
    return ("A", 3)


async def call(tools, name, arguments):
    async with Client(python_tools_server("t", tools)) as client:
        listed = {tool.name: tool for tool in await client.list_tools()}
        result = await client.call_tool(name, arguments, raise_on_error=False)
        return listed[name], result


async def test_parameters_take_the_names_and_types_of_the_signature_text_the_benchmark_shows():
    tool, result = await call([python_tool("reverse_string", "Reverses.", reverse, "reverse_string(text: str) -> str")],
                              "reverse_string", {"text": "abc"})
    assert tool.input_schema["properties"] == {"text": {"type": "string"}}
    assert tool.input_schema["required"] == ["text"]
    assert result.structured_content == {"result": "cba"} and result.content[0].text == "cba"


async def test_star_args_become_one_optional_list_argument_whose_items_are_passed_in_order():
    tool, result = await call([python_tool("largest", "Max.", largest, "largest(*values: float) -> float")],
                              "largest", {"values": [3, 11, 7]})
    assert tool.input_schema["properties"]["values"]["type"] == "array"
    assert tool.input_schema["properties"]["values"]["items"] == {"type": "number"}
    assert tool.input_schema["required"] == []
    assert result.structured_content == {"result": 11}


async def test_fixed_parameters_come_before_the_star_args_list():
    _, result = await call([python_tool("book", "Books.", book, "book(location: str, *preferences: str) -> dict")],
                           "book", {"location": "Oslo", "preferences": ["quiet", "view"]})
    assert result.structured_content == {"result": {"city": "Oslo", "wishes": ["quiet", "view"]}}


async def test_signature_text_that_does_not_fit_the_function_falls_back_to_the_function_own_names():
    tool = python_tool("book", "Books.", book, "book(location: str, date: str, nights: int) -> dict")
    assert [name for name, _ in tool.params] == ["city"] and tool.rest == ("wishes", {})


async def test_an_unknown_or_missing_argument_is_a_tool_error_naming_what_the_tool_takes():
    tools = [python_tool("reverse_string", "Reverses.", reverse, "reverse_string(text: str) -> str")]
    _, unknown = await call(tools, "reverse_string", {"text": "a", "extra": 1})
    _, missing = await call(tools, "reverse_string", {})
    assert unknown.is_error and "unknown argument(s) ['extra']" in unknown.content[0].text
    assert missing.is_error and "missing argument(s) ['text']" in missing.content[0].text


async def test_a_tuple_result_reaches_the_client_as_a_list():
    _, result = await call([python_tool("pair", "A pair.", pair, "pair() -> (str, int)")], "pair", {})
    assert result.structured_content == {"result": ["A", 3]} and result.content[0].text == '["A", 3]'


@pytest.mark.parametrize("function", [max, len])
def test_a_builtin_without_signature_text_takes_star_args_or_its_own_parameters(function):
    tool = python_tool(function.__name__, "Builtin.", function)
    assert tool.rest is not None or tool.params


class Flight(BaseModel):
    number: str
    date: str


def flights_schema() -> dict:
    """What pydantic writes for `list[Flight]`: the model in the schema's own `$defs`, used by `#/$defs/Flight`."""
    return TypeAdapter(list[Flight]).json_schema()


def count_flights(user, flights):
    return len(flights)


async def test_a_parameters_own_defs_move_to_the_root_where_its_refs_resolve():
    params = (("user", {"type": "string"}), ("flights", flights_schema()))
    tool = PythonTool("count_flights", "Counts.", count_flights, params)
    schema = tool.input_schema()
    assert "$defs" not in schema["properties"]["flights"]
    assert schema["$defs"]["Flight"]["required"] == ["number", "date"]
    listed, result = await call([tool], "count_flights", {"user": "u", "flights": [{"number": "H1", "date": "d"}]})
    assert "$ref" not in json.dumps(listed.input_schema)  # served whole: FastMCP resolves the refs it can
    assert listed.input_schema["properties"]["flights"]["items"]["properties"]["number"] == {
        "title": "Number", "type": "string"}
    assert result.structured_content == {"result": 1}


def test_two_parameters_defining_one_name_differently_is_an_error_naming_the_tool():
    other = {"$defs": {"Flight": {"type": "string"}}, "$ref": "#/$defs/Flight"}
    tool = PythonTool("count_flights", "Counts.", count_flights, (("user", other), ("flights", flights_schema())))
    with pytest.raises(ValueError, match="tool 'count_flights': two parameters define '\\$defs/Flight' differently"):
        tool.input_schema()
