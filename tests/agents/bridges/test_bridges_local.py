"""Each framework's arm on the embedded model, on one short smoke task with two turns (slow: minutes on 2 cores).
The outcome is not asserted (a 1.5B model may well fail, and a framework's own prompts were not written for it), but
its rows must be complete and honest: its LM calls made through the run's endpoint, with the provider's tokens."""

import pytest

from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

pytestmark = pytest.mark.local_model
BRIDGES = ("smolagents-code", "smolagents-tools", "pydantic-ai", "openai-agents")


async def test_each_framework_runs_on_the_embedded_model(tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="local", arms=BRIDGES, task_ids=("customer-country",),
                       out_dir=tmp_path, run_id="local", cache="off", max_turns=2, timeout_s=3600)
    summary = await Runner(config).run()
    frame = read_results([summary.path])
    assert sorted(frame.arm) == sorted(BRIDGES)
    for _, row in frame.iterrows():
        assert row.model == "local" and row.token_source == "provider" and not row.scaffold_applied
        assert row.llm_calls >= 1 and row.prompt_tokens > 0 and row.completion_tokens > 0 and row.lm_time_s > 0
        assert row.error_type in ("", "max_turns", "agent_error"), row.error_message
        trajectory = read_trajectory(summary.path, row.sample_id)
        assert len(trajectory.lm_calls) == row.llm_calls <= 2
        assert all(call.prompt_tokens > 0 for call in trajectory.lm_calls)
