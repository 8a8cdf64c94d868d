"""Each JavaScript code mode on the embedded model, on one short smoke task with two turns (slow: minutes on 2
cores). The outcome is not asserted (a 1.5B model may well not write the packages' JavaScript), but the rows must be
complete and honest: LM calls through the run's endpoint with the provider's tokens, the code tool's description
counted as tool definitions, and any program it ran recorded as a code event."""

import pytest

from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

pytestmark = [pytest.mark.local_model, pytest.mark.integration]
ARMS = ("cloudflare-codemode", "ai-sdk-codemode")


async def test_each_js_code_mode_runs_on_the_embedded_model(tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="local", arms=ARMS, task_ids=("customer-country",),
                       out_dir=tmp_path, run_id="local", cache="off", max_turns=2, timeout_s=3600)
    summary = await Runner(config).run()
    frame = read_results([summary.path])
    assert sorted(frame.arm) == sorted(ARMS)
    for _, row in frame.iterrows():
        assert row.token_source == "provider" and not row.scaffold_applied and row.arm_kind == "command"
        assert row.llm_calls >= 1 and row.prompt_tokens > 0 and row.context_tool_definition_tokens > 500
        assert row.error_type in ("", "max_turns"), row.error_message
        trajectory = read_trajectory(summary.path, row.sample_id)
        asked = sum(len(c.tool_calls) for c in trajectory.lm_calls)
        assert len(trajectory.code_runs) <= asked  # every program the model sent that ran is a code event
