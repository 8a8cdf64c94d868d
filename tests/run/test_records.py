import stat
from dataclasses import fields
from datetime import UTC, datetime
from types import NoneType, UnionType
from typing import Literal, Union, get_args, get_origin, get_type_hints

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.agents.scaffold import FIRING_COLUMNS
from harness.errors import UserError
from harness.run.records import (
    COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    ResultStore,
    RunRecord,
    read_results,
    read_table,
    read_trajectory,
)
from harness.run.schema_upgrades import JUDGE_COLUMNS, LIMIT_COLUMNS, SESSION_COLUMNS
from harness.trace.trajectory import Trajectory


def make_record(**overrides) -> RunRecord:
    values = {name: None for name in COLUMNS}
    values.update(
        schema_version=SCHEMA_VERSION, run_id="r1", sample_id="t1/direct/m/0", suite="s", task_id="t1",
        task_hash="h1", category="c", arm="direct", model="m", epoch=0, program_hash="", scaffold="plain",
        scaffold_hash="0123456789abcdef", data_size=None, success=True, score=1.0, tool_callers="crm=direct+code",
        score_reason="ok", answer="42", expected="42", error_type="", error_message="", token_source="provider",
        cost_source="scripted model (no charge)", user_model="", started_at=datetime(2026, 1, 1, tzinfo=UTC), harness_version="0", git_sha="", trajectory_ref="x",
    )
    for name, (dtype, _) in COLUMNS.items():
        if values[name] is None and name not in ("data_size", "catalogue_size"):
            values[name] = (0.0 if pa.types.is_floating(dtype) else False if pa.types.is_boolean(dtype)
                            else "" if pa.types.is_string(dtype) else 0)
    values.update(overrides)
    return RunRecord(**values)


ARROW_KINDS = {str: pa.types.is_string, int: pa.types.is_integer, float: pa.types.is_floating,
               bool: pa.types.is_boolean, datetime: pa.types.is_timestamp}


def python_types(hint) -> set[type]:
    """The types a field's annotation allows (NoneType included when it is optional)."""
    if get_origin(hint) in (Union, UnionType):
        return set().union(*(python_types(arg) for arg in get_args(hint)))
    if get_origin(hint) is Literal:
        return {type(value) for value in get_args(hint)}
    return {hint}


def test_each_field_is_annotated_with_the_python_type_of_its_arrow_type():
    hints = get_type_hints(RunRecord)
    for field in fields(RunRecord):
        types = python_types(hints[field.name])
        assert all(ARROW_KINDS[t](COLUMNS[field.name][0]) for t in types - {NoneType}), field.name
        if field.default is None:
            assert NoneType in types, f"{field.name} defaults to None but its annotation does not allow it"


def make_trajectory(**overrides) -> Trajectory:
    return Trajectory(**{"task_id": "t1", "arm": "direct", "model": "m", "epoch": 0, "prompt": "", "answer": "",
                         **overrides})


def test_store_appends_rows_and_reopens_them(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(), make_trajectory(answer="1"))
    store.add(make_record(sample_id="t2/direct/m/0", task_id="t2", total_tokens=7), make_trajectory(answer="2"))
    store.flush()
    reopened = ResultStore(tmp_path, "s", "r1")
    assert reopened.done == {"t1/direct/m/0", "t2/direct/m/0"}
    frame = read_results([tmp_path])
    assert list(frame.columns) == list(COLUMNS)
    assert frame.set_index("task_id").loc["t2", "total_tokens"] == 7
    assert read_trajectory(store.path, "t2/direct/m/0").answer == "2"


def test_a_record_refuses_an_error_type_outside_the_vocabulary():
    assert make_record(error_type="max_turns").error_type == "max_turns"
    with pytest.raises(ValueError, match="unknown error_type 'wrong_answer'"):
        make_record(error_type="wrong_answer")


def test_rewriting_a_sample_replaces_its_row(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(success=False), make_trajectory())
    store.add(make_record(success=True), make_trajectory())
    store.flush()
    assert [r.success for r in ResultStore(tmp_path, "s", "r1").records] == [True]


def test_rows_reach_the_file_on_flush_or_after_the_interval(tmp_path):
    store = ResultStore(tmp_path, "s", "r1", flush_interval_s=3600)
    store.add(make_record(), make_trajectory())
    assert not store.path.exists()
    store.flush()
    assert len(read_table(store.path)) == 1
    eager = ResultStore(tmp_path, "s", "r2", flush_interval_s=0)
    eager.add(make_record(run_id="r2"), make_trajectory())
    assert len(read_table(eager.path)) == 1


def test_schema_version_is_in_the_file_metadata(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(), make_trajectory())
    store.flush()
    assert pq.read_schema(store.path).metadata[b"harness_schema_version"] == str(SCHEMA_VERSION).encode()
    assert read_table(store.path).schema.equals(SCHEMA, check_metadata=False)


def test_foreign_parquet_is_refused_in_one_line(tmp_path):
    path = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(UserError, match="not a harness results file"):
        read_table(path)


def test_corrupt_file_is_refused_in_one_line(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 definitely not parquet")
    with pytest.raises(UserError, match="not a readable Parquet file") as info:
        read_table(path)
    assert "\n" not in str(info.value)


def test_truncated_trajectory_line_is_skipped(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(), make_trajectory(answer="first"))
    store.flush()
    with open(store.trajectory_path, "a") as handle:
        handle.write('{"sample_id": "t1/direct/m/0", "answ')  # a crash mid-write
    assert read_trajectory(store.path, "t1/direct/m/0").answer == "first"


ADDED_IN = {"task_hash": 2, "repeated_actions": 3, "cost_usd": 4, "cost_source": 4, "scaffold": 5,
            "scaffold_hash": 5, **dict.fromkeys(FIRING_COLUMNS, 5), "max_tool_result_mb": 6, "tool_latency_s": 7, "tool_callers": 7,
            "tool_actions": 7, "code_actions": 7,
            "parallel_tool_calls": 7, "parallel_turns": 7, "answer_attempts": 8, "tool_files_read": 8,
            **dict.fromkeys(SESSION_COLUMNS, 8),
            **dict.fromkeys(("user_model", "user_turns", "user_prompt_tokens", "user_completion_tokens",
                             "user_time_s"), 8),
            **dict.fromkeys(("judge_model", "judge_calls", "judge_prompt_tokens", "judge_completion_tokens",
                             "judge_time_s"), 9),
            **dict.fromkeys(("catalogue_size", "abandoned_tool_calls", *LIMIT_COLUMNS, "cold_start_s"), 10),
            **dict.fromkeys(("arm_kind", "arm_source", "scaffold_applied"), 11),
            "context_window": 12, "agent_isolation": 13, "agent_memory_mb": 13,
            "cache_mode": 14, "judge_cost_usd": 15, "judge_prompt_hash": 15}  # the version that added a column


def write_old(path, record: RunRecord | list[RunRecord], version: int) -> None:
    """A results file as an older harness schema wrote it: without the columns added since."""
    missing = {name for name, added in ADDED_IN.items() if added > version}
    rows = [{k: v for k, v in r.to_row().items() if k not in missing} | {"schema_version": version}
            for r in (record if isinstance(record, list) else [record])]
    schema = pa.schema([f for f in SCHEMA if f.name not in missing], metadata={"harness_schema_version": str(version)})
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def test_a_v7_file_is_read_with_no_sessions(tmp_path):
    path = tmp_path / "v7.parquet"
    write_old(path, make_record(), 7)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert all(table.column(name).to_pylist() == [None] for name in SESSION_COLUMNS)


def upgraded(tmp_path, version: int) -> pa.Table:
    """A record written as schema `version` wrote it, read back: it has the current schema."""
    path = tmp_path / f"v{version}.parquet"
    write_old(path, make_record(), version)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    return table


def test_a_v14_file_is_read_with_no_judge_cost_or_prompt_hash(tmp_path):
    table = upgraded(tmp_path, 14)
    assert table.column("judge_cost_usd").to_pylist() == [None]
    assert table.column("judge_prompt_hash").to_pylist() == [""]
    names = table.schema.names
    assert names[names.index("judge_time_s") + 1:names.index("judge_time_s") + 3] == ["judge_cost_usd",
                                                                                        "judge_prompt_hash"]


def test_a_v8_file_is_read_with_no_judge_recorded(tmp_path):
    table = upgraded(tmp_path, 8)
    assert table.column("judge_model").to_pylist() == [""]
    assert all(table.column(name).to_pylist() == [None] for name in JUDGE_COLUMNS)
    assert table.schema.names.index("judge_model") == table.schema.names.index("user_time_s") + 1


def test_a_v9_file_is_read_with_its_values_kept_and_the_v10_columns_null(tmp_path):
    record = make_record(tool_errors=2, tool_latency_s=0.5, max_tool_result_mb=1.5, overhead_s=0.25, latency_s=3.0,
                         judge_model="j", judge_calls=4, timeout_s=60.0, cold_start_s=6.0, abandoned_tool_calls=1)
    path = tmp_path / "v9.parquet"
    write_old(path, record, 9)
    assert "timeout_s" not in pq.read_schema(path).names  # the file as schema 9 wrote it
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    new = ("catalogue_size", "abandoned_tool_calls", *LIMIT_COLUMNS, "cold_start_s", "context_window")
    v11 = {"arm_kind": "builtin", "arm_source": f"harness=={record.harness_version}", "scaffold_applied": True}
    v13 = {"agent_isolation": "", "agent_memory_mb": None, "judge_cost_usd": None, "judge_prompt_hash": ""}
    assert table.to_pylist() == [record.to_row() | {"schema_version": 9} | dict.fromkeys(new) | v11 | v13]
    names = table.schema.names
    assert names[names.index("tool_errors") + 1] == "abandoned_tool_calls"
    assert names[names.index("tool_latency_s") + 1:names.index("tool_callers")] == [
        *LIMIT_COLUMNS, "context_window", "agent_isolation", "agent_memory_mb"]
    assert names[names.index("overhead_s") + 1] == "cold_start_s"
    assert names[names.index("data_size") + 1] == "catalogue_size"


def test_a_v10_file_is_read_with_its_limits_kept_and_no_context_window(tmp_path):
    record = make_record(max_cost_per_run=2.5, context_window=16384)
    path = tmp_path / "v10.parquet"
    write_old(path, record, 10)
    assert "context_window" not in pq.read_schema(path).names
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    v11 = {"arm_kind": "builtin", "arm_source": f"harness=={record.harness_version}", "scaffold_applied": True}
    v13 = {"agent_isolation": "", "agent_memory_mb": None, "judge_cost_usd": None, "judge_prompt_hash": ""}
    assert table.to_pylist() == [record.to_row() | {"schema_version": 10, "context_window": None} | v11 | v13]
    names = table.schema.names
    assert names[names.index("max_cost_per_run") + 1] == "context_window"


def test_a_v12_file_says_its_python_agents_ran_in_process_and_its_commands_in_their_own(tmp_path):
    records = [make_record(arm_kind=kind, agent_isolation="process", agent_memory_mb=64)
               for kind in ("builtin", "python", "command")]
    path = tmp_path / "v12.parquet"
    write_old(path, records, 12)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("agent_isolation").to_pylist() == ["", "in-process", "process"]
    assert table.column("agent_memory_mb").to_pylist() == [None, None, None]
    names = table.schema.names
    assert names[names.index("context_window") + 1:names.index("context_window") + 3] == [
        "agent_isolation", "agent_memory_mb"]


def test_a_v13_file_is_read_with_an_unknown_cache_mode(tmp_path):
    record = make_record(cached_llm_calls=1, context_window=8192)
    path = tmp_path / "v13.parquet"
    write_old(path, record, 13)
    assert "cache_mode" not in pq.read_schema(path).names
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.to_pylist() == [record.to_row() | {"schema_version": 13, "cache_mode": "", "judge_cost_usd": None,
                                                    "judge_prompt_hash": ""}]
    names = table.schema.names
    assert names[names.index("cached_llm_calls") + 1] == "cache_mode"


def write_v1(path, record: RunRecord) -> None:
    write_old(path, record, 1)


def test_a_v7_file_is_read_with_no_tool_files_counted(tmp_path):
    path = tmp_path / "v7.parquet"
    write_old(path, make_record(tool_files_read=3), 7)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("tool_files_read").to_pylist() == [None]


def test_a_v6_file_is_read_with_no_callers_and_uncounted_action_kinds(tmp_path):
    path = tmp_path / "v6.parquet"
    write_old(path, make_record(tool_actions=2, code_actions=1), 6)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("tool_callers").to_pylist() == [""]
    assert table.column("tool_actions").to_pylist() == [None] and table.column("code_actions").to_pylist() == [None]
    assert table.column("max_tool_result_mb").to_pylist() == [0.0]


def test_a_v7_file_is_read_as_runs_without_a_simulated_user(tmp_path):
    table = upgraded(tmp_path, 7)
    assert table.column("user_model").to_pylist() == [""]
    assert table.column("user_turns").to_pylist() == [None] and table.column("user_time_s").to_pylist() == [None]


def test_a_v6_file_reads_direct_runs_as_one_call_per_turn_and_other_arms_as_not_applicable(tmp_path):
    path = tmp_path / "v6.parquet"
    write_old(path, [make_record(), make_record(sample_id="t1/codemode/m/0", arm="codemode")], 6)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("parallel_tool_calls").to_pylist() == [False, None]
    assert table.column("parallel_turns").to_pylist() == [0, None]


def test_a_v5_file_is_read_with_no_limit_on_tool_results(tmp_path):
    path = tmp_path / "v5.parquet"
    write_old(path, make_record(max_tool_result_mb=100.0), 5)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("max_tool_result_mb").to_pylist() == [None]
    assert table.column("tool_errors").to_pylist() == [0] and table.column("turns").to_pylist() == [0]


def test_a_v6_file_is_read_with_an_unrecorded_tool_latency(tmp_path):
    path = tmp_path / "v6.parquet"
    write_old(path, make_record(tool_latency_s=0.2, max_tool_result_mb=100.0), 6)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("tool_latency_s").to_pylist() == [None]
    assert table.column("max_tool_result_mb").to_pylist() == [100.0]


def test_a_v7_file_counts_one_answer_attempt_for_a_run_that_answered_and_none_for_one_that_did_not(tmp_path):
    path = tmp_path / "v7.parquet"
    write_old(path, [make_record(), make_record(sample_id="t2/direct/m/0", error_type="max_turns")], 7)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("answer_attempts").to_pylist() == [1, 0]


def test_a_v4_file_is_read_with_an_unrecorded_scaffold_and_unknown_firings(tmp_path):
    path = tmp_path / "v4.parquet"
    write_old(path, make_record(), 4)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("scaffold").to_pylist() == ["unrecorded"] and table.column("scaffold_hash").to_pylist() == [""]
    assert all(table.column(column).to_pylist() == [None] for column in FIRING_COLUMNS)
    assert table.column("policy_violations").to_pylist() == [0]


def test_every_firing_column_says_which_rules_it_counts():
    for column, (rules, _) in FIRING_COLUMNS.items():
        assert all(rule in COLUMNS[column][1] for rule in rules)


def test_a_v3_file_is_read_with_an_unknown_cost(tmp_path):
    path = tmp_path / "v3.parquet"
    write_old(path, make_record(), 3)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("cost_usd").to_pylist() == [None]
    assert table.column("cost_source").to_pylist() == ["not recorded (schema v3)"]
    assert table.column("token_source").to_pylist() == ["provider"]


def test_a_v2_file_is_read_with_no_repeated_actions_counted(tmp_path):
    path = tmp_path / "v2.parquet"
    write_old(path, make_record(), 2)
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("repeated_actions").to_pylist() == [0]
    assert table.column("turns").to_pylist() == [make_record().turns]


def test_a_v1_file_is_read_with_an_empty_task_hash(tmp_path):
    path = tmp_path / "old.parquet"
    write_v1(path, make_record())
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("task_hash").to_pylist() == [""] and table.column("task_id").to_pylist() == ["t1"]
    assert table.column("schema_version").to_pylist() == [1]  # rows keep the version they were written with


def test_a_run_written_as_v1_can_be_resumed_into_the_current_schema(tmp_path):
    (tmp_path / "s").mkdir()
    write_v1(tmp_path / "s" / "r1.parquet", make_record())
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(sample_id="t2/direct/m/0", task_id="t2"), make_trajectory())
    store.flush()
    table = read_table(store.path)
    assert pq.read_schema(store.path).metadata[b"harness_schema_version"] == str(SCHEMA_VERSION).encode()
    assert table.column("task_hash").to_pylist() == ["", "h1"]


def test_a_newer_schema_version_is_refused_in_one_line(tmp_path):
    path = tmp_path / "new.parquet"
    table = pa.Table.from_pylist([make_record().to_row()], schema=SCHEMA)
    pq.write_table(table.replace_schema_metadata({"harness_schema_version": str(SCHEMA_VERSION + 1)}), path)
    with pytest.raises(UserError, match=f"schema version {SCHEMA_VERSION + 1}, written by a newer harness; this one"):
        read_table(path)


def test_a_results_file_gets_the_usual_file_mode_not_the_temp_files(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(), make_trajectory())
    store.flush()
    plain = tmp_path / "plain"
    plain.write_text("")
    assert stat.S_IMODE(store.path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def rewrite_with_pandas(source, path, keep) -> None:
    """What a user does: read, filter rows in pandas, write back (the harness metadata is lost on the way)."""
    import pandas as pd

    frame = pd.read_parquet(source)
    keep(frame).to_parquet(path)


def test_a_file_rewritten_by_pandas_is_read_as_the_current_version(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    for task, size in (("t1", None), ("t2", 100), ("t3", None)):
        store.add(make_record(sample_id=f"{task}/direct/m/0", task_id=task, data_size=size), make_trajectory())
    store.flush()
    path = tmp_path / "filtered.parquet"
    rewrite_with_pandas(store.path, path, lambda frame: frame[frame.task_id != "t2"])  # index 0, 2: a column
    assert b"harness_schema_version" not in pq.read_schema(path).metadata
    table = read_table(path)
    assert table.schema.equals(SCHEMA, check_metadata=True)
    assert table.column("task_id").to_pylist() == ["t1", "t3"] and table.column("data_size").to_pylist() == [None, None]


def test_a_file_without_metadata_whose_column_has_another_kind_of_value_is_refused_in_one_line(tmp_path):
    store = ResultStore(tmp_path, "s", "r1")
    store.add(make_record(), make_trajectory())
    store.flush()
    path = tmp_path / "edited.parquet"
    rewrite_with_pandas(store.path, path, lambda frame: frame.assign(success=frame.success.map({True: "yes"})))
    with pytest.raises(UserError, match="not a harness results file .*column 'success' is large_string") as info:
        read_table(path)
    assert "\n" not in str(info.value)


def test_a_file_of_this_version_with_other_columns_is_one_line_error(tmp_path):
    path = tmp_path / "dev.parquet"
    table = SCHEMA.empty_table().drop_columns(["answer_attempts"])
    pq.write_table(table.replace_schema_metadata(SCHEMA.metadata), path)
    with pytest.raises(UserError, match="columns differ from this harness's \\(answer_attempts missing\\)"):
        read_table(path)


def test_a_v10_file_is_read_as_built_in_arms_under_their_scaffold(tmp_path):
    record = make_record(harness_version="0.1.0", catalogue_size=64, cold_start_s=1.5)
    path = tmp_path / "v10.parquet"
    write_old(path, record, 10)
    assert "arm_kind" not in pq.read_schema(path).names
    (row,) = read_table(path).to_pylist()
    assert (row["arm_kind"], row["arm_source"], row["scaffold_applied"]) == ("builtin", "harness==0.1.0", True)
    assert (row["catalogue_size"], row["cold_start_s"], row["schema_version"]) == (64, 1.5, 10)
    names = read_table(path).schema.names
    assert names[names.index("arm"):names.index("arm") + 3] == ["arm", "arm_kind", "arm_source"]
    assert names[names.index("scaffold_hash") + 1] == "scaffold_applied"


def test_results_are_read_from_paths_as_a_user_passes_them(tmp_path):
    from harness.run.records import read_results

    path = tmp_path / "r.parquet"
    write_old(path, make_record(), SCHEMA_VERSION)
    for given in (str(path), path, [str(path)], [str(tmp_path)]):
        assert len(read_results(given)) == 1
