"""One embedded-model process per machine: the first to load the model holds a lock under the harness cache, and
a later one is told who holds it."""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.models.machine_share import LOCK_FILE, UNKNOWN_PID, claim_machine, sharing_warning

HOLD = """
import sys, time
from pathlib import Path
from harness.models.machine_share import claim_machine
assert claim_machine(Path(sys.argv[1])) is None
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def other_holder(tmp_path):
    """Another process holding the lock of `tmp_path / "cache"`; yields (cache, its pid)."""
    cache = tmp_path / "cache"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(cache)], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    try:
        assert holder.stdout.readline().strip() == "held"
        yield cache, holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_the_first_claim_holds_the_lock_and_writes_this_pid(tmp_path):
    import os

    cache = tmp_path / "cache"
    assert claim_machine(cache) is None
    assert (cache / LOCK_FILE).read_text() == str(os.getpid())
    assert claim_machine(cache) is None  # claiming again in the same process is a no-op, not a conflict


def test_a_later_process_learns_the_holders_pid(other_holder):
    cache, pid = other_holder
    assert claim_machine(cache) == pid


def test_the_warning_names_the_holder_and_the_way_out(other_holder, monkeypatch):
    cache, pid = other_holder
    monkeypatch.delenv("HARNESS_LOCAL_THREADS", raising=False)
    line = sharing_warning(cache)
    assert line.startswith(f"warning: process {pid} already runs the embedded model on this machine")
    assert "HARNESS_LOCAL_THREADS" in line and "docs/running.md" in line


def test_split_cores_silence_the_warning(other_holder, monkeypatch):
    cache, _ = other_holder
    monkeypatch.setenv("HARNESS_LOCAL_THREADS", "1")
    assert sharing_warning(cache) is None


def test_the_lock_is_free_again_once_its_holder_exits(tmp_path):
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, "-c", HOLD.replace("time.sleep(60)", ""), str(cache)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=True)
    assert done.stdout.strip() == "held"
    assert claim_machine(cache) is None


def test_an_unreadable_pid_is_reported_as_unknown(tmp_path, monkeypatch):
    import fcntl

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / LOCK_FILE).write_text("")
    with open(cache / LOCK_FILE, "a+") as holder:  # another open file description: its lock conflicts with ours
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert claim_machine(cache) == UNKNOWN_PID
        monkeypatch.delenv("HARNESS_LOCAL_THREADS", raising=False)
        assert sharing_warning(cache).startswith("warning: another process already runs the embedded model")
