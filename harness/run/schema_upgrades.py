"""The upgrade steps of the results schema (harness.run.records): each turns a table of one SCHEMA_VERSION into one
of the next, so results written by older harness versions stay readable. A step fills the columns its version
added with what older runs did (or null where they did not record it), and says which in its docstring."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from harness.agents.arms import ARMS
from harness.agents.scaffold import FIRING_COLUMNS
from harness.errors import UserError


def _insert_nulls(table: pa.Table, after: str, columns: dict[str, pa.DataType]) -> pa.Table:
    """`table` with null `columns` (name -> type), in their order, right after the column `after`."""
    position = table.schema.get_field_index(after) + 1
    for offset, (column, dtype) in enumerate(columns.items()):
        table = table.add_column(position + offset, pa.field(column, dtype), pa.nulls(len(table), dtype))
    return table


def _v1_to_v2(table: pa.Table) -> pa.Table:
    """v2 added task_hash after task_id; v1 rows cannot know it, so it is empty (unknown)."""
    position = table.schema.get_field_index("task_id") + 1
    return table.add_column(position, pa.field("task_hash", pa.string()), pa.array([""] * len(table), pa.string()))


def _v2_to_v3(table: pa.Table) -> pa.Table:
    """v3 added repeated_actions after turns; v2 runs did not count them (0), and their arms ended differently
    (a separate extract step gave the answer), which a report comparing across versions should know."""
    position = table.schema.get_field_index("turns") + 1
    return table.add_column(position, pa.field("repeated_actions", pa.int32()), pa.array([0] * len(table), pa.int32()))


def _v3_to_v4(table: pa.Table) -> pa.Table:
    """v4 added cost_usd and cost_source after token_source; v3 runs recorded no cost (null, and a source saying
    so), although their token counts can still be priced by hand."""
    position = table.schema.get_field_index("token_source") + 1
    table = table.add_column(position, pa.field("cost_usd", pa.float64()), pa.nulls(len(table), pa.float64()))
    return table.add_column(position + 1, pa.field("cost_source", pa.string()),
                            pa.array(["not recorded (schema v3)"] * len(table), pa.string()))


def _v4_to_v5(table: pa.Table) -> pa.Table:
    """v5 added the scaffold (name and hash) after program_hash, and the rule firing counts after
    policy_violations; v4 runs did not record their rules (they changed between versions), so the name says
    'unrecorded', the hash is empty (unknown) and the counts are null."""
    position = table.schema.get_field_index("program_hash") + 1
    table = table.add_column(position, pa.field("scaffold", pa.string()), pa.array(["unrecorded"] * len(table)))
    table = table.add_column(position + 1, pa.field("scaffold_hash", pa.string()), pa.array([""] * len(table)))
    return _insert_nulls(table, "policy_violations", dict.fromkeys(FIRING_COLUMNS, pa.int32()))


def _v5_to_v6(table: pa.Table) -> pa.Table:
    """v6 added max_tool_result_mb after tool_errors; v5 runs had no limit on a tool result's size (null)."""
    return _insert_nulls(table, "tool_errors", {"max_tool_result_mb": pa.float64()})


def _v6_to_v7(table: pa.Table) -> pa.Table:
    """v7 added tool_latency_s and tool_callers after max_tool_result_mb (v6 runs added no latency but did not
    record it: null; no callers: empty); tool_actions and code_actions after turns (null); then
    parallel_tool_calls and parallel_turns: v6 runs of an arm that runs native tool calls ran one call per turn
    (false, 0), null for the other arms (and arms this harness does not know)."""
    position = table.schema.get_field_index("max_tool_result_mb") + 1
    table = table.add_column(position, pa.field("tool_latency_s", pa.float64()), pa.nulls(len(table), pa.float64()))
    table = table.add_column(position + 1, pa.field("tool_callers", pa.string()),
                             pa.array([""] * len(table), pa.string()))
    position = table.schema.get_field_index("turns") + 1
    for offset, column in enumerate(("tool_actions", "code_actions")):
        table = table.add_column(position + offset, pa.field(column, pa.int32()), pa.nulls(len(table), pa.int32()))
    native = [bool(arm in ARMS and ARMS[arm].parallel_calls) for arm in table.column("arm").to_pylist()]
    table = table.add_column(position + 2, pa.field("parallel_tool_calls", pa.bool_()),
                             pa.array([False if n else None for n in native], pa.bool_()))
    return table.add_column(position + 3, pa.field("parallel_turns", pa.int32()),
                            pa.array([0 if n else None for n in native], pa.int32()))


SESSION_COLUMNS = {"session": pa.string(), "session_position": pa.int32(), "skills_available": pa.string(),
                   "skills_saved": pa.string(), "skills_used": pa.string(), "workspace_files": pa.int32()}
USER_COLUMNS = {"user_turns": pa.int32(), "user_prompt_tokens": pa.int64(), "user_completion_tokens": pa.int64(),
                "user_time_s": pa.float64()}


def _v7_to_v8(table: pa.Table) -> pa.Table:
    """v8 added answer_attempts after repeated_actions (before v8 every run ended at its first answer, so it is 1
    for a run that ended with an answer, no error_type, and 0 for one that did not), tool_files_read after
    parallel_turns (null: no arm had tool files before v8), then before latency_s the session columns (null: v7
    runs had no sessions, every task ran on its own) and the simulated user's (v7 runs had no user: empty model,
    null counts)."""
    position = table.schema.get_field_index("repeated_actions") + 1
    attempts = [0 if error else 1 for error in table.column("error_type").to_pylist()]
    table = table.add_column(position, pa.field("answer_attempts", pa.int32()), pa.array(attempts, pa.int32()))
    table = _insert_nulls(table, "parallel_turns", {"tool_files_read": pa.int32()})
    position = table.schema.get_field_index("latency_s")
    for offset, (column, dtype) in enumerate(SESSION_COLUMNS.items()):
        table = table.add_column(position + offset, pa.field(column, dtype), pa.nulls(len(table), dtype))
    position = table.schema.get_field_index("latency_s")
    table = table.add_column(position, pa.field("user_model", pa.string()), pa.array([""] * len(table), pa.string()))
    return _insert_nulls(table, "user_model", USER_COLUMNS)


JUDGE_COLUMNS = {"judge_calls": pa.int32(), "judge_prompt_tokens": pa.int64(), "judge_completion_tokens": pa.int64(),
                 "judge_time_s": pa.float64()}


def _v8_to_v9(table: pa.Table) -> pa.Table:
    """v9 added the judge's columns after the simulated user's: a v8 run's judge calls (if it had a judge model)
    are in its trajectory only, so the model is empty and the counts null (not recorded)."""
    position = table.schema.get_field_index("user_time_s") + 1
    table = table.add_column(position, pa.field("judge_model", pa.string()), pa.array([""] * len(table), pa.string()))
    return _insert_nulls(table, "judge_model", JUDGE_COLUMNS)


LIMIT_COLUMNS = {"timeout_s": pa.float64(), "tool_timeout_s": pa.float64(), "max_turns": pa.int32(),
                 "max_tokens_per_run": pa.int64(), "max_cost_per_run": pa.float64()}


def _v9_to_v10(table: pa.Table) -> pa.Table:
    """v10 added catalogue_size after data_size (no run before it had a catalogue), abandoned_tool_calls after
    tool_errors, the run's other limits (timeout_s, tool_timeout_s, max_turns, max_tokens_per_run,
    max_cost_per_run) after tool_latency_s, and cold_start_s after overhead_s; v9 runs had limits and start-up waits
    but did not record them, nor count abandoned tool calls (null)."""
    table = _insert_nulls(table, "data_size", {"catalogue_size": pa.int64()})
    table = _insert_nulls(table, "tool_errors", {"abandoned_tool_calls": pa.int32()})
    table = _insert_nulls(table, "tool_latency_s", LIMIT_COLUMNS)
    return _insert_nulls(table, "overhead_s", {"cold_start_s": pa.float64()})


def _v10_to_v11(table: pa.Table) -> pa.Table:
    """v11 added where an arm comes from (arm_kind, arm_source after arm) and whether the scaffold shaped it
    (scaffold_applied after scaffold_hash): every arm before v11 was built in, its source the row's harness version,
    and under its scaffold."""
    rows = len(table)
    position = table.schema.get_field_index("arm") + 1
    sources = pa.array([f"harness=={v}" for v in table.column("harness_version").to_pylist()], pa.string())
    table = table.add_column(position, pa.field("arm_kind", pa.string()), pa.array(["builtin"] * rows, pa.string()))
    table = table.add_column(position + 1, pa.field("arm_source", pa.string()), sources)
    position = table.schema.get_field_index("scaffold_hash") + 1
    return table.add_column(position, pa.field("scaffold_applied", pa.bool_()), pa.array([True] * rows, pa.bool_()))


def _v11_to_v12(table: pa.Table) -> pa.Table:
    """v12 added context_window after max_cost_per_run: v11 runs checked no prompt against a window (null)."""
    return _insert_nulls(table, "max_cost_per_run", {"context_window": pa.int64()})


def _v12_to_v13(table: pa.Table) -> pa.Table:
    """v13 added agent_isolation and agent_memory_mb after context_window: before v13 a Python agent from outside
    ran in the harness's process and a command in its own, under no memory limit."""
    kinds = table.column("arm_kind").to_pylist()
    isolation = pa.array([{"python": "in-process", "command": "process"}.get(kind, "") for kind in kinds], pa.string())
    position = table.schema.get_field_index("context_window") + 1
    table = table.add_column(position, pa.field("agent_isolation", pa.string()), isolation)
    return _insert_nulls(table, "agent_isolation", {"agent_memory_mb": pa.int64()})


def _v13_to_v14(table: pa.Table) -> pa.Table:
    """v14 added cache_mode after cached_llm_calls: a v13 row does not say whether its run's cache was on, so it is
    empty (unknown)."""
    position = table.schema.get_field_index("cached_llm_calls") + 1
    return table.add_column(position, pa.field("cache_mode", pa.string()), pa.array([""] * len(table), pa.string()))


def _v14_to_v15(table: pa.Table) -> pa.Table:
    """v15 added judge_cost_usd and judge_prompt_hash after judge_time_s: a v14 run's judge cost was not priced
    (null) and only tau2's assertions had a judge, whose instructions were not hashed (empty)."""
    table = _insert_nulls(table, "judge_time_s", {"judge_cost_usd": pa.float64()})
    position = table.schema.get_field_index("judge_cost_usd") + 1
    return table.add_column(position, pa.field("judge_prompt_hash", pa.string()),
                            pa.array([""] * len(table), pa.string()))


# version -> function turning a table of that version into one of the next version
UPGRADES = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7, 7: _v7_to_v8,
            8: _v8_to_v9, 9: _v9_to_v10, 10: _v10_to_v11, 11: _v11_to_v12,
            12: _v12_to_v13, 13: _v13_to_v14, 14: _v14_to_v15}


# Loose kinds of column types: pandas writes strings back as large_string and integers with nulls as doubles.
_KINDS = {"text": (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view),
          "number": (pa.types.is_integer, pa.types.is_floating), "bool": (pa.types.is_boolean,),
          "time": (pa.types.is_timestamp,), "null": (pa.types.is_null,)}


def _kind(dtype: pa.DataType) -> str:
    if pa.types.is_dictionary(dtype):  # a pandas categorical
        dtype = dtype.value_type
    return next((kind for kind, tests in _KINDS.items() if any(test(dtype) for test in tests)), str(dtype))


def as_current_version(table: pa.Table, path: Path, schema: pa.Schema) -> pa.Table:
    """A file without schema metadata (filtered in pandas and written back with `df.to_parquet`) is read as the
    current version (`schema`) when it has every column, each of a compatible type that converts without loss; other
    columns (pandas' index) are dropped. Anything else is not a results file."""
    missing = [name for name in schema.names if name not in table.schema.names]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise UserError(f"{path}: not a harness results file (no harness_schema_version in its metadata, and no "
                        f"column '{missing[0]}'{more})")
    columns = []
    for field in schema:
        column = table.column(field.name)
        mismatch = UserError(f"{path}: not a harness results file (no harness_schema_version in its metadata, and "
                             f"column '{field.name}' is {column.type}, not {field.type})")
        if _kind(column.type) not in (_kind(field.type), "null"):
            raise mismatch
        try:
            columns.append(column.cast(field.type))  # a safe cast: 2.5 does not become an integer
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise mismatch from None
    return pa.Table.from_arrays(columns, schema=schema)
