"""Searching a toolbox as direct-search's tool_search does: BM25 or keyword ranking over names and descriptions, the
tool named by the query first, at most `limit` tools."""

from harness.mcp.tool_search import bm25_rank, search_tools, words
from harness.mcp.toolbox import Toolbox, ToolSpec


def spec(name: str, description: str) -> ToolSpec:
    return ToolSpec("s", name, description, {"type": "object", "properties": {}})


TOOLS = Toolbox((
    spec("get_invoice", "Fetch one invoice by its id."),
    spec("list_invoices", "An account's invoices, optionally by status (open, paid, overdue)."),
    spec("get_account", "Fetch one customer account by its id: name, region, owner."),
    spec("get_account_v2", "Deprecated: fetch an account record (use get_account)."),
    spec("createTicket", "Open a support ticket for an account."),
))


def test_words_split_names_at_underscores_and_camel_case_without_stop_words():
    assert words("createTicket for the get_account") == ["create", "ticket", "get", "account"]


def test_bm25_ranks_the_tools_whose_text_matches_the_query_best_first():
    ranked = [s.name for s in bm25_rank(TOOLS.specs, "overdue invoices of an account")]
    assert ranked[0] == "list_invoices" and "createTicket" in ranked
    assert "get_invoice" not in ranked  # words match as they are: "invoices" is not "invoice"
    assert bm25_rank(TOOLS.specs, "zebra") == []


def test_the_tool_named_by_the_query_comes_first_under_either_method():
    for method in ("bm25", "keyword"):
        found = search_tools(TOOLS, "get_account", method, 2)
        assert [s.name for s in found][0] == "get_account" and len(found) == 2


def test_a_search_returns_at_most_its_limit():
    assert len(search_tools(TOOLS, "account", "bm25", 3)) == 3
    assert search_tools(TOOLS, "account", "keyword", 0) == []
