"""The `servers/` package of codemode-files, built from a run's tools (no sandbox needed)."""

from harness.mcp.tool_files import documentation_lines, printed_documentation, tool_tree
from harness.mcp.toolbox import Toolbox, ToolSpec


def spec(name: str, server: str, description: str = "Fetch one thing by its id.") -> ToolSpec:
    return ToolSpec(server, name, description, {"type": "object", "properties": {"thing_id": {"type": "string"}},
                                                "required": ["thing_id"]})


BOX = Toolbox((spec("get_customer", "crm"), spec("list-orders", "crm", "List orders. Paged."),
               spec("get_ticket", "help-desk")))


def test_the_tree_has_one_module_per_tool_and_an_index_per_server_naming_each_of_its_tools():
    tree = tool_tree(BOX)
    assert tree.tool_paths == {"servers/crm/get_customer.py", "servers/crm/list_orders.py",
                               "servers/help_desk/get_ticket.py"}
    assert tree.tool_paths <= set(tree.files)
    crm_index = tree.files["servers/crm/__init__.py"]
    assert "get_customer: Fetch one thing by its id" in crm_index and "list_orders: List orders" in crm_index
    assert "__all__ = ['get_customer', 'list_orders']" in crm_index and "get_ticket" not in crm_index
    assert "crm: 2 tools" in tree.files["servers/__init__.py"] and "help_desk: 1 tools" in tree.files["servers/__init__.py"]


def test_a_tool_module_holds_its_stub_and_calls_the_tool_by_its_mcp_name_through_the_bridge():
    module = tool_tree(BOX).files["servers/crm/list_orders.py"]
    assert "from servers._bridge import call_tool" in module
    assert "def list_orders(thing_id: str) -> Any:" in module
    assert "return call_tool('list-orders', {\"thing_id\": thing_id})" in module


def test_tool_files_maps_sandbox_paths_to_the_tool_modules_only():
    tree = tool_tree(BOX)
    opened = ["/home/pyodide/servers/crm/get_customer.py", "/home/pyodide/servers/crm/__init__.py",
              "/home/pyodide/servers/crm/get_customer.py", "/tmp/notes.txt"]
    assert tree.tool_files(opened) == {"servers/crm/get_customer.py"}


def test_printed_documentation_is_the_runs_of_printed_lines_that_are_lines_of_the_files():
    lines = documentation_lines('def get_customer(thing_id: str) -> Any:\n    """Fetch one thing by its id."""\n')
    shown = "['get_customer.py']\ndef get_customer(thing_id: str) -> Any:\n\n    \"\"\"Fetch one thing by its id.\"\"\"\n42"
    assert printed_documentation(shown, lines) == (
        'def get_customer(thing_id: str) -> Any:\n\n    """Fetch one thing by its id."""',)
    assert printed_documentation("42\n{'id': 'C-1'}", lines) == ()
