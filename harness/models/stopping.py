"""Stopping the embedded model's decoding when the command that runs it is stopped.

Ctrl-C or SIGTERM stops a command by raising KeyboardInterrupt in its main thread, but an LM call in flight runs
in a worker thread, and Python waits for those before it exits: with a long prompt on a CPU, half a minute or
more, while a CI runner sends SIGKILL seconds after SIGTERM. The command's signal handler calls `stop_decoding`
first; the embedded engine checks `decoding_stopped` between its decoding steps (one prompt chunk or one token)
and ends each call in flight with DecodingStopped, so the command exits within one step. The stopped calls' runs
were cancelled with the command: nothing is recorded for them, and they rerun on `--resume`.

The flag is process-wide and is only set by a command's signal handler, whose process then ends; code that uses
the harness as a library and catches the interrupt itself calls `resume_decoding` to decode again.
"""

from __future__ import annotations

import threading

_STOPPED = threading.Event()


class DecodingStopped(Exception):
    """An LM call ended by `stop_decoding`: its text is not a reply (never recorded or cached)."""


def stop_decoding() -> None:
    """End every embedded LM call in flight at its next decoding step, and refuse new ones."""
    _STOPPED.set()


def resume_decoding() -> None:
    _STOPPED.clear()


def decoding_stopped() -> bool:
    return _STOPPED.is_set()


def stopped_error() -> DecodingStopped:
    return DecodingStopped("decoding stopped: the command was interrupted")


def check_not_stopped() -> None:
    """Raise DecodingStopped once `stop_decoding` was called (called between decoding steps)."""
    if _STOPPED.is_set():
        raise stopped_error()
