"""A prompt over a stated context window ends the run as context_overflow in every arm, before any LM call is made:
the row has no LM call, records the window, and its error message gives both sizes; the transcript has no model
event."""

import asyncio

import pytest

from harness.agents.arms import ARM_NAMES, get_arm
from harness.models.scripted import policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.events import ModelEvent

WINDOW = 64  # tokens: no arm's first prompt fits
NO_SANDBOX = [arm for arm in ARM_NAMES if not get_arm(arm).needs_sandbox]
SANDBOX = [arm for arm in ARM_NAMES if get_arm(arm).needs_sandbox]


def never_asked(task, arm):
    def policy(request):
        raise AssertionError("no LM call may reach the model")

    return policy


async def overflowing_run(arm, tmp_path, pool=None):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:test", arms=(arm,), task_ids=("customer-country",),
                       out_dir=tmp_path, run_id="window", context_window=WINDOW)
    summary = await Runner(config, provider=policy_provider("scripted:test", never_asked), pool=pool).run()
    [record] = summary.records
    return record, read_trajectory(summary.path, record.sample_id)


def check_overflowed(record, trajectory):
    assert record.error_type == "context_overflow" and not record.success
    assert record.llm_calls == 0 and record.total_tokens == 0 and record.context_window == WINDOW
    assert f"context window of {WINDOW} tokens" in record.error_message and "the prompt of " in record.error_message
    assert not any(isinstance(event, ModelEvent) for event in trajectory.events)


@pytest.mark.parametrize("arm", NO_SANDBOX)
def test_a_prompt_over_the_window_ends_the_run_before_any_lm_call(arm, tmp_path):
    check_overflowed(*asyncio.run(overflowing_run(arm, tmp_path)))


@pytest.mark.sandbox
@pytest.mark.parametrize("arm", SANDBOX)
async def test_a_prompt_over_the_window_ends_a_sandbox_arms_run_before_any_lm_call(arm, tmp_path, sandbox_pool):
    check_overflowed(*await overflowing_run(arm, tmp_path, sandbox_pool))


def test_rows_and_the_manifest_record_the_window_and_a_run_that_fits_is_not_refused(tmp_path):
    import json

    config = RunConfig(suite=load_suite("smoke"), model="scripted:garbage", arms=("direct",),
                       task_ids=("customer-country",), out_dir=tmp_path, run_id="fits", context_window=100_000)
    summary = asyncio.run(Runner(config).run())
    [record] = summary.records
    assert record.llm_calls == 1 and record.error_type == ""  # garbage is a (wrong) answer under plain
    assert record.context_window == 100_000 and read_results([tmp_path]).iloc[0].context_window == 100_000
    manifest = json.loads((tmp_path / "smoke" / "fits.run.json").read_text())
    assert manifest["limits"]["context_window"] == 100_000  # the limits, recorded whole
