"""Test helper: take a server that a test registered (harness.mcp.registry.register_server) out again, so the
next test starts from the package's own registry."""

from harness.mcp import registry


def unregister_server(name: str) -> None:
    registry._REGISTERED.pop(name, None)
