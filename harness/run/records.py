"""One row per run (task x arm x model x epoch) in the results files: writing and reading them (older schema
versions upgraded on read), and the result store a run writes its rows and trajectories through. The schema itself
(RunRecord, COLUMNS, SCHEMA, SCHEMA_VERSION) is declared in harness.run.schema and re-exported here."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.errors import UserError
from harness.files import atomic_write
from harness.run.schema import COLUMNS, SCHEMA, SCHEMA_VERSION, RunRecord
from harness.run.schema_upgrades import UPGRADES, as_current_version
from harness.trace.trajectory import Trajectory, trajectory_from_json
from harness.trace.transcript_file import (
    TranscriptWriter,
    end_transcript,
    read_end_line,
    transcript_file_name,
)
from harness.version import __version__

__all__ = ["COLUMNS", "SCHEMA", "SCHEMA_VERSION", "ResultStore", "RunRecord", "encode_expected", "read_results",
           "read_table", "read_trajectory", "results_files", "sample_id", "write_rows"]

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
        raise UserError(f"{path}: results schema version {version.decode(errors='replace')}, written by a newer "
                        f"harness; this one (harness {__version__}) reads schema versions 1 to {SCHEMA_VERSION}: "
                        "upgrade the harness to read it")
    if int(version) < SCHEMA_VERSION:
        return _upgrade(table, int(version))
    if table.schema.names != SCHEMA.names:  # a development build's file that says it is this version, and is not
        missing = [name for name in SCHEMA.names if name not in table.schema.names]
        raise UserError(f"{path}: says results schema version {SCHEMA_VERSION} but its columns differ from this "
                        f"harness's ({', '.join(missing[:3]) or 'their order'}{' ...' if len(missing) > 3 else ''}"
                        f"{' missing' if missing else ''}): written by another build of the harness; run it again")
    return table


def results_files(paths: list[Path] | list[str] | Path | str) -> list[Path]:
    """The results files named, and those under the folders named (as the user passes them: a path or several, each
    a `str` or a `Path`)."""
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
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


def read_results(paths: list[Path] | list[str] | Path | str):
    """Results files (or folders of them) as one pandas DataFrame."""
    import pandas as pd

    return pd.concat([read_table(f).to_pandas() for f in results_files(paths)], ignore_index=True)


def row_to_json(row: dict[str, Any]) -> dict[str, Any]:
    """A row as a JSON object (its start time as ISO text)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def row_from_json(line: dict[str, Any]) -> dict[str, Any]:
    return {**line, "started_at": datetime.fromisoformat(line["started_at"])} if line.get("started_at") else line


# Columns the events do not hold yet (where a session's sandbox lease left its skills and workspace): the end line
# keeps them for a rebuilt row.
SESSION_COLUMNS = ("session", "session_position", "skills_available", "skills_saved", "skills_used", "workspace_files")


def end_line(record: RunRecord, trajectory: Trajectory) -> dict[str, Any]:
    """A run's end line in its transcript file: how it ended (answer, error, score, latency and wall time, cold
    start), what its row needs beyond the events (server logs, session columns), and the row kept for it, which a
    resumed run restores when the harness died before the row reached the Parquet file."""
    return {"sample_id": record.sample_id, "answer": record.answer,
            "error": {"type": record.error_type, "message": record.error_message} if record.error_type else None,
            "score": {"passed": record.success, "value": record.score, "reason": record.score_reason},
            "latency_s": record.latency_s, "cold_start_s": record.cold_start_s,
            "wall_s": record.latency_s + record.cold_start_s, "server_logs": dict(trajectory.server_logs),
            "session_columns": {name: getattr(record, name) for name in SESSION_COLUMNS},
            "row": row_to_json(record.to_row())}


class ResultStore:
    """The Parquet file of one run, its trajectories (JSONL) and its runs' own transcript files.

    Each run writes its transcript file as it happens (harness.trace.transcript_file: every event flushed as it is
    appended). Each finished run appends its trajectory line at once (fsync'd), then its transcript's end line
    (fsync'd): from then on it is finished. Parquet cannot be appended to, so the file is rewritten atomically (temp
    file + rename: a crash never leaves a corrupt file) at most every `flush_interval_s` and on `flush()`; the
    runner flushes on every exit path. Reopening an existing run keeps its rows, and restores from the transcripts
    the rows of runs that finished after the last flush before a hard kill (SIGKILL, OOM); a run whose transcript
    has no end line was in flight, and runs again. `flush_events` False leaves each event in the OS's buffer (to
    measure what flushing costs).
    """

    def __init__(self, out_dir: Path, suite: str, run_id: str, flush_interval_s: float = 1.0,
                 flush_events: bool = True):
        self.path = out_dir / suite / f"{run_id}.parquet"
        self.trajectory_path = out_dir / suite / f"{run_id}.trajectories.jsonl"
        self.transcripts_dir = out_dir / suite / f"{run_id}.transcripts"
        self.flush_interval_s = flush_interval_s
        self.flush_events = flush_events
        self._rows: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self._last_flush = time.monotonic()
        for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # atomic_write's, left by a crash
            stale.unlink(missing_ok=True)
        if self.path.exists():
            self._rows = {row["sample_id"]: row for row in read_table(self.path).to_pylist()}
        self._restore_finished()

    def _restore_finished(self) -> None:
        """Rows of runs whose transcript says they finished (its end line holds the row) that the Parquet file does
        not have as written: the harness died between a run's end and the next flush. Rows of an older schema are
        left to run again."""
        if not self.transcripts_dir.is_dir():
            return
        for path in sorted(self.transcripts_dir.glob("*.jsonl")):
            row = (read_end_line(path) or {}).get("row")
            if not isinstance(row, dict) or row.get("schema_version") != SCHEMA_VERSION:
                continue
            row = row_from_json(row)
            if self._rows.get(row["sample_id"]) != row:
                self._rows.pop(row["sample_id"], None)
                self._rows[row["sample_id"]] = row
                self._dirty = True

    def transcript_path(self, sample: str) -> Path:
        return self.transcripts_dir / transcript_file_name(sample)

    def open_transcript(self, sample: str, start: dict[str, Any]) -> TranscriptWriter:
        """A run's transcript file, begun with its start line; events are written as the run appends them."""
        return TranscriptWriter(self.transcript_path(sample), {"sample_id": sample, **start}, self.flush_events)

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
        end_transcript(self.transcript_path(record.sample_id), end_line(record, trajectory))
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


def read_trajectory(results_file: str | Path, sample: str) -> Trajectory:
    """The trajectory of one run (the last one written for that sample), from the JSONL next to the Parquet; a
    line of an older trajectory version is upgraded in memory."""
    results_file = Path(results_file)
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
