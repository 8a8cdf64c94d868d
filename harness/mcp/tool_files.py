"""A run's MCP tools as a Python package of files (the `codemode-files` arm): `servers/<server>/<tool>.py`, one
module per tool holding its typed signature and documentation (the code-mode stub) and a body that calls the tool
through the sandbox's bridge, a short index per server (`servers/<server>/__init__.py`: its tools, one line each),
and `servers/__init__.py` naming the servers. The agent lists and reads the files it needs and imports the
functions it calls (`from servers.crm import get_customer`), as in Anthropic's "Code execution with MCP".

Also what counts as tool documentation that reached the model: a printed line that is a line of one of these files
(`documentation_lines`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.mcp.toolbox import Toolbox, ToolSpec, identifier

PACKAGE = "servers"
BRIDGE_MODULE = "_bridge"  # servers/_bridge.py: what every tool module calls the host through
BRIDGE = '''"""Plumbing: tool modules call the run's MCP session through the sandbox's bridge."""
import importlib

from __main__ import _harness_call_tool_json as call_tool


def tool_loader(package, names):
    """A package __getattr__: `from servers.<server> import <tool>` imports that tool's module alone."""
    def load(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no tool {name!r}")
        function = getattr(importlib.import_module(f"{package}.{name}"), name)
        setattr(importlib.import_module(package), name, function)  # the function, not its module, from now on
        return function
    return load
'''


def server_folder(server: str) -> str:
    """The package folder of a server (its name as a Python identifier)."""
    return identifier(server)


def tool_path(spec: ToolSpec) -> str:
    """A tool's module, relative to the folder holding `servers/`."""
    return f"{PACKAGE}/{server_folder(spec.server)}/{spec.py_name}.py"


def tool_module(spec: ToolSpec) -> str:
    """One tool's module: the stub the code-mode arm shows (signature, documentation) with a bridged body."""
    return f"from typing import Any\n\nfrom {PACKAGE}.{BRIDGE_MODULE} import call_tool\n\n\n" \
           f"{spec.definition(call='call_tool')}"


def server_index(server: str, specs: tuple[ToolSpec, ...]) -> str:
    """A server's `__init__.py`: its tools, one line each (name: first sentence), and the lazy import."""
    folder = server_folder(server)
    lines = "\n".join(f"{spec.py_name}: {spec.summary}" for spec in specs)
    names = ", ".join(repr(spec.py_name) for spec in specs)
    return (f'"""MCP server {server!r}: {len(specs)} tools, one module each ({PACKAGE}/{folder}/<tool>.py: its signature '
            f'and documentation). Import one with `from {PACKAGE}.{folder} import <tool>`.\n\n{lines}\n"""\n'
            f"from {PACKAGE}.{BRIDGE_MODULE} import tool_loader\n\n__all__ = [{names}]\n"
            f"__getattr__ = tool_loader(__name__, __all__)\n")


def servers_by_name(toolbox: Toolbox) -> dict[str, tuple[ToolSpec, ...]]:
    """The run's servers in order, each with its tools."""
    found: dict[str, list[ToolSpec]] = {}
    for spec in toolbox.specs:
        found.setdefault(spec.server, []).append(spec)
    return {server: tuple(specs) for server, specs in found.items()}


@dataclass(frozen=True)
class ToolTree:
    """The files of one run's `servers/` package, by path relative to the folder that holds it."""

    files: dict[str, str]
    tool_paths: frozenset[str]  # the tool modules among them (not the indexes or the bridge)

    def documentation_lines(self) -> frozenset[str]:
        """The lines of every file (`documentation_lines`)."""
        return documentation_lines(*self.files.values())

    def tool_files(self, paths: Iterable[str]) -> frozenset[str]:
        """The tool modules among sandbox paths the code opened (absolute; the tree's folder is their parent)."""
        return frozenset(path for path in (_relative(p) for p in paths) if path in self.tool_paths)


def _relative(path: str) -> str:
    marker = f"/{PACKAGE}/"
    return path[path.index(marker) + 1:] if marker in path else path


def documentation_lines(*texts: str) -> frozenset[str]:
    """Every line of `texts` with a letter in it, stripped: a printed line equal to one is tool documentation that
    reached the model (a line of a tool result would have to equal a line of a stub to be taken for one)."""
    stripped = (line.strip() for text in texts for line in text.splitlines())
    return frozenset(line for line in stripped if any(c.isalpha() for c in line))


def printed_documentation(observation: str, lines: frozenset[str]) -> tuple[str, ...]:
    """The runs of consecutive lines of `observation` that are documentation `lines` (lines without a letter, such
    as a blank line or a closing quote, kept inside a run), each as it was shown: the tool documentation this
    observation put into the model's context."""
    runs: list[list[str]] = []
    current: list[str] = []
    kept = 0  # lines of `current` up to its last documentation line
    for line in [*observation.splitlines(), "\0end"]:
        stripped = line.strip()
        if stripped in lines:
            current.append(line)
            kept = len(current)
        elif current and not any(c.isalpha() for c in stripped) and stripped != "\0end":
            current.append(line)
        elif current:
            runs.append(current[:kept])
            current, kept = [], 0
    return tuple("\n".join(run) for run in runs)


def tool_tree(toolbox: Toolbox) -> ToolTree:
    """The `servers/` package of a run's tools."""
    servers = servers_by_name(toolbox)
    listing = "\n".join(f"{server_folder(server)}: {len(specs)} tools" for server, specs in servers.items())
    files = {f"{PACKAGE}/__init__.py": f'"""The MCP servers of this run, one package each:\n\n{listing}\n"""\n',
             f"{PACKAGE}/{BRIDGE_MODULE}.py": BRIDGE}
    for server, specs in servers.items():
        files[f"{PACKAGE}/{server_folder(server)}/__init__.py"] = server_index(server, specs)
        files.update({tool_path(spec): tool_module(spec) for spec in specs})
    return ToolTree(files, frozenset(tool_path(spec) for spec in toolbox.specs))
