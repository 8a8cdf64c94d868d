"""Agents in every state of disrepair, as a team's work in progress can be: each does one thing an agent must never
be able to do to the harness (exit it, move its working folder, outlive its run, hang it, send it what it cannot
store). Each writes its pid to a file in its scratch folder's parent... no: to HARNESS_TEST_PIDS when set, so a test
can check that nothing of it is left."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def _note(pid: int) -> None:
    folder = os.environ.get("HARNESS_TEST_PIDS")
    if folder:
        with open(os.path.join(folder, f"{pid}"), "w") as file:
            file.write(str(os.getpgid(pid)))


def exits(task) -> str:
    _note(os.getpid())
    sys.exit(3)


def hard_exit(task) -> str:
    _note(os.getpid())
    os._exit(7)


def moves(task) -> str:
    _note(os.getpid())
    os.chdir("/")
    return "IN"


def hangs(task) -> str:
    _note(os.getpid())
    time.sleep(3600)
    return "never"


def leaves_a_process(task) -> str:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    _note(child.pid)
    return "IN"


def circular(task) -> object:
    _note(os.getpid())
    loop: list = []
    loop.append(loop)
    return loop


def greedy(task) -> str:
    _note(os.getpid())
    hoard = bytearray(2 * 1024**3)
    return str(len(hoard))


def bad_request(task) -> str:
    """Sends the chat endpoint a message whose content is a number, then a body that is not UTF-8."""
    import httpx

    _note(os.getpid())
    headers = {"Authorization": f"Bearer {task.api_key}"}
    url = f"{task.base_url}/chat/completions"
    first = httpx.post(url, headers=headers, json={"model": task.model, "messages": [{"role": "user", "content": 5}]})
    second = httpx.post(url, headers={**headers, "content-type": "application/json"}, content=b'{"model": "\xff"}')
    return f"{first.status_code} {second.status_code}"
