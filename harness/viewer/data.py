"""What the viewer shows, read from results files: one compact row per run for the table (all of them, sent at
once), and each run's trajectory on demand (one JSONL line, found by its byte offset, never the whole file).

The browser loads both as small scripts calling `harnessData(key, value)`, so the same files work from the
local server and from a static copy opened as file:// (where fetch() of a JSON file is refused)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents.arms import ARM_NAMES
from harness.errors import UserError
from harness.run.records import read_table, results_files
from harness.trace.trajectory import TRAJECTORY_VERSION, record_lists, trajectory_from_json
from harness.version import __version__

# Row columns the table, its filters and the task page read (the rest stays in the Parquet file).
ROW_COLUMNS = ("sample_id", "run_id", "suite", "task_id", "category", "arm", "model", "program_hash", "scaffold", "epoch",
               "success", "score", "score_reason", "answer", "expected", "error_type", "error_message",
               "prompt_tokens", "completion_tokens", "total_tokens", "reused_prompt_tokens", "token_source",
               "cost_usd", "cost_source", "llm_calls", "cached_llm_calls", "tool_calls", "tool_errors", "turns",
               "repeated_actions", "policy_violations", "latency_s", "lm_time_s", "tool_time_s", "sandbox_time_s",
               "overhead_s", "tool_latency_s", "started_at", "session", "session_position", "skills_available",
               "skills_saved", "skills_used", "workspace_files", "user_model", "user_turns", "user_prompt_tokens",
               "user_completion_tokens", "user_time_s", "judge_model", "judge_calls", "judge_prompt_tokens",
               "judge_completion_tokens", "judge_time_s")
TEXT_LIMIT = 300  # answers and messages in the table are cut here; the run page shows them whole


@dataclass(frozen=True)
class TrajectoryRef:
    """Where one run's trajectory line is: its JSONL file and the line's byte span (None: no trajectory)."""

    path: Path
    offset: int
    length: int


@dataclass(frozen=True)
class RunIndex:
    rows: tuple[dict[str, Any], ...]
    trajectories: tuple[TrajectoryRef | None, ...]
    sources: tuple[str, ...]  # the results files read


def trajectory_file(results_file: Path) -> Path:
    return results_file.with_name(results_file.name.replace(".parquet", ".trajectories.jsonl"))


_DECODER = json.JSONDecoder()
_KEY = b'{"sample_id": '


def _sample_of(line: bytes) -> str | None:
    """The sample id of a trajectory line, read from its start (the runner writes it first) without parsing the
    whole line; other lines are parsed in full."""
    if not line.rstrip().endswith(b"}"):
        return None  # a line cut short by a crash
    try:
        if line.startswith(_KEY):
            value, _ = _DECODER.raw_decode(line[len(_KEY):len(_KEY) + 2000].decode("utf-8", errors="replace"))
            return value if isinstance(value, str) else None
        entry = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None  # a line cut short by a crash
    return entry.get("sample_id") if isinstance(entry, dict) else None


_VERSION = re.compile(rb'"trajectory_version": (\d+)')


def _check_version(path: Path, line: bytes) -> None:
    """Refuse a line written by a newer harness (its version is read from the line's start, where it is written)."""
    found = _VERSION.search(line, 0, 4096)
    if found is not None and int(found.group(1)) > TRAJECTORY_VERSION:
        raise UserError(f"{path}: trajectory version {found.group(1).decode()}, written by a newer harness; this one "
                        f"(harness {__version__}) reads trajectory versions 1 to {TRAJECTORY_VERSION}: upgrade the "
                        "harness to read it")


def locate_trajectories(path: Path) -> dict[str, TrajectoryRef]:
    """sample_id -> the last line written for it (a resumed run may have written a sample twice); a line of a newer
    trajectory version than this harness reads is refused."""
    found: dict[str, TrajectoryRef] = {}
    if not path.exists():
        return found
    offset = 0
    with open(path, "rb") as handle:
        for line in handle:
            sample = _sample_of(line)
            if sample is not None:
                _check_version(path, line)
                found[sample] = TrajectoryRef(path, offset, len(line))
            offset += len(line)
    return found


def _clean(value: Any) -> Any:
    """A Parquet value as JSON: NaN and NaT as null, timestamps as ISO text, long text cut."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, str) and len(value) > TEXT_LIMIT:
        return value[:TEXT_LIMIT] + "…"
    return value


def load_index(paths: list[Path]) -> RunIndex:
    """Every run of the given results files (or folders), with where its trajectory is."""
    rows: list[dict[str, Any]] = []
    refs: list[TrajectoryRef | None] = []
    files = results_files(paths)
    for file in files:
        table = read_table(file)
        located = locate_trajectories(trajectory_file(file))
        columns = {name: table.column(name).to_pylist() for name in ROW_COLUMNS}
        for i in range(table.num_rows):
            row = {name: _clean(columns[name][i]) for name in ROW_COLUMNS}
            row["file"] = file.name
            rows.append(row)
            refs.append(located.get(row["sample_id"]))
    return RunIndex(tuple(rows), tuple(refs), tuple(str(f) for f in files))


def read_trajectory_at(ref: TrajectoryRef) -> dict[str, Any]:
    with open(ref.path, "rb") as handle:
        handle.seek(ref.offset)
        return json.loads(handle.read(ref.length))


def index_payload(index: RunIndex, report_href: str | None) -> dict[str, Any]:
    """The table's data: rows (with `id`, their position, and whether a trajectory exists), the sources, and the
    arms in the registry's order (the order the viewer shows them in)."""
    rows = [{**row, "id": i, "has_trajectory": ref is not None}
            for i, (row, ref) in enumerate(zip(index.rows, index.trajectories, strict=True))]
    return {"rows": rows, "sources": list(index.sources), "report": report_href, "arms": list(ARM_NAMES)}


def run_payload(index: RunIndex, run: int) -> dict[str, Any]:
    """One run's trajectory in the current format (an older line upgraded; an empty one when the JSONL line is
    missing, e.g. a file copied without it)."""
    ref = index.trajectories[run]
    if ref is None:
        return {"missing": True}
    try:
        line = read_trajectory_at(ref)
        trajectory = trajectory_from_json(line)
        return {"sample_id": line.get("sample_id"), **trajectory.to_json(), **record_lists(trajectory)}
    except (json.JSONDecodeError, OSError, UserError):  # the file changed since it was indexed, or is too new
        return {"missing": True}


def script(key: str, value: Any) -> bytes:
    """A data script for the page: `harnessData(key, value)`."""
    return f"harnessData({json.dumps(key)}, {json.dumps(value, default=str)});\n".encode()
