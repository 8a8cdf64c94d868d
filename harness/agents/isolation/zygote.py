"""The warm parent of an agent's runs (its `main()`, started with the harness's import path): one per agent per
harness process, it imports the agent's module (or loads a function pickled by value: one defined in a notebook or a
script's `__main__`), says on stdout whether that worked (one line naming the file and line when it did not), then
forks one process per run on request over a Unix socket. It runs no thread, so each fork is a sound copy of it; it
exits when the harness closes its stdin (or dies)."""

from __future__ import annotations

import importlib
import json
import os
import pickle
import select
import signal
import socket
import sys
import traceback
from typing import Any

from harness.agents.agent_task import source_of_module

# Clients that import most of themselves lazily, on first use: imported in the zygote when the agent's module has
# loaded the package, so that each run's fork starts with them instead of importing them again (a fork inherits what
# its parent imported, never what an earlier fork did).
WARM_IMPORTS: dict[str, tuple[str, ...]] = {
    "openai": ("openai.resources", "openai.types.chat", "openai._legacy_response"),
    "httpx": ("httpx._transports.default", "httpcore"),
    "fastmcp": ("fastmcp.client.transports",),
    "mcp": ("mcp.client.streamable_http", "mcp.client.session"),
}


def warm_imports() -> None:
    """Import what the agent's packages would import on first use (WARM_IMPORTS), where they are loaded."""
    for package, modules in WARM_IMPORTS.items():
        if package in sys.modules:
            for module in modules:
                try:
                    importlib.import_module(module)
                except Exception:  # noqa: BLE001, S110 - another version of the package: the runs import it themselves
                    pass


def load_target(target: dict[str, Any]) -> Any:
    """The agent's function: `module` + `attribute` (a dotted qualified name) imported, or `pickle` (a file) loaded."""
    if "pickle" in target:
        with open(target["pickle"], "rb") as file:
            return pickle.load(file)
    value: Any = importlib.import_module(target["module"])
    for part in target["attribute"].split("."):
        value = getattr(value, part, None)
        if value is None:
            raise LookupError(f"{target['module']} has no {target['attribute']}")
    return value


def import_failure(target: dict[str, Any], exc: BaseException) -> str:
    """Why the agent's module did not load, in one line naming the file and line where it failed."""
    module = target.get("module", "the pickled agent")
    if isinstance(exc, LookupError) and not isinstance(exc, (KeyError, IndexError)):
        return str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name and module.startswith(exc.name):
        return f"cannot import {module} ({exc})"
    if isinstance(exc, SyntaxError):
        return f"cannot import {module}: {exc.filename}:{exc.lineno}: {type(exc).__name__}: {exc.msg}"
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if not frame.filename.startswith("<")
              and os.path.abspath(frame.filename) != os.path.abspath(__file__)]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    message = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return f"cannot import {module}: {where}{message}"


def describe(function: Any, target: dict[str, Any]) -> dict[str, Any]:
    module = getattr(function, "__module__", "") or target.get("module", "")
    doc = (getattr(function, "__doc__", "") or "").strip().split("\n")[0]
    return {"ok": callable(function), "module": module, "doc": doc, "source": source_of_module(module),
            "error": "" if callable(function) else f"{target.get('attribute')} is not callable (an agent is a "
                                                   "function of its task)"}


def serve(listener: socket.socket, function: Any) -> None:
    """Fork a run per connection until stdin closes; children are reaped by the kernel (SIGCHLD ignored)."""
    from harness.agents.isolation import worker

    while True:
        ready, _, _ = select.select([listener, 0], [], [])
        if 0 in ready and not os.read(0, 4096):
            return
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                worker.run(conn, function)
            conn.close()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness ends it (stdin closed), not the terminal's Ctrl-C
    status = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the agent's module prints goes to the zygote's log, never into its status line
    spec = json.loads(sys.stdin.readline())
    try:
        function = load_target(spec["target"])
        warm_imports()
        described = describe(function, spec["target"])
    except BaseException as exc:  # noqa: BLE001 - whatever the module does at import (even sys.exit) is its failure
        traceback.print_exc()
        described = {"ok": False, "error": import_failure(spec["target"], exc)}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if described["ok"]:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        listener.bind(spec["socket"])
        listener.listen(64)
    status.write(json.dumps(described) + "\n")
    status.flush()
    if described["ok"]:
        serve(listener, function)

