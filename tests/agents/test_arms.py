"""The arm registry is the single source of what an arm is: its display order and colour, how the reference
replays it, its programs; no module outside harness/agents/ names an arm (this test reads the sources)."""

import ast
import re
from pathlib import Path

from harness.agents.arms import ARM_NAMES, ARMS, DEFAULT_ARMS, arm_names, arm_rank

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
AGENTS = PACKAGE / "agents"
ARM_WORD = re.compile(rf"(?<![\w-])({'|'.join(sorted(map(re.escape, ARMS), key=len, reverse=True))})(?![\w-])")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of docstring nodes (prose may mention an arm; code may not)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def arm_names_in(path: Path) -> list[str]:
    """Arm names in a source file's string literals (Python: docstrings and comments excepted)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [f"{path.name}: {m.group(0)}" for m in re.finditer(r"[\"'`]([\w-]+)[\"'`]", text)
                if m.group(1) in ARMS]
    tree = ast.parse(text)
    skip = _docstrings(tree)
    return [f"{path.name}:{node.lineno}: {match.group(1)}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            for match in [ARM_WORD.search(node.value)] if match]


def _caller_vocabulary() -> str:
    """The one line allowed to spell "direct" outside the agents: the tool-caller vocabulary (Anthropic's word in
    `allowed_callers`, the caller, not the arm), declared once in harness/tasks/task.py."""
    lines = (PACKAGE / "tasks" / "task.py").read_text(encoding="utf-8").splitlines()
    return f"task.py:{next(n for n, line in enumerate(lines, 1) if line.startswith('ToolCaller = '))}: direct"


def test_no_module_outside_the_agents_names_an_arm():
    sources = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".js", ".html") and AGENTS not in p.parents]
    assert len(sources) > 50
    assert [hit for path in sources for hit in arm_names_in(path) if hit != _caller_vocabulary()] == []


def test_the_check_finds_an_arm_named_in_code(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""The direct arm is fine in prose."""\nCOLOURS = {"codemode": "#fff"}\n')
    assert arm_names_in(sample) == ["sample.py:2: codemode"]


def test_every_arm_declares_its_colour_replay_and_module_and_the_registry_order_is_the_display_order():
    assert all(re.fullmatch(r"#[0-9a-f]{6}", arm.colour) for arm in ARMS.values())
    assert len({arm.colour for arm in ARMS.values()}) == len(ARMS)
    assert all(callable(arm.replay) for arm in ARMS.values())
    assert all((PACKAGE.parent / (arm.module.replace(".", "/") + ".py")).is_file() for arm in ARMS.values())
    assert [arm_rank(name) for name in arm_names()] == list(range(len(ARMS))) and arm_rank("retired") == len(ARMS)
    assert arm_names()[:len(ARM_NAMES)] == ARM_NAMES  # the built-in arms first, then the frameworks' and others
    assert set(DEFAULT_ARMS) <= set(ARMS)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_module_of_the_run_stage_imports_an_arms_module():
    """The run stage drives any agent through its context and transcript; what is an arm's own (its replay, what
    its steps did, its tool texts) stays in the arm's module, which harness/run never imports."""
    arm_modules = {arm.module for arm in ARMS.values()}
    imported = {str(path.relative_to(PACKAGE.parent)): sorted(_imports(path) & arm_modules)
                for path in (PACKAGE / "run").rglob("*.py")}
    assert len(imported) > 10
    assert {path: found for path, found in imported.items() if found} == {}
