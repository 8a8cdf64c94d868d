"""The embedded model through the arms on a real smoke task and on a benchmark task of the look-alike M3ToolEval
checkout (slow: minutes on 2 cores). The outcome is
not asserted — a 1.5B model may well fail — but the row must be complete and honest."""

import pytest

from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

pytestmark = [pytest.mark.local_model, pytest.mark.sandbox]


async def test_one_smoke_task_through_both_arms_on_the_embedded_model(sandbox_pool, tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="local", task_ids=("customer-country",), out_dir=tmp_path,
                       run_id="local", cache="off", timeout_s=3600)  # a busy 2-core machine is slow, not wrong
    summary = await Runner(config, pool=sandbox_pool).run()
    frame = read_results([summary.path])
    assert sorted(frame.arm) == ["codemode", "direct"]
    for _, row in frame.iterrows():
        assert row.model == "local" and row.token_source == "provider"
        assert row.prompt_tokens > 0 and row.completion_tokens > 0 and row.llm_calls >= 2
        assert row.latency_s > 0 and row.lm_time_s > 0
        assert row.error_type in ("", "max_turns", "parse_error"), row.error_message
        trajectory = read_trajectory(summary.path, row.sample_id)
        assert len(trajectory.lm_calls) == row.llm_calls
        assert all(call.prompt_tokens > 0 for call in trajectory.lm_calls)
    assert frame.reused_prompt_tokens.sum() > 0  # later turns reuse the KV cache


@pytest.mark.local_model
def test_a_second_identical_call_is_a_cache_hit(tmp_path):
    from dspy.lm15 import Config, Message, Request

    from harness.models.cache import CachingEngine, was_cache_hit
    from harness.models.llama import local_engine

    engine = CachingEngine(local_engine(), tmp_path)
    request = Request(model="local", messages=(Message.user("Say OK."),), config=Config(max_tokens=4, temperature=0))
    first, second = engine.complete(request), engine.complete(request)
    assert not was_cache_hit(first) and was_cache_hit(second)
    assert second.usage.input_tokens == first.usage.input_tokens > 0


async def test_one_benchmark_task_through_direct_react_and_codemode_on_the_embedded_model(sandbox_pool, tmp_path):
    import harness.adapters  # noqa: F401  registers the published benchmarks
    from harness.tasks.registry import load_suite as load_any_suite
    from tests.adapters.lookalike import write_lookalike

    suite = load_any_suite(f"m3tooleval:{write_lookalike(tmp_path / 'code-act')}")
    config = RunConfig(suite=suite, model="local", arms=("direct", "react", "codemode"),
                       task_ids=("unit_converter/largest_of_three",), out_dir=tmp_path / "out", run_id="bench",
                       cache="off", timeout_s=3600)
    summary = await Runner(config, pool=sandbox_pool).run()
    frame = read_results([summary.path])
    assert sorted(frame.arm) == ["codemode", "direct", "react"]
    for _, row in frame.iterrows():
        assert (row.suite, row.category, row.task_id) == (
            "m3tooleval", "unit_converter", "unit_converter/largest_of_three")
        assert row.llm_calls >= 1 and row.prompt_tokens > 0
        assert row.error_type != "internal", row.error_message  # the model may fail; the harness may not
        assert len(read_trajectory(summary.path, row.sample_id).lm_calls) == row.llm_calls
