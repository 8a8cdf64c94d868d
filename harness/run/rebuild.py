"""A run's row computed again from its transcript file (harness.trace.transcript_file): the start line says what the
run was (its identity, limits, scaffold, pricing, models), the events what it did and how it ended (its answer, its
error, its score), the end line what the events do not hold: its wall time, the session columns and the servers'
logs. The results file is a cache of this projection: `harness rebuild` recomputes it after an upgrade or a fixed
count."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.run.manifest import resume_config
from harness.run.records import RunRecord, read_table, results_files, write_rows
from harness.run.row import run_context, run_row
from harness.tasks.task import Task
from harness.trace.events import event_from_dict
from harness.trace.trajectory import TRAJECTORY_VERSION, Trajectory, upgraded
from harness.trace.transcript import Transcript
from harness.trace.transcript_file import TranscriptFile, read_transcript_files


def project(found: TranscriptFile, task: Task, trajectory_ref: str) -> tuple[RunRecord, Trajectory]:
    """The row and trajectory of a finished run (its file has its end line), from its transcript file alone and the
    task it ran: the same function that computed the row at run time (harness.run.row.run_row), over the stored
    events (a file of an older trajectory version upgraded in memory first: harness.trace.trajectory.upgraded)."""
    start, end = found.start, found.end or {}
    line = upgraded({"trajectory_version": start.get("trajectory_version", TRAJECTORY_VERSION),
                     "answer": end.get("answer"), "events": list(found.events)})
    recorded = Transcript()
    recorded.events.extend(e for e in (event_from_dict(item) for item in line["events"]) if e is not None)
    run = run_context(start, task, float(end["wall_s"]), trajectory_ref, server_logs=end.get("server_logs"))
    record, trajectory = run_row(recorded, run)
    return replace(record, **(end.get("session_columns") or {})), trajectory


def rebuild(results: Path) -> tuple[int, int]:
    """Recompute the rows of one results file from its runs' transcript files, and write it again (at the current
    schema). Returns (rows recomputed, rows kept as they were: runs without a finished transcript file, recorded
    before runs wrote one)."""
    run_id, out_dir = results.stem, results.parent.parent
    suite = resume_config(run_id, out_dir).suite
    tasks = {task.id: task for task in suite.tasks}
    rows: dict[str, dict[str, Any]] = {row["sample_id"]: row for row in read_table(results).to_pylist()}
    rebuilt = 0
    for found in read_transcript_files(results.with_name(f"{run_id}.transcripts")):
        if found.end is None or "wall_s" not in found.end or found.sample_id not in rows:
            continue  # in flight when the harness stopped, or not kept (a run held back and dropped)
        task = tasks.get(str(found.start.get("task_id")))
        if task is None:
            raise UserError(f"{found.path}: task {found.start.get('task_id')!r} is not in suite {suite.name} "
                            f"({suite.path}) any more: rebuild with the suite file the run used")
        if task.content_hash != found.start.get("task_hash"):
            raise UserError(f"{found.path}: task {task.id} changed in {suite.path} since the run: rebuild with the "
                            "suite file the run used")
        record, _ = project(found, task, rows[found.sample_id]["trajectory_ref"])
        rows[found.sample_id] = record.to_row()
        rebuilt += 1
    write_rows(results, list(rows.values()))
    return rebuilt, len(rows) - rebuilt


def rebuild_all(paths: list[Path]) -> list[tuple[Path, int, int]]:
    """`harness rebuild`: every results file named (or under the folders named), rebuilt from its transcripts."""
    return [(path, *rebuild(path)) for path in results_files(paths)]

