"""mcp_servers.json entries for servers that cannot start, written by the tests that need them: one that never
answers (a server stuck on a prompt, a lock or a slow install), a command that does not exist, one that exits
at once, one that greets on stdout, a CRM server that starts a given number of times and then refuses (a server
that dies mid-suite), and one with a slow tool and a tool that logs on stdout (faulty_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# the crm fixture over stdio, counting its starts in a file and refusing to start past a limit
_LIMITED_CRM = """
import sys
from pathlib import Path

counter, limit = Path(sys.argv[1]), int(sys.argv[2])
starts = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(starts))
if starts > limit:
    print(f"crm stand-in: licence expired after {limit} start(s)", file=sys.stderr)
    sys.exit(1)
sys.path.insert(0, sys.argv[3])
from fixtures_servers._stdio import main
from fixtures_servers.crm import DEFAULT_SIZE, build

main("crm", build, DEFAULT_SIZE, argv=[])
"""


def sleeping(tmp_path: Path) -> dict[str, Any]:
    """Says one line on stderr, writes its pid to `sleeper.pid`, then never answers."""
    script = tmp_path / "sleeper.sh"
    script.write_text(f"echo 'sleeper: waiting for a licence key' >&2\necho $$ > {tmp_path / 'sleeper.pid'}\n"
                      "exec sleep 600\n")
    return {"command": "sh", "args": [str(script)]}


def missing() -> dict[str, Any]:
    return {"command": "no-such-mcp-server-command"}


def quitting() -> dict[str, Any]:
    return {"command": "sh", "args": ["-c", "echo 'quitter: bad token' >&2; exit 3"]}


def greeting(line: str = "Starting up...") -> dict[str, Any]:
    """Writes `line` on stdout before anything else (a banner), then reads its stdin to the end."""
    return {"command": "sh", "args": ["-c", f"echo '{line}'; exec cat >/dev/null"]}


def faulty(tmp_path: Path) -> dict[str, Any]:
    """tests/mcp/faulty_server.py, writing its pid to `faulty.pid`."""
    return {"command": sys.executable, "args": [str(Path(__file__).with_name("faulty_server.py")),
                                                str(tmp_path / "faulty.pid")]}


def crm(tmp_path: Path, starts: int = 1_000_000) -> dict[str, Any]:
    """The crm fixture over stdio, which refuses to start after `starts` starts (counted in tmp_path)."""
    script = tmp_path / "limited_crm.py"
    script.write_text(_LIMITED_CRM)
    return {"command": sys.executable, "args": [str(script), str(tmp_path / "crm-starts"), str(starts), str(ROOT)]}


def write_config(path: Path, **servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path
