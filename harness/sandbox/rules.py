"""The AST rules behind SandboxPolicy. Standard library only (`ast`): the same source also runs inside the
sandbox, so code the host's older Python cannot parse (3.12+ syntax; Pyodide runs 3.13) is still checked
before it runs instead of slipping past the policy."""

from __future__ import annotations

import ast


def find_violation(tree: ast.AST, allowed_imports: frozenset[str], forbidden_calls: frozenset[str],
                   forbidden_attributes: frozenset[str]) -> str | None:
    """The first rule `tree` breaks, as one sentence, or None."""
    return _Checker(allowed_imports, forbidden_calls, forbidden_attributes).violation(tree)


class _Checker(ast.NodeVisitor):
    def __init__(self, allowed_imports, forbidden_calls, forbidden_attributes):
        self.allowed_imports = allowed_imports
        self.allowed_packages = {name for name in allowed_imports if "." not in name}
        self.forbidden_calls = forbidden_calls
        self.forbidden_attributes = forbidden_attributes
        self.modules: set[str] = set()  # names bound to imported modules
        self.found: str | None = None

    def violation(self, tree: ast.AST) -> str | None:
        self.visit(tree)
        return self.found

    def _fail(self, node: ast.AST, message: str) -> None:
        if self.found is None:
            line = getattr(node, "lineno", None)
            self.found = f"{message} (line {line})" if line else message

    def _module_allowed(self, name: str) -> bool:
        return name in self.allowed_imports or name.split(".")[0] in self.allowed_packages

    def _check_module(self, node: ast.AST, name: str) -> None:
        if not self._module_allowed(name):
            shown = ", ".join(sorted(self.allowed_packages)[:24])
            self._fail(node, f"import of '{name}' is not allowed (the tools are already defined: call them without "
                             f"importing; allowed modules: {shown}, ...)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            self.modules.add(alias.asname or alias.name.split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._fail(node, "relative imports are not allowed")
        elif not self._module_allowed(node.module or "") and not all(
                self._module_allowed(f"{node.module}.{alias.name}") for alias in node.names):
            self._check_module(node, node.module or "")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in self.forbidden_calls:
            self._fail(node, f"calling {node.func.id}() is not allowed")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__loader__", "__spec__", "__import__"):
            self._fail(node, f"'{node.id}' is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in self.forbidden_attributes:
            self._fail(node, f"attribute '{node.attr}' is not allowed")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Name) \
                and node.value.id in self.modules:
            self._fail(node, f"changing module '{node.value.id}' is not allowed (it would leak into later runs)")
        self.generic_visit(node)
