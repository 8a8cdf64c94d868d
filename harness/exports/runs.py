"""The finished runs an export reads: each row of the results files with its trajectory, read once per file.

Rows of an older schema and trajectory lines of an older version are upgraded on read (harness.run.records,
harness.trace.trajectory), so every results file this harness can read exports. A row whose trajectory line is
missing (a results file copied without its .trajectories.jsonl) is still exported, without its transcript.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.run.records import read_table, results_files
from harness.trace.trajectory import Trajectory, trajectory_from_json


@dataclass(frozen=True)
class FinishedRun:
    """One run as an export reads it: its row (Parquet nulls and NaNs as None), its trajectory (None: no line for
    it next to the results file) and the results file it came from."""

    row: dict[str, Any]
    trajectory: Trajectory | None
    source: Path


def trajectory_lines(results_file: Path) -> dict[str, dict[str, Any]]:
    """sample_id -> the last trajectory line written for it (a resumed run may have written a sample twice), from
    the JSONL next to the results file; lines cut short by a crash are skipped."""
    path = results_file.with_name(results_file.name.replace(".parquet", ".trajectories.jsonl"))
    found: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return found
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("sample_id"), str):
                found[entry["sample_id"]] = entry
    return found


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def read_runs(paths: list[Path]) -> list[FinishedRun]:
    """Every run of the results files named (and of those under the folders named), in the files' row order."""
    runs: list[FinishedRun] = []
    for file in results_files(paths):
        lines = trajectory_lines(file)
        for row in read_table(file).to_pylist():
            row = {name: _clean(value) for name, value in row.items()}
            line = lines.get(row["sample_id"])
            runs.append(FinishedRun(row, trajectory_from_json(line) if line is not None else None, file))
    return runs
