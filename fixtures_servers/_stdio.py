"""The stdio entry point shared by every fixture: `python -m fixtures_servers.<name> [--seed S] [--size N]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from fastmcp import FastMCP


def main(name: str, build: Callable[..., FastMCP], default_size: int, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m fixtures_servers.{name}",
                                     description=f"Run the '{name}' fixture MCP server over stdio.")
    parser.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    parser.add_argument("--size", type=int, default=default_size, help=f"data size (default {default_size})")
    args = parser.parse_args(argv)
    build(seed=args.seed, size=args.size).run(transport="stdio", show_banner=False)
