"""Where the endpoints' server logs: a file per process, never the terminal (named in each run's manifest)."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from harness.env import cache_dir


@functools.cache
def endpoints_log() -> Path:
    """This process's log of the endpoints' server (its warnings and errors, never the terminal's): one file per
    process under <harness cache>/endpoint-logs, named in each run's manifest."""
    return cache_dir() / "endpoint-logs" / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
