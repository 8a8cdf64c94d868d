"""Cost per run from LiteLLM's bundled price map, and the per-run token and cost limits."""

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.models.cost import RunLimits, pricing_for, run_cost
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner, prepare
from harness.tasks.suite import load_suite

# gpt-4o-mini in litellm 1.106.2's bundled map: $0.15 / $0.60 per million input / output tokens, cached input $0.075
INPUT, OUTPUT, CACHED = 0.15e-6, 0.6e-6, 0.075e-6

SUITE_YAML = """
suite: mini
servers: [crm]
tasks:
  - {id: country, category: lookup, prompt: "Country of customer C-0007?", expected: IN, scorer: exact, max_turns: 20,
     reference: 'print(get_customer(customer_id="C-0007")["country"])'}
"""

@dataclass(frozen=True)
class Call:
    prompt_tokens: int | None
    completion_tokens: int | None
    reused_prompt_tokens: int = 0


@pytest.fixture
def suite(tmp_path: Path):
    path = tmp_path / "mini.yaml"
    path.write_text(SUITE_YAML)
    return load_suite(str(path))


def test_a_hosted_model_is_priced_from_the_bundled_cost_map():
    pricing = pricing_for("openai/gpt-4o-mini")
    assert pricing.known and not pricing.free and "litellm" in pricing.source and "cost map" in pricing.source
    assert run_cost(pricing, [Call(1000, 100), Call(2000, 50)]) == pytest.approx(3000 * INPUT + 150 * OUTPUT)


def test_reused_prompt_tokens_are_priced_as_cache_reads():
    cost = run_cost(pricing_for("openai/gpt-4o-mini"), [Call(1000, 0, reused_prompt_tokens=400)])
    assert cost == pytest.approx(600 * INPUT + 400 * CACHED)


def test_an_unknown_model_has_an_unknown_cost_and_says_so():
    pricing = pricing_for("openai/my-own-finetune")
    assert not pricing.known and pricing.source.startswith("unknown: no price for openai/my-own-finetune")
    assert run_cost(pricing, [Call(10, 10)]) is None


def test_a_call_without_reported_usage_makes_a_hosted_runs_cost_unknown():
    assert run_cost(pricing_for("openai/gpt-4o-mini"), [Call(1000, 10), Call(None, None)]) is None
    assert run_cost(pricing_for("local"), [Call(None, None)]) == 0.0


@pytest.mark.parametrize("model", ["local", "local:/models/x.gguf", "scripted:reference"])
def test_embedded_and_scripted_models_cost_nothing(model):
    pricing = pricing_for(model)
    assert pricing.free and run_cost(pricing, [Call(10_000, 1_000)]) == 0.0 and "no charge" in pricing.source


def test_limits_refuse_nonsense_values_in_one_line():
    with pytest.raises(UserError, match="--max-tokens-per-run must be at least 1"):
        RunLimits(max_tokens=0)
    with pytest.raises(UserError, match="--max-cost-per-run must be more than 0"):
        RunLimits(max_cost_usd=-1.0)


def test_a_cost_limit_on_a_model_without_a_price_is_refused_before_running(suite, tmp_path):
    config = RunConfig(suite=suite, model="openai/my-own-finetune", arms=("direct",), out_dir=tmp_path,
                       max_cost_per_run=0.01)
    with pytest.raises(UserError, match="--max-cost-per-run needs the model's price"):
        prepare(config)


def looking_up_forever(task, arm):
    """A direct-arm policy that never answers: each call looks up another customer (no repeat stops it)."""

    def policy(request):
        return ScriptedReply(tool_calls=(("get_customer", {"customer_id": f"C-{request.call_index + 1:04d}"}),))

    return policy


def run_rows(config: RunConfig):
    asyncio.run(Runner(config, provider=policy_provider(config.model, looking_up_forever)).run())
    row = read_results([config.out_dir]).iloc[0]
    return row, read_trajectory(config.out_dir / "mini" / f"{config.run_id}.parquet", row.sample_id)


def first_call_past(calls: list[dict], limit: float, cost_of) -> int:
    """1-based index of the first call whose running total passes `limit`."""
    total = 0.0
    for index, call in enumerate(calls, 1):
        total += cost_of(call)
        if total > limit:
            return index
    raise AssertionError("no call passed the limit")


def test_a_scripted_run_is_priced_at_the_models_price(suite, tmp_path):
    config = RunConfig(suite=suite, model="openai/gpt-4o-mini", arms=("direct",), out_dir=tmp_path, run_id="p",
                       max_tokens_per_run=5_000)
    row, trajectory = run_rows(config)
    calls = trajectory.lm_calls
    expected = sum(c.prompt_tokens * INPUT + c.completion_tokens * OUTPUT for c in calls)
    assert row.cost_usd == pytest.approx(expected) and row.cost_usd > 0
    assert "litellm" in row.cost_source


def test_a_token_limit_ends_the_run_at_the_call_that_passes_it(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="t",
                       max_tokens_per_run=5_000)
    row, trajectory = run_rows(config)
    calls = trajectory.lm_calls
    assert row.error_type == "token_limit" and "past --max-tokens-per-run 5,000" in row.error_message
    assert len(calls) == first_call_past(calls, 5_000, lambda c: c.prompt_tokens + c.completion_tokens) > 1
    assert row.llm_calls == len(calls)
    assert row.total_tokens == sum(c.prompt_tokens + c.completion_tokens for c in calls) > 5_000  # spent
    assert row.cost_usd == 0.0 and not row.success


def test_a_cost_limit_ends_the_run_at_the_call_that_passes_it(suite, tmp_path):
    limit = 0.002
    config = RunConfig(suite=suite, model="openai/gpt-4o-mini", arms=("direct",), out_dir=tmp_path, run_id="c",
                       max_cost_per_run=limit)
    row, trajectory = run_rows(config)
    calls = trajectory.lm_calls
    price = lambda c: c.prompt_tokens * INPUT + c.completion_tokens * OUTPUT
    assert row.error_type == "cost_limit" and "past --max-cost-per-run $0.002" in row.error_message
    assert len(calls) == first_call_past(calls, limit, price) > 1
    assert row.cost_usd == pytest.approx(sum(price(c) for c in calls)) and row.cost_usd > limit


def test_limits_are_kept_in_the_manifest_for_resume(suite, tmp_path):
    from harness.run.manifest import resume_config, write_manifest

    config = RunConfig(suite=suite, model="scripted:test", out_dir=tmp_path, max_tokens_per_run=7, max_cost_per_run=0.5)
    write_manifest(config, "m1")
    resumed = resume_config("m1", tmp_path)
    assert (resumed.max_tokens_per_run, resumed.max_cost_per_run) == (7, 0.5)
