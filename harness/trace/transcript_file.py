"""A run's own transcript file, written as the run happens: a `run_start` line (who runs what, under which limits,
scaffold and pricing), then each event as it is appended (harness.trace.events' JSON objects), then a `run_end`
line once the run's row is kept (its answer, error, score, latency, cold start, and the row itself). Every line is
flushed when written, so a hard kill (SIGKILL, OOM) loses at most the line being written; the reader never trusts a
half-written line. `--resume` reads these files: a file with its `run_end` is a finished run, one without it a run
that was in flight when the harness died (run again)."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.trace.trajectory import TRAJECTORY_VERSION, refuse_newer

RUN_START, RUN_END = "run_start", "run_end"


def transcript_file_name(sample_id: str) -> str:
    """A sample's transcript file name (its id, with the slashes and colons of model strings escaped)."""
    return quote(sample_id, safe="") + ".jsonl"


class TranscriptWriter:
    """Appends one run's lines to its file, each flushed as it is written (`flush_each` False: left to the OS's
    buffer until close, for measuring what flushing costs). Lines come from the event loop and from worker threads
    (an LM call, a sandbox's bridged tool call): a lock keeps each line whole."""

    def __init__(self, path: Path, start: dict[str, Any], flush_each: bool = True):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.flush_each = flush_each
        self._lock = threading.Lock()
        # open for the whole run; a run started again replaces what its last attempt left
        self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115
        self.write({"event": RUN_START, **start})

    def write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, default=str) + "\n"
        with self._lock:
            if self._handle.closed:
                return  # an event after the run ended (a call abandoned at the tool timeout returning late)
            self._handle.write(text)
            if self.flush_each:
                self._handle.flush()

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()


def end_transcript(path: Path, line: dict[str, Any]) -> None:
    """Append a run's end line (once its row is kept) and sync the file to disk: from then on the run is finished
    for `--resume`. Written by the process that keeps rows, whichever process ran the run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"event": RUN_END, **line}, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


@dataclass(frozen=True)
class TranscriptFile:
    """One run's transcript file as read back: its start line, its events' JSON objects in order, and its end line
    (None: the run was in flight when the harness stopped writing it)."""

    path: Path
    start: dict[str, Any]
    events: tuple[dict[str, Any], ...]
    end: dict[str, Any] | None

    @property
    def sample_id(self) -> str:
        return str(self.start.get("sample_id") or (self.end or {}).get("sample_id", ""))


def read_transcript_file(path: Path) -> TranscriptFile | None:
    """A transcript file's whole lines (a last line without its newline, or one that is not JSON, was being written
    when the harness died: it is left out). None for a file with neither a start nor an end line (the start line can
    be missing where a worker on another machine ran the run: the end line is the driver's)."""
    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
        for text in handle:
            if not text.endswith("\n"):
                break
            try:
                line = json.loads(text)
            except json.JSONDecodeError:
                continue
            if not isinstance(line, dict):
                continue
            kind = line.get("event")
            if kind == RUN_START:
                start = line
            elif kind == RUN_END:
                end = line
            else:
                events.append(line)
    if start is None and end is None:
        return None
    refuse_newer((start or {}).get("trajectory_version", TRAJECTORY_VERSION), f"{path}: ")
    return TranscriptFile(path, start or {}, tuple(events), end)


def read_end_line(path: Path, tail_bytes: int = 1 << 20) -> dict[str, Any] | None:
    """A transcript file's end line (None: the run was in flight), read from the file's tail only, so finding which
    runs finished does not parse every event of every run."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - tail_bytes))
        tail = handle.read()
    lines = tail.split(b"\n")
    for raw in reversed(lines[:-1]):  # the part after the last newline was being written, or is empty
        try:
            line = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        return line if isinstance(line, dict) and line.get("event") == RUN_END else None
    return None


def read_transcript_files(folder: Path) -> list[TranscriptFile]:
    """Every readable run transcript in `folder` (none when it does not exist)."""
    if not folder.is_dir():
        return []
    found = (read_transcript_file(path) for path in sorted(folder.glob("*.jsonl")))
    return [item for item in found if item is not None]
