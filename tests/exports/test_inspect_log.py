"""The inspect_ai export, read back with inspect_ai's own reader: one log per suite, arm and model, one sample per
run whose scores, tokens, messages and events are the run's; runs that ended early, rows without a trajectory and
files of older versions export too."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from inspect_ai.event import ModelEvent, SampleLimitEvent, SandboxEvent, ScoreEvent, SpanBeginEvent, ToolEvent

from harness.exports.inspect_events import RunFacts, inspect_events
from harness.exports.inspect_log import NO_TRAJECTORY, write_inspect_logs
from harness.mcp.servers import CUT_SHORT
from harness.run.records import RunRecord, read_results, read_trajectory
from harness.trace.events import CodeEvent, CodeExecution
from harness.trace.trajectory import record_lists
from tests.exports.scripted import chain_run, parquet_totals, read_log, usage_totals
from tests.run.test_records import write_old


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The smoke suite through the direct arm, two epochs, exported: its rows and the one log."""
    out = tmp_path_factory.mktemp("chain")
    results = chain_run(out / "results", epochs=2)
    written = write_inspect_logs([results], out / "logs")
    return read_results([results]), written, results


def test_one_log_per_suite_arm_and_model_with_one_sample_per_run(exported):
    rows, written, _ = exported
    assert [(w.suite, w.arm, w.model, w.samples) for w in written] == [("smoke", "direct", "scripted:chain", 8)]
    log = read_log(written[0].path)
    assert (log.status, log.eval.task, log.eval.model, log.eval.solver) == ("success", "smoke/direct",
                                                                          "scripted:chain", "direct")
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted(zip(rows.task_id, rows.epoch + 1, strict=True))


def test_scores_and_token_totals_equal_the_parquet_files(exported):
    rows, written, _ = exported
    log = read_log(written[0].path)
    by_run = {(s.id, s.epoch - 1): s for s in log.samples}
    for row in rows.itertuples():
        scores = by_run[(row.task_id, row.epoch)].scores
        assert scores["success"].value == ("C" if row.success else "I")
        assert (scores["score"].value, scores["score"].explanation) == (row.score, row.score_reason)
    assert 0 < rows.success.sum() < len(rows)  # a mix: the chain's answer is right for one task of four
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(rows.success.mean())
    assert usage_totals(log) == parquet_totals(rows)


def test_a_samples_events_are_its_transcripts_and_its_messages_end_with_the_last_reply(exported):
    rows, written, results = exported
    log = read_log(written[0].path)
    sample = next(s for s in log.samples if s.id == "shipped-total" and s.epoch == 1)
    row = rows[(rows.task_id == "shipped-total") & (rows.epoch == 0)].iloc[0]
    trajectory = read_trajectory(results, row.sample_id)
    models = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert len(models) == row.llm_calls
    assert len([e for e in sample.events if isinstance(e, ToolEvent)]) == row.tool_calls
    assert [e.name for e in sample.events if isinstance(e, SpanBeginEvent)] == [f"step {n}" for n in range(row.turns)]
    first = trajectory.lm_calls[0]
    assert [m.text for m in models[0].input] == [m["content"] for m in first.messages]
    assert models[0].output.message.tool_calls[0].function == first.tool_calls[0]["name"]
    assert [e.scorer for e in sample.events if isinstance(e, ScoreEvent)] == ["success", "score"]
    assert sample.messages[-1].role == "assistant" and sample.messages[-1].text == trajectory.lm_calls[-1].output
    assert sample.metadata["scaffold_hash"] == row.scaffold_hash and sample.metadata["turns"] == row.turns


def test_a_run_that_timed_out_exports_its_limit_and_its_partial_messages(tmp_path):
    results = chain_run(tmp_path / "results", task_ids=("shipped-total",), tool_latency_s=1.0, tool_timeout_s=5.0,
                        timeout_s=1.6)
    row = read_results([results]).iloc[0]
    assert row.error_type == "timeout"
    [written] = write_inspect_logs([results], tmp_path / "logs")
    [sample] = read_log(written.path).samples
    assert (sample.limit.type, sample.limit.limit, sample.limit.reason) == ("time", 1.6, row.error_message)
    assert [e.type for e in sample.events if isinstance(e, SampleLimitEvent)] == ["time"]
    assert sample.messages[-1].role == "tool" and sample.messages[-1].text == CUT_SHORT  # the call out at the end
    assert sum(isinstance(e, ModelEvent) for e in sample.events) == row.llm_calls
    assert usage_totals(read_log(written.path)) == parquet_totals(read_results([results]))


def test_a_results_file_and_trajectories_of_older_versions_export_like_current_ones(tmp_path):
    results = chain_run(tmp_path / "results", task_ids=("shipped-total",))
    current = read_log(write_inspect_logs([results], tmp_path / "now")[0].path).samples[0]
    trajectories = results.with_name("r.trajectories.jsonl")
    old = tmp_path / "old" / "smoke"
    old.mkdir(parents=True)
    line = json.loads(trajectories.read_text().splitlines()[0])
    v4 = {k: v for k, v in line.items() if k != "events"} | {"trajectory_version": 4}
    v4 |= record_lists(read_trajectory(results, line["sample_id"]))  # steps, LM calls, tool calls in lists
    (old / "r.trajectories.jsonl").write_text(json.dumps(v4) + "\n")
    rows = read_results([results])
    write_old(old / "r.parquet", [RunRecord(**r) for r in pq.read_table(results).to_pylist()], 9)
    [written] = write_inspect_logs([old / "r.parquet"], tmp_path / "logs")
    sample = read_log(written.path).samples[0]
    assert sample.scores["success"].value == current.scores["success"].value == ("C" if rows.success[0] else "I")
    assert [m.text for m in sample.messages] == [m.text for m in current.messages]
    assert sum(isinstance(e, ModelEvent) for e in sample.events) == rows.llm_calls[0]
    assert sample.metadata["timeout_s"] is None  # a v10 column: null in a v9 file


def test_a_row_without_its_trajectory_line_exports_with_its_numbers(tmp_path):
    results = chain_run(tmp_path / "results", task_ids=("shipped-total",))
    results.with_name("r.trajectories.jsonl").unlink()
    [written] = write_inspect_logs([results], tmp_path / "logs")
    [sample] = read_log(written.path).samples
    assert (sample.input, sample.events, sample.messages) == (NO_TRAJECTORY, [], [])
    assert usage_totals(read_log(written.path)) == parquet_totals(read_results([results]))


def test_code_runs_become_sandbox_events_with_their_code_and_output():
    facts = RunFacts(datetime(2026, 1, 1, tzinfo=UTC), {"agent": "m"}, "27", "27", {})
    run = CodeExecution(code="print(27)", stdout="27\n", duration_s=0.5)
    events = inspect_events([CodeEvent(run, step=0, t=1.0)], facts)
    [sandbox] = [e for e in events if isinstance(e, SandboxEvent)]
    assert (sandbox.cmd, sandbox.input, sandbox.output, sandbox.result) == ("python", "print(27)", "27\n", 0)
    assert sandbox.working_start == 0.5 and sandbox.span_id == "code-1"  # its own span, inside its step's
    [code_span] = [e for e in events if isinstance(e, SpanBeginEvent) and e.id == "code-1"]
    assert code_span.parent_id == "step-0"


def test_two_runs_of_one_arm_share_its_log_with_each_sample_named_by_its_run(tmp_path):
    first = chain_run(tmp_path / "results", run_id="a", task_ids=("shipped-total",))
    second = chain_run(tmp_path / "results", run_id="b", task_ids=("shipped-total",))
    [written] = write_inspect_logs([first, second], tmp_path / "logs")
    log = read_log(written.path)
    assert log.eval.run_id == "a,b"
    assert sorted(s.id for s in log.samples) == ["a:shipped-total", "b:shipped-total"]
