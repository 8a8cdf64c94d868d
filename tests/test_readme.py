"""Every command in the README's shell blocks works, so the README cannot drift from the CLI: a block that uses a
scripted model is run, command by command, in a fresh folder; every other command is parsed by the real CLI
(options, types, choices) without running it, and the files it names in the repository must exist."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib

import pytest
import typer.main

from tests.cli.helpers import ROOT, harness

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would

README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Output files and folders a command writes, or placeholders for a user's own runs: not expected to exist.
WRITTEN = ("results/", "reports/", "programs/")


def shell_blocks(text: str) -> list[list[list[str]]]:
    """The README's ```bash blocks, each as its commands (continuation lines joined, comments dropped)."""
    blocks = []
    for language, body in BLOCK.findall(text):
        if language in ("bash", "sh", "console"):
            joined = body.replace("\\\n", " ")
            blocks.append([shlex.split(line, comments=True) for line in joined.splitlines()
                           if shlex.split(line, comments=True)])
    return blocks


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
    """Arguments that name a file of this repository (tasks, docs, benchmarks, ...), not an output."""
    return [a for a in args if "/" in a and not a.startswith(("-", "http", "$")) and not a.startswith(WRITTEN)
            and "=" not in a and "://" not in a]


def check_parses(command: list[str]) -> None:
    program, *args = command
    if program == "harness":
        parse_harness(args)
    elif program == "make":
        done = subprocess.run(["make", "-n", *args, "VENV=/nonexistent-venv"], cwd=ROOT, capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, done.stderr
    elif program == "source":
        assert args == [".venv/bin/activate"]
    elif program == "git":  # fetching a benchmark's public checkout: a clone of a public URL, nothing else
        assert args[0] == "clone" and args[1].startswith("https://"), command
        return
    else:
        raise AssertionError(f"the README shows a command this test does not know how to check: {command}")
    for path in repository_paths(args):
        assert (ROOT / path).exists(), f"{' '.join(command)}: {path} does not exist"


def test_the_readme_has_shell_blocks_and_one_uses_a_scripted_model():
    blocks = shell_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    assert any("scripted:reference" in " ".join(c) for block in blocks for c in block)


def test_every_readme_command_parses_with_the_cli():
    for block in shell_blocks(README.read_text(encoding="utf-8")):
        for command in block:
            check_parses(command)


def test_the_parser_check_refuses_an_unknown_option():
    with pytest.raises(Exception, match="No such option"):
        parse_harness(["run", "--suite", "smoke", "--no-such-option"])


def test_the_extras_the_readme_and_docs_install_exist():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    texts = [README.read_text(encoding="utf-8"), *(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))]
    named = {m for text in texts for m in re.findall(r"harness\[([\w-]+)\]", text)}
    assert named and named <= set(extras)


@pytest.mark.sandbox
def test_the_readme_blocks_that_use_a_scripted_model_run(tmp_path):
    blocks = [b for b in shell_blocks(README.read_text(encoding="utf-8"))
              if any("scripted:" in " ".join(c) for c in b)]
    assert blocks
    for block in blocks:
        for program, *args in block:
            assert program == "harness"
            if args[0] == "view" and "--out" not in args:
                parse_harness(args)  # it serves until stopped: its results file must exist
                assert all((tmp_path / a).exists() for a in args[1:] if not a.startswith("-"))
                continue
            done = harness(*args, cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
            assert done.returncode == 0, f"harness {' '.join(args)}\n{done.stdout}\n{done.stderr}"


def fenced(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README.read_text(encoding="utf-8")) if lang == language]


def test_the_readme_mcp_config_example_loads(tmp_path):
    from harness.mcp.external import load_mcp_config

    (example,) = fenced("json")
    path = tmp_path / "mcp_servers.json"
    path.write_text(example)
    assert set(load_mcp_config(path)) == {"memory"}


@pytest.mark.sandbox
def test_the_readme_suite_example_validates(tmp_path):
    (example,) = [body for body in fenced("yaml") if body.startswith("suite:")]
    (tmp_path / "mine.yaml").write_text(example)
    done = harness("validate", "--suite", "mine.yaml", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.sandbox
def test_the_readme_python_blocks_that_use_a_scripted_model_run(tmp_path):
    import sys

    blocks = [body for body in fenced("python") if "scripted:" in body]
    assert blocks
    for body in blocks:
        done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                              env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, f"{body}\n{done.stdout}\n{done.stderr}"
        assert "success" in done.stdout
