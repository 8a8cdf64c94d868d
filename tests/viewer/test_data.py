"""The viewer's data: every row of the results files, each run's trajectory found by its byte offset."""

import json

import pytest

from harness.errors import UserError
from harness.run.records import ResultStore
from harness.viewer.data import load_index, run_payload, script
from tests.run.test_records import make_record, make_trajectory


def store_with(tmp_path, samples: list[str]) -> ResultStore:
    store = ResultStore(tmp_path, "s", "r1")
    for n, sample in enumerate(samples):
        store.add(make_record(sample_id=sample, task_id=sample.split("/")[0]), make_trajectory(prompt=sample, answer=str(n)))
    store.flush()
    return store


def test_every_row_is_indexed_with_its_own_trajectory(tmp_path):
    store_with(tmp_path, ["t1/direct/m/0", "t2/direct/m/0", "t3/direct/m/0"])
    index = load_index([tmp_path])
    assert [r["task_id"] for r in index.rows] == ["t1", "t2", "t3"]
    assert [run_payload(index, i)["prompt"] for i in range(3)] == ["t1/direct/m/0", "t2/direct/m/0", "t3/direct/m/0"]


def test_a_sample_written_twice_shows_its_last_trajectory(tmp_path):
    store_with(tmp_path, ["t1/direct/m/0", "t1/direct/m/0"])  # a resumed run wrote the sample again
    index = load_index([tmp_path])
    assert len(index.rows) == 1 and run_payload(index, 0)["answer"] == "1"


def test_a_line_cut_short_by_a_crash_and_a_missing_line_are_tolerated(tmp_path):
    store = store_with(tmp_path, ["t1/direct/m/0", "t2/direct/m/0"])
    lines = store.trajectory_path.read_text().splitlines()
    store.trajectory_path.write_text(lines[0][:40] + "\n" + lines[1] + "\n")
    index = load_index([store.path])
    assert run_payload(index, 0) == {"missing": True}
    assert run_payload(index, 1)["prompt"] == "t2/direct/m/0"


def test_rows_are_plain_json_with_long_text_cut(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(answer="x" * 1000, cost_usd=None), make_trajectory())
    store.flush()
    row = load_index([tmp_path]).rows[0]
    assert len(row["answer"]) == 301 and row["cost_usd"] is None
    assert row["started_at"].startswith("2026-01-01") and row["file"] == "r1.parquet"
    assert json.loads(script("runs", row).decode()[len('harnessData("runs", '):-3])["answer"] == row["answer"]


def test_no_results_is_one_line(tmp_path):
    with pytest.raises(UserError, match="no results files found"):
        load_index([tmp_path])
    with pytest.raises(UserError, match="no such results file or folder"):
        load_index([tmp_path / "nope.parquet"])


def test_the_table_data_carries_the_scaffold_and_the_registrys_arm_order(tmp_path):
    from harness.agents.arms import ARM_NAMES
    from harness.viewer.data import index_payload

    store_with(tmp_path, ["t1/direct/m/0"])
    payload = index_payload(load_index([tmp_path]), None)
    assert payload["arms"] == list(ARM_NAMES) and payload["rows"][0]["scaffold"] == "plain"


def test_a_run_row_carries_the_tool_latency_it_was_run_with(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(tool_latency_s=0.2), make_trajectory())
    store.flush()
    assert load_index([tmp_path]).rows[0]["tool_latency_s"] == 0.2


def test_a_run_row_carries_its_session_place_and_what_it_saved_and_reused(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(session="net-revenue", session_position=1, skills_available="net_revenue",
                          skills_saved="", skills_used="net_revenue", workspace_files=0), make_trajectory())
    store.flush()
    row = load_index([tmp_path]).rows[0]
    assert (row["session"], row["session_position"], row["skills_used"]) == ("net-revenue", 1, "net_revenue")
