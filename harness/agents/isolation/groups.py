"""Ending a process group: TERM, then KILL after a short grace, so an agent's processes (and whatever they left in
the background) never outlive their run. Every group still running is killed when the harness exits, whatever
interrupted it: at exit by the harness itself, and, where the harness is killed outright (SIGKILL, the OOM killer,
where no exit handler runs), by a reaper process that holds the other end of a pipe from the harness and kills
every group it was told of when the pipe closes."""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import subprocess
import sys

GRACE_S = 1.0  # what a group gets between TERM and KILL to end on its own
POLL_S = 0.02

_live: set[int] = set()  # groups started and not yet ended by end_group

# The reaper: reads "+PGID" / "-PGID" lines; at end of input (the harness ended, however) it KILLs what is left.
# It ignores the terminal's Ctrl-C (the harness handles that and ends its groups itself) and runs no harness code.
REAPER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
live = set()
for line in sys.stdin:
    sign, pgid = line[:1], int(line[1:])
    live.add(pgid) if sign == "+" else live.discard(pgid)
for pgid in live:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""
_reaper: subprocess.Popen[bytes] | None = None


def _tell_reaper(line: str) -> None:
    """Tell the reaper of a group started or ended (started on first use; a reaper that cannot start or has gone
    leaves the exit handler as the only net)."""
    global _reaper
    try:
        if _reaper is None:
            _reaper = subprocess.Popen([sys.executable, "-I", "-c", REAPER], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        assert _reaper.stdin is not None
        _reaper.stdin.write(line.encode() + b"\n")
        _reaper.stdin.flush()
    except (OSError, ValueError):
        pass


def track(pgid: int) -> None:
    """Remember a group until it is ended (killed at the harness's exit, or by the reaper if the harness is killed
    outright, if it is still there)."""
    _live.add(pgid)
    _tell_reaper(f"+{pgid}")


def _forget(pgid: int) -> None:
    if pgid in _live:
        _live.discard(pgid)
        _tell_reaper(f"-{pgid}")


def signal_group(pgid: int, signum: int) -> bool:
    """Send a signal to every process of the group; False when the group has no process left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # a pid reused by someone else's process: not ours to end
        return False
    return True


def group_alive(pgid: int) -> bool:
    """Whether a process of the group is still running (a zombie waiting to be reaped counts as ended)."""
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    if not os.path.isdir("/proc"):
        return signal_group(pgid, 0)
    return False


async def end_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """TERM the group, wait up to `grace_s` for it to end, then KILL what is left. Cancelled meanwhile, it KILLs at
    once: the group never outlives the call."""
    try:
        if signal_group(pgid, signal.SIGTERM):
            deadline = asyncio.get_running_loop().time() + grace_s
            while group_alive(pgid) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(POLL_S)
    finally:
        signal_group(pgid, signal.SIGKILL)
        _forget(pgid)


def kill_now(pgid: int) -> None:
    """KILL a group at once (where nothing can be awaited)."""
    signal_group(pgid, signal.SIGKILL)
    _forget(pgid)


@atexit.register
def _kill_live_groups() -> None:
    for pgid in list(_live):
        kill_now(pgid)
