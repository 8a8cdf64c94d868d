"""Each run writes its own transcript file as it happens (start line, events, end line once its row is kept), and a
reopened run restores the rows of runs that finished after the last Parquet flush before a hard kill."""

import asyncio
import json

from harness.models.scripted import policy_provider
from harness.run.records import ResultStore, read_results, read_trajectory
from harness.run.runner import Runner
from harness.trace.events import event_to_dict
from harness.trace.transcript_file import read_transcript_files
from tests.run.test_transcript_runs import chaining, config


def test_a_run_leaves_one_file_holding_its_start_its_events_and_its_end(tmp_path):
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run())
    [found] = read_transcript_files(tmp_path / "smoke" / "r.transcripts")
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    assert found.sample_id == row.sample_id
    assert found.start["arm"] == "direct" and found.start["limits"]["timeout_s"] == row.timeout_s
    assert found.start["scaffold_hash"] == row.scaffold_hash and "source" in found.start["pricing"]
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    stored = [json.loads(json.dumps(event_to_dict(e), default=str)) for e in trajectory.events]
    assert list(found.events) == stored  # the file holds every event the trajectory does, in order
    assert found.end is not None and found.end["answer"] == row.answer and found.end["latency_s"] == row.latency_s


def test_a_finished_run_whose_row_missed_the_last_flush_is_restored_from_its_transcript(tmp_path):
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run())
    results = tmp_path / "smoke" / "r.parquet"
    expected = read_results([results]).iloc[0]
    results.unlink()  # the harness died before its Parquet file was written
    store = ResultStore(tmp_path, "smoke", "r")
    assert store.done == {expected.sample_id}
    store.flush()
    restored = read_results([results]).iloc[0]
    assert restored.equals(expected)


def test_a_run_in_flight_when_the_harness_died_is_not_finished(tmp_path):
    store = ResultStore(tmp_path, "smoke", "r")
    writer = store.open_transcript("t/direct/m/0", {"task_id": "t"})
    writer.write({"event": "answer", "t": 0.1, "step": 0, "text": "x"})
    reopened = ResultStore(tmp_path, "smoke", "r")
    assert reopened.done == set() and reopened.records == []
