"""The built-in worked example: one solved task, on made-up tools of a domain no fixture serves, shown to every
tool-using arm in its own modality before the real task (the step predictor's starting demo; optimizers may
replace it). Same task, same calls, same results in each arm, so the arms still differ only in how they act.

Why: a small model imitates far better than it follows instructions. Without an example the embedded 1.5B
model wrote whole programs blind (indexing a list result by a key, counting a paged dict's keys) and invented
ids from docstrings; with one it looks a name up, prints what a call returns, and reads a paged result's list.
The example teaches the protocol, not any suite's tasks: look an entity up, read the result, answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EXAMPLE_TASK = (
    "(An example, with other tools than yours: search_members(query) -> list of members; "
    "list_loans(member_id, status, limit, offset) -> a page {loans, total, next_offset}.)\n"
    "How many books does the member named Ada Byron still have out? Answer with just the number."
)


@dataclass(frozen=True)
class ExampleStep:
    tool: str
    arguments: dict[str, Any]
    result: Any  # the tool's JSON result
    code: str  # the same call as code mode writes it
    printed: str  # what that code prints


STEPS = (
    ExampleStep("search_members", {"query": "Ada Byron"},
                [{"id": "M-0312", "name": "Ada Byron", "email": "ada@example.org"}],
                'members = search_members(query="Ada Byron")\nprint(members)',
                "[{'id': 'M-0312', 'name': 'Ada Byron', 'email': 'ada@example.org'}]"),
    ExampleStep("list_loans", {"member_id": "M-0312", "status": "out", "limit": 100},
                {"loans": [{"id": "L-0081", "book_id": "B-0104", "due": "2025-03-02"},
                           {"id": "L-0090", "book_id": "B-0288", "due": "2025-03-09"}],
                 "total": 2, "next_offset": None},
                'page = list_loans(member_id=members[0]["id"], status="out", limit=100)\n'
                'print(page.keys())\nprint(page["total"], [loan["book_id"] for loan in page["loans"]])',
                "dict_keys(['loans', 'total', 'next_offset'])\n2 ['B-0104', 'B-0288']"),
)
ANSWER = "2"


def tool_result_text(value: Any) -> str:
    """A JSON tool result as a tool message shows it (compact, as the MCP servers' text content)."""
    return json.dumps(value, separators=(",", ":"))


def tool_calling_demo() -> dict[str, Any]:
    """The example as native tool calls: one call per turn, its JSON result, then the answer."""
    history = [{"action": {"text": "", "tool_calls": [{"id": f"call_{n}", "name": step.tool,
                                                        "arguments": step.arguments}]},
                "observation": tool_result_text(step.result)} for n, step in enumerate(STEPS)]
    return {"task": EXAMPLE_TASK, "history": history, "reply": {"text": ANSWER, "tool_calls": []}}


def code_demo() -> dict[str, Any]:
    """The example as code mode: the same calls as code blocks, what they print, then the answer."""
    history = [{"action": {"code": step.code}, "observation": step.printed} for step in STEPS]
    return {"task": EXAMPLE_TASK, "history": history, "reply": ANSWER}
