"""Ending a process group: TERM, then KILL after a short grace, so an agent's processes (and whatever they left in
the background) never outlive their run. Every group still running is killed when the harness exits, whatever
interrupted it."""

from __future__ import annotations

import asyncio
import atexit
import os
import signal

GRACE_S = 1.0  # what a group gets between TERM and KILL to end on its own
POLL_S = 0.02

_live: set[int] = set()  # groups started and not yet ended by end_group


def track(pgid: int) -> None:
    """Remember a group until it is ended (killed at the harness's exit if it is still there)."""
    _live.add(pgid)


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
        _live.discard(pgid)


def kill_now(pgid: int) -> None:
    """KILL a group at once (where nothing can be awaited)."""
    signal_group(pgid, signal.SIGKILL)
    _live.discard(pgid)


@atexit.register
def _kill_live_groups() -> None:
    for pgid in list(_live):
        kill_now(pgid)
