"""The stdio entry point shared by every fixture: `python -m fixtures_servers.<name> [--seed S] [--size N]` (and
`--server NAME` for a family of servers)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from fastmcp import FastMCP


def main(name: str, build: Callable[..., FastMCP], default_size: int, argv: list[str] | None = None,
         servers: tuple[str, ...] = ()) -> None:
    """`servers`: a family's server names (`--server` picks one)."""
    parser = argparse.ArgumentParser(prog=f"python -m fixtures_servers.{name}",
                                     description=f"Run the '{name}' fixture MCP server over stdio.")
    parser.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    parser.add_argument("--size", type=int, default=default_size, help=f"data size (default {default_size})")
    if servers:
        parser.add_argument("--server", choices=servers, required=True, help="which of the family's servers")
    args = parser.parse_args(argv)
    chosen = {"server": args.server} if servers else {}
    build(seed=args.seed, size=args.size, **chosen).run(transport="stdio", show_banner=False)
