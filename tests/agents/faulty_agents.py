"""Agents in every state of disrepair, as a team's work in progress can be: each does one thing an agent must never
be able to do to the harness (exit it, move its working folder, outlive its run, hang it, send or return what it
cannot store). Each notes the pid it wants checked (its own, or the process it left behind) as a file
`<function>-<pid>` in the folder HARNESS_TEST_PIDS names, so a test can check that nothing of it is left."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def _note(pid: int) -> None:
    folder = os.environ.get("HARNESS_TEST_PIDS")
    if folder:
        caller = sys._getframe(1).f_code.co_name
        with open(os.path.join(folder, f"{caller}-{pid}"), "w") as file:
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


MALFORMED = (  # (what is wrong, the body) each a request the chat endpoint must refuse with a 400 and survive
    ("not UTF-8", b'{"model": "m", "messages": [{"role": "user", "content": "\xff"}]}'),
    ("not JSON", b'{"model": "m", "messages": ['),
    ("content a number", b'{"messages": [{"role": "user", "content": 5}]}'),
    ("messages an object", b'{"messages": {"role": "user"}}'),
    ("a tool call's arguments a list", (b'{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", '
                                        b'"tool_calls": [{"id": "1", "function": {"name": "f", '
                                        b'"arguments": [1]}}]}]}')),
    ("tool_calls a string", b'{"messages": [{"role": "assistant", "tool_calls": "get_customer"}]}'),
    ("a tool's parameters a string", (b'{"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": '
                                      b'"function", "function": {"name": "f", "parameters": "none"}}]}')),
    ("a tool's name a number", (b'{"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", '
                                b'"function": {"name": 7}}]}')),
    ("tool_choice a number", b'{"messages": [{"role": "user", "content": "hi"}], "tool_choice": 3}'),
    ("temperature a word", b'{"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}'),
)


def bad_request(task) -> str:
    """Sends the chat endpoint every malformed request above, then a good one: answers each status and error type."""
    import httpx

    _note(os.getpid())
    headers = {"Authorization": f"Bearer {task.api_key}", "content-type": "application/json"}
    url = f"{task.base_url}/chat/completions"
    seen = []
    for _, body in MALFORMED:
        reply = httpx.post(url, headers=headers, content=body)
        seen.append(f"{reply.status_code}:{reply.json()['error']['type']}")
    good = httpx.post(url, headers=headers, json={"model": task.model, "messages": [
        {"role": "user", "content": task.prompt}]})
    seen.append(f"{good.status_code}:{good.json()['object']}")
    return " ".join(seen)
