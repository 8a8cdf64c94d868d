"""A harness killed outright (SIGKILL: no exit handler runs) still leaves no agent process behind: the reaper it
started kills every group it was told of when the harness's end of the pipe closes."""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness.agents.isolation.groups import group_alive

pytestmark = pytest.mark.integration

HARNESS_STANDIN = """
import subprocess, sys, time
from harness.agents.isolation.groups import track
agent = subprocess.Popen(["sleep", "300"], start_new_session=True)  # an agent's group, as foreign.py starts one
track(agent.pid)
print(agent.pid, flush=True)
time.sleep(300)
"""


def test_a_harness_killed_outright_leaves_no_agent_group_running():
    harness = subprocess.Popen([sys.executable, "-c", HARNESS_STANDIN], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": os.getcwd()})
    agent_group = int(harness.stdout.readline())
    assert group_alive(agent_group)
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    deadline = time.monotonic() + 30  # not a speed check: the group must end, however loaded the machine is
    while group_alive(agent_group) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not group_alive(agent_group)


def test_a_group_ended_by_the_harness_is_forgotten_by_the_reaper():
    from harness.agents.isolation import groups

    agent = subprocess.Popen(["sleep", "300"], start_new_session=True)
    groups.track(agent.pid)
    assert agent.pid in groups._live
    groups.kill_now(agent.pid)
    agent.wait()
    assert agent.pid not in groups._live and groups._reaper is not None and groups._reaper.poll() is None
