"""Model families: each model string belongs to one family, and no module but the registry tests a model string."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.models.cost import pricing_for
from harness.models.families import EMBEDDED, LITELLM, REFERENCE, SCRIPTED, family_of

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
REGISTRY = PACKAGE / "models" / "families.py"
# a comparison of a string with a model-kind literal: `== "local"`, `.startswith("scripted:")`, `"local" ==`, ...
MODEL_TEST = re.compile(r"""(==|!=|startswith\(\s*)\s*["'](local|scripted:)|["'](local|scripted:[^"']*)["']\s*(==|!=)""")


@pytest.mark.parametrize("model", ["local", "local:/models/q.gguf", "local:"])
def test_the_embedded_family_takes_local_and_local_files(model):
    assert family_of(model) is EMBEDDED


def test_the_reference_family_takes_scripted_reference():
    assert family_of("scripted:reference") is REFERENCE


@pytest.mark.parametrize("model", ["scripted:garbage", "scripted:test", "scripted:"])
def test_the_scripted_family_takes_every_other_scripted_string(model):
    assert family_of(model) is SCRIPTED


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku", "localhost/model",
                                   "ollama/qwen2.5-coder", "locals"])
def test_litellm_takes_every_other_string(model):
    assert family_of(model) is LITELLM


def test_only_the_reference_family_replays_references():
    assert [f.name for f in (EMBEDDED, REFERENCE, SCRIPTED, LITELLM) if f.replays_references] == ["reference"]


def test_free_families_price_through_the_registry():
    assert pricing_for("local:/m/q.gguf").source == EMBEDDED.free_pricing
    assert pricing_for("scripted:garbage").free


def test_no_module_outside_the_registry_tests_a_model_string():
    found = [f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py")) if path != REGISTRY
             for n, line in enumerate(path.read_text().splitlines(), 1) if MODEL_TEST.search(line)]
    assert not found, "ask harness.models.families.family_of(model) instead:\n" + "\n".join(found)
