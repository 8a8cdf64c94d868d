"""MCP tool lists as one ToolSpec each, rendered three ways: typed Python stubs (code mode), the definitions
the sandbox actually runs (the prelude), and a compact index (progressive discovery)."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from harness.errors import UserError
from harness.tasks.task import TOOL_CALLERS, ToolCaller

_JSON_TO_PY = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
               "array": "list", "object": "dict", "null": "None"}


def python_type(schema: dict[str, Any] | None) -> str:
    """A readable Python annotation for a JSON schema (unions and lists of objects included)."""
    if not schema:
        return "Any"
    if "anyOf" in schema or "oneOf" in schema:
        options = [python_type(s) for s in schema.get("anyOf", schema.get("oneOf", []))]
        unique = list(dict.fromkeys(options))
        return " | ".join(unique) if unique else "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(_JSON_TO_PY.get(k, "Any") for k in kind))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list[{python_type(schema['items'])}]"
    if "enum" in schema and kind == "string":
        return "str"
    return _JSON_TO_PY.get(kind, "Any")


def identifier(name: str) -> str:
    """`name` as a Python identifier (a tool's function, a server's package)."""
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit() or keyword.iskeyword(ident):
        ident = f"tool_{ident}"
    return ident


# What a call returns when the server declares no output schema (harness.mcp.servers, _result_value).
UNDECLARED_RETURN = "Returns: text, parsed when the text is JSON (the server declares no output schema)."


@dataclass(frozen=True)
class ToolParam:
    name: str
    annotation: str
    required: bool
    default: Any = None
    description: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool as the harness shows it to agents."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any] = field(hash=False, compare=False)
    output_schema: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    read_only: bool | None = None  # the server's MCP annotation readOnlyHint; None when it does not say
    callers: tuple[ToolCaller, ...] = TOOL_CALLERS  # its server's callers (harness.mcp.registry.tool_callers)

    @property
    def writes(self) -> bool:
        """The server says this tool may change state (readOnlyHint false): a probe must not call it."""
        return self.read_only is False

    @property
    def py_name(self) -> str:
        return identifier(self.name)

    @property
    def summary(self) -> str:
        """The first sentence of the description: what the index shows."""
        first = self.description.strip().split("\n")[0]
        return first.split(". ")[0].rstrip(".") if first else ""

    @property
    def params(self) -> tuple[ToolParam, ...]:
        properties = self.input_schema.get("properties", {}) or {}
        required = set(self.input_schema.get("required", []) or [])
        params = [
            ToolParam(name=identifier(name), annotation=python_type(schema), required=name in required,
                      default=schema.get("default"), description=schema.get("description", ""))
            for name, schema in properties.items()
        ]
        return tuple(sorted(params, key=lambda p: not p.required))  # Python wants required ones first

    @property
    def result_wrapped(self) -> bool:
        """FastMCP wraps non-object results as {"result": ...} in structured content."""
        return bool(self.output_schema and self.output_schema.get("x-fastmcp-wrap-result"))

    @property
    def return_annotation(self) -> str:
        if not self.output_schema:
            return "Any"
        if self.result_wrapped:
            return python_type(self.output_schema.get("properties", {}).get("result"))
        return python_type(self.output_schema)

    def signature(self) -> str:
        parts = []
        for p in self.params:
            if p.required:
                parts.append(f"{p.name}: {p.annotation}")
            else:
                annotation = p.annotation if "None" in p.annotation or p.default is not None else f"{p.annotation} | None"
                parts.append(f"{p.name}: {annotation} = {p.default!r}")
        return ", ".join(parts)

    def _docstring(self, indent: str = "    ") -> str:
        lines = [line.rstrip() for line in self.description.strip().splitlines()] or [self.name]
        documented = [p for p in self.params if p.description]
        if documented:
            lines += ["", "Args:"] + [f"    {p.name}: {p.description}" for p in documented]
        if not self.output_schema:  # the annotation says Any: say what the call returns all the same
            lines += ["", UNDECLARED_RETURN]
        if len(lines) == 1:
            return f'{indent}"""{lines[0]}"""'
        body = "\n".join(f"{indent}{line}" if line else "" for line in lines)
        return f'{indent}"""{body.lstrip()}\n{indent}"""'

    def stub(self) -> str:
        """The typed Python stub an LM reads in code mode."""
        return f"def {self.py_name}({self.signature()}) -> {self.return_annotation}:\n{self._docstring()}"

    def definition(self, call: str = "_harness_call_tool_json") -> str:
        """The function the sandbox runs: same signature, body forwards the call to the host (through `call`, the
        guest's bridge function under the name the defining code has for it)."""
        args = ", ".join(f'"{original}": {identifier(original)}'
                         for original in (self.input_schema.get("properties") or {}))
        return (f"{self.stub()}\n"
                f"    return {call}({self.name!r}, {{{args}}})\n")


@dataclass(frozen=True)
class Toolbox:
    """The tools of one run's servers, by name; names must be unique across the run's servers."""

    specs: tuple[ToolSpec, ...]

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for spec in self.specs:
            if spec.py_name in seen:
                raise UserError(f"tool '{spec.name}' is offered by both '{seen[spec.py_name]}' and "
                                f"'{spec.server}'; a task cannot use two servers with the same tool name")
            seen[spec.py_name] = spec.server

    def get(self, name: str) -> ToolSpec:
        for spec in self.specs:
            if name in (spec.name, spec.py_name):
                return spec
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs)

    def callable_by(self, caller: ToolCaller) -> Toolbox:
        """The tools `caller` may call (their server's `callers` name it): what the hybrid arm offers natively,
        or defines in its sandbox."""
        return Toolbox(tuple(spec for spec in self.specs if caller in spec.callers))

    def python_stubs(self) -> str:
        """What the code-mode LM reads as its tool API."""
        return "\n\n".join(spec.stub() for spec in self.specs)

    def sandbox_prelude(self) -> str:
        """What the sandbox runs before the agent's code: the same functions, bridged to the host (`Any` imported:
        a parameter or result without a JSON type is annotated with it)."""
        return "\n\n".join(["from typing import Any", *(spec.definition() for spec in self.specs)])

    def index(self) -> str:
        """One line per tool: what progressive discovery shows instead of the full stubs."""
        return "\n".join(f"{spec.py_name}: {spec.summary}" for spec in self.specs)

    def search(self, query: str, limit: int = 8) -> list[ToolSpec]:
        """Tools ranked by how many query words appear in their name and description."""
        words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 1]
        scored = []
        for spec in self.specs:
            text = f"{spec.name} {spec.name.replace('_', ' ')} {spec.description}".lower()
            hits = sum(text.count(w) for w in words)
            if hits:
                scored.append((-hits, spec.name, spec))
        return [spec for *_, spec in sorted(scored)[:limit]]
