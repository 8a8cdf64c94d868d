"""External MCP servers from `mcp_servers.json`, in Claude Desktop's shape
`{"mcpServers": {name: {"command", "args", "env"}}}` or VS Code's `{"servers": {name: {...}}}`.
Tasks name them like fixtures; each run starts a fresh process over stdio. A server that keeps state (a file,
a database) gets fresh state per run through a placeholder in its args or env: `${RUN_DIR}` is a new empty
folder for each run, removed after it."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fastmcp import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import fixtures_servers
from harness.errors import UserError, describe_error, read_user_file
from harness.tasks.task import TOOL_CALLERS, ToolCaller, parse_callers

CONFIG_ENV = "HARNESS_MCP_CONFIG"
DEFAULT_FILE = "mcp_servers.json"
PLACEHOLDERS = ("RUN_DIR",)  # ${RUN_DIR}: a new empty folder for each run (and server), removed after the run
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True)
class ExternalServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=())
    callers: tuple[ToolCaller, ...] = TOOL_CALLERS  # who may call its tools in the hybrid arm (a suite may override)

    @property
    def per_run(self) -> bool:
        """Whether each run gets its own state: a placeholder in the args or env."""
        return any(_PLACEHOLDER.search(value) for value in (*self.args, *(v for _, v in self.env)))

    def resolved(self, values: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The args and env of one run's process, placeholders replaced by that run's values."""
        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)

        return [fill(arg) for arg in self.args], {name: fill(value) for name, value in self.env}


class _ServerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)
    args: list[str] = []
    env: dict[str, str] = {}
    type: Literal["stdio"] | None = None  # VS Code marks stdio servers explicitly
    callers: list[str] | None = None  # the harness's own key: who may call the tools in the hybrid arm

    @field_validator("callers")
    @classmethod
    def _known_callers(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else list(parse_callers(value))


class _ConfigFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mcpServers: dict[str, _ServerEntry] | None = None
    servers: dict[str, _ServerEntry] | None = None


def load_mcp_config(path: Path) -> dict[str, ExternalServer]:
    """Servers declared in a config file; every problem is one line naming the file."""
    text = read_user_file(path, "MCP server config")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    try:
        config = _ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: {describe_error(exc)}") from None
    entries = {**(config.servers or {}), **(config.mcpServers or {})}
    if not entries:
        raise UserError(f"{path}: no servers (expected {{\"mcpServers\": {{name: {{command, args, env}}}}}})")
    clash = sorted(set(entries) & set(fixtures_servers.available()))
    if clash:
        raise UserError(f"{path}: server name '{clash[0]}' is a fixture server's name; choose another")
    for name, entry in entries.items():
        _check_placeholders(path, name, entry)
    return {name: ExternalServer(name, e.command, tuple(e.args), tuple(sorted(e.env.items())),
                                 tuple(e.callers) if e.callers else TOOL_CALLERS)  # type: ignore[arg-type]
            for name, e in entries.items()}


def _check_placeholders(path: Path, name: str, entry: _ServerEntry) -> None:
    """An unknown `${NAME}` is a typo (`${RUNDIR}`), not text to pass on: it would silently share state."""
    places = [("args", arg) for arg in entry.args] + [(f"env.{key}", value) for key, value in entry.env.items()]
    for where, text in places:
        for placeholder in _PLACEHOLDER.findall(text):
            if placeholder not in PLACEHOLDERS:
                known = ", ".join("${" + known + "}" for known in PLACEHOLDERS)
                raise UserError(f"{path}: server '{name}': field '{where}': unknown placeholder "
                                f"'${{{placeholder}}}' (known: {known})")


def config_path() -> Path | None:
    """$HARNESS_MCP_CONFIG, else ./mcp_servers.json if it exists."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    default = Path.cwd() / DEFAULT_FILE
    return default if default.exists() else None


def default_external_servers() -> dict[str, ExternalServer]:
    path = config_path()
    return load_mcp_config(path) if path is not None else {}


_STARTS: Counter[str] = Counter()  # processes started per server without a per-run placeholder


def _warn_if_shared(server: ExternalServer) -> None:
    """Say once (per server and process) that runs share whatever state a server without placeholders keeps."""
    if server.per_run:
        return
    _STARTS[server.name] += 1
    if _STARTS[server.name] == 2:
        print(f"warning: external server '{server.name}' serves several runs and has no per-run placeholder in "
              "its args or env: any state it keeps (a file, a database) carries over from one run and arm to the "
              "next; give it ${RUN_DIR}, a new folder per run (see the README)", file=sys.stderr)


@asynccontextmanager
async def connect_external(server: ExternalServer, stderr_log: Path | None = None) -> AsyncIterator[Client]:
    """A client connected to a fresh process of the server over stdio, for one run: `${RUN_DIR}` is a new
    empty folder, removed once the process has ended. The server's stderr is appended to `stderr_log` (else
    it goes to the terminal, over any progress bar)."""
    from fastmcp.client.transports import StdioTransport

    _warn_if_shared(server)
    with tempfile.TemporaryDirectory(prefix=f"harness-{server.name}-", ignore_cleanup_errors=True) as run_dir:
        args, env = server.resolved({"RUN_DIR": run_dir})
        # keep_alive=False ends the process with the run. fastmcp's default keeps it alive until the transport
        # is garbage-collected: past the removal of its folder, and past the end of the event loop, where
        # asyncio then prints "Loop <...> that handles pid N is closed" over the terminal.
        transport = StdioTransport(command=server.command, args=args, env={**os.environ, **env} if env else None,
                                   keep_alive=False, log_file=stderr_log)
        async with Client(transport) as client:
            yield client
