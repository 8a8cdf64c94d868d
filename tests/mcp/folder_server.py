"""A stand-in for a file server confined to one folder, as the official filesystem server is (its allowed
directory an argument, every path absolute): started per run on `${RUN_DIR}`, its tools refuse any path outside
that run's folder. Run: `python folder_server.py ROOT`."""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp import FastMCP


def build(root: Path) -> FastMCP:
    server = FastMCP("folder")
    root = root.resolve()

    def inside(path: str) -> Path:
        target = Path(path).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"Access denied - path outside allowed directories: {path} not in {root}")
        return target

    @server.tool
    def allowed_directory() -> str:
        """The one directory this server may read and write (absolute)."""
        return str(root)

    @server.tool
    def write_note(path: str, text: str) -> str:
        """Write `text` to the file at the absolute `path` (inside the allowed directory)."""
        inside(path).write_text(text)
        return f"wrote {len(text)} characters"

    @server.tool
    def read_note(path: str) -> str:
        """The text of the file at the absolute `path` (inside the allowed directory)."""
        return inside(path).read_text()

    return server


if __name__ == "__main__":
    build(Path(sys.argv[1])).run(transport="stdio", show_banner=False)
