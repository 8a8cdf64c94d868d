"""One run of a Python agent, inside the process forked for it from its zygote: a session and process group of its
own, stdin from /dev/null, stdout and stderr appended to the run's log, the run's scratch folder as working folder,
then a worker forked under the memory limit that calls the agent and sends its answer as JSON. The group's leader
waits for the worker and reports how it ended when it sent nothing (an `os._exit`, a signal, the memory limit)."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import resource
import signal
import socket
import sys
import traceback
from typing import Any

from harness.agents.agent_task import AgentTask, answer_text

MB = 1024 * 1024


def send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def read_request(conn: socket.socket) -> dict[str, Any]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError("the harness closed the connection before sending the run")
        data += chunk
    return json.loads(data)


def redirect(log: str, workdir: str) -> None:
    """stdin from /dev/null, stdout and stderr to the run's log, the scratch folder as working folder."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    for fd in (null, out):
        os.close(fd)
    os.chdir(workdir)


def call(function: Any, task: AgentTask) -> dict[str, Any]:
    """The agent's answer as the harness stores it, or its failure in one line (`type`: the run's error type)."""
    try:
        if inspect.iscoroutinefunction(function):
            value = asyncio.run(function(task))
        else:
            value = function(task)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
    except MemoryError:
        traceback.print_exc()
        return {"type": "resource_limit", "error": "the agent ran out of memory (MemoryError) under its limit"}
    except SystemExit as exc:
        return {"type": "agent_error", "error": f"the agent called sys.exit({exc.code!r})"}
    except BaseException as exc:  # noqa: BLE001 - the agent's own failure, whatever it is: its traceback to its log
        traceback.print_exc()
        return {"type": "agent_error", "error": " ".join(f"{type(exc).__name__}: {exc}".split())}
    try:
        return {"answer": answer_text(value if value is not None else "")}
    except (ValueError, TypeError, RecursionError) as exc:
        return {"type": "agent_error",
                "error": f"its answer ({type(value).__name__}) cannot be stored as JSON: {exc}"}


async def _awaited(value: Any) -> Any:
    return await value


def describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def run(conn: socket.socket, function: Any) -> None:
    """The forked run process (never returns): its own session, the request read, the worker forked and waited
    for; the harness ends the whole group once it has the answer."""
    os.setsid()
    for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_DFL)
    try:
        request = read_request(conn)
        redirect(request["log"], request["task"]["workdir"])
        send(conn, {"pid": os.getpid()})
        worker = os.fork()
        if worker == 0:
            memory_mb = request.get("memory_mb")
            if memory_mb:
                resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MB, memory_mb * MB))
            outcome = call(function, AgentTask.from_wire(request["task"]))
            sys.stdout.flush()
            sys.stderr.flush()
            send(conn, outcome)
            os._exit(0)
        _, status = os.waitpid(worker, 0)
        send(conn, {"exit": describe_exit(status), "signaled": os.WIFSIGNALED(status)})
    except BaseException:  # noqa: BLE001 - a broken connection: nothing to report to, nothing may escape the fork
        traceback.print_exc()
    finally:
        os._exit(0)
