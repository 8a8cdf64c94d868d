"""One embedded-model process per machine. llama.cpp gives each process a thread per core, so two such processes
at once put two threads on every core; llama.cpp's threads wait for each other at every step, and each process
runs many times slower than alone (measured in docs/experiments.md, 2026-11-26). The first process to load the
model holds an advisory lock under the harness cache for the rest of its life; a later one finds the holder's
pid there and its run says so at the start, instead of silently taking ten times as long."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

LOCK_FILE = "embedded-model.lock"
UNKNOWN_PID = 0  # the holder had not written its pid yet

_held: dict[Path, IO[str]] = {}  # lock file -> its open handle, held until the process exits
_claim_lock = threading.Lock()


def claim_machine(cache: Path) -> int | None:
    """Hold the machine's embedded-model lock for the rest of this process (a second claim is a no-op); the pid
    of another process that holds it instead (UNKNOWN_PID if unreadable), else None: claimed here, or a platform
    without flock, where nothing can be told."""
    try:
        import fcntl
    except ImportError:
        return None
    with _claim_lock:
        path = (cache / LOCK_FILE).resolve()
        if path in _held:
            return None
        cache.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (kept open: the lock lasts while it is)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            text = handle.read().strip()
            handle.close()
            return int(text) if text.isdigit() else UNKNOWN_PID
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        _held[path] = handle
        return None


def sharing_warning(cache: Path) -> str | None:
    """The line a run on the embedded model prints when another process already runs it on this machine, or
    None. With HARNESS_LOCAL_THREADS set the user has split the cores on purpose, so nothing is said."""
    holder = claim_machine(cache)
    if holder is None or os.environ.get("HARNESS_LOCAL_THREADS"):
        return None
    who = f"process {holder}" if holder != UNKNOWN_PID else "another process"
    return (f"warning: {who} already runs the embedded model on this machine; two at once each use every core "
            "and run many times slower (docs/running.md): wait for it, or split the cores with "
            "HARNESS_LOCAL_THREADS")
