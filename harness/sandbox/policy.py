"""Guardrails checked before sandbox code runs. The sandbox itself (Deno permissions, a wasm interpreter
with a virtual filesystem) already contains what code can do; the policy keeps agent code within what a
task needs and turns a violation into a clear observation the agent can act on (and a count in the row)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from harness.sandbox.rules import find_violation

# Standard-library modules that work offline in Pyodide and give code no reach outside the sandbox.
DEFAULT_ALLOWED_IMPORTS = frozenset({
    "json", "re", "math", "cmath", "datetime", "time", "calendar", "zoneinfo", "collections", "itertools",
    "functools", "operator", "statistics", "decimal", "fractions", "random", "string", "textwrap", "heapq",
    "bisect", "typing", "dataclasses", "enum", "uuid", "hashlib", "base64", "copy", "pprint", "csv", "io",
    "difflib", "unicodedata", "numbers", "abc", "contextlib", "array", "struct", "binascii", "html",
    "urllib.parse", "ipaddress", "secrets", "traceback", "types", "warnings", "hmac", "graphlib", "reprlib",
    "fnmatch", "shlex", "keyword", "colorsys",
    "asyncio",  # tools are awaitable; its loop in the sandbox has no sockets, subprocesses or threads (guest.py)
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


# What code in a session may use beyond that: its files (the virtual filesystem's workspace/ and skills/ folders,
# which persist to the session's later tasks: harness.agents.sessions) and the `skills` package saved there.
SESSION_IMPORTS = frozenset({"os", "os.path", "pathlib", "glob", "shutil", "skills"})
SESSION_CALLS = frozenset({"open"})


@dataclass(frozen=True)
class SandboxPolicy:
    """What agent code may contain, checked before it runs: size, imports (an allowlist of standard-library
    modules that work offline), and calls/attributes that lead to dynamic code, the interpreter's internals
    or Pyodide's bridges (`js`, `pyodide`). A guardrail with a clear message, not the security boundary:
    that is the Deno process (no permissions) around a wasm interpreter, tested with the policy off."""

    max_chars: int = 8000
    max_lines: int = 400
    allowed_imports: frozenset[str] = field(default=DEFAULT_ALLOWED_IMPORTS)
    forbidden_calls: frozenset[str] = field(default=FORBIDDEN_CALLS)
    forbidden_attributes: frozenset[str] = field(default=FORBIDDEN_ATTRIBUTES)

    def allowing(self, imports: frozenset[str] = frozenset(), calls: frozenset[str] = frozenset()) -> SandboxPolicy:
        """This policy with more modules importable and fewer calls forbidden: what an arm whose design needs them
        passes to its lease (codemode-files reads its tool files with `os` and `open`)."""
        return replace(self, allowed_imports=self.allowed_imports | imports, forbidden_calls=self.forbidden_calls - calls)

    def in_session(self) -> SandboxPolicy:
        """This policy for a task in a session: files may be opened and `os`, `pathlib`, `glob`, `shutil` and the
        session's `skills` imported (the reset between leases deletes every file a lease wrote)."""
        return self.allowing(SESSION_IMPORTS, SESSION_CALLS)

    def check(self, code: str) -> str | None:
        """None if the code may run, else the rule it breaks, as one sentence for the agent."""
        size = self.size_violation(code)
        if size is not None:
            return size
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return None  # newer syntax, or an error: the sandbox checks (and reports) it with its own parser
        return find_violation(tree, **self.rules())

    def size_violation(self, code: str) -> str | None:
        """The size rules alone (checked on the host before anything is sent)."""
        if len(code) > self.max_chars:
            return f"code is {len(code)} characters; the limit is {self.max_chars}"
        lines = code.count("\n") + 1
        if lines > self.max_lines:
            return f"code is {lines} lines; the limit is {self.max_lines}"
        return None

    def rules_if_unparsed(self, code: str) -> dict[str, frozenset[str]] | None:
        """The rules for the sandbox to check with its own parser, when this host's Python cannot parse
        `code` (3.12+ syntax; Pyodide runs 3.13); None when `check` already covered it."""
        try:
            ast.parse(code)
        except SyntaxError:
            return self.rules()
        return None

    def rules(self) -> dict[str, frozenset[str]]:
        """The AST rule parameters, as `rules.find_violation` takes them (also sent into the sandbox)."""
        return {"allowed_imports": self.allowed_imports, "forbidden_calls": self.forbidden_calls,
                "forbidden_attributes": self.forbidden_attributes}
