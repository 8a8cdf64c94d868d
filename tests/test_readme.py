"""The README's examples that are not shell or Python (its suite file and its MCP config) work as shown, and the
extras it and the docs install exist. Its shell and Python blocks are run or checked with every docs page's by
tests/test_docs_examples.py."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.cli.helpers import ROOT, harness
from tests.doc_examples import blocks

README = ROOT / "README.md"


def fenced(language: str) -> list[str]:
    return [block.body for block in blocks(README) if block.language == language]


def test_the_readme_has_shell_blocks_and_one_uses_a_scripted_model():
    shell = [block for block in blocks(README) if block.language == "bash"]
    assert len(shell) >= 3
    assert any("scripted:reference" in " ".join(c) for block in shell for c in block.commands())


def test_the_extras_the_readme_and_docs_install_exist():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    texts = [README.read_text(encoding="utf-8"), *(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))]
    named = {m for text in texts for m in re.findall(r"harness\[([\w-]+)\]", text)}
    assert named and named <= set(extras)


def test_the_readme_mcp_config_example_loads(tmp_path):
    from harness.mcp.external import load_mcp_config

    (example,) = fenced("json")
    path = tmp_path / "mcp_servers.json"
    path.write_text(example)
    assert set(load_mcp_config(path)) == {"memory"}


@pytest.mark.cli
@pytest.mark.sandbox
def test_the_readme_suite_example_validates(tmp_path):
    (example,) = [body for body in fenced("yaml") if body.startswith("suite:")]
    (tmp_path / "mine.yaml").write_text(example)
    done = harness("validate", "--suite", "mine.yaml", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
