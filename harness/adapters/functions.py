"""Plain Python functions served as MCP tools: how a benchmark whose tools are Python functions (M3ToolEval) is
offered to every arm through MCP, exactly like the fixture servers.

Parameters are taken from the signature text the benchmark shows its model when there is one (its names and
types are what the model was told), else from the function itself. A `*args` parameter becomes one list
argument. The function is called positionally, as the benchmark itself calls it, in a worker thread (a tool
stuck in a long computation cannot block the run's event loop, so the tool time limit still applies).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from pydantic import PrivateAttr

# Python type names (annotations in signature text or on the function) -> JSON schema types
_JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
               "dict": "object", "Dict": "object", "list": "array", "List": "array", "tuple": "array"}
# FastMCP's marker for a result wrapped as {"result": value}: the client unwraps it (harness.mcp.toolbox)
WRAPPED_RESULT_SCHEMA = {"type": "object", "properties": {"result": {}}, "required": ["result"],
                         "x-fastmcp-wrap-result": True}


@dataclass(frozen=True)
class PythonTool:
    """A tool that is a Python function: `params` are (name, JSON schema) in call order; `rest` names the
    `*args` parameter (an optional list argument whose items follow the others), or is None."""

    name: str
    description: str
    function: Callable[..., Any]
    params: tuple[tuple[str, dict[str, Any]], ...]
    rest: tuple[str, dict[str, Any]] | None = None

    def input_schema(self) -> dict[str, Any]:
        """One JSON schema for the arguments. A parameter's own `$defs` (pydantic writes them beside the
        `#/$defs/...` refs that use them) move to the root, where those refs resolve for every reader."""
        defs: dict[str, Any] = {}
        properties = {name: _defs_lifted(schema, defs, self.name) for name, schema in self.params}
        required = list(properties)
        if self.rest:
            properties[self.rest[0]] = {"type": "array", "items": _defs_lifted(self.rest[1], defs, self.name),
                                        "default": [], "description": "the values, in order (any number of them)"}
        schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
        return {**schema, "$defs": defs} if defs else schema

    def positional(self, arguments: dict[str, Any]) -> list[Any]:
        """The call's positional arguments; a missing or unknown argument is a tool error the agent sees."""
        names = [name for name, _ in self.params] + ([self.rest[0]] if self.rest else [])
        unknown = sorted(set(arguments) - set(names))
        missing = [name for name, _ in self.params if name not in arguments]
        if unknown or missing:
            problem = f"unknown argument(s) {unknown}" if unknown else f"missing argument(s) {missing}"
            raise ToolError(f"{self.name}: {problem} (it takes: {', '.join(names) or 'no arguments'})")
        values = [arguments[name] for name, _ in self.params]
        if self.rest:
            extra = arguments.get(self.rest[0], [])
            values += list(extra) if isinstance(extra, (list, tuple)) else [extra]
        return values


def _defs_lifted(schema: dict[str, Any], defs: dict[str, Any], tool: str) -> dict[str, Any]:
    """`schema` without its top-level `$defs`, which are added to `defs`; the same name defined two ways by
    two parameters cannot share one root and is an error naming the tool."""
    own = schema.get("$defs") or {}
    for name, definition in own.items():
        if defs.setdefault(name, definition) != definition:
            raise ValueError(f"tool {tool!r}: two parameters define '$defs/{name}' differently")
    return {key: value for key, value in schema.items() if key != "$defs"}


def _schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of an annotation (an ast node from signature text, or a Python type); {} if unknown."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Name):
        name = annotation.id
    elif isinstance(annotation, type):
        name = annotation.__name__
    else:
        return {}
    return {"type": _JSON_TYPES[name]} if name in _JSON_TYPES else {}


def _from_text(text: str) -> tuple[list[tuple[str, dict]], tuple[str, dict] | None] | None:
    """Parameters from signature text such as `f(a: str, *rest: float) -> int`, or None if it does not parse."""
    try:
        tree = ast.parse(f"def {text.strip()}:\n    pass")
    except SyntaxError:
        return None
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef) or node.args.kwonlyargs or node.args.kwarg:
        return None
    params = [(a.arg, _schema(a.annotation)) for a in node.args.posonlyargs + node.args.args]
    rest = (node.args.vararg.arg, _schema(node.args.vararg.annotation)) if node.args.vararg else None
    return params, rest


def _from_function(function: Callable[..., Any]) -> tuple[list[tuple[str, dict]], tuple[str, dict] | None]:
    """Parameters from the function's own signature (a builtin without one takes `*args`)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return [], ("args", {})
    params, rest = [], None
    for p in signature.parameters.values():
        schema = _schema(p.annotation) if p.annotation is not inspect.Parameter.empty else {}
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            rest = (p.name, schema)
        elif p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            params.append((p.name, schema))
    return params, rest


def python_tool(name: str, description: str, function: Callable[..., Any], signature_text: str = "") -> PythonTool:
    """A PythonTool for `function`, its parameters named and typed by `signature_text` when that parses and has
    as many fixed parameters as the function accepts, else by the function's signature."""
    params, rest = _from_function(function)
    shown = _from_text(signature_text) if signature_text else None
    if shown is not None and len(shown[0]) == len(params) and (shown[1] is None) == (rest is None):
        params, rest = shown
    return PythonTool(name=name, description=description, function=function, params=tuple(params), rest=rest)


def jsonable(value: Any) -> Any:
    """The value as JSON can carry it (tuples become lists); anything else as its str()."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return str(value)


class _FunctionCallTool(Tool):
    """An MCP tool whose call runs a PythonTool's function."""

    _spec: PythonTool = PrivateAttr()

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        values = self._spec.positional(arguments)
        value = jsonable(await asyncio.to_thread(self._spec.function, *values))
        text = value if isinstance(value, str) else json.dumps(value)
        return ToolResult(content=text, structured_content={"result": value})


def python_tools_server(name: str, tools: Iterable[PythonTool]) -> FastMCP:
    """A FastMCP server offering each function as a tool (its result wrapped as FastMCP wraps non-object results,
    so code gets the function's own value back: a str stays a str)."""
    server = FastMCP(name)
    for spec in tools:
        tool = _FunctionCallTool(name=spec.name, description=spec.description, parameters=spec.input_schema(),
                                 output_schema=WRAPPED_RESULT_SCHEMA)
        tool._spec = spec
        server.add_tool(tool)
    return server
