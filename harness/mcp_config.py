"""External MCP servers from `mcp_servers.json`, in Claude Desktop's shape
`{"mcpServers": {name: {"command", "args", "env"}}}` or VS Code's `{"servers": {name: {...}}}`.
Tasks name them like fixtures; each run starts a fresh process over stdio."""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Literal

from fastmcp import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import fixtures_servers
from harness.errors import UserError, read_user_file

CONFIG_ENV = "HARNESS_MCP_CONFIG"
DEFAULT_FILE = "mcp_servers.json"


@dataclass(frozen=True)
class ExternalServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=())


class _ServerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)
    args: list[str] = []
    env: dict[str, str] = {}
    type: Literal["stdio"] | None = None  # VS Code marks stdio servers explicitly


class _ConfigFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mcpServers: dict[str, _ServerEntry] | None = None  # noqa: N815 - Claude Desktop's spelling
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
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: field '{where}': {first['msg']}") from None
    entries = {**(config.servers or {}), **(config.mcpServers or {})}
    if not entries:
        raise UserError(f"{path}: no servers (expected {{\"mcpServers\": {{name: {{command, args, env}}}}}})")
    clash = sorted(set(entries) & set(fixtures_servers.FIXTURES))
    if clash:
        raise UserError(f"{path}: server name '{clash[0]}' is a fixture server's name; choose another")
    return {name: ExternalServer(name, e.command, tuple(e.args), tuple(sorted(e.env.items())))
            for name, e in entries.items()}


def config_path() -> Path | None:
    """$HARNESS_MCP_CONFIG, else ./mcp_servers.json if it exists."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    default = Path.cwd() / DEFAULT_FILE
    return default if default.exists() else None


def default_external_servers() -> dict[str, ExternalServer]:
    path = config_path()
    return load_mcp_config(path) if path is not None else {}


@asynccontextmanager
async def connect_external(server: ExternalServer) -> AsyncIterator[Client]:
    """A client connected to a fresh process of the server over stdio."""
    from fastmcp.client.transports import StdioTransport

    transport = StdioTransport(command=server.command, args=list(server.args),
                               env={**os.environ, **dict(server.env)} if server.env else None)
    async with Client(transport) as client:
        yield client
