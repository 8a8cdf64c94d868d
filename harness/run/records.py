"""One row per run (task x arm x model x epoch): the RunRecord, its Parquet schema, and the result store.

The schema is declared once, here: each RunRecord field is a column, with its arrow type and description beside
it (`column`), and SCHEMA and COLUMNS are read from those fields. Rule: adding a column, removing one, renaming one,
changing a type or reordering columns bumps SCHEMA_VERSION and adds an entry to UPGRADES
(harness.run.schema_upgrades) that turns a table of the previous version into the new one, so results written by
older harness versions stay readable (and comparable with a baseline); files of a newer version than this harness
knows are refused.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from harness.agents.arms import ARMS
from harness.agents.scaffold import FIRING_COLUMNS
from harness.errors import UserError
from harness.files import atomic_write
from harness.run.schema_upgrades import UPGRADES, as_current_version
from harness.tasks.task import TOOL_CALLERS
from harness.trace.trajectory import Trajectory, trajectory_from_json
from harness.trace.vocab import ERROR_TYPES, ErrorType, error_types_text

SCHEMA_VERSION = 11


def column(arrow_type: pa.DataType, description: str, default: Any = MISSING) -> Any:
    """A RunRecord field that is also a Parquet column: its arrow type and what it means travel in the field's
    metadata, from which SCHEMA, COLUMNS and docs/results-schema.md are read (so they cannot disagree)."""
    return field(default=default, metadata={"arrow_type": arrow_type, "description": description})


def firing_column(name: str) -> Any:
    """A column counting how often scaffold rules fired, described by harness.agents.scaffold.FIRING_COLUMNS."""
    rules, description = FIRING_COLUMNS[name]
    return column(pa.int32(), f"{description} (scaffold rules: {', '.join(rules)}); null before v5")


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One run's row. Each field is a column of the results file, in the file's order, declared with its arrow
    type and description (every number says where it came from). Construct it by keyword; the columns added in
    v10 and v11 default to None (not recorded)."""

    schema_version: int = column(pa.int32(), "version of this schema")
    run_id: str = column(pa.string(), "one `harness run` invocation")
    sample_id: str = column(pa.string(), "task_id/arm/model/epoch: unique within a run")
    suite: str = column(pa.string(), "suite name")
    task_id: str = column(pa.string(), "task id, unique in the suite")
    task_hash: str = column(
        pa.string(), "content hash of the task definition (suite.Task.content_hash); empty before v2")
    category: str = column(pa.string(), "task category, for grouping")
    arm: str = column(pa.string(), f"an arm of harness.agents.arms ({', '.join(ARMS)})")
    model: str = column(pa.string(), "model string as given to --model")
    epoch: int = column(pa.int32(), "repeat index, 0-based")
    program_hash: str = column(
        pa.string(), "content hash of an optimized program; empty for the built-in prompt")
    scaffold: str = column(
        pa.string(), "the scaffold the run was under (harness.agents.scaffold: plain, guided or a file's "
        "name); 'unrecorded' before v5")
    scaffold_hash: str = column(
        pa.string(), "content hash of the scaffold's rules (Scaffold.hash); empty before v5")
    data_size: int | None = column(pa.int64(), "data size the task runs at (scale suite), null otherwise")
    catalogue_size: int | None = column(
        pa.int64(), "tools in the catalogue the task ran with (catalogue suite), null otherwise and before v10",
        default=None)
    success: bool = column(pa.bool_(), "scorer passed")
    score: float = column(pa.float64(), "scorer value in [0, 1]")
    score_reason: str = column(pa.string(), "scorer's explanation")
    answer: str = column(pa.string(), "the agent's final answer")
    expected: str = column(pa.string(), "expected answer, JSON-encoded")
    error_type: ErrorType | Literal[""] = column(
        pa.string(), "empty when the run ended with a final answer; else why it ended without one: "
        + error_types_text())
    error_message: str = column(pa.string(), "one line describing the error")
    prompt_tokens: int = column(pa.int64(), "prompt tokens summed over LM calls, from `token_source`")
    completion_tokens: int = column(pa.int64(), "completion tokens summed over LM calls, from `token_source`")
    total_tokens: int = column(pa.int64(), "prompt + completion tokens")
    token_source: str = column(
        pa.string(), "provider (reported by the model) or tiktoken:cl100k_base (counted here)")
    cost_usd: float | None = column(
        pa.float64(), "USD for the run's LM calls at the model's price; null when the price is unknown")
    cost_source: str = column(
        pa.string(), "where the price came from (LiteLLM's bundled cost map, or no charge)")
    tiktoken_prompt_tokens: int = column(
        pa.int64(), "model-independent count (cl100k_base) of every prompt the LM saw")
    tiktoken_completion_tokens: int = column(pa.int64(), "cl100k_base count of the LM's own output")
    context_tool_definition_tokens: int = column(
        pa.int64(), "cl100k_base tokens of tool definitions/stubs in prompts, and (since v8) of tool "
        "documentation the run's code printed: printed lines that are lines of the sandbox's tool files or "
        "of the stubs a schema lookup returns (docs/arms.md)")
    context_tool_result_tokens: int = column(
        pa.int64(), "cl100k_base tokens of tool results/observations in prompts (tool documentation printed "
        "in them counted above, not here)")
    context_task_tokens: int = column(
        pa.int64(), "cl100k_base tokens of task, instructions (the arm's, and a task's system instructions) "
        "and scaffolding in prompts")
    reused_prompt_tokens: int = column(
        pa.int64(), "prompt tokens not evaluated because a cache held them: the embedded engine's context "
        "or prefix cache, or the provider's prompt cache (each LM call in the trajectory says which)")
    llm_calls: int = column(pa.int32(), "LM calls made")
    cached_llm_calls: int = column(pa.int32(), "LM calls answered by the response cache")
    lm_retries: int = column(pa.int32(), "transient LM errors retried")
    tool_calls: int = column(pa.int32(), "MCP tool calls made")
    tool_errors: int = column(pa.int32(), "MCP tool calls that returned an error")
    abandoned_tool_calls: int | None = column(
        pa.int32(), "tool calls abandoned at their timeout (tool_timeout_s) whose server was then closed or "
        "killed; null before v10", default=None)
    max_tool_result_mb: float | None = column(
        pa.float64(), "the run's limit on one tool result (--max-tool-result-mb, MB of UTF-8 text): a "
        "larger result was a tool error; null: no limit (every run before v6)")
    tool_latency_s: float | None = column(
        pa.float64(), "seconds added to every tool call on the host (--tool-latency), as a remote server's "
        "round trip; part of tool_time_s and of each call's timeout; null before v7")
    timeout_s: float | None = column(
        pa.float64(), "the run's time limit in seconds (--timeout); null before v10", default=None)
    tool_timeout_s: float | None = column(
        pa.float64(), "each tool call's time limit in seconds (--tool-timeout), tool_latency_s included; "
        "null before v10", default=None)
    max_turns: int | None = column(
        pa.int32(), "the run's turn limit as applied: the scaffold's turn_limit, else the task's max_turns; "
        "null before v10", default=None)
    max_tokens_per_run: int | None = column(
        pa.int64(), "the run's token limit (--max-tokens-per-run; passing it ends the run as token_limit); "
        "null: no limit, or before v10", default=None)
    max_cost_per_run: float | None = column(
        pa.float64(), "the run's cost limit in USD (--max-cost-per-run; passing it ends the run as "
        "cost_limit); null: no limit, or before v10", default=None)
    context_window: int | None = column(
        pa.int64(), "the model's context window in tokens that every LM call's prompt had to fit (--context-window, "
        "else the embedded model's context or LiteLLM's model table; a prompt over it ends the run as "
        "context_overflow before it is sent); null: unknown (nothing refused), or before v11", default=None)
    tool_callers: str = column(
        pa.string(), "who may call each server's tools in an arm offering both ways "
        f"(`crm={'+'.join(TOOL_CALLERS)}`: native calls and code in the sandbox); empty before v7")
    turns: int = column(
        pa.int32(), "agent turns: one LM call and the action it chose (a tool call, or a code block)")
    tool_actions: int | None = column(
        pa.int32(), "turns that called tools themselves (the final_answer tool not counted); null before v7")
    code_actions: int | None = column(
        pa.int32(), "turns that ran code in the sandbox (a code block, a code tool call); null before v7")
    parallel_tool_calls: bool | None = column(
        pa.bool_(), "whether the run's scaffold let the arm run every native tool call of a reply "
        "(parallel_tool_calls); null for arms that never do (harness.agents.arms: Arm.parallel_calls); "
        "before v7: false for the arms that do (they ran one call per turn then)")
    parallel_turns: int | None = column(
        pa.int32(), "turns that ran more than one tool call from one reply; null where parallel_tool_calls "
        "is")
    tool_files_read: int | None = column(
        pa.int32(), "tool modules (servers/<server>/<tool>.py) the run's code opened, distinct, counted in "
        "the sandbox (indexes not counted); null for arms without tool files and before v8")
    repeated_actions: int = column(
        pa.int32(), "turns whose action and outcome were identical to an earlier turn's")
    answer_attempts: int = column(
        pa.int32(), "answers the run gave that were taken (not refused by a scaffold rule): under "
        "answer_feedback each rejected one and the accepted one, else 1 if the run ended with an answer and "
        "0 if not (so before v8)")
    policy_violations: int = column(pa.int32(), "sandbox guardrail violations")
    answers_refused: int | None = firing_column("answers_refused")
    ids_refused: int | None = firing_column("ids_refused")
    repeat_notes: int | None = firing_column("repeat_notes")
    repeat_stops: int | None = firing_column("repeat_stops")
    result_notes: int | None = firing_column("result_notes")
    constant_answers: int | None = firing_column("constant_answers")
    echoed_values: int | None = firing_column("echoed_values")
    action_only_turns: int | None = firing_column("action_only_turns")
    observations_truncated: int | None = firing_column("observations_truncated")
    session: str | None = column(
        pa.string(), "the suite's session the task ran in (its tasks run in order, sharing skills/ and "
        "workspace/: harness.agents.sessions); null outside a session and before v8")
    session_position: int | None = column(
        pa.int32(), "0-based position of the task in its session's chain as run; null outside one")
    skills_available: str | None = column(
        pa.string(), "skills (comma-separated names) in the session's index when the task started; null "
        "where not recorded: outside a session, skills off, an arm without a sandbox that keeps them "
        "(harness.agents.sessions), or a task whose lease did not end (a timeout)")
    skills_saved: str | None = column(
        pa.string(), "skills the task added or changed under skills/ (comma-separated); null as "
        "skills_available")
    skills_used: str | None = column(
        pa.string(), "skills available at the start that the task's code imported (comma-separated); null "
        "as skills_available")
    workspace_files: int | None = column(
        pa.int32(), "files under workspace/ when the task ended; null outside a session, with the workspace "
        "off, or where skills_available is")
    user_model: str = column(
        pa.string(), "the model that played a conversation task's simulated user (--user-model); empty for "
        "a task without a user, and before v8")
    user_turns: int | None = column(
        pa.int32(), "the simulated user's messages (its opening included); null without a user")
    user_prompt_tokens: int | None = column(
        pa.int64(), "the user model's prompt tokens (provider-reported, else counted), not in "
        "prompt_tokens, which are the agent's; null without a user")
    user_completion_tokens: int | None = column(
        pa.int64(), "the user model's completion tokens; null without a user")
    user_time_s: float | None = column(
        pa.float64(), "wall time inside the user model's LM calls, not in lm_time_s; null without a user")
    judge_model: str = column(
        pa.string(), "the model that judged the run for its scorer (--judge-model: tau2's natural-language "
        "assertions); empty where no judge was called, and before v9")
    judge_calls: int | None = column(pa.int32(), "the judge model's LM calls; null where no judge was called")
    judge_prompt_tokens: int | None = column(
        pa.int64(), "the judge's prompt tokens (provider-reported, else counted), not in prompt_tokens, "
        "which are the agent's; null where no judge was called")
    judge_completion_tokens: int | None = column(
        pa.int64(), "the judge's completion tokens; null where no judge was called")
    judge_time_s: float | None = column(
        pa.float64(), "wall time inside the judge's LM calls, not in lm_time_s; null where no judge was "
        "called")
    latency_s: float = column(pa.float64(), "wall time of the run")
    lm_time_s: float = column(pa.float64(), "wall time inside LM calls (cached calls included)")
    tool_time_s: float = column(pa.float64(), "wall time inside MCP tool calls")
    sandbox_time_s: float = column(
        pa.float64(), "wall time executing code in the sandbox, tool calls excluded")
    overhead_s: float = column(pa.float64(), "latency_s minus LM, tool, sandbox, user-model and judge time")
    cold_start_s: float | None = column(
        pa.float64(), "seconds of one-time start-up this run waited for that later runs do not (a sandbox "
        "booting, a reference traced for scripted:reference, the first evaluation of a shared prompt "
        "prefix); not part of latency_s; null before v10", default=None)
    started_at: datetime = column(pa.timestamp("us", tz="UTC"), "when the run started")
    harness_version: str = column(pa.string(), "harness package version")
    git_sha: str = column(pa.string(), "commit of the harness checkout, empty if unknown")
    trajectory_ref: str = column(
        pa.string(), "FILE#sample_id of this run's trajectory (JSONL next to the Parquet)")

    def __post_init__(self) -> None:
        # a closed vocabulary: an error type nobody declared would reach reports and gates undocumented
        if self.error_type and self.error_type not in ERROR_TYPES:
            raise ValueError(f"unknown error_type {self.error_type!r} (known: {', '.join(ERROR_TYPES)})")

    def to_row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in COLUMNS}  # shallow: asdict's deep copy is 10x slower


# Column -> (arrow type, what it means), in the file's order: read from RunRecord's fields.
COLUMNS: dict[str, tuple[pa.DataType, str]] = {
    f.name: (f.metadata["arrow_type"], f.metadata["description"]) for f in fields(RunRecord)}

SCHEMA = pa.schema(
    [pa.field(name, dtype) for name, (dtype, _) in COLUMNS.items()],
    metadata={"harness_schema_version": str(SCHEMA_VERSION)},
)

assert [name for name in COLUMNS if name in FIRING_COLUMNS] == list(FIRING_COLUMNS), \
    "RunRecord needs a firing_column for each of FIRING_COLUMNS, in their order"


def sample_id(task_id: str, arm: str, model: str, epoch: int) -> str:
    return f"{task_id}/{arm}/{model}/{epoch}"


def encode_expected(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))


assert set(UPGRADES) == set(range(1, SCHEMA_VERSION)), "every older schema version needs its upgrade step"


def _upgrade(table: pa.Table, version: int) -> pa.Table:
    for step in range(version, SCHEMA_VERSION):
        table = UPGRADES[step](table)
    return table.replace_schema_metadata(SCHEMA.metadata).cast(SCHEMA)


def read_table(path: Path) -> pa.Table:
    """Read one results file, refusing anything that is not a harness results file of a known version; files of
    an older schema version are upgraded in memory (the file itself is left as it is), and a file that lost its
    metadata but has the current columns is read as the current version."""
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such results file") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    version = (table.schema.metadata or {}).get(b"harness_schema_version")
    if version is None:
        return as_current_version(table, path, SCHEMA)
    if not version.isdigit() or not 1 <= int(version) <= SCHEMA_VERSION:
        raise UserError(f"{path}: results schema version {version.decode(errors='replace')}, this harness reads "
                        f"versions 1 to {SCHEMA_VERSION} (upgrade the harness to read it)")
    if int(version) < SCHEMA_VERSION:
        return _upgrade(table, int(version))
    if table.schema.names != SCHEMA.names:  # a development build's file that says it is this version, and is not
        missing = [name for name in SCHEMA.names if name not in table.schema.names]
        raise UserError(f"{path}: says results schema version {SCHEMA_VERSION} but its columns differ from this "
                        f"harness's ({', '.join(missing[:3]) or 'their order'}{' ...' if len(missing) > 3 else ''}"
                        f"{' missing' if missing else ''}): written by another build of the harness; run it again")
    return table


def results_files(paths: list[Path]) -> list[Path]:
    """The results files named, and those under the folders named."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("**/*.parquet")))
        elif path.exists():
            files.append(path)
        else:
            raise UserError(f"{path}: no such results file or folder")
    if not files:
        raise UserError(f"no results files found in {', '.join(map(str, paths))}")
    return files


def read_results(paths: list[Path]):
    """Results files (or folders of them) as one pandas DataFrame."""
    import pandas as pd

    return pd.concat([read_table(f).to_pandas() for f in results_files(paths)], ignore_index=True)


class ResultStore:
    """The Parquet file of one run plus its trajectories (JSONL).

    Each finished run appends its trajectory line at once (fsync'd). Parquet cannot be appended to, so the
    file is rewritten atomically (temp file + rename: a crash never leaves a corrupt file) at most every
    `flush_interval_s` and on `flush()`; the runner flushes on every exit path. After a hard crash, runs
    finished since the last flush are simply run again on resume. Reopening an existing run keeps its rows.
    """

    def __init__(self, out_dir: Path, suite: str, run_id: str, flush_interval_s: float = 1.0):
        self.path = out_dir / suite / f"{run_id}.parquet"
        self.trajectory_path = out_dir / suite / f"{run_id}.trajectories.jsonl"
        self.flush_interval_s = flush_interval_s
        self._rows: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self._last_flush = time.monotonic()
        for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # atomic_write's, left by a crash
            stale.unlink(missing_ok=True)
        if self.path.exists():
            self._rows = {row["sample_id"]: row for row in read_table(self.path).to_pylist()}

    @property
    def done(self) -> set[str]:
        """The samples that need no run: every one with a row, but a run that was interrupted (run again on resume,
        its new row replacing the one it left)."""
        return {sample for sample, row in self._rows.items() if row.get("error_type") != "interrupted"}

    @property
    def records(self) -> list[RunRecord]:
        return [RunRecord(**row) for row in self._rows.values()]

    def trajectory_ref(self, sample: str) -> str:
        return f"{self.trajectory_path.name}#{sample}"

    def add(self, record: RunRecord, trajectory: Trajectory) -> None:
        """Record one finished run: its trajectory line now (harness.trace.trajectory's format, its version
        inside; the sample id first, so a reader finds a line without parsing it), its row with the next flush."""
        self.trajectory_path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"sample_id": record.sample_id, **trajectory.to_json()}, default=str)
        with open(self.trajectory_path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._rows.pop(record.sample_id, None)
        self._rows[record.sample_id] = record.to_row()
        self._dirty = True
        if time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        if self._dirty:
            write_rows(self.path, list(self._rows.values()))
            self._dirty = False
        self._last_flush = time.monotonic()


def read_trajectory(results_file: Path, sample: str) -> Trajectory:
    """The trajectory of one run (the last one written for that sample), from the JSONL next to the Parquet; a
    line of an older trajectory version is upgraded in memory."""
    path = results_file.with_name(results_file.name.replace(".parquet", ".trajectories.jsonl"))
    found = None
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            if entry.get("sample_id") == sample:
                found = entry
    if found is None:
        raise UserError(f"{path}: no trajectory for {sample}")
    return trajectory_from_json(found)
