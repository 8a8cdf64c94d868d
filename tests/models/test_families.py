"""Model families: each model string belongs to one family, and no module but the registry tests a model string."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

import harness
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


@pytest.fixture
def stockbot():
    from tests.plugin_example import STOCKBOT
    from tests.registered import unregister_plugin_example

    harness.register_model_family(STOCKBOT)
    yield STOCKBOT
    unregister_plugin_example()


@pytest.mark.parametrize("model, family", [("stockbot:v1", "stockbot"), ("stockbot:", "stockbot"),
                                           ("stockbot", "litellm"), ("scripted:reference", "reference")])
def test_a_registered_family_takes_its_strings_and_no_other(stockbot, model, family):
    assert family_of(model).name == family


def test_a_key_another_family_takes_is_refused(stockbot):
    with pytest.raises(ValueError, match=r"key\(s\) scripted: already belong to family 'scripted'"):
        harness.register_model_family(replace(stockbot, name="other", keys=("other:", "scripted:")))


def test_a_family_without_keys_is_refused():
    with pytest.raises(ValueError, match="at least one key"):
        harness.register_model_family(replace(SCRIPTED, name="keyless", keys=()))


def test_registering_a_name_again_replaces_the_family(stockbot):
    harness.register_model_family(replace(stockbot, keys=("stockbot2:",)))
    assert family_of("stockbot2:x").name == "stockbot" and family_of("stockbot:x") is LITELLM


def test_a_registered_family_runs_a_suite_through_the_python_api(stockbot, tmp_path):
    from tests.plugin_example import Stockroom, write_checkout

    harness.register_adapter(Stockroom())
    suite = harness.load_suite(f"stockroom:{write_checkout(tmp_path / 'stockroom')}")
    summary = harness.run_suite(harness.RunConfig(suite=suite, model="stockbot:v1", arms=("direct",),
                                                  out_dir=tmp_path / "results"))
    frame = harness.read_results([summary.path])
    assert frame.success.all() and set(frame.model) == {"stockbot:v1"}
    assert set(frame.scaffold) == {"stockroom-rules"}  # the family's default scaffold, a benchmark's preset
    assert set(frame.cost_source) == {"stockbot (scripted, no charge)"} and (frame.cost_usd == 0).all()
