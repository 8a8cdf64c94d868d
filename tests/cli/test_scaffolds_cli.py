"""`harness scaffolds`: the fields with their values in each preset, as a table or as the docs' Markdown."""

import pytest

from harness.agents.scaffold import GUIDED, PLAIN, RULE_NAMES, fields_markdown
from tests.cli.helpers import harness

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def test_scaffolds_lists_every_field_with_the_presets_hashes():
    result = harness("scaffolds")
    assert result.returncode == 0, result.stderr
    assert PLAIN.hash in result.stdout and GUIDED.hash in result.stdout
    assert all(name in result.stdout for name in RULE_NAMES)


def test_scaffolds_markdown_is_what_the_docs_hold():
    result = harness("scaffolds", "--markdown")
    assert result.returncode == 0 and result.stdout == fields_markdown()
