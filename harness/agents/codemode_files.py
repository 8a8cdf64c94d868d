"""The codemode-files arm: tools as files explored on demand, as in Anthropic's "Code execution with MCP". The run's
sandbox holds a read-only `servers/` package generated from its MCP tools (harness.mcp.tool_files: one module per
tool with its signature and documentation, a short index per server); the prompt names only the servers and how to
explore them. The model's code lists folders (`os.listdir`), reads the files it needs (`open(...).read()`) and
imports the functions it calls (`from servers.crm import get_customer`); no tool function is defined up front.

What the row counts: `tool_files_read`, the tool modules the code opened (distinct, counted in the sandbox), and in
`context_tool_definition_tokens` the prompt's tool text plus every printed line that is a line of the tree (what
of the files reached the model, however the code got at it: a read file, a docstring, the index)."""

from __future__ import annotations

from typing import Any

import dspy

from harness.agents.codemode import FINAL_ANSWER_STUB, CodeModeAgent, CodeModePolicy, CodeModeProgram
from harness.agents.context import SampleContext
from harness.agents.loop import Action, Outcome
from harness.agents.replay import ReferenceTrace, code_blocks_policy, register_replay
from harness.agents.scaffold import Scaffold
from harness.mcp.servers import ServerSession
from harness.mcp.tool_files import PACKAGE, ToolTree, server_folder, servers_by_name, tool_module, tool_tree
from harness.mcp.toolbox import Toolbox, ToolSpec, identifier
from harness.models.scripted import Policy
from harness.sandbox import Mount, SandboxPolicy
from harness.tasks.task import Task

FILES_PROTOCOL = (
    "Solve the task by writing Python code. Reply with one ```python block per turn. It runs in a sandbox where "
    f"the tools are Python functions in the package `{PACKAGE}/` (in the working directory), one module per tool: "
    "list a folder with os.listdir, read a tool's file to learn its signature and what it returns, and import the "
    f"functions you call (`from {PACKAGE}.<server> import <tool>`); each returns what its file says: the declared "
    "type, or text parsed when the text is JSON. Work step by step: call a tool, print() its result (or the part you "
    "need) and read it in the next turn before you rely on it; variables persist between turns. Filter, aggregate "
    "and loop in Python instead of printing large data."
)
EXAMPLE_PACKAGE = f"{PACKAGE}.library"  # where the worked examples' made-up tools are imported from
WORKING_DIR = "/home/pyodide"  # Pyodide's working directory: `servers/` is found there by relative paths and imports
FILES_POLICY_IMPORTS = frozenset({"os", PACKAGE})
FILES_POLICY_CALLS = frozenset({"open"})


# The worked examples' made-up tools as files: the first example starts by listing them and reading get_loan's file.
EXAMPLE_TOOLS = {"get_book": "Fetch one book by its id, with the id of its current loan.",
                 "get_loan": "Fetch one loan by its id.", "get_member": "Fetch one member by its id.",
                 "list_fines": "List a member's fines, optionally by status. Paged: {fines, total, next_offset}.",
                 "list_loans": "List a member's loans, optionally by status. Paged: {loans, total, next_offset}.",
                 "return_loan": "Mark a loan as returned; returns the updated loan.",
                 "search_members": "Find members by name or email."}


def exploring_demo(demo: dict[str, Any]) -> dict[str, Any]:
    """The chain example (its first block calls get_loan) in the files arm's way: a first block lists the example's
    server and prints get_loan's file (generated as a run's tool files are), then the example's own blocks."""
    spec = ToolSpec("library", "get_loan", EXAMPLE_TOOLS["get_loan"], {
        "type": "object", "properties": {"loan_id": {"type": "string"}}, "required": ["loan_id"]}, {"type": "object"})
    assert "get_loan(" in demo["history"][0]["action"]["code"], "the first worked example starts with get_loan"
    listing = sorted(["__init__.py", *(f"{name}.py" for name in EXAMPLE_TOOLS)])
    explore = {"action": {"code": f"import os\nprint(os.listdir('{PACKAGE}/library'))\n"
                                  f"print(open('{PACKAGE}/library/get_loan.py').read())"},
               "observation": f"{listing}\n{tool_module(spec).rstrip()}"}
    return {**demo, "history": [explore, *demo["history"]]}


class FilesCodeModeProgram(CodeModeProgram):
    """Code mode's step predictor with the files arm's instructions, and worked examples that import their tools
    (the first one exploring the files before it calls)."""

    def __init__(self, scaffold: Scaffold, examples: bool | None = None):
        super().__init__(scaffold, examples, protocol=FILES_PROTOCOL, imports_from=EXAMPLE_PACKAGE)
        if self.step.demos:
            self.step.demos[0] = dspy.Example(**exploring_demo(dict(self.step.demos[0])))


_TREES: dict[tuple[str, ...], ToolTree] = {}


def _tree(toolbox: Toolbox) -> ToolTree:
    """The tree of these tools, built once per process for the same servers and stubs (a suite's runs share it)."""
    key = (*(spec.server for spec in toolbox.specs), toolbox.python_stubs())
    if key not in _TREES:
        _TREES[key] = tool_tree(toolbox)
    return _TREES[key]


def files_tool_api(toolbox: Toolbox) -> str:
    """What the prompt says about the tools: final_answer, and the servers with their tool counts."""
    servers = servers_by_name(toolbox)
    listing = "\n".join(f"#   {PACKAGE}/{server_folder(server)}/  ({len(specs)} tools)"
                        for server, specs in servers.items())
    first = next(iter(servers), "crm")
    return (f"{FINAL_ANSWER_STUB}\n\n# The tools are files: one package per MCP server, one module per tool.\n"
            f"{listing}\n# Explore: os.listdir(\"{PACKAGE}/{server_folder(first)}\"), "
            f"print(open(\"{PACKAGE}/{server_folder(first)}/<tool>.py\").read()); "
            f"each server's __init__.py lists its tools.\n# Call: from {PACKAGE}.{server_folder(first)} import <tool>")


class FilesCodeModeAgent(CodeModeAgent):
    """Code mode whose tools are a package of files in the sandbox, read and imported on demand."""

    name = "codemode-files"
    follows_tool_changes = False  # its tool files are mounted once, when the sandbox is leased

    def tool_api(self, session: ServerSession) -> str:
        return files_tool_api(session.toolbox)

    def prelude(self, session: ServerSession) -> str:
        return ""  # nothing predefined: the code imports the tools it calls

    def mounts(self, session: ServerSession) -> tuple[Mount, ...]:
        return (Mount(WORKING_DIR, _tree(session.toolbox).files, read_only=True, importable=True, count_reads=True),)

    def policy(self) -> SandboxPolicy:
        return self.pool.policy.allowing(imports=FILES_POLICY_IMPORTS, calls=FILES_POLICY_CALLS)

    def documentation(self, session: ServerSession) -> frozenset[str]:
        return _tree(session.toolbox).documentation_lines()

    def policy_for(self, ctx: SampleContext, tool_api: str, sandbox: Any) -> CodeModePolicy:
        ctx.transcript.info_event(TOOL_FILES_READ, 0)
        return FilesCodeModePolicy(self.program, ctx, tool_api, sandbox, self.documentation(ctx.session),
                                   _tree(ctx.session.toolbox))


TOOL_FILES_READ = "tool_files_read"  # the row's column of that name


class FilesCodeModePolicy(CodeModePolicy):
    """Code mode's policy, counting after each code run the distinct tool modules the run's code has opened."""

    def __init__(self, program: CodeModeProgram, ctx: SampleContext, tool_api: str, sandbox: Any,
                 documentation: frozenset[str], tree: ToolTree):
        super().__init__(program, ctx, tool_api, sandbox, documentation)
        self.tree = tree

    async def perform(self, action: Action) -> Outcome:
        outcome = await super().perform(action)
        transcript = self.ctx.transcript
        read = [path for run in transcript.code_runs for path in run.files_read]
        transcript.info_event(TOOL_FILES_READ, len(self.tree.tool_files(read)))
        return outcome


def tool_file_replay(trace: ReferenceTrace, reference: str) -> tuple[str, str]:
    """The reference through this arm: a block that lists the folders of the servers it calls and prints the file of
    each tool it calls (what an agent that knew which tools it needs reads), then the reference code after the
    imports of those tools."""
    servers = trace.call_servers or ("",) * len(trace.tool_calls)
    tools = list(dict.fromkeys((server_folder(server), identifier(name))
                               for (name, _), server in zip(trace.tool_calls, servers, strict=True) if server))
    folders = list(dict.fromkeys(folder for folder, _ in tools))
    listed = [f"{PACKAGE}/{folder}" for folder in folders] or [PACKAGE]
    explore = ["import os", *(f"print(os.listdir({path!r}))" for path in listed),
               *(f"print(open('{PACKAGE}/{folder}/{tool}.py').read())" for folder, tool in tools)]
    imports = [f"from {PACKAGE}.{folder} import {', '.join(t for f, t in tools if f == folder)}" for folder in folders]
    return "\n".join(explore), "\n".join([*imports, reference.strip()])


@register_replay("tool_files")
def replay_tool_files(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """`scripted:reference` through this arm: as code mode's replay, after a block reading the files of the tools the
    reference calls, and with the reference importing them (`tool_file_replay`)."""
    return code_blocks_policy(trace, task, tool_file_replay(trace, task.reference or ""))
