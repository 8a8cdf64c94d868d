"""The direct-search arm: native tool calling where the model first sees only a search tool (and final_answer), as
Anthropic's tool search tool and codex's deferred tools work. Each `tool_search(query)` call ranks the run's tools
(the scaffold's `tool_search_method`) and adds the definitions of the best ones (at most the scaffold's
`tool_search_limit`) to the tools the model can call natively, from its next turn on; the search's result names
them. A call of a tool not offered when the reply was made is an error observation (as a provider refuses a tool
it was not sent), so a reply cannot search for a tool and call it at once.

Every added definition is a tool definition the run was shown (`tools` event, `context_tool_definition_tokens`:
each LM call counts the definitions it was sent). The policy is the direct arm's, with the search as one more tool
that never reaches the MCP session; a step that only searched acted on no tool (`acts` empty).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import dspy

from harness.agents.base import AgentResult
from harness.agents.chat import FINAL_ANSWER_FUNCTION
from harness.agents.context import SampleContext
from harness.agents.direct import DirectPolicy, DirectProgram, ToolStep, function_definition, protocol
from harness.agents.example import CHAIN, COUNT, EXAMPLES, SUM, WRITE, WorkedExample, tool_calling_demo
from harness.agents.loop import END_INSTRUCTION, FINAL_ANSWER_TOOL, Action, Outcome, Turn, run_loop, tool_step
from harness.agents.replay import Call, ReferenceTrace, call_groups, calls_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.mcp.tool_search import search_tools
from harness.models.scripted import Policy
from harness.tasks.task import Task
from harness.trace.steps import TrajectoryStep

SEARCH_TOOL = "tool_search"
SEARCH_SENTENCE = (f"At first your only tools are {SEARCH_TOOL} and {FINAL_ANSWER_TOOL}: search for the tools the "
                   "task needs by what they do (or by name); the tools a search finds are yours to call from your "
                   "next turn on.")


def search_function(limit: int) -> dict[str, Any]:
    """The search tool's definition, saying how many definitions one search adds."""
    return {"type": "function", "function": {
        "name": SEARCH_TOOL,
        "description": f"Search the tools you have not been shown yet by what they do (words of a tool's name or "
                       f"description; a tool's exact name finds it). Up to {limit} matching tools are added to your "
                       "tools, callable from your next turn on.",
        "parameters": {"type": "object", "properties": {"query": {
            "type": "string", "description": "words saying what the tool does, or its name"}}, "required": ["query"]}}}


def instructions(scaffold: Scaffold) -> str:
    """The direct arm's sentence on calling tools (the scaffold's parallel_tool_calls), the search sentence, the
    ending."""
    return f"{protocol(scaffold.parallel_tool_calls)} {SEARCH_SENTENCE} {scaffold.finish_instruction(END_INSTRUCTION)}"


def found_text(query: str, found: list[tuple[str, str]], loaded_before: set[str]) -> str:
    """A search's result as the model reads it: each tool found, with the first sentence of its description."""
    if not found:
        return f"No tool matches {query!r}: search again with other words (what the tool does, or its name)."
    lines = [f"- {name}: {summary}" + (" (already among your tools)" if name in loaded_before else "")
             for name, summary in found]
    return f"Found {len(found)} tool(s), now among your tools:\n" + "\n".join(lines)


# The worked examples' searches: the words a model would search with, and what the example's tools do.
EXAMPLE_QUERIES = {CHAIN.task: "loan member", COUNT.task: "search members loans", SUM.task: "search members fines",
                   WRITE.task: "book return loan"}
EXAMPLE_SUMMARIES = {
    "get_loan": "Fetch one loan by its id", "get_member": "Fetch one member by its id",
    "search_members": "Members whose name contains `query`: id, name, email",
    "list_loans": "A member's loans, optionally by status (out/returned)",
    "list_fines": "A member's fines, optionally by status (paid/unpaid)",
    "get_book": "Fetch one book by its id, with the id of its current loan",
    "return_loan": "Mark a loan as returned"}


def search_demo(example: WorkedExample) -> dict[str, Any]:
    """An example as this arm acts: one search finding its tools, then the direct arm's calls and answer."""
    demo = tool_calling_demo(example)
    names = list(dict.fromkeys(step.tool for step in example.calls if step.tool))
    query = EXAMPLE_QUERIES[example.task]
    search = {"action": {"text": "", "tool_calls": [{"id": "call_search", "name": SEARCH_TOOL,
                                                      "arguments": {"query": query}}]},
              "observation": found_text(query, [(name, EXAMPLE_SUMMARIES[name]) for name in names], set())}
    return {**demo, "history": [search, *demo["history"]]}


class DirectSearchProgram(DirectProgram):
    """Direct's step predictor (what an optimizer tunes) with this arm's instructions and, if the scaffold has
    `worked_examples`, the examples through a search first."""

    def __init__(self, scaffold: Scaffold):
        super().__init__(scaffold, examples=False)
        self.step = dspy.Predict(ToolStep.with_instructions(instructions(scaffold)))
        if scaffold.worked_examples:
            self.step.demos = [dspy.Example(**search_demo(example)) for example in EXAMPLES]


class DirectSearchPolicy(DirectPolicy):
    """The direct arm's policy whose tools start as the search tool and final_answer and grow with each search."""

    def __init__(self, program: DirectProgram, ctx: SampleContext):
        scaffold = ctx.scaffold
        super().__init__(program, ctx, [search_function(scaffold.tool_search_limit), FINAL_ANSWER_FUNCTION],
                         scaffold.parallel_tool_calls)
        self.loaded: set[str] = set()
        self.offered = self.tool_names()

    def tool_names(self) -> frozenset[str]:
        return frozenset(tool["function"]["name"] for tool in self.tools)

    async def decide(self, turns: list[Turn]) -> Action:
        self.offered = self.tool_names()  # what this reply may call: the tools sent with it
        return await super().decide(turns)

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        if name == SEARCH_TOOL:
            return self.search(arguments)
        if name not in self.offered:
            return Outcome(f"Error: tool '{name}' is not among your tools: find it with {SEARCH_TOOL} first, then "
                           "call it in a later turn", error_kind="tool")
        return await super().call(name, arguments)

    def search(self, arguments: dict[str, Any]) -> Outcome:
        """Rank the run's tools for the query; the definitions of those not yet offered join the tools (before
        final_answer), each recorded as a tool definition shown."""
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return Outcome(f"Error: {SEARCH_TOOL} takes the words to search for as its `query` argument (a string)",
                           error_kind="tool")
        scaffold = self.ctx.scaffold
        found = search_tools(self.session.toolbox, query, scaffold.tool_search_method, scaffold.tool_search_limit)
        before = set(self.loaded)
        added = [function_definition(spec) for spec in found if spec.name not in before]
        self.loaded.update(spec.name for spec in found)
        if added:
            self.tools[-1:-1] = added
            self.ctx.transcript.tools_shown(*(json.dumps(definition) for definition in added))
        return Outcome(found_text(query, [(spec.name, spec.summary) for spec in found], before))

    def record(self, turn: Turn) -> TrajectoryStep:
        """A tool step whose `acts` leave the searches out: a step that only searched called none of the run's
        tools."""
        step = tool_step(turn)
        acted = {use.tool for use in step.calls} - {SEARCH_TOOL, FINAL_ANSWER_TOOL}
        return replace(step, acts=("tool",) if acted else ())


class DirectSearchAgent:
    name = "direct-search"

    def __init__(self, scaffold: Scaffold, program: DirectProgram | None = None):
        self.program, self.scaffold = program or DirectSearchProgram(scaffold), scaffold

    async def run(self, ctx: SampleContext) -> AgentResult:
        policy = DirectSearchPolicy(self.program, ctx)
        ctx.transcript.tools_shown(json.dumps(policy.tools))
        return (await run_loop(policy, ctx)).result


def search_replay(trace: ReferenceTrace, parallel: bool) -> list[list[Call]]:
    """The searches that load the reference's tools: one per tool, its name as the query (a tool whose name is the
    query comes first in any search method), in the order the reference first calls them; one reply of them all
    with `parallel`, else one a reply."""
    searches = [(SEARCH_TOOL, {"query": name}) for name in dict.fromkeys(name for name, _ in trace.tool_calls)]
    return ([searches] if searches else []) if parallel else [[search] for search in searches]


@register_replay("tool_search")
def replay_tool_search(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through this arm: the searches that load the reference's tools (`search_replay`), then
    the reference's calls as native tool calls, as direct's replay makes them."""
    return calls_policy(trace, call_groups(trace, parallel), own=search_replay(trace, parallel))
