"""The docs server: list, search and fetch documents (fetching a transcript returns its full body)."""

from __future__ import annotations

from dataclasses import dataclass

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, page
from fixtures_servers.docs.data import generate

DESCRIPTION = "Documents with long bodies (meeting transcripts of 10,000+ tokens): list, search, fetch"
DEFAULT_SIZE = 12
KINDS = ("transcript", "memo", "spec")
_PUBLIC = ("id", "title", "kind", "date")
DOCUMENT = IdForm("document", "D-", 3, "search_documents finds documents by text, list_documents lists them")


@dataclass
class DocsState:
    documents: list[dict]

    def snapshot(self) -> dict:
        return {"documents": [{k: d[k] for k in _PUBLIC} for d in self.documents]}


def list_documents(ctx: Context, kind: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """Documents (id, title, kind, date, words), optionally of one kind (transcript/memo/spec).
    Paged: returns {documents, total, next_offset}."""
    if kind is not None and kind not in KINDS:
        raise ToolError(f"kind must be one of {', '.join(KINDS)}, got '{kind}'")
    hits = [{**{k: d[k] for k in _PUBLIC}, "words": len(d["body"].split())} for d in state_of(ctx).documents
            if kind is None or d["kind"] == kind]
    chunk, next_offset = page(hits, limit, offset)
    return {"documents": chunk, "total": len(hits), "next_offset": next_offset}


def search_documents(query: str, ctx: Context, limit: int = 5) -> list[dict]:
    """Documents whose title or body contains `query` (case-insensitive), with a snippet around the match."""
    needle = query.strip().lower()
    if not needle:
        raise ToolError("query must not be empty")
    results = []
    for document in state_of(ctx).documents:
        text = f"{document['title']}\n{document['body']}"
        at = text.lower().find(needle)
        if at >= 0:
            results.append({**{k: document[k] for k in _PUBLIC},
                            "snippet": text[max(0, at - 60): at + 60 + len(needle)].replace("\n", " ")})
    return results[:limit]


def get_document(document_id: str, ctx: Context) -> dict:
    """One document by its id, with its full body."""
    document = find(state_of(ctx).documents, "id", document_id, DOCUMENT)
    return {**{k: document[k] for k in _PUBLIC}, "body": document["body"]}


TOOLS = make_tools(list_documents, search_documents, get_document)


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh document store with `size` documents (the first three are long transcripts)."""
    if size < 3:
        raise ValueError("the docs fixture needs size >= 3 (three transcripts)")
    return fixture_server("docs", "A document store: meeting transcripts, memos and specs.", TOOLS,
                          DocsState(copies(generate(seed, size))))
