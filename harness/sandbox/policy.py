"""Guardrails checked before sandbox code runs. The sandbox itself (Deno permissions, a wasm interpreter
with a virtual filesystem) already contains what code can do; the policy keeps agent code within what a
task needs and turns a violation into a clear observation the agent can act on (and a count in the row)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Standard-library modules that work offline in Pyodide and give code no reach outside the sandbox.
DEFAULT_ALLOWED_IMPORTS = frozenset({
    "json", "re", "math", "cmath", "datetime", "time", "calendar", "zoneinfo", "collections", "itertools",
    "functools", "operator", "statistics", "decimal", "fractions", "random", "string", "textwrap", "heapq",
    "bisect", "typing", "dataclasses", "enum", "uuid", "hashlib", "base64", "copy", "pprint", "csv", "io",
    "difflib", "unicodedata", "numbers", "abc", "contextlib", "array", "struct", "binascii", "html",
    "urllib.parse", "ipaddress", "secrets", "traceback", "types", "warnings",
})

# Calls that reach around the policy (dynamic code, imports, the interpreter's internals) or the host.
FORBIDDEN_CALLS = frozenset({
    "eval", "exec", "compile", "__import__", "open", "input", "breakpoint", "globals", "locals", "vars",
    "getattr", "setattr", "delattr", "exit", "quit", "help", "memoryview",
})

# Attribute names that lead from any object to the interpreter's internals.
FORBIDDEN_ATTRIBUTES = frozenset({
    "__subclasses__", "__bases__", "__mro__", "__globals__", "__builtins__", "__code__", "__closure__",
    "__dict__", "__class__", "__getattribute__", "__loader__", "__spec__", "__import__", "f_globals",
    "f_locals", "f_back", "gi_frame", "cr_frame", "tb_frame", "__reduce__", "__reduce_ex__",
})


@dataclass(frozen=True)
class SandboxPolicy:
    max_chars: int = 8000
    max_lines: int = 400
    allowed_imports: frozenset[str] = field(default=DEFAULT_ALLOWED_IMPORTS)
    forbidden_calls: frozenset[str] = field(default=FORBIDDEN_CALLS)
    forbidden_attributes: frozenset[str] = field(default=FORBIDDEN_ATTRIBUTES)

    def check(self, code: str) -> str | None:
        """None if the code may run, else the rule it breaks, as one sentence for the agent."""
        if len(code) > self.max_chars:
            return f"code is {len(code)} characters; the limit is {self.max_chars}"
        lines = code.count("\n") + 1
        if lines > self.max_lines:
            return f"code is {lines} lines; the limit is {self.max_lines}"
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return None  # the interpreter reports syntax errors itself, with the line
        return _Checker(self).violation(tree)


class _Checker(ast.NodeVisitor):
    def __init__(self, policy: SandboxPolicy):
        self.policy = policy
        self.modules: set[str] = set()  # names bound to imported modules
        self.found: str | None = None

    def violation(self, tree: ast.AST) -> str | None:
        self.visit(tree)
        return self.found

    def _fail(self, message: str) -> None:
        if self.found is None:
            self.found = message

    def _check_module(self, name: str) -> None:
        allowed = self.policy.allowed_imports
        if name not in allowed and name.split(".")[0] not in {a for a in allowed if "." not in a}:
            shown = ", ".join(sorted(a for a in allowed if "." not in a)[:24])
            self._fail(f"import of '{name}' is not allowed (allowed: {shown}, ...)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name)
            self.modules.add(alias.asname or alias.name.split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._fail("relative imports are not allowed")
        else:
            self._check_module(node.module or "")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in self.policy.forbidden_calls:
            self._fail(f"calling {node.func.id}() is not allowed")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self._fail(f"'{node.id}' is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in self.policy.forbidden_attributes:
            self._fail(f"attribute '{node.attr}' is not allowed")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Name) \
                and node.value.id in self.modules:
            self._fail(f"changing module '{node.value.id}' is not allowed (it would leak into later runs)")
        self.generic_visit(node)
