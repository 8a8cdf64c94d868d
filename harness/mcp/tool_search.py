"""Searching a run's tools by what they do, as a tool-search tool does for the tools a model has not been shown yet
(the direct-search arm): a query in, the best-matching tools out, ranked by one of two methods.

- `bm25`: Okapi BM25 (k1 1.2, b 0.75) over each tool's text (its name, the name's words, its description), the query
  and the texts split into lowercase words at non-alphanumerics and camelCase, without a few stop words (words match
  as they are: no stemming);
- `keyword`: the toolbox's own ranking (how often the query's words appear in a tool's name and description), the
  one codemode-discover's search_tools uses.

Under either, a tool whose name is the query itself (case aside) comes first: a model that already knows a tool's
name finds it, whatever the other tools' descriptions say.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Literal

from harness.mcp.toolbox import Toolbox, ToolSpec

SearchMethod = Literal["bm25", "keyword"]
K1, B = 1.2, 0.75
STOP_WORDS = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or",
                        "that", "the", "this", "to", "with"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """Lowercase words of `text`: split at camelCase boundaries and at anything not a letter or digit."""
    return [w for w in re.findall(r"[a-z0-9]+", _CAMEL.sub(" ", text).lower()) if w not in STOP_WORDS]


def tool_text(spec: ToolSpec) -> str:
    """What a search reads of a tool: its name, the name's words, its description."""
    return f"{spec.name} {spec.name.replace('_', ' ')} {spec.description}"


def bm25_rank(specs: tuple[ToolSpec, ...], query: str) -> list[ToolSpec]:
    """The tools with a positive BM25 score for `query`, best first (ties keep the toolbox's order)."""
    documents = [Counter(words(tool_text(spec))) for spec in specs]
    if not documents:
        return []
    average = sum(sum(d.values()) for d in documents) / len(documents) or 1.0
    terms = set(words(query))
    frequency = {term: sum(term in d for d in documents) for term in terms}
    scored = []
    for order, (spec, document) in enumerate(zip(specs, documents, strict=True)):
        length, score = sum(document.values()), 0.0
        for term in terms:
            count = document.get(term, 0)
            if count:
                idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))
        if score > 0:
            scored.append((-score, order, spec))
    return [spec for *_, spec in sorted(scored, key=lambda s: (s[0], s[1]))]


def search_tools(toolbox: Toolbox, query: str, method: SearchMethod, limit: int) -> list[ToolSpec]:
    """At most `limit` tools of `toolbox` for `query`, best first: the one named `query` (if any), then the method's
    ranking."""
    ranked = bm25_rank(toolbox.specs, query) if method == "bm25" else toolbox.search(query, len(toolbox.specs))
    named = [spec for spec in toolbox.specs if spec.name.lower() == query.strip().lower()]
    return list(dict.fromkeys([*named, *ranked]))[:max(0, limit)]
