"""The noisy model through the real runner: a run that draws success replays the reference and passes, one that
draws failure gives up and fails, in each arm's own protocol; the rows say the outcome was simulated."""

import asyncio

import pytest

from harness.models.noisy import GIVE_UP_ANSWER
from harness.run.runner import RunConfig, Runner
from harness.tasks.registry import load_suite


@pytest.mark.sandbox
def test_noisy_runs_pass_when_drawn_and_give_up_otherwise(tmp_path):
    model = "scripted:noisy:p=0.5,task.customer-country=1,task.shipped-total=0"
    config = RunConfig(suite=load_suite("smoke"), model=model, arms=("direct", "codemode"),
                       task_ids=("customer-country", "shipped-total"), out_dir=tmp_path, epochs=2)
    records = asyncio.run(Runner(config).run()).records
    outcomes = {(r.task_id, r.arm, r.epoch): (r.success, r.answer) for r in records}
    assert len(outcomes) == 8
    for (task, arm, epoch), (success, answer) in outcomes.items():
        assert success == (task == "customer-country"), (task, arm, epoch, answer)
        if task == "shipped-total":
            assert answer == GIVE_UP_ANSWER and next(r for r in records if r.task_id == task).tool_calls == 0
    assert all(r.cost_source.startswith("simulated") and r.model == model for r in records)
