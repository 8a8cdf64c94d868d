"""The results file's schema, declared once: each RunRecord field is a column, with its arrow type and description
beside it (`column`), and SCHEMA and COLUMNS are read from those fields. Rule: adding a column, removing one,
renaming one, changing a type or reordering columns bumps SCHEMA_VERSION and adds an entry to UPGRADES
(harness.run.schema_upgrades) that turns a table of the previous version into the new one, so results written by
older harness versions stay readable (and comparable with a baseline); files of a newer version than this harness
knows are refused (harness.run.records reads and writes the files).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa

from harness.agents.arms import ARM_NAMES
from harness.agents.bridges import BRIDGE_ARMS
from harness.agents.bridges.js_arms import JS_ARMS
from harness.agents.scaffold import FIRING_COLUMNS
from harness.tasks.task import TOOL_CALLERS
from harness.trace.vocab import ERROR_TYPES, ErrorType, error_types_text

SCHEMA_VERSION = 15


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
    v10 default to None (not recorded)."""

    schema_version: int = column(pa.int32(), "version of this schema")
    run_id: str = column(pa.string(), "one `harness run` invocation")
    sample_id: str = column(pa.string(), "task_id/arm/model/epoch: unique within a run")
    suite: str = column(pa.string(), "suite name")
    task_id: str = column(pa.string(), "task id, unique in the suite")
    task_hash: str = column(
        pa.string(), "content hash of the task definition (suite.Task.content_hash); empty before v2")
    category: str = column(pa.string(), "task category, for grouping")
    arm: str = column(pa.string(), f"an arm of harness.agents.arms (built in: {', '.join(ARM_NAMES)}; frameworks' "
                      f"agents, an extra each: {', '.join(a.name for a in BRIDGE_ARMS)}; JavaScript code modes, after harness "
                      f"setup --js-codemodes: {', '.join(a.name for a in JS_ARMS)}), one registered from "
                      "outside, or one named by what runs it (agent:MODULE:FUNCTION, cmd:COMMAND)")
    arm_kind: str = column(pa.string(), "where the arm comes from: builtin, python (a function from outside the "
                           "package) or command (cmd:); builtin before v11", default="builtin")
    arm_source: str = column(pa.string(), "what is behind the arm: harness==VERSION for a built-in one, the "
                             "package and version behind a function (or its module), the command; before v11 the "
                             "row's harness version", default="")
    model: str = column(pa.string(), "model string as given to --model")
    epoch: int = column(pa.int32(), "repeat index, 0-based")
    program_hash: str = column(
        pa.string(), "content hash of an optimized program; empty for the built-in prompt")
    scaffold: str = column(
        pa.string(), "the scaffold the run was under (harness.agents.scaffold: plain, guided or a file's "
        "name); 'unrecorded' before v5")
    scaffold_hash: str = column(
        pa.string(), "content hash of the scaffold's rules (Scaffold.hash); empty before v5")
    scaffold_applied: bool = column(
        pa.bool_(), "whether the scaffold shaped the arm: false for an agent from outside, measured as its own "
        "code builds it (its scaffold is then `own`, its firing counts null); true before v11", default=True)
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
    cache_mode: str = column(
        pa.string(), "which stored answers the run's LM calls could reuse (--cache): resume (only its own run's, "
        "when resumed), replay (any run's), off (none); empty before v14, when a run with the cache on reused any "
        "earlier run's answers", default="")
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
        "context_overflow before it is sent); null: unknown (nothing refused), or before v12", default=None)
    agent_isolation: str = column(
        pa.string(), "where an agent from outside ran: `process` (a process group of its own per run: every command, "
        "and a Python agent by default), `in-process` (a Python agent in the harness's process, "
        "--agent-isolation in-process, for debugging; every Python agent before v13); empty for a built-in arm",
        default="")
    agent_memory_mb: int | None = column(
        pa.int64(), "the address-space limit of a Python agent's process in MB (--agent-memory; passing it ends the "
        "run as resource_limit); null: no limit, not a Python agent, or before v13", default=None)
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
        pa.string(), "the model that judged the run for its scorer (--judge-model: rubric, claims, tau2's "
        "natural-language assertions); empty where no judge was called or asked, and before v9")
    judge_calls: int | None = column(pa.int32(), "the judge model's LM calls; null where no judge was called")
    judge_prompt_tokens: int | None = column(
        pa.int64(), "the judge's prompt tokens (provider-reported, else counted), not in prompt_tokens, "
        "which are the agent's; null where no judge was called")
    judge_completion_tokens: int | None = column(
        pa.int64(), "the judge's completion tokens; null where no judge was called")
    judge_time_s: float | None = column(
        pa.float64(), "wall time inside the judge's LM calls, not in lm_time_s; null where no judge was "
        "called")
    judge_cost_usd: float | None = column(
        pa.float64(), "USD for the judge's LM calls (priced as cost_usd is, not in it); null where no judge was "
        "called, a price is unknown, or before v15")
    judge_prompt_hash: str = column(
        pa.string(), "hash of the judge instructions the task's scorer sends (rubric, claims); empty for a scorer "
        "with no judge of its own, and before v15")
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
