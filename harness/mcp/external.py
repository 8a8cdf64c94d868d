"""External MCP servers from `mcp_servers.json`, in Claude Desktop's shape
`{"mcpServers": {name: {"command", "args", "env"}}}` or VS Code's `{"servers": {name: {...}}}`.
Tasks name them like fixtures; each run starts a fresh process over stdio. A server that keeps state (a file,
a database) gets fresh state per run through a placeholder in its args or env: `${RUN_DIR}` is a new empty
folder for each run, removed after it. An entry with a `url` instead of a `command` is a remote server
(streamable HTTP, or SSE with `"type": "sse"`), as Claude Code and VS Code write them: each run opens a new
MCP session to it, and its state is its own, carried over from run to run."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from fastmcp import Client
from mcp.client.stdio import get_default_environment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import fixtures_servers
from harness.errors import UserError, describe_error, read_user_file
from harness.mcp.stdio import NonMCPOutput, StdioServer
from harness.tasks.task import TOOL_CALLERS, ToolCaller, parse_callers

CONFIG_ENV = "HARNESS_MCP_CONFIG"
DEFAULT_FILE = "mcp_servers.json"
PLACEHOLDERS = ("RUN_DIR",)  # ${RUN_DIR}: a new empty folder for each run (and server), removed after the run
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
# in a remote entry's url and headers: ${NAME} or ${NAME:-default} (Claude Code), ${env:NAME} (VS Code)
_ENV_REFERENCE = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
RemoteTransport = Literal["http", "sse"]


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


@dataclass(frozen=True)
class RemoteServer:
    """A server the harness does not start: every run opens a new MCP session to `url`, over streamable HTTP
    (`http`) or SSE. Whatever state it keeps is its own, so it carries over from one run to the next (unless the
    server keeps it per MCP session); a run warns about it and its manifest names such servers."""

    name: str
    url: str
    transport: RemoteTransport = "http"
    headers: tuple[tuple[str, str], ...] = ()
    callers: tuple[ToolCaller, ...] = TOOL_CALLERS

    def resolved(self, environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
        """The url and headers with each `${NAME}`, `${NAME:-default}` and `${env:NAME}` filled from `environ`,
        read when a run connects; a variable that is not set and has no default is a ValueError naming it."""
        return (_fill_env(self.url, "url", environ),
                {name: _fill_env(value, f"header {name}", environ) for name, value in self.headers})


ConfiguredServer = ExternalServer | RemoteServer


def _fill_env(text: str, where: str, environ: Mapping[str, str]) -> str:
    """`text` with its environment references filled, as a shell would: `${NAME:-default}` when NAME is unset
    or empty, `${NAME}` empty when NAME is set but empty."""
    def value(match: re.Match[str]) -> str:
        reference = _ENV_REFERENCE.fullmatch(match.group(1))
        if reference is None:
            raise ValueError(f"'{match.group(0)}' in its {where} is not an environment variable")
        name, default = reference.groups()
        if environ.get(name) or (default is None and name in environ):
            return environ[name]
        if default is not None:
            return default
        raise ValueError(f"environment variable {name} is not set (used in its {where})")

    return _PLACEHOLDER.sub(value, text)


class _EntryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    callers: list[str] | None = None  # the harness's own key: who may call the tools in the hybrid arm

    @field_validator("callers")
    @classmethod
    def _known_callers(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else list(parse_callers(value))


class _ServerEntry(_EntryOptions):
    command: str = Field(min_length=1)
    args: list[str] = []
    env: dict[str, str] = {}
    type: Literal["stdio"] | None = None  # VS Code marks stdio servers explicitly


class _RemoteEntry(_EntryOptions):
    url: str = Field(min_length=1)
    headers: dict[str, str] = {}
    type: Literal["http", "streamable-http", "sse"] | None = None  # Claude Code and VS Code write "http" or "sse"

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not _PLACEHOLDER.search(value) and not re.match(r"https?://[^/\s]", value):
            raise ValueError(f"'{value}' is not an http:// or https:// URL")
        return value

    @property
    def transport(self) -> RemoteTransport:
        """SSE when the entry says so, or says nothing and its URL's path ends in /sse (as fastmcp infers it);
        streamable HTTP otherwise."""
        if self.type is None:
            return "sse" if urlsplit(self.url).path.rstrip("/").endswith("/sse") else "http"
        return "sse" if self.type == "sse" else "http"


class _ConfigFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mcpServers: dict[str, dict[str, Any]] | None = None  # each entry validated by _validated_entry
    servers: dict[str, dict[str, Any]] | None = None


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
        raise UserError(f"{path}: {describe_error(exc, data)}") from None
    sections = (("servers", config.servers or {}), ("mcpServers", config.mcpServers or {}))
    entries = {name: _validated_entry(path, f"{key}.{name}", data) for key, section in sections
               for name, data in section.items()}
    if not entries:
        raise UserError(f"{path}: no servers (expected {{\"mcpServers\": {{name: {{command, args, env}}}}}})")
    clash = sorted(set(entries) & set(fixtures_servers.available()))
    if clash:
        raise UserError(f"{path}: server name '{clash[0]}' is a fixture server's name; choose another")
    servers: dict[str, ConfiguredServer] = {}
    for name, entry in entries.items():
        callers = tuple(entry.callers) if entry.callers else TOOL_CALLERS
        if isinstance(entry, _RemoteEntry):
            _check_env_references(path, name, entry)
            servers[name] = RemoteServer(name, entry.url, entry.transport, tuple(sorted(entry.headers.items())),
                                         callers)  # type: ignore[arg-type]
        else:
            _check_placeholders(path, name, entry)
            servers[name] = ExternalServer(name, entry.command, tuple(entry.args), tuple(sorted(entry.env.items())),
                                           callers)  # type: ignore[arg-type]
    return servers


def _validated_entry(path: Path, where: str, data: dict[str, Any]) -> _ServerEntry | _RemoteEntry:
    """One entry, as the kind its keys say: a `url` is a remote server, anything else a `command` to start."""
    if "command" in data and "url" in data:
        raise UserError(f"{path}: field '{where}': an entry has either 'command' (a server each run starts) or "
                        "'url' (a remote server), not both")
    model = _RemoteEntry if "url" in data else _ServerEntry
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: {describe_error(exc, data, at=where)}") from None


def _check_env_references(path: Path, name: str, entry: _RemoteEntry) -> None:
    """A remote entry's url and headers may name environment variables, as Claude Code and VS Code allow; what
    else `${...}` can mean there (VS Code's `${input:...}` prompt, `${RUN_DIR}`) the harness cannot fill."""
    places = [("url", entry.url)] + [(f"headers.{key}", value) for key, value in entry.headers.items()]
    for where, text in places:
        for inner in _PLACEHOLDER.findall(text):
            reference = _ENV_REFERENCE.fullmatch(inner)
            if reference is not None and inner not in PLACEHOLDERS:
                continue
            why = ("a remote server is not started per run, so it has no run folder" if inner in PLACEHOLDERS
                   else "write ${NAME}, ${NAME:-default} or ${env:NAME} for an environment variable")
            raise UserError(f"{path}: server '{name}': field '{where}': '${{{inner}}}' cannot be filled here ({why})")


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


def default_external_servers() -> dict[str, ConfiguredServer]:
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
async def connect_external(server: ExternalServer, stderr_log: Path | None = None,
                           run_values: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """A client connected to a fresh process of the server over stdio (harness.mcp.stdio), for one run:
    `${RUN_DIR}` is a new empty folder, removed once the process has ended. The server's stderr is appended to
    `stderr_log` (else it goes to the terminal, over any progress bar). A server whose stdout has a line that is not
    MCP before it is connected raises NonMCPOutput naming the line. `run_values`, if given, receives this run's
    placeholder values (for a server started per run), so what a run did can be read against its own folder."""
    _warn_if_shared(server)
    with tempfile.TemporaryDirectory(prefix=f"harness-{server.name}-", ignore_cleanup_errors=True) as run_dir:
        args, env = server.resolved({"RUN_DIR": run_dir})
        if run_values is not None and server.per_run:
            run_values["RUN_DIR"] = run_dir
        # as the MCP SDK's stdio client does: a few safe variables, or the whole environment when the entry sets any
        environment = get_default_environment() | ({**os.environ, **env} if env else {})
        transport = StdioServer(server.name, [server.command, *args], environment, stderr_log)
        async with AsyncExitStack() as stack:
            try:
                client = await stack.enter_async_context(Client(transport))
            except Exception as exc:
                if transport.non_mcp is None:
                    raise
                raise NonMCPOutput(transport.non_mcp) from exc
            yield client


@asynccontextmanager
async def connect_remote(server: RemoteServer) -> AsyncIterator[Client]:
    """A client on a new MCP session with a remote server, for one run: over streamable HTTP or SSE, its url and
    headers filled from the environment as it connects. A failed handshake names the URL, and the HTTP status
    the server answered if it did (a wrong token: 401)."""
    from fastmcp.client.transports import SSETransport, StreamableHttpTransport

    url, headers = server.resolved(os.environ)
    refusals: list[str] = []
    kind = SSETransport if server.transport == "sse" else StreamableHttpTransport
    transport = kind(url, headers=headers, httpx_client_factory=_client_noting_refusals(refusals))
    async with AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(Client(transport))
        except Exception as exc:  # the URL as configured: its ${...} filled in could hold a secret
            if not refusals:
                raise ConnectionError(f"{server.url}: {exc}") from exc
            raise ConnectionError(f"{server.url} answered {refusals[0]} (check the entry's url, type and "
                                  "headers)") from exc
        yield client


def _client_noting_refusals(refusals: list[str]) -> Callable[..., Any]:
    """An HTTP client factory for fastmcp's transports, noting each error status the server answers: the MCP SDK
    reports a refused streamable-HTTP request only as "Server returned an error response"."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def note(response: Any) -> None:
        if response.status_code >= 400:
            refusals.append(f"HTTP {response.status_code} {response.reason_phrase}".strip())

    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None, **_: Any) -> Any:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(note)
        return client

    return factory
