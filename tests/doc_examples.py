"""The code blocks of the README and the docs pages, read the way tests/test_docs_examples.py runs them: each shell
command and Python block either runs offline (a scripted model, fixture servers) or says why it cannot, and what
cannot run is still checked against the CLI (commands, options) and the public API (names, keyword arguments).

A page says what a reader cannot see in hidden HTML comments:
- `<!-- not run: REASON -->` on the line before a block: the block is only checked, and listed with its reason;
- `<!-- example setup: harness ... -->` anywhere on the page: a command run first, in the page's folder (results
  a page's commands read, made the way another page shows).
A block whose first line is a comment naming a file (`# myteam/agents.py`, `# my-rules.yaml: ...`) is that file:
it is written into the page's folder for the blocks after it."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shlex
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import typer.main

from tests.cli.helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)  # also a fence indented in a list
NOT_RUN = re.compile(r"<!-- not run: (.*?) -->\s*$")
SETUP = re.compile(r"<!-- example setup: (.*?) -->")
NAMED_FILE = re.compile(r"# ([\w./-]+\.(?:py|ya?ml|json|toml))\b")
SHELL = ("bash", "sh", "shell", "console")

# Programs a page shows that this test never runs (installs, other tools' servers, clusters), and why.
NOT_RUN_PROGRAMS = {
    "pip": "installs packages",
    "make": "sets up the project's venv (checked with make -n)",
    "git": "clones a public repository (network)",
    "source": "activates the project's venv",
    "docker": "builds a container image",
    "kubectl": "needs a Kubernetes cluster",
    "inspect": "inspect_ai's own viewer, a server",
    "llama-server": "another program's model server",
    "vllm": "another program's model server",
    "export": "sets a variable for the commands after it",
}
# `harness` options whose value needs something outside the test's folder, and what.
NEEDS = {
    "--executor": ("ray", "a Ray cluster (tests marked ray run it)"),
    "--otel-endpoint": (None, "an OpenTelemetry collector"),
    "--api-base": (None, "a model server"),
    "--ray-address": (None, "a Ray cluster"),
}
MODEL_OPTIONS = ("--model", "--user-model", "--judge-model", "--reflection-model")
PLACEHOLDER = re.compile(r"(?<![\w$])(?:[A-Z][A-Z_0-9]*(?![\w])|<[^>]*|[^<]*>|\.\.\.)")
OUTPUT_OPTIONS = ("--out", "--junit", "--report")
WRITTEN = ("results/", "reports/", "programs/")  # folders the harness writes into
READS_RESULTS = ("report", "gate", "view", "export", "rescore", "rebuild")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    body: str
    not_run: str | None  # the page's reason, when it marks the block

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def file(self) -> str | None:
        """The file this block is, when its first line names one."""
        match = NAMED_FILE.match(self.body.splitlines()[0]) if self.body.strip() else None
        return match.group(1) if match else None

    def commands(self) -> list[list[str]]:
        """A shell block's commands: continuation lines joined, comments dropped, `&&` chains split, leading
        `NAME=value` assignments dropped; in a console block only the `$ ` lines."""
        text = self.body.replace("\\\n", " ")
        lines = text.splitlines()
        if self.language == "console":
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        commands = []
        for line in lines:
            words = shlex.split(line, comments=True)
            while words:
                command = words[:words.index("&&")] if "&&" in words else words
                words = words[len(command) + 1:]
                while command and re.fullmatch(r"[A-Z_]+=.*", command[0]):
                    command = command[1:]
                if command:
                    commands.append(command)
        return commands


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent, language, body = match.groups()
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = NOT_RUN.search(before)
        found.append(Block(page, text[:match.start()].count("\n") + 1, language, textwrap.dedent(body),
                           marked.group(1).strip() if marked else None))
    return found


def setup_commands(page: Path) -> list[list[str]]:
    return [shlex.split(command) for command in SETUP.findall(page.read_text(encoding="utf-8"))]


def option(command: list[str], name: str) -> str | None:
    for index, word in enumerate(command):
        if word == name and index + 1 < len(command):
            return command[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def python_not_run(block: Block) -> str | None:
    """Why a Python block cannot run here: the page's reason, or a model that is not scripted."""
    if block.not_run:
        return block.not_run
    models = re.findall(r"model=\"([^\"]+)\"", block.body)
    if any(not m.startswith("scripted:") for m in models):
        return "needs a model (hosted or embedded); its names are checked against the API instead"
    return None


def why_not_run(command: list[str]) -> str | None:
    """Why a shell command cannot run here (None: it can): a model that is not scripted, a placeholder for the
    reader's own value, a benchmark's checkout, a server or a cluster, a program this test does not run."""
    program, *args = command
    if program == "python" and args[:1] and args[0].startswith("benchmarks/"):
        return "a benchmark script (tests/test_benchmarks.py runs each with --smallest)"
    if program != "harness":
        return NOT_RUN_PROGRAMS.get(program) or f"`{program}`: a program this test does not run (mark the block)"
    placeholders = [w for a in args for w in PLACEHOLDER.findall(a) if not a.startswith("-")]
    if placeholders:
        return f"placeholders for the reader's own values ({', '.join(dict.fromkeys(placeholders))})"
    suite = option(command, "--suite") or ""
    if ":" in suite and not suite.startswith(("./", "/")):
        return "a published benchmark's checkout"
    for name, (value, need) in NEEDS.items():
        given = option(command, name)
        if given is not None and (value is None or given == value):
            return f"needs {need}"
    models = [option(command, o) for o in MODEL_OPTIONS if option(command, o)]
    uses_model = args[:1] in (["run"], ["optimize"]) or (args[:1] == ["models"] and "--check" in args)
    if uses_model and not option(command, "--model"):
        models.append("local")
    if any(not m.startswith("scripted:") for m in models):
        return "needs a model (hosted or embedded); parsed by the CLI instead"
    if args[:1] == ["view"] and "--out" not in args:
        return "serves the viewer until stopped"
    return None


def reads_missing_results(command: list[str], folder: Path) -> list[str]:
    """The results files or folders a `harness report|gate|view|export ...` command names that are not there: its
    paths (a word with a `/` or a `.parquet` name), not an option's value such as `--min-success direct=0.5`."""
    if command[0] != "harness" or command[1:2] == [] or command[1] not in READS_RESULTS:
        return []
    inputs = []
    for index, word in enumerate(command[2:], start=2):
        if word.startswith("-") or command[index - 1] in ("--out", "--junit", "--report", "--format"):
            continue
        if "/" in word or word.endswith(".parquet"):
            inputs.append(word)
    return [word for word in inputs if not list(folder.glob(word)) and not (folder / word).exists()]


def expand(command: list[str], folder: Path) -> list[str]:
    """`*` in an argument expanded in the page's folder, as the reader's shell would."""
    words = []
    for word in command:
        matches = sorted(str(p.relative_to(folder)) for p in folder.glob(word)) if "*" in word else []
        words.extend(matches or [word])
    return words


def parse_harness(args: list[str]) -> None:
    """Parse a `harness` command line with the real CLI, as running it would, without invoking the command."""
    import harness.cli  # noqa: F401  (registers every command on the app)
    from harness.cli.app import app

    group = typer.main.get_command(app)
    context = group.context_class(group, info_name="harness")
    command = group.get_command(context, args[0])
    assert command is not None, f"harness has no command {args[0]!r}"
    command.make_context(args[0], list(args[1:]), parent=context)


def repository_paths(args: list[str]) -> list[str]:
    """The arguments of a harness command that name a file of this repository (a suite, a scaffold in docs/, ...):
    not an output (`--out`, results/, reports/), a placeholder, a URL, a spec (`m3tooleval:PATH`) or a home path."""
    paths = []
    for index, word in enumerate(args):
        if (index and args[index - 1] in (*OUTPUT_OPTIONS, *MODEL_OPTIONS)) or PLACEHOLDER.search(word):
            continue
        if "/" in word and not word.startswith(("-", "~", "$", "/", *WRITTEN)) and ":" not in word and "=" not in word:
            paths.append(word)
    return paths


def check_command(command: list[str]) -> None:
    """A command that is not run is still checked: a harness command parses with the CLI and the repository's files
    it names exist; a make target exists; a script of this repository exists."""
    program, *args = command
    if program == "harness":
        parse_harness(args)
        for path in repository_paths(args):
            assert (ROOT / path).exists(), f"{' '.join(command)}: {path} does not exist"
    elif program == "make":
        done = subprocess.run(["make", "-n", *args, "VENV=/nonexistent-venv"], cwd=ROOT, capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, done.stderr
    elif program == "python" and args and args[0].endswith(".py"):
        assert (ROOT / args[0]).is_file(), f"{' '.join(command)}: {args[0]} does not exist"


def check_python(body: str, where: str) -> None:
    """A Python block parses, every name it takes from `harness` exists (the package's public names, a module's
    attributes), and every call of one binds to its signature (no unknown keyword argument)."""
    import harness

    tree = compile(body, where, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    imported: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "harness":
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{where}: {node.module} has no {alias.name}"
                imported[alias.asname or alias.name] = getattr(module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "harness":
                    importlib.import_module(alias.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "harness":
            assert node.attr in harness.__all__, f"{where}: harness.{node.attr} is not in the public API"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = _harness_object(node.func, imported)
            if target is not None and not any(isinstance(a, ast.Starred) for a in node.args) and \
                    all(k.arg for k in node.keywords):
                try:
                    inspect.signature(target).bind(*node.args, **{k.arg: None for k in node.keywords})
                except TypeError as exc:
                    raise AssertionError(f"{where}: {ast.unparse(node.func)}(...): {exc}") from None


def _harness_object(func: ast.expr, imported: dict[str, object]) -> object | None:
    import harness

    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "harness":
        return getattr(harness, func.attr)
    if isinstance(func, ast.Name) and func.id in imported and callable(imported[func.id]):
        return imported[func.id]
    return None
