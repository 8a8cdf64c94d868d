"""The row is a projection of the run's transcript file: recomputed from it (harness rebuild), it equals the row
written at run time, whatever ended the run; and a finished run is judged again by another scorer without running
any agent (harness rescore)."""

import asyncio
import json
from dataclasses import replace

import pandas as pd
import pytest

from harness.agents.arms import ARMS, ARM_NAMES
from harness.errors import UserError
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.rebuild import rebuild
from harness.run.records import read_results
from harness.run.rescore import rescore_all
from harness.run.runner import Runner
from tests.run.test_transcript_runs import CHAIN, chaining, config

SAMPLE = ["sample_id"]


def rows(path) -> pd.DataFrame:
    return read_results([path]).sort_values(SAMPLE).reset_index(drop=True)


def assert_rebuilt_equal(tmp_path):
    path = tmp_path / "smoke" / "r.parquet"
    before = rows(path)
    recomputed, kept = rebuild(path)
    assert (recomputed, kept) == (len(before), 0)
    pd.testing.assert_frame_equal(rows(path), before)
    return before


def run(tmp_path, model="scripted:chain", policy=chaining, **options):
    asyncio.run(Runner(config(tmp_path, model=model, **options), provider=policy_provider(model, policy)).run())


def test_a_run_that_answered_is_rebuilt_to_the_same_row(tmp_path):
    run(tmp_path)
    assert assert_rebuilt_equal(tmp_path).success.tolist() == [True]


@pytest.mark.parametrize("options, error", [
    ({"tool_latency_s": 1.0, "tool_timeout_s": 5.0, "timeout_s": 1.6}, "timeout"),
    ({"max_tokens_per_run": 50}, "token_limit"),
    ({"max_turns": 1}, "max_turns")])
def test_a_run_ended_by_a_limit_is_rebuilt_to_the_same_row(tmp_path, options, error):
    run(tmp_path, **options)
    assert assert_rebuilt_equal(tmp_path).error_type.tolist() == [error]


def test_an_interrupted_run_is_rebuilt_to_the_same_row(tmp_path):
    async def interrupt():
        running = asyncio.ensure_future(Runner(config(tmp_path, tool_latency_s=2.0),
                                               provider=policy_provider("scripted:chain", chaining)).run())
        await asyncio.sleep(0.8)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(interrupt())
    assert assert_rebuilt_equal(tmp_path).error_type.tolist() == ["interrupted"]


def test_a_run_that_crashed_is_rebuilt_to_the_same_row(tmp_path, monkeypatch):
    import harness.agents.loop as loop

    def crash(turns):
        raise RuntimeError("a bug in the loop")

    calls = []

    def crash_in_the_second_run(turns):
        calls.append(turns)
        if len({id(t) for t in calls}) > 1 and not turns:  # a later run's first turn: a bug in the loop
            raise RuntimeError("a bug in the loop")
        return None

    monkeypatch.setattr(loop, "unrecovered_crash", crash_in_the_second_run)
    # the first run ends otherwise, so the arm is not stopped for repeating an internal error (run.repeats)
    suite_config = replace(config(tmp_path), task_ids=("shipped-total", "customer-country"))
    asyncio.run(Runner(suite_config, provider=policy_provider("scripted:chain", chaining)).run())
    assert "internal" in assert_rebuilt_equal(tmp_path).error_type.tolist()


@pytest.mark.parametrize("arm", [a for a in ARM_NAMES if not ARMS[a].needs_sandbox])
def test_every_arm_without_a_sandbox_is_rebuilt_to_the_same_row(tmp_path, arm):
    run(tmp_path, arms=(arm,), model="scripted:garbage", policy=lambda task, a: (lambda request: "no protocol"))
    assert_rebuilt_equal(tmp_path)


@pytest.mark.sandbox
@pytest.mark.parametrize("arm", [a for a in ARM_NAMES if ARMS[a].needs_sandbox])
def test_every_arm_with_a_sandbox_is_rebuilt_to_the_same_row(tmp_path, arm):
    asyncio.run(Runner(config(tmp_path, model="scripted:reference", arms=(arm,))).run())
    assert_rebuilt_equal(tmp_path)


def as_version_6(path):
    """A transcript file as a version 6 harness wrote it: no `end` event (the answer was in the end line only), the
    error that ended the run an `error` event of its own."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    older = []
    for line in lines:
        if line["event"] == "run_start":
            line = {**line, "trajectory_version": 6}
        elif line["event"] == "end" and line["error"] is None:
            continue
        elif line["event"] == "end":
            line = {**{k: line[k] for k in ("id", "parent", "t", "step")}, "event": "error", **line["error"]}
        older.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in older))


@pytest.mark.parametrize("options, error", [({}, ""), ({"tool_latency_s": 1.0, "tool_timeout_s": 5.0,
                                                        "timeout_s": 1.6}, "timeout")])
def test_a_transcript_of_the_previous_version_is_rebuilt_to_the_same_row(tmp_path, options, error):
    run(tmp_path, **options)
    [path] = (tmp_path / "smoke" / "r.transcripts").glob("*.jsonl")
    as_version_6(path)
    assert '"event": "end"' not in path.read_text()
    rebuilt = assert_rebuilt_equal(tmp_path)  # its answer read from the end line, as the upgrade step does
    assert rebuilt.error_type.tolist() == [error] and (rebuilt.answer.tolist() != [""]) == (error == "")


def nearly(task, arm):
    """The chain's calls, then an answer 0.05 off the total (27.0): outside the suite's tolerance (0.01)."""
    replies = [ScriptedReply(tool_calls=(call,)) for call in CHAIN]
    replies.append(ScriptedReply(tool_calls=(("final_answer", {"answer": 27.05}),)))
    return lambda request: replies.pop(0)


def test_rescore_judges_finished_runs_again_with_another_scorer(tmp_path):
    run(tmp_path, policy=nearly)
    path = tmp_path / "smoke" / "r.parquet"
    assert rows(path).success.tolist() == [False]  # the suite's scorer: within 0.01
    [done] = rescore_all([path], "{numeric: {tolerance: 0.1}}", tmp_path / "again")
    assert done.runs == 1 and done.changed == 1
    rescored = read_results([done.path])
    assert rescored.success.tolist() == [True] and rescored.answer.tolist() == rows(path).answer.tolist()
    assert rows(path).success.tolist() == [False]  # the original is left as it was


def test_rescore_with_a_scorer_that_needs_live_server_state_says_so(tmp_path):
    run(tmp_path)
    with pytest.raises(UserError, match="needs live server state"):
        rescore_all([tmp_path / "smoke" / "r.parquet"], "{state: {server: crm, collection: orders}}",
                    tmp_path / "again")
