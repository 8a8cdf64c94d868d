"""A suite followed while it runs: the runs in flight (their transcript files without an end line) with their events
so far, and the table's rows as they are now. `harness view`'s server answers `data/live.js` with both, and the page
asks for it every few seconds, so new rows and the runs in flight appear without reloading; a static copy has no
live data, and the page stops asking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.trace.transcript_file import read_transcript_files
from harness.viewer.data import RunIndex, load_index

PREVIEW = 300  # characters of a text shown for an event in flight


def transcript_folders(paths: list[Path]) -> list[Path]:
    """The runs' transcript folders under the paths given (a results file's sibling, or any under a folder)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.glob("**/*.transcripts") if p.is_dir())
        elif path.suffix == ".parquet":
            found.append(path.with_name(path.name.replace(".parquet", ".transcripts")))
    return found


def _clip(text: Any) -> str:
    value = str(text or "")
    return value if len(value) <= PREVIEW else value[:PREVIEW] + "…"


def _ended(line: dict[str, Any]) -> str:
    """How a run ended, in a line: its error's kind and message, else its answer."""
    error = line.get("error")
    if isinstance(error, dict):
        return f"{error.get('type')}: {_clip(error.get('message'))}"
    return _clip(line.get("answer"))


def event_summary(line: dict[str, Any]) -> dict[str, Any]:
    """One event of a run in flight as the page shows it: its kind, time, step, and a line of what it was."""
    kind = line.get("event")
    calls = ", ".join(str(c.get("name")) for c in line.get("tool_calls") or [] if isinstance(c, dict))
    text = {"model": lambda: f"{line.get('role', 'agent')}: {_clip(line.get('output') or calls)}",
            "tool": lambda: f"{line.get('tool')}({_clip(line.get('arguments'))}) → {_clip(line.get('result_preview'))}",
            "code": lambda: f"{_clip(line.get('code'))} → {_clip(line.get('stdout') or line.get('error'))}",
            "step": lambda: str((line.get("record") or {}).get("kind", "")),
            "answer": lambda: _clip(line.get("text")),
            "end": lambda: _ended(line),
            "setup": lambda: f"{line.get('what')} ({line.get('duration_s', 0):.1f} s)"}.get(str(kind), lambda: "")()
    return {"event": kind, "t": line.get("t"), "step": line.get("step"), "id": line.get("id"),
            "parent": line.get("parent"), "text": text, "cut_short": bool(line.get("cut_short"))}


def runs_in_flight(paths: list[Path]) -> list[dict[str, Any]]:
    """Every run whose transcript file has no end line yet, with its events so far."""
    runs = []
    for folder in transcript_folders(paths):
        for found in read_transcript_files(folder):
            if found.end is not None:
                continue
            start = found.start
            runs.append({**{k: start.get(k) for k in ("sample_id", "run_id", "suite", "task_id", "arm", "model",
                                                      "epoch", "started_at")},
                         "events": [event_summary(line) for line in found.events]})
    return runs


def live_index(paths: list[Path]) -> RunIndex:
    """The rows as they are now (none yet while a suite's first runs are still going)."""
    try:
        return load_index(paths)
    except UserError as exc:
        if str(exc).startswith("no results files found"):
            return RunIndex((), (), ())
        raise
