"""The built-in worked examples: a few solved tasks, on made-up tools of a domain no fixture serves (a lending
library), shown to every tool-using arm in its own modality before the real task (the step predictor's starting
demos; optimizers may replace them). Same tasks, same calls, same results in each arm, so the arms still differ
only in how they act.

Why: a model copies the shape of a single example into every task, so there is one example per basic shape a
tool task has, each teaching the protocol, never any suite's tasks (what each example changed on the embedded
model: docs/experiments.md):

    chain  follow an id from one record to another, answer the field the task names
    count  look a name up, list with a filter, a page's `total` counts its items
    sum    a page's `total` is a count, not a sum: add up the field the task names (code mode: print the values,
           then compute from what it saw)
    write  look up what the change needs, make the change, then answer what the task asks for
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExampleStep:
    tool: str | None  # None: a code-mode step that only computes from what earlier steps fetched (no tool call)
    arguments: dict[str, Any]
    result: Any  # the tool's JSON result
    code: str  # the same call as code mode writes it
    printed: str  # what that code prints


@dataclass(frozen=True)
class WorkedExample:
    task: str
    steps: tuple[ExampleStep, ...]
    answer: str

    @property
    def calls(self) -> tuple[ExampleStep, ...]:
        """The steps that call a tool: the direct arm's turns (it computes in its head what code mode prints)."""
        return tuple(step for step in self.steps if step.tool is not None)


def _task(tools: str, question: str) -> str:
    return f"(An example, with other tools than yours: {tools}.)\n{question}"


CHAIN = WorkedExample(
    _task("get_loan(loan_id) -> a loan; get_member(member_id) -> a member",
          "What is the email address of the member who has loan L-0090? Answer with the email only."),
    (ExampleStep("get_loan", {"loan_id": "L-0090"},
                 {"id": "L-0090", "member_id": "M-0127", "book_id": "B-0288", "status": "out", "due": "2025-03-09"},
                 'loan = get_loan(loan_id="L-0090")\nprint(loan)',
                 "{'id': 'L-0090', 'member_id': 'M-0127', 'book_id': 'B-0288', 'status': 'out', 'due': "
                 "'2025-03-09'}"),
     ExampleStep("get_member", {"member_id": "M-0127"},
                 {"id": "M-0127", "name": "Omar Haddad", "email": "omar.haddad@example.org", "status": "active"},
                 'member = get_member(member_id=loan["member_id"])\nprint(member)',
                 "{'id': 'M-0127', 'name': 'Omar Haddad', 'email': 'omar.haddad@example.org', 'status': "
                 "'active'}")),
    "omar.haddad@example.org")

COUNT = WorkedExample(
    _task("search_members(query) -> list of members; list_loans(member_id, status, limit, offset) -> a page "
          "{loans, total, next_offset}",
          "How many books does the member named Ada Byron still have out? Answer with just the number."),
    (ExampleStep("search_members", {"query": "Ada Byron"},
                 [{"id": "M-0312", "name": "Ada Byron", "email": "ada@example.org"}],
                 'members = search_members(query="Ada Byron")\nprint(members)',
                 "[{'id': 'M-0312', 'name': 'Ada Byron', 'email': 'ada@example.org'}]"),
     ExampleStep("list_loans", {"member_id": "M-0312", "status": "out", "limit": 100},
                 {"loans": [{"id": "L-0081", "book_id": "B-0104", "due": "2025-03-02"},
                            {"id": "L-0090", "book_id": "B-0288", "due": "2025-03-09"}],
                  "total": 2, "next_offset": None},
                 'page = list_loans(member_id=members[0]["id"], status="out", limit=100)\n'
                 'print(page.keys())\nprint(page["total"], [loan["book_id"] for loan in page["loans"]])',
                 "dict_keys(['loans', 'total', 'next_offset'])\n2 ['B-0104', 'B-0288']")),
    "2")

SUM = WorkedExample(
    _task("search_members(query) -> list of members; list_fines(member_id, status, limit, offset) -> a page "
          "{fines, total, next_offset}",
          "How much do the unpaid fines of the member named Omar Haddad add up to, in USD? Answer with just the "
          "number."),
    (ExampleStep("search_members", {"query": "Omar Haddad"},
                 [{"id": "M-0127", "name": "Omar Haddad", "email": "omar.haddad@example.org"}],
                 'members = search_members(query="Omar Haddad")\nprint(members)',
                 "[{'id': 'M-0127', 'name': 'Omar Haddad', 'email': 'omar.haddad@example.org'}]"),
     ExampleStep("list_fines", {"member_id": "M-0127", "status": "unpaid", "limit": 100},
                 {"fines": [{"id": "F-021", "amount": 2.5, "status": "unpaid"},
                            {"id": "F-034", "amount": 4.0, "status": "unpaid"}],
                  "total": 2, "next_offset": None},
                 'page = list_fines(member_id=members[0]["id"], status="unpaid", limit=100)\n'
                 'print(page["total"], [fine["amount"] for fine in page["fines"]])',
                 "2 [2.5, 4.0]"),
     ExampleStep(None, {}, None, 'print(sum(fine["amount"] for fine in page["fines"]))', "6.5")),
    "6.5")

WRITE = WorkedExample(
    _task("get_book(book_id) -> a book, with the id of its current loan; return_loan(loan_id) -> the updated loan",
          "Mark the loan of book B-0104 as returned. Answer with the id of the member who had it."),
    (ExampleStep("get_book", {"book_id": "B-0104"},
                 {"id": "B-0104", "title": "Middlemarch", "loan_id": "L-0081"},
                 'book = get_book(book_id="B-0104")\nprint(book)',
                 "{'id': 'B-0104', 'title': 'Middlemarch', 'loan_id': 'L-0081'}"),
     ExampleStep("return_loan", {"loan_id": "L-0081"},
                 {"id": "L-0081", "member_id": "M-0312", "book_id": "B-0104", "status": "returned"},
                 'loan = return_loan(loan_id=book["loan_id"])\nprint(loan)',
                 "{'id': 'L-0081', 'member_id': 'M-0312', 'book_id': 'B-0104', 'status': 'returned'}")),
    "M-0312")

EXAMPLES = (CHAIN, COUNT, SUM, WRITE)

# The count example, which codemode-fastmcp shows through its meta-tools (harness.agents.fastmcp_codemode).
EXAMPLE_TASK, STEPS, ANSWER = COUNT.task, COUNT.steps, COUNT.answer


def tool_result_text(value: Any) -> str:
    """A JSON tool result as a tool message shows it (compact, as the MCP servers' text content)."""
    return json.dumps(value, separators=(",", ":"))


def tool_calling_demo(example: WorkedExample) -> dict[str, Any]:
    """An example as native tool calls: one call per turn, its JSON result, then the answer."""
    history = [{"action": {"text": "", "tool_calls": [{"id": f"call_{n}", "name": step.tool,
                                                        "arguments": step.arguments}]},
                "observation": tool_result_text(step.result)} for n, step in enumerate(example.calls)]
    return {"task": example.task, "history": history, "reply": {"text": example.answer, "tool_calls": []}}


def code_demo(example: WorkedExample, imports_from: str | None = None) -> dict[str, Any]:
    """An example as code mode: the same calls as code blocks, what they print, then the answer. With
    `imports_from` (a package, as codemode-files has its tools in), each block first imports the tool it calls."""
    def code(step: ExampleStep) -> str:
        return f"from {imports_from} import {step.tool}\n{step.code}" if imports_from and step.tool else step.code

    history = [{"action": {"code": code(step)}, "observation": step.printed} for step in example.steps]
    return {"task": example.task, "history": history, "reply": example.answer}


def tool_calling_demos() -> list[dict[str, Any]]:
    return [tool_calling_demo(example) for example in EXAMPLES]


def code_demos(imports_from: str | None = None) -> list[dict[str, Any]]:
    return [code_demo(example, imports_from) for example in EXAMPLES]
