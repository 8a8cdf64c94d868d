"""`scripted:reference` solves every smoke task in every arm, through the real sandbox and servers."""

import pytest

from harness.agents.arms import ARM_NAMES, ARMS
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

pytestmark = pytest.mark.sandbox


async def test_reference_replay_solves_every_smoke_task_in_every_arm(sandbox_pool, tmp_path):
    suite = load_suite("smoke")
    config = RunConfig(suite=suite, model="scripted:reference", arms=ARM_NAMES, out_dir=tmp_path, run_id="ref")
    summary = await Runner(config, pool=sandbox_pool).run()
    frame = read_results([summary.path])
    assert len(frame) == len(suite.tasks) * len(ARM_NAMES)
    failures = frame[~frame.success][["task_id", "arm", "answer", "score_reason", "error_message"]]
    assert failures.empty, failures.to_string()
    assert (frame.error_type == "").all()
    assert (frame.total_tokens > 0).all() and (frame.latency_s > 0).all()
    by_arm = frame.groupby("arm")
    assert (by_arm.tool_calls.sum() > 0).all()
    in_sandbox = frame.arm.map(lambda arm: ARMS[arm].needs_sandbox)
    files = frame.arm == "codemode-files"  # it reads the files of the tools it calls first
    assert (frame[in_sandbox & ~files].turns == 2).all()  # the reference code, then final_answer of what it printed
    assert (frame[files].turns == 3).all() and (frame[files].tool_files_read >= 1).all()
    assert (frame[in_sandbox].sandbox_time_s > 0).all()
    one_by_one = ~in_sandbox & ~frame.arm.isin(["codemode-fastmcp", "direct-search"])
    assert (frame[one_by_one].turns == frame[one_by_one].tool_calls + 1).all()  # each call, then final_answer
    by_task = frame.set_index(["arm", "task_id"])
    searched, direct = by_task.loc["direct-search"], by_task.loc["direct"]  # the same calls, after its searches
    assert (searched.tool_calls == direct.tool_calls).all() and (searched.turns > direct.turns).all()
    assert (frame[frame.arm == "codemode-fastmcp"].turns == 4).all()  # search, get_schema, execute, final_answer
    assert (frame.tool_callers == "crm=direct+code").all()
    kinds = frame.groupby("arm")[["tool_actions", "code_actions"]].max()
    assert kinds.loc["hybrid"].tolist() == [0, 1]  # the reference as one code call, then the final_answer tool
    assert kinds.loc["codemode"].tolist() == [0, 2]  # its final_answer(...) is code that runs too
    assert kinds.loc["direct", "code_actions"] == 0 and kinds.loc["direct", "tool_actions"] > 0
    write = frame[(frame.task_id == "vip-note")]
    assert set(write.answer) == {"C-0041"}
