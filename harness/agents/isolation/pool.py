"""The harness's side of agents in processes of their own: one zygote per agent per harness process (started by a
plain fork-and-exec, never a fork of the harness, which has threads), and one run as a request to it. The run's
whole process group is ended when the run ends, however it ends: its answer, a timeout, Ctrl-C, an error."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.agent_task import AgentTask
from harness.agents.isolation.groups import end_group, kill_now, track
from harness.errors import UserError

START_TIMEOUT_S = 300.0  # importing a framework (and its own imports) can take a while on a loaded machine
ZYGOTE_MODULE = "harness.agents.isolation.zygote"


class IsolatedFailure(Exception):
    """The agent's run failed in its process: `error_type` is the run's error type (agent_error, resource_limit)."""

    def __init__(self, message: str, error_type: str = "agent_error"):
        super().__init__(message)
        self.error_type = error_type


@dataclass(frozen=True)
class AgentTarget:
    """How the agent's process finds the function: by `module` and `attribute` (its qualified name), or copied by
    value (`by_value`: a function of a notebook or a script's `__main__`, which no other process can import by name;
    cloudpickle copies it with what it refers to when its zygote starts, so it sees the notebook's later cells
    up to the run). `function`: the object itself, for a run in the harness's own process."""

    module: str
    attribute: str
    by_value: bool = False
    ident: int = 0  # the function's id when copied by value (two notebook functions of one name are two agents)
    function: Any = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def of_function(cls, function: Any) -> AgentTarget:
        """A function's target: by name when its module imports it back as the same object, else by value."""
        module = getattr(function, "__module__", "") or ""
        attribute = getattr(function, "__qualname__", "") or ""
        named = module not in ("", "__main__", "__mp_main__") and "<" not in attribute
        if named:
            found = sys.modules.get(module)
            for part in attribute.split("."):
                found = getattr(found, part, None)
            named = found is function
        return cls(module, attribute, by_value=not named, ident=0 if named else id(function), function=function)

    def pickled(self) -> bytes:
        """The function by value (cloudpickle, dspy's dependency), or one line saying why it cannot be copied."""
        import cloudpickle

        try:
            return cloudpickle.dumps(self.function)
        except Exception as exc:  # noqa: BLE001 - a function closing over what cannot be copied (a lock, a socket)
            raise UserError(f"agent {self.attribute}: defined in {self.module or 'no module'}, it is copied into a "
                            f"process of its own for each run and cannot be ({type(exc).__name__}: {exc}); move it "
                            "to a module, or run it in-process (--agent-isolation in-process)") from None

    def load(self) -> Any:
        """The function in this process (a run in-process): imported by name if not held."""
        if self.function is not None:
            return self.function
        from harness.agents.isolation.zygote import load_target

        return load_target({"module": self.module, "attribute": self.attribute})

    def label(self) -> str:
        return f"{self.module}:{self.attribute}"


class Zygote:
    """One agent's warm parent process: started, its module imported, then forking a process per run."""

    def __init__(self, target: AgentTarget):
        self.target = target
        self.folder = Path(tempfile.mkdtemp(prefix="harness-zygote-"))
        self.socket = str(self.folder / "runs")
        self.log = self.folder / "zygote.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.described: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        """Start it and wait until the module is imported: what it says of the function (doc, module, source), or a
        UserError in one line naming the file and line where the import failed."""
        spec_target: dict[str, Any] = {"module": self.target.module, "attribute": self.target.attribute}
        if self.target.by_value:
            (self.folder / "agent.pickle").write_bytes(self.target.pickled())
            spec_target = {"pickle": str(self.folder / "agent.pickle")}
        sys_path = [os.path.abspath(entry or os.getcwd()) for entry in sys.path]
        with open(self.log, "ab") as log:
            # the harness's own import path, as multiprocessing hands it to a spawned child (not in PYTHONPATH,
            # which every process the agent starts would inherit)
            bootstrap = f"import sys; sys.path[:] = {sys_path!r}; from {ZYGOTE_MODULE} import main; main()"
            self.process = subprocess.Popen([sys.executable, "-c", bootstrap], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"target": spec_target,
                                             "socket": self.socket}).encode() + b"\n")
        self.process.stdin.flush()
        line = b""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not line and time.monotonic() < deadline:
            if select.select([self.process.stdout], [], [], 0.5)[0]:
                line = self.process.stdout.readline()
                break
        self.described = json.loads(line) if line.strip() else {
            "ok": False, "error": f"its process ended before importing it (see {self.log})"}
        if not self.described.get("ok"):
            self.close(keep_log=True)
            raise UserError(self.described.get("error") or f"agent {self.target.label()} did not load")
        return self.described

    async def run(self, task: AgentTask, log: Path, memory_mb: int | None) -> str:
        """One run in a process forked for it: its answer, or IsolatedFailure. Its process group is ended before
        this returns or raises (a cancelled run included)."""
        try:
            reader, writer = await asyncio.open_unix_connection(self.socket, limit=2**31 - 1)
        except OSError as exc:
            raise IsolatedFailure(f"the agent's zygote is gone ({exc}; see {self.log})") from None
        pid = None
        try:
            writer.write(json.dumps({"task": task.to_wire(), "log": str(log), "memory_mb": memory_mb}).encode() + b"\n")
            await writer.drain()
            started = await reader.readline()
            if not started:
                raise IsolatedFailure(f"the agent's process did not start (see {self.log})")
            pid = json.loads(started)["pid"]
            track(pid)
            return _outcome(await reader.readline(), memory_mb, log)
        except BaseException:
            if pid is not None:
                kill_now(pid)
            raise
        finally:
            writer.close()
            if pid is not None:
                await end_group(pid)

    def close(self, keep_log: bool = False) -> None:
        """End the zygote (its stdin closed, then killed if it lingers) and its folder (but its log, if asked)."""
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                kill_now(self.process.pid)
        if not keep_log:
            shutil.rmtree(self.folder, ignore_errors=True)


def _outcome(line: bytes, memory_mb: int | None, log: Path) -> str:
    if not line:
        raise IsolatedFailure(f"the agent's process ended without an answer (see {log})")
    message = json.loads(line)
    if "answer" in message:
        return message["answer"]
    if "error" in message:
        raise IsolatedFailure(message["error"], message.get("type", "agent_error"))
    ended = f"the agent's process ended without an answer ({message['exit']})"
    if memory_mb and message.get("signaled"):
        raise IsolatedFailure(f"{ended} under --agent-memory {memory_mb} MB", "resource_limit")
    raise IsolatedFailure(f"{ended}{_last_line(log)}")


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return f": {lines[-1].strip()[:300]}" if lines else ""


_lock = threading.Lock()
_zygotes: dict[AgentTarget, Zygote] = {}


def zygote_for(target: AgentTarget) -> Zygote:
    """The agent's zygote in this process, started (its module imported) on first use; a module that does not
    import is a UserError, every time it is asked for."""
    with _lock:
        zygote = _zygotes.get(target)
        if zygote is None:
            zygote = Zygote(target)
            zygote.start()
            _zygotes[target] = zygote
        return zygote


@atexit.register
def close_zygotes() -> None:
    with _lock:
        for zygote in _zygotes.values():
            zygote.close()
        _zygotes.clear()
